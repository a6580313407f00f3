"""Reviews with memory: identity, idempotent re-runs, and deltas across versions.

Every format is rendered once when a review completes and stored with it, so
a re-run of the same identity prints byte-identical text without reviewing
again. The previous version of a pull request is found through an explicit
per-PR chain of review keys, never by looking for the newest file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from reviewer import RULESET_VERSION, __version__
from reviewer.state.delta import with_delta
from reviewer.errors import ReviewerError
from reviewer.report.model import Report
from reviewer.report.formats import FORMATS, renderer
from reviewer.report.json_format import to_dict
from reviewer.state.store import Identity, Record, StateStore, now

if TYPE_CHECKING:
    from reviewer.review import Prepared

SCHEMA_PR = "reviewer-pr-chain/1"


@dataclass(frozen=True)
class Result:
    outputs: Mapping[str, str]
    verdict: str
    rerun: bool
    key: str | None


def identity(req, p: "Prepared", previous: Mapping[str, Any] | None) -> Identity:
    """Everything that can change the report, taken from the inputs as they were read
    for this review (the patch bytes, the artifact digests), never read again."""
    pr = req.pull_request
    inputs = p.inputs
    return Identity({
        "repo": repo_name(req, p.repo),
        "base": inputs.base,
        "patch_sha256": inputs.patch.sha256,
        "patch_name": inputs.patch.name,
        "expected_patch_sha256": inputs.patch_sha256,
        "expect_files": inputs.expect_files,
        "artifacts": sorted([a.path, a.sha256, a.actual or f"unreadable: {a.unreadable}"] for a in inputs.artifacts),
        "config": {"digest": p.config.digest, "source": p.config.source},
        "overrides": dict(sorted(req.overrides.items())),
        "scope": req.scope,
        "allow": [req.allow_symlinks, req.allow_gitlinks],
        "pull_request": None if pr is None else {
            "base_ref": pr.base_ref, "head_ref": pr.head_ref, "base": pr.base, "head": pr.head,
            "merge_base": pr.merge_base, "number": pr.number, "head_branch": pr.head_branch,
        },
        "links": None if req.links is None else {
            "repository": req.links.repository, "commit": req.links.commit, "run": req.links.run,
        },
        "previous": None if previous is None else hashlib.sha256(json.dumps(previous, sort_keys=True).encode()).hexdigest(),
        "rules": RULESET_VERSION,
        "tool": __version__,
    })


def repo_name(req, repo) -> str:
    """How stored reviews name the repository: `--repo-id`, else its git directory's path."""
    return req.repo_id or str(repo.common_dir)


def pr_key(repo_id: str, req) -> str | None:
    """The chain of one pull request's versions: (repository, number), else (repository,
    head branch); None when it has neither, so it never chains with anything.

    Never the refs' text: in CI they are commit ids (a new chain on every push),
    and locally `--head HEAD` names a different pull request on every branch.
    """
    pr = req.pull_request
    if pr is None:
        return None
    if pr.number is not None:
        identity = f"number\0{pr.number}"
    elif pr.head_branch:
        identity = f"branch\0{pr.head_branch}"
    else:
        return None
    return hashlib.sha256(f"{repo_id}\0{identity}".encode("utf-8", "surrogateescape")).hexdigest()


def _chain(store: StateStore, key: str) -> list[dict[str, str]]:
    path = store.root / "prs" / f"{key}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise ReviewerError(f"state record {path} is corrupt ({exc}); run with --fresh to replace it") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_PR or not isinstance(data.get("chain"), list):
        raise ReviewerError(f"state record {path} is corrupt (schema is not {SCHEMA_PR}); run with --fresh to replace it")
    # A review key names a file under reviews/: 64 hex digits and nothing else, so a
    # planted chain cannot point a read outside the store.
    if not all(isinstance(e, dict) and _is_hex64(e.get("review")) and _is_hex64(e.get("patch")) for e in data["chain"]):
        raise ReviewerError(f"state record {path} is corrupt (an entry is not a review key and a patch sha256); "
                            "run with --fresh to replace it")
    return data["chain"]


def is_hex(value: Any, *lengths: int) -> bool:
    """Lowercase hex of one of `lengths` characters (a review key, a sha256, a commit id)."""
    return isinstance(value, str) and len(value) in lengths and all(c in "0123456789abcdef" for c in value)


