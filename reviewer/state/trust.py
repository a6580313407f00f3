"""Stored state that someone else may have written: never evidence, at most a pointer.

A state directory restored from a CI cache is writable by any workflow of the
pull request (a workflow the pull request adds can save under the same cache
key). Such a directory is *untrusted*: a stored verdict is never replayed (the
run reviews again), and a stored previous version is used only as a pointer to
the commits it reviewed. Its findings are recomputed by this run from git
objects, so a delta's "resolved" and "still open" are this run's own
findings on both sides, never a record's claims.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from reviewer.errors import ReviewerError
from reviewer.state.store import StateStore
from reviewer.state.stored import chain_records, is_hex, pr_key

if TYPE_CHECKING:
    from reviewer.review import Request


@dataclass(frozen=True)
class Previous:
    """The previous version's report as this run computed it, or None and why not."""

    report: Mapping[str, Any] | None
    note: str | None


def _pointer(identity: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(base, head, patch sha256) a stored pull-request review names, if well formed."""
    pr = identity.get("pull_request")
    sha = identity.get("patch_sha256")
    if not isinstance(pr, dict) or not isinstance(sha, str):
        return None
    base, head = pr.get("base"), pr.get("head")
    if not (is_hex(base, 40, 64) and is_hex(head, 40, 64)):
        return None
    return base, head, sha


def recomputed_previous(
    req: "Request", store: StateStore, repo_id: str, patch_sha256: str,
    review_pr: Callable[["Request"], Mapping[str, Any] | None],
) -> Previous:
    """The version before `patch_sha256` in this PR's stored chain, reviewed again.

    `review_pr(request)` reviews a pull-request request without any state and
    returns its JSON report (None when the head adds nothing). A pointer whose
    commits are not in the repository, whose diff no longer hashes to what the
    record says, or that is malformed gives no delta and a note saying so.
    """
    from reviewer.inputs.pullrequest import pull_request_patch

    chain_key = pr_key(repo_id, req)
    if chain_key is None:
        return Previous(None, None)
    try:
        records = chain_records(store, chain_key, patch_sha256)
    except ReviewerError as exc:
        # Corrupt state someone else wrote never stops this run's own review.
        return Previous(None, f"no delta: {exc}; the state directory is untrusted (--state-untrusted), so it is not used")
    if not records:
        return Previous(None, None)
    record = records[-1]
    pointer = _pointer(record.identity)
    untrusted = "the state directory is untrusted (--state-untrusted)"
    assert req.pull_request is not None
    stored_pr = record.identity.get("pull_request")
    number = stored_pr.get("number") if isinstance(stored_pr, dict) else None
    if record.repo != repo_id or number != req.pull_request.number:
        # The chain is keyed by (repository, number): a record of another one was put there.
        return Previous(None, f"no delta: the stored previous version is a review of another repository or pull "
                              f"request; {untrusted}, so it is not used")
    if pointer is None:
        return Previous(None, f"no delta: the stored previous version names no commits; {untrusted}, so its findings are not used")
    base, head, sha = pointer
    with tempfile.TemporaryDirectory(prefix="reviewer-previous-") as tmp:
        try:
            pr, patch = pull_request_patch(req.repo, base, head, Path(tmp), req.pull_request.number)
        except ReviewerError as exc:
            return Previous(None, f"no delta: the previous version {head[:12]} cannot be reviewed again from git objects ({exc}); "
                                  f"{untrusted}, so its stored findings are not used")
        if patch is None:
            return Previous(None, f"no delta: the previous version {head[:12]} adds no change to its merge base")
        actual = hashlib.sha256(patch.read_bytes()).hexdigest()
        if actual != sha:
            return Previous(None, f"no delta: the stored previous version claims patch sha256 {sha[:12]}, but "
                                  f"{base[:12]}..{head[:12]} diffs to {actual[:12]}; {untrusted}, so it is not used")
        again = replace(req, base=pr.merge_base, patch=str(patch), pull_request=pr, config_commit=pr.base,
                        patch_sha256=None, artifacts=(), expect_files=None)
        try:
            report = review_pr(again)
        except ReviewerError as exc:
            # The previous version is someone else's pointer: its failing never fails this review.
            return Previous(None, f"no delta: the previous version {head[:12]} could not be reviewed again ({exc}); "
                                  f"{untrusted}, so its stored findings are not used")
    if report is None:
        return Previous(None, None)
    return Previous(report, None)


def layout_problem(store: StateStore) -> str | None:
    """Why an untrusted state directory cannot be used at all, or None.

    A cache archive can hold symbolic links: a `reviews` or `prs` that is a
    link would send this run's writes wherever it points. Only real
    directories and regular files are used.
    """
    for directory in (store.root, store.reviews, store.root / "prs"):
        if directory.is_symlink() or (directory.exists() and not directory.is_dir()):
            return f"{directory} is not a directory of its own"
        if directory != store.root and directory.is_dir():
            for entry in directory.iterdir():
                if entry.is_symlink() or not entry.is_file():
                    return f"{entry} is not a regular file"
    return None
