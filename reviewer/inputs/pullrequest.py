"""`reviewer pr`: turn a pull request's refs into the inputs of a review.

Refs are resolved to commit ids once (and recorded in the report), and the
patch is git's own diff of merge-base(base, head)..head, so what is reviewed
is exactly what the pull request would merge.
"""

from __future__ import annotations

from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.gitio import Repo, open_repo
from reviewer.report.model import PullRequest


def _shallow_hint(repo: Repo) -> str:
    if repo.is_shallow:
        return (
            "; this is a shallow clone, so history may be missing: fetch full history "
            "(git fetch --unshallow, or actions/checkout with fetch-depth: 0)"
        )
    return ""


def resolve_commit(repo: Repo, ref: str, flag: str) -> str:
    if not ref or ref.startswith("-"):
        raise ReviewerError(f"{flag} {ref!r}: not a ref or commit")
    res = repo.run("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}", check=False)
    if res.returncode != 0:
        raise ReviewerError(f"{flag} {ref!r}: no such ref or commit in {repo.display}{_shallow_hint(repo)}")
    return res.stdout.decode().strip()


def pull_request_patch(repo_path: str, base_ref: str, head_ref: str, tmp: Path) -> tuple[PullRequest, Path | None]:
    """Resolve the PR and write its patch under `tmp`; None when there is nothing to review."""
    repo = open_repo(repo_path)
    try:
        return _pull_request_patch(repo, base_ref, head_ref, tmp)
    finally:
        repo.close()


def _pull_request_patch(repo: Repo, base_ref: str, head_ref: str, tmp: Path) -> tuple[PullRequest, Path | None]:
    base = resolve_commit(repo, base_ref, "--base")
    head = resolve_commit(repo, head_ref, "--head")
    mb = repo.run("merge-base", base, head, check=False)
    if mb.returncode != 0 or not mb.stdout.strip():
        raise ReviewerError(
            f"--base {base_ref} and --head {head_ref} have no common ancestor (unrelated histories){_shallow_hint(repo)}"
        )
    merge_base = mb.stdout.decode().split()[0]
    pr = PullRequest(base_ref=base_ref, head_ref=head_ref, base=base, head=head, merge_base=merge_base)
    res = repo.run(
        "diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "-M",
        merge_base, head, check=False,
    )
    if res.returncode != 0:
        raise ReviewerError(
            f"cannot diff {merge_base[:12]}..{head[:12]}: {res.last_error_line} (objects are missing from "
            f"{repo.display}; the reviewer never fetches: fetch them, e.g. git fetch --refetch){_shallow_hint(repo)}"
        )
    diff = res.stdout
    if not diff.strip():
        return pr, None
    patch = tmp / f"pr-{head[:12]}.patch"
    patch.write_bytes(diff)
    return pr, patch