def _is_hex64(value: Any) -> bool:
    return is_hex(value, 64)


def chain_records(store: StateStore, chain_key: str, patch_sha: str) -> list[Record]:
    """The stored reviews of the versions before this patch in the PR's own history, oldest first."""
    chain = _chain(store, chain_key)
    shas = [entry["patch"] for entry in chain]
    cut = shas.index(patch_sha) if patch_sha in shas else len(chain)
    if cut == 0:
        return []
    # Only the newest one is read: the older ones are not needed for a delta.
    entry = chain[cut - 1]
    record = store.load(entry["review"])
    if record is not None and record.identity.get("patch_sha256") != entry["patch"]:
        raise ReviewerError(f"state record {store.root / 'prs' / (chain_key + '.json')} is corrupt (an entry's patch "
                            "is not the one its review reviewed); run with --fresh to replace it")
    return [] if record is None else [record]


def previous_in_chain(store: StateStore, chain_key: str, patch_sha: str) -> Mapping[str, Any] | None:
    """The review of the version before this patch in the PR's own history."""
    records = chain_records(store, chain_key, patch_sha)
    return records[-1].report if records else None


def _append_chain(store: StateStore, chain_key: str, review_key: str, patch_sha: str, untrusted: bool = False) -> None:
    try:
        chain = _chain(store, chain_key)
    except ReviewerError:
        if not untrusted:
            raise
        chain = []  # a chain someone else wrote, and broke, is started anew
    if patch_sha not in [e["patch"] for e in chain]:
        chain.append({"review": review_key, "patch": patch_sha})
    payload = json.dumps({"schema": SCHEMA_PR, "chain": chain}, sort_keys=True).encode()
    store.atomic_write(store.root / "prs" / f"{chain_key}.json", payload)


def render(report: Report, formats: Iterable[str] = FORMATS) -> dict[str, str]:
    return {fmt: renderer(fmt)(report) for fmt in sorted(set(formats))}


def review_with_state(
    req, store: StateStore | None, fresh: bool, previous: Mapping[str, Any] | None, formats: Iterable[str] = FORMATS,
    untrusted: bool = False,
) -> Result:
    """Review, or replay the stored review of the same identity.

    A stored review keeps every format so any later request is served from
    it; without a store only the `formats` asked for are rendered. An
    `untrusted` store (reviewer.state.trust) is never replayed nor read for a
    previous version: the caller passes the previous report it recomputed.
    """
    from reviewer import review

    with review.prepared(req) as p:
        if store is None:
            report = review.execute(req, p).report
            if previous is not None:
                report = with_delta(report, previous)
            return Result(checked(render(report, formats)), report.verdict.value, False, None)
        return _stored(req, p, store, fresh or untrusted, previous, untrusted)


def checked(outputs: dict[str, str]) -> dict[str, str]:
    """Every rendered text must be writable as UTF-8 before anything is stored or
    printed: a run that cannot be shown whole must leave no record behind."""
    for fmt, text in outputs.items():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ReviewerError(f"the {fmt} report holds text that is not valid Unicode ({exc.reason}); nothing was stored") from None
    return outputs


def _stored(
    req, p: "Prepared", store: StateStore, fresh: bool, previous: Mapping[str, Any] | None, untrusted: bool = False,
) -> Result:
    from reviewer import review

    repo_id = repo_name(req, p.repo)
    chain_key = pr_key(repo_id, req)
    if previous is None and chain_key is not None and not fresh and not untrusted:
        previous = previous_in_chain(store, chain_key, p.inputs.patch.sha256)
    ident = identity(req, p, previous)
    with store.lock(ident.key) as writable:
        record = None if fresh else store.load(ident.key)
        if record is not None:
            return Result(record.outputs, record.verdict, True, ident.key)
        if not writable:
            raise store.read_only_error(fresh)  # before reviewing: the review could not be kept
        report = review.execute(req, p).report
        if previous is not None:
            report = with_delta(report, previous)
        outputs = checked(render(report))
        store.save(Record(
            key=ident.key, identity=ident.fields, repo=repo_id, verdict=report.verdict.value,
            outputs=outputs, report=to_dict(report), recorded_at=now(),
        ))
        if chain_key is not None:
            _append_chain(store, chain_key, ident.key, report.patch.sha256, untrusted)
    return Result(outputs, report.verdict.value, False, ident.key)
