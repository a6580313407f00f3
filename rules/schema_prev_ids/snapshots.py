"""schema-prev-ids: snapshots, read from JSON, and the single-file layout.

Parsing a snapshot (`id`, `prevIds`/`prevId`) with the line span of each
top-level key, the helpers that format ids and point at a snapshot, and the
checks of single-file snapshots (opencode's `packages/core/schema.json`):
the patched `prevIds` names the base version's `id`, and the id is fresh.

Ids are compared as drizzle-kit compares them, byte for byte: it writes an
id with `crypto.randomUUID()` (lowercase hex, 8-4-4-4-12) and copies the
parent's id verbatim, so an id in another case or with whitespace around it
is another id, and is shown quoted (`quoted`) so the difference is visible.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from reviewer.change.changeset import ChangedFile, FileStatus
from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.history import lookup
from reviewer.rules.schema_prev_ids.state import State


# An id as drizzle-kit writes it: `crypto.randomUUID()`, lowercase hex 8-4-4-4-12, nothing around it.
# drizzle-kit copies the parent's id into prevIds verbatim and compares ids as strings, so an
# id in another case or with whitespace around it is a different id (it names no snapshot).
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
UUID_FORM = "lowercase hex, 8-4-4-4-12"
# Characters that hide around an id: whitespace and the zero-width ones Python's strip() keeps.
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"


REVEAL_FORK = (
    "two migrations now claim the same parent (or none), so the chain forks",
    "the next `drizzle-kit generate` diffs against whichever branch it picks and emits DDL "
    "that re-creates or drops tables another branch already migrated",
    "a database migrated along one branch fails (or silently diverges) when the other branch's migration runs",
)


# --------------------------------------------------------------------------- small pure helpers


def short(value: str) -> str:
    return value[:8] + "…" if len(value) > 12 else value


def fmt_ids(ids: Sequence[str]) -> str:
    return "[" + ", ".join(show_id(i) for i in ids) + "]"


def is_uuid(value: str) -> bool:
    """An id exactly as drizzle-kit writes it (`fullmatch`: `$` would let a trailing newline through)."""
    return bool(_UUID.fullmatch(value))


def quoted(value: str) -> str:
    """`value` as a JSON string literal, ASCII only: a space, a tab, a zero-width or
    look-alike character, or a case difference stays visible wherever it is shown."""
    return json.dumps(value, ensure_ascii=True)


def show_id(value: str, roots: Sequence[str] = ()) -> str:
    """An id for a message, in a code span: as it is when well formed, quoted when not."""
    return f"`{value}`" if is_uuid(value) or value in roots else f"`{quoted(value)}`"


def loose_match(value: str, target: str) -> str:
    """How `value` is `target` written loosely (another case, whitespace around it), or "".

    drizzle-kit never writes such an id; it compares ids byte for byte, so the
    loose one names nothing, whatever a case-insensitive reader would think.
    """
    if value == target:
        return ""
    core = value.strip().strip(_INVISIBLE).strip()
    if core.lower() != target.lower():
        return ""
    ways = []
    if core != target:
        ways.append("in upper case" if core == target.upper() else "in another case")
    start = value.find(core)
    lead, trail = value[:start], value[start + len(core):]
    pad = " and ".join(_padding(text, side) for text, side in ((lead, "leading"), (trail, "trailing")) if text)
    if pad:
        ways.append(f"with {pad}")
    return " ".join(ways)


def _padding(text: str, side: str) -> str:
    if text == " ":
        return f"a {side} space"
    if set(text) == {" "}:
        return f"{len(text)} {side} spaces"
    return f"{side} {quoted(text)}"


def top_level_spans(text: str) -> dict[str, tuple[int, int]]:
    """Line range of each top-level key of a JSON object: (key line, last line of its value).

    Formatting differs between snapshot versions (one-line vs multi-line arrays), so the
    lines come from scanning the text's structure, not from searching for the key.
    """
    spans: dict[str, tuple[int, int]] = {}
    depth = 0
    line = 1
    i = 0
    n = len(text)
    expect_key = False
    candidate: tuple[str, int] | None = None
    current: tuple[str, int] | None = None
    last_line = 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r":
            i += 1
            continue
        if c == '"':
            start, start_line = i, line
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                elif text[i] == "\n":
                    line += 1
                i += 1
            if depth == 1 and expect_key:
                try:
                    candidate = (json.loads(text[start : i + 1]), start_line)
                except ValueError:
                    candidate = None
            last_line = line
            i += 1
            continue
        if depth == 1 and c == ":" and candidate is not None:
            current, candidate, expect_key = candidate, None, False
        elif depth == 1 and c == ",":
            if current is not None:
                spans[current[0]] = (current[1], last_line)
            current, expect_key = None, True
        elif c in "{[":
            depth += 1
            if depth == 1 and c == "{":
                expect_key = True
        elif c in "}]":
            depth -= 1
            if depth == 0 and current is not None:
                spans[current[0]] = (current[1], last_line)
                current = None
        last_line = line
        i += 1
    return spans


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class Snapshot:
    path: str
    id: str
    prev_ids: tuple[str, ...]
    prev_key: str
    data: Mapping[str, Any] = field(repr=False)
    spans: Mapping[str, tuple[int, int]] = field(repr=False)

    def span(self, key: str) -> tuple[int, int]:
        return self.spans.get(key, (1, 1))

    @property
    def schema(self) -> dict[str, Any]:
        """Everything but the chain links: what the snapshot says the schema is."""
        return {k: v for k, v in self.data.items() if k not in ("id", self.prev_key)}


@dataclass(frozen=True)
class Broken:
    path: str
    reason: str
    line: int


def parse_snapshot(path: str, text: str | None, prev_key: str) -> Snapshot | Broken:
    if text is None:
        return Broken(path, "is not UTF-8 text", 1)
    try:
        data = json.loads(text)
    except RecursionError:
        return Broken(path, "is nested too deeply to read", 1)
    except ValueError as exc:
        return Broken(path, f"is not valid JSON ({getattr(exc, 'msg', exc)})", getattr(exc, "lineno", 1))
    if not isinstance(data, dict):
        return Broken(path, "is not a JSON object", 1)
    spans = top_level_spans(text)
    ident = data.get("id")
    if not isinstance(ident, str):
        return Broken(path, "has no string `id`", spans.get("id", (1, 1))[0])
    raw = data.get(prev_key)
    if prev_key == "prevId":
        if not isinstance(raw, str):
            return Broken(path, "has no string `prevId`", spans.get(prev_key, spans.get("id", (1, 1)))[0])
        prev = (raw,)
    else:
        if not isinstance(raw, list) or not all(isinstance(p, str) for p in raw):
            return Broken(path, "has no `prevIds` array of strings", spans.get(prev_key, spans.get("id", (1, 1)))[0])
        prev = tuple(raw)
    return Snapshot(path, ident, prev, prev_key, data, spans)


def loc(snap: Snapshot, key: str, note: str = "") -> Location:
    line, end = snap.span(key)
    return Location(snap.path, line, end, note)


def edit_span(f: ChangedFile, note: str) -> list[Location]:
    """Where the patch edited a file: makes an unchanged reported line (a stale id) in scope.

    The first edit in file order: its first contiguous run of added lines, or,
    for an edit that only removes lines, the nearest surviving line of the
    removal (what `--scope changed` counts as touched).
    """
    for h in sorted(f.hunks, key=lambda h: (h.new_start, h.old_start)):
        if h.added:
            start = end = min(h.added)
            while end + 1 in f.added_lines:  # the first contiguous edit is enough to show it
                end += 1
            return [Location(f.path, start, end, note)]
        if h.deleted_after:
            line = max(1, min(h.deleted_after) + 1)
            total = len((f.patched_text or "").splitlines())
            line = min(line, max(1, total))
            return [Location(f.path, line, line, note + " (lines removed here)")]
    return []


def _same_json(a: str | None, b: str | None) -> bool:
    try:
        return a is not None and b is not None and json.loads(a) == json.loads(b)
    except (ValueError, RecursionError):
        return False


# ----- single-file snapshots (schema.json)


@dataclass(frozen=True)
class SingleResult:
    snapshot: Snapshot
    base: Snapshot | None
    expected: tuple[str, ...]
    schema_changed: bool


def check_single(st: State, path: str) -> SingleResult | None:
    f = st.files.get(path)
    if f is None:
        return None
    st.touched = True
    if f.status is FileStatus.DELETED:
        st.snapshot_changed = True
        st.add(
            "malformed-snapshot",
            title=f"{posixpath.basename(path)} deleted",
            message=f"The patch deletes the snapshot `{path}`; the migration chain loses its newest node and "
            "the next `drizzle-kit generate` starts from an empty schema.",
            location=Location(path, 1, 1),
            failure_sequence=(
                f"`{path}` is deleted",
                "the next generate has no parent snapshot and diffs against an empty schema",
                "it emits CREATE TABLE for every existing table, which fails on every deployed database",
            ),
            anchor=f"{path}:deleted",
        )
        return None
    if _same_json(f.base_text, f.patched_text):
        st.notes.append(f"{posixpath.basename(path)} reformatted only (same JSON): no new snapshot version")
        return None
    st.snapshot_changed = True
    snap = parse_snapshot(path, f.patched_text, "prevIds")
    if isinstance(snap, Broken):
        st.add(
            "malformed-snapshot",
            title=f"{posixpath.basename(path)} {snap.reason.split(' (')[0]}",
            message=f"The patched snapshot `{path}` {snap.reason}, so neither drizzle-kit nor this review can "
            "tell which schema it follows.",
            # A binary file has no patched lines to point at; the finding is about the whole file.
            location=Location(path, snap.line, snap.line) if f.patched_text is not None else None,
            failure_sequence=(
                f"`{path}` cannot be read as a snapshot",
                "drizzle-kit refuses to generate or check migrations against it",
                "the chain cannot be verified: its parent and its id are unknown",
            ),
            anchor=f"{path}:malformed",
        )
        return None
    base = parse_snapshot(f.source_path, f.base_text, "prevIds") if f.base_text is not None else None
    base_snap = base if isinstance(base, Snapshot) else None
    roots = tuple(st.opt("root_ids"))
    given = str(st.opt("expect_prev_id") or "")
    if given:
        expected: tuple[str, ...] = (given,)
        source = "--expect-prev-id"
    elif base_snap is not None:
        expected = (base_snap.id,)
        source = "the base snapshot's id"
    elif base is None:
        expected = roots[:1]
        source = "the root id (the snapshot is new)"
    else:
        expected = ()
        source = ""
        st.notes.append(f"base {posixpath.basename(path)} unreadable: parent unproven")
    _check_single_prev(st, snap, base_snap, expected, source)
    _check_single_id(st, snap, base_snap, roots)
    schema_changed = base_snap is None or snap.schema != base_snap.schema
    return SingleResult(snap, base_snap, expected, schema_changed)


def _check_single_prev(
    st: State, snap: Snapshot, base: Snapshot | None, expected: tuple[str, ...], source: str
) -> None:
    """The patched prevIds is exactly `expected`, compared as drizzle-kit compares ids: byte for byte.

    There is no exemption: an id in another case or with whitespace around it,
    the root id on a snapshot the base already had, an earlier snapshot's id
    and an id no snapshot ever had are each a must-fix; the base's git history
    only tells which of them it is (history.py).
    """
    if expected and list(snap.prev_ids) == list(expected):
        return
    roots = tuple(st.opt("root_ids"))
    malformed = [p for p in snap.prev_ids if not is_uuid(p) and p not in roots]
    if not expected and not malformed:
        return  # the base version is unreadable: noted, the parent is unproven
    name = posixpath.basename(snap.path)
    parent = expected[0] if expected else ""
    what = "expected parent" if source == "--expect-prev-id" else "base id"
    if malformed:
        why, fork = _malformed(malformed, parent, what, base, roots)
    elif base is not None and snap.prev_ids and set(snap.prev_ids) <= set(roots):
        had = [p for p in base.prev_ids if p not in roots]
        why = (
            f"it resets the chain to the root id, but the base snapshot `{base.id}` has a parent {fmt_ids(had)}"
            if had
            else f"it names the root id, but the base snapshot `{base.id}` is already the chain's first snapshot"
        ) + ": only the first snapshot of a chain has no parent"
        fork = f"the chain restarts at this snapshot, cut off from `{base.id}` and everything before it"
    elif base is not None and set(snap.prev_ids) & set(base.prev_ids):
        shared = sorted(set(snap.prev_ids) & set(base.prev_ids))
        why = (
            f"{'prevIds is left as in the base version: it ' if list(snap.prev_ids) == list(base.prev_ids) else 'it '}"
            f"names the base snapshot's own parent {fmt_ids(shared)}, so the base snapshot `{base.id}` and this one "
            "both claim that parent"
        )
        fork = f"the base snapshot `{base.id}` and the patched one both descend from {fmt_ids(shared)}: the chain forks"
    elif base is not None and base.id in snap.prev_ids and len(snap.prev_ids) > 1:
        extra = [p for p in snap.prev_ids if p != base.id]
        why = f"it names the base id together with {fmt_ids(extra)}, which are not open leaves of this chain"
        fork = "the snapshot claims extra parents, so the chain no longer has one newest snapshot"
    elif base is not None and base.id in snap.prev_ids:
        why = f"it names the base snapshot's id, but the parent was given as `{parent}`: the patch is not based on the expected snapshot"
        fork = f"the patch's migration lands after `{base.id}` instead of `{parent}`, forking the chain the deployment expects"
    elif not snap.prev_ids:
        why = "it names no parent at all"
        fork = "the snapshot has no parent: the chain restarts at it"
    else:
        why, fork = _not_the_parent(st, snap, parent, roots)
    related = (
        [loc(base, "id", f"base version of this file: id `{short(base.id)}`, the parent the patched prevIds must name")]
        if base
        else []
    )
    f = st.files[snap.path]
    if base is None or snap.id != base.id:
        related.append(loc(snap, "id", "the patch gives the snapshot a new id here but not a new parent"))
    if not f.touches(*snap.span(snap.prev_key)) and not f.touches(*snap.span("id")):
        related += edit_span(f, "the patch changes the snapshot here, keeping the old prevIds")
    # Ids that share their first characters are told apart only by the whole id.
    clash = any(p != parent and p not in malformed and short(p) == short(parent) for p in snap.prev_ids)
    cut = (lambda value: value) if clash else short
    named = ", ".join(quoted(p) if p in malformed else cut(p) for p in snap.prev_ids) or "nothing"
    st.add(
        "prev-id-mismatch",
        title=(
            f"{name} prevIds names {named}, not the {what} {cut(parent)}"
            if parent
            else f"{name} prevIds names {named}, not an id as drizzle-kit writes it"
        ),
        message=(
            f"`{snap.path}` has prevIds {fmt_ids(snap.prev_ids)}, but its parent must be {fmt_ids(expected)} "
            f"({source}); {why}."
            if parent
            else f"`{snap.path}` has prevIds {fmt_ids(snap.prev_ids)}; {why} (the base version cannot be read, "
            "so which parent it must name is unknown)."
        ),
        location=loc(snap, snap.prev_key),
        related=related,
        failure_sequence=(
            f"the patch was generated against the schema with id `{parent}`"
            if parent
            else "the patch was generated against an unknown schema",
            f"its snapshot instead claims {fmt_ids(snap.prev_ids)} as parent",
            fork,
            *REVEAL_FORK[1:],
        ),
        anchor=f"{snap.path}:prevIds:{','.join(snap.prev_ids)}",
    )


def _malformed(
    malformed: Sequence[str], parent: str, what: str, base: Snapshot | None, roots: Sequence[str]
) -> tuple[str, str]:
    """Why an id drizzle-kit never writes names no snapshot, and what it is a loose spelling of."""
    known = [(parent, f"the {what} `{parent}`")] if parent else []
    if base is not None:
        known += [(base.id, f"the base id `{base.id}`")] + [(p, f"the base snapshot's own parent `{p}`") for p in base.prev_ids]
    known += [(r, f"the root id `{r}`") for r in roots]
    bits = []
    for p in malformed:
        like = next((f"{label} {how}" for target, label in known if target and (how := loose_match(p, target))), "")
        bits.append(f"`{quoted(p)}` is not an id as drizzle-kit writes it ({UUID_FORM})" + (f": it is {like}" if like else ""))
    why = "; ".join(bits) + ". drizzle-kit compares ids byte for byte, so that entry names no snapshot"
    fork = "drizzle-kit finds no snapshot with that id: the chain breaks at this snapshot"
    return why, fork


def _not_the_parent(st: State, snap: Snapshot, parent: str, roots: Sequence[str]) -> tuple[str, str]:
    """Why a well-formed id that is not the expected parent is wrong, from the base's git history.

    An earlier version's id means the patch was generated against an older
    schema than the base's (the base moved on: a fork); an id no version of the
    file ever had, in the base tree or in any commit before it, names no
    snapshot at all. Neither is exempt.
    """
    f = st.files[snap.path]
    path = f.source_path
    others = [p for p in snap.prev_ids if p != parent and p not in roots]
    found = [lookup(st, path, p) for p in others[:4]]
    older = next((h for h in found if h.as_id), None)
    if older is not None:
        assert older.as_id is not None
        why = (
            f"`{older.ident}` is the id `{path}` had at commit `{older.as_id[:12]}`, before the base: the patch was "
            f"generated against an older snapshot, and the base has moved on from it to `{parent}`"
        )
        fork = f"the chain already continues from `{older.ident}` towards `{parent}`; this snapshot branches off beside it: the chain forks"
        return why, fork
    first = found[0] if found else None
    prefix = (
        f" (`{first.ident}` shares its first 8 characters with `{parent}`, not the rest)"
        if first is not None and parent and first.ident[:8] == parent[:8]
        else ""
    )
    if first is not None and first.as_parent:
        why = (
            f"no snapshot of the base tree or of its history has the id `{first.ident}`{prefix}: it appears only as "
            f"the parent that the version of `{path}` at commit `{first.as_parent[:12]}` names (an intermediate "
            "snapshot no commit holds, e.g. of a squashed branch)"
        )
    else:
        why = (
            f"no snapshot of the base tree or of its history has that id{prefix}"
            + (first.where if first is not None else "")
        )
    fork = f"the snapshot hangs off {fmt_ids(snap.prev_ids)}, outside the chain the patch was generated in"
    return why, fork


def _check_single_id(st: State, snap: Snapshot, base: Snapshot | None, roots: tuple[str, ...]) -> None:
    name = posixpath.basename(snap.path)
    problem = ""
    if not is_uuid(snap.id):
        like = loose_match(snap.id, base.id) if base is not None else ""
        problem = f"is not a UUID as drizzle-kit writes it ({UUID_FORM})" + (
            f": it is the base snapshot's id `{base.id}` {like}, so the snapshot was edited in place and the id "
            "disguised instead of regenerated" if base is not None and like else ""
        )
    elif snap.id in roots:
        problem = "is the root id, which only the first snapshot's parent may use"
    elif base is not None and snap.id == base.id:
        problem = "is the base snapshot's id: the snapshot was edited in place instead of regenerated"
    elif base is not None and snap.id in base.prev_ids:
        problem = "is the id of an earlier snapshot in the chain (the base snapshot's parent)"
    elif snap.id in snap.prev_ids:
        problem = "also appears in its own prevIds"
    if not problem:
        return
    related = [loc(base, "id", f"base version of this file: id `{short(base.id)}`")] if base else []
    if not st.files[snap.path].touches(*snap.span("id")):
        related += edit_span(st.files[snap.path], "the patch changes the snapshot here, keeping the old id")
    st.add(
        "id-not-fresh",
        title=f"{name} id {short(snap.id) if is_uuid(snap.id) else quoted(snap.id)} is not a fresh UUID",
        message=f"The patched `{snap.path}` has id {show_id(snap.id, roots)}, which {problem}. A new snapshot version needs a new UUID.",
        location=loc(snap, "id"),
        related=related,
        failure_sequence=(
            f"the schema in this patch is recorded under id {show_id(snap.id, roots)}",
            "another snapshot (or none) already answers to that id",
            "the next migration's prevIds cannot say which schema it starts from",
            "drizzle-kit diffs against the wrong schema and regenerates DDL that is already applied",
        ),
        anchor=f"{snap.path}:id:{snap.id}",
    )
