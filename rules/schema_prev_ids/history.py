"""schema-prev-ids: what the base's git history says about a snapshot id.

A single-file snapshot (opencode's `packages/core/schema.json`) is rewritten
by every migration, so the base tree holds only its newest version; the
earlier versions live in the commits before the base. When a patched
`prevIds` names an id the base version does not have, this module looks for
it there, in git objects only (no work tree, no network):

* `git log -S'"<id>"' --full-history -m <base> -- <path>` lists the commits
  reachable from the base whose version of the file gained or lost that exact
  JSON string (git's pickaxe: a byte-exact, case-sensitive search), newest
  first, side branches and merge resolutions included;
* each listed commit's version of the file is read and parsed: the id is
  proven an earlier snapshot's id only when a version's own `id` is exactly
  that string; a version that merely names it in its `prevIds` (the squashed
  intermediate of a branch, which no commit ever held) proves nothing.

Only well-formed ids are looked up, so nothing the patch chose reaches git's
command line but a lowercase UUID. History a shallow clone does not have is
said to be missing, never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from reviewer.errors import ReviewerError
from reviewer.rules.schema_prev_ids.state import State

# Commits read per id: enough for any real history of one file (each listed
# commit changed the number of times the id occurs in it).
MAX_CANDIDATES = 64
# What may be searched for: an id as drizzle-kit writes it (the caller checks; this is the last guard).
_SEARCHABLE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


@dataclass(frozen=True)
class Lookup:
    """Where the base's history has `ident` (commits are full ids, newest first)."""

    ident: str
    as_id: str | None = None  # a commit whose version of the file has exactly this `id`
    as_parent: str | None = None  # a commit whose version names it only among its parents
    shallow: bool = False  # the clone's history stops early: older versions were not read
    unreadable: str = ""  # why the history could not be read at all

    @property
    def where(self) -> str:
        """What the history could not show, for a message: "" when it was read whole."""
        if self.unreadable:
            return f" (the base's history could not be read: {self.unreadable})"
        if self.shallow:
            return " (the clone is shallow: versions older than its history were not read)"
        return ""


def _repo(st: State):
    """The repository behind the base tree (None for a loader with no repository behind it)."""
    return getattr(st.ctx.base, "repository", None)


def lookup(st: State, path: str, ident: str) -> Lookup:
    """Where in the base's history `ident` was the `id` of `path`'s snapshot (or only a parent it named)."""
    repo = _repo(st)
    base = st.ctx.changeset.base
    if repo is None or not base:
        return Lookup(ident, unreadable="no repository")
    if not _SEARCHABLE.fullmatch(ident) or "\n" in path or "\r" in path:
        return Lookup(ident, unreadable="not an id or path git can be asked about")
    shallow = bool(getattr(repo, "is_shallow", False))
    try:
        res = repo.run(
            "log", "--no-color", "--no-ext-diff", "--no-textconv", "--format=%H", "--full-history", "-m",
            f"--max-count={MAX_CANDIDATES}", f'-S"{ident}"', base, "--", path,
            check=False,
        )
        if res.returncode != 0:
            return Lookup(ident, shallow=shallow, unreadable=res.last_error_line or "git log failed")
        commits = [c for c in dict.fromkeys(res.stdout.decode().split())]
        versions = _versions(repo, commits, path)
    except (ReviewerError, OSError, KeyError) as exc:  # a history git cannot give is said to be unread
        return Lookup(ident, shallow=shallow, unreadable=(str(exc).splitlines() or [type(exc).__name__])[0])
    as_parent = None
    for commit in commits:
        data = versions.get(commit)
        if not isinstance(data, dict):
            continue
        if data.get("id") == ident:
            return Lookup(ident, as_id=commit, shallow=shallow)
        parents = data.get("prevIds", data.get("prevId"))
        parents = [parents] if isinstance(parents, str) else parents
        if as_parent is None and isinstance(parents, list) and ident in parents:
            as_parent = commit
    return Lookup(ident, as_parent=as_parent, shallow=shallow)


def _versions(repo, commits: list[str], path: str) -> dict[str, object]:
    """commit -> its version of `path`, parsed (absent where the commit deleted it or it is not JSON)."""
    if not commits:
        return {}
    names = [f"{c}:{path}" for c in commits]
    out = repo.run("cat-file", "--batch-check=%(objectname) %(objecttype)", stdin=("\n".join(names) + "\n").encode()).stdout
    oids: dict[str, str] = {}
    for commit, line in zip(commits, out.decode().splitlines()):
        parts = line.split()
        if len(parts) == 2 and parts[1] == "blob":
            oids[commit] = parts[0]
    blobs = repo.read_blobs(sorted(set(oids.values())))
    parsed: dict[str, object] = {}
    for commit, oid in oids.items():
        try:
            parsed[commit] = json.loads(blobs[oid].decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
    return parsed
