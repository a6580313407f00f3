"""`reviewer pr`: turn a pull request's refs into the inputs of a review.

Refs are resolved to commit ids once (and recorded in the report), and the
patch is git's own diff of merge-base(base, head)..head, so what is reviewed
is exactly what the pull request would merge.

A pull request's identity, which chains its versions into deltas, is its
number (`--pr N`, or `pull_request.number` of the GitHub event at
`GITHUB_EVENT_PATH`), else the name of its head branch; never the text of
the refs, which in CI are commit ids that change with every push.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path
from typing import Mapping
from urllib.parse import urlsplit

from reviewer.errors import ReviewerError
from reviewer.gitio import Repo, open_repo
from reviewer.report.model import Links, PullRequest

# GitHub's event payloads are far smaller; anything bigger is not an event file.
_EVENT_BYTES = 64 << 20
_GITHUB_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_RUN_ID = re.compile(r"[0-9]{1,20}")
# All a repository's web URL needs; anything else (space, quote, bracket,
# parenthesis, control, non-ASCII) could end a link early or become markup in
# some report format.
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/%+-]+")


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


def head_branch(repo: Repo, head_ref: str) -> str | None:
    """The local branch `head_ref` names, or None (a commit id, a tag, a remote-tracking
    ref, an expression like `feature~1`, a detached HEAD).

    `HEAD` is the HEAD of the very checkout or worktree `--repo` names: the
    repository's shadow holds a copy of that HEAD, never the main checkout's.
    """
    if head_ref == "HEAD":
        res = repo.run("symbolic-ref", "-q", "HEAD", check=False)
    else:
        res = repo.run("rev-parse", "--verify", "--quiet", "--symbolic-full-name", "--end-of-options", head_ref,
                       check=False)
    # Shown in reports: a name that is not UTF-8 keeps its bytes visible (\xNN), never unwritable.
    full = res.stdout.decode("utf-8", "backslashreplace").strip() if res.returncode == 0 else ""
    prefix = "refs/heads/"
    return full[len(prefix):] if full.startswith(prefix) and len(full) > len(prefix) else None


def event_number(environ: Mapping[str, str]) -> int | None:
    """`pull_request.number` of the event file GitHub Actions names in GITHUB_EVENT_PATH.

    Not set: no number. Set, the file must be a readable JSON object; an event
    without `pull_request` (a push, a manual dispatch) has no number. A file
    that is set but broken is an error, never silently "no identity": the
    delta of every later push would quietly disappear.
    """
    path = environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    where = f"GITHUB_EVENT_PATH={path}"
    try:
        st = Path(path).stat()
        if not stat.S_ISREG(st.st_mode):
            raise ReviewerError(f"{where}: not a regular file; unset GITHUB_EVENT_PATH or pass --pr N")
        if st.st_size > _EVENT_BYTES:
            raise ReviewerError(f"{where}: {st.st_size:,} bytes is not a GitHub event file; pass --pr N")
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ReviewerError(f"{where}: cannot read ({exc.strerror}); unset GITHUB_EVENT_PATH or pass --pr N") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ReviewerError(f"{where}: not a JSON event ({why}); pass --pr N") from None
    if not isinstance(data, dict):
        raise ReviewerError(f"{where}: not a GitHub event (a JSON object is expected); pass --pr N")
    pull_request = data.get("pull_request")
    if pull_request is None:
        return None
    number = pull_request.get("number") if isinstance(pull_request, dict) else None
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise ReviewerError(f"{where}: pull_request.number is not a positive integer; pass --pr N")
    return number


def check_number(number: int | None) -> int | None:
    if number is not None and number < 1:
        raise ReviewerError(f"--pr {number}: a pull request number is a positive integer")
    return number


def web_url(value: str, what: str) -> str:
    """An http(s) URL of a repository's web page, without a trailing slash."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError as exc:
        raise ReviewerError(f"{what} {value!r}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ReviewerError(f"{what} {value!r}: not an http or https URL with a host")
    if "?" in value or "#" in value:
        raise ReviewerError(f"{what} {value!r}: a repository URL has no query or fragment")
    if "@" in parts.netloc:
        # Credentials in a URL would be printed in every report.
        raise ReviewerError(f"{what} {value!r}: a repository URL carries no user name or password")
    if not _URL_CHARS.fullmatch(value):
        raise ReviewerError(f"{what} {value!r}: only letters, digits and . _ ~ : / % + - may appear in it")
    return value.rstrip("/")


def permalinks(link_base: str | None, head: str, environ: Mapping[str, str]) -> Links | None:
    """Where the report's locations open: `--link-base`, else GitHub Actions' own
    GITHUB_SERVER_URL/GITHUB_REPOSITORY; the run from GITHUB_RUN_ID when it is set."""
    server, repository, run_id = (environ.get(k) or None for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID"))
    github = None
    if server and repository:
        if not _GITHUB_REPOSITORY.fullmatch(repository) or repository.split("/")[1] in (".", ".."):
            raise ReviewerError(f"GITHUB_REPOSITORY {repository!r}: not an owner/name pair")
        github = f"{web_url(server, 'GITHUB_SERVER_URL')}/{repository}"
    base = web_url(link_base, "--link-base") if link_base is not None else github
    if base is None:
        return None
    run = None
    if run_id and github is not None:
        if not _RUN_ID.fullmatch(run_id):
            raise ReviewerError(f"GITHUB_RUN_ID {run_id!r}: not a run number")
        run = f"{github}/actions/runs/{run_id}"
    return Links(repository=base, commit=head, run=run)


def pull_request_patch(
    repo_path: str, base_ref: str, head_ref: str, tmp: Path, number: int | None = None,
) -> tuple[PullRequest, Path | None]:
    """Resolve the PR and write its patch under `tmp`; None when there is nothing to review."""
    repo = open_repo(repo_path)
    try:
        return _pull_request_patch(repo, base_ref, head_ref, tmp, number)
    finally:
        repo.close()


def _pull_request_patch(
    repo: Repo, base_ref: str, head_ref: str, tmp: Path, number: int | None,
) -> tuple[PullRequest, Path | None]:
    base = resolve_commit(repo, base_ref, "--base")
    head = resolve_commit(repo, head_ref, "--head")
    mb = repo.run("merge-base", base, head, check=False)
    if mb.returncode != 0 or not mb.stdout.strip():
        raise ReviewerError(
            f"--base {base_ref} and --head {head_ref} have no common ancestor (unrelated histories){_shallow_hint(repo)}"
        )
    merge_base = mb.stdout.decode().split()[0]
    pr = PullRequest(base_ref=base_ref, head_ref=head_ref, base=base, head=head, merge_base=merge_base,
                     number=check_number(number), head_branch=head_branch(repo, head_ref))
    res = repo.patch_between(merge_base, head)
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
