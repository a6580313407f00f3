"""schema-prev-ids: a migration the base already has is never rewritten.

A migration folder (drizzle-kit v1: `<ts>_<name>/migration.sql` and its
`snapshot.json`), a legacy snapshot (`meta/NNNN_snapshot.json`), the SQL a
legacy journal entry names, and the journal's existing entries are history:
every database that ran them keeps what they said then. A change of their
meaning is reported; a change of their bytes only (drizzle-kit regenerating a
snapshot with other formatting, SQL re-indented) is not. Meaning is compared
as drizzle-kit reads it: parsed JSON for snapshots and journals, statements
with whitespace collapsed for SQL.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from reviewer.change.changeset import ChangedFile, FileStatus
from reviewer.engine.globs import matches
from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.snapshots import edit_span, top_level_spans
from reviewer.rules.schema_prev_ids.state import State

_SQL_COMMENT = re.compile(r"--(?!>)[^\n]*")  # a line comment; drizzle's `--> statement-breakpoint` is a separator


def _json(text: str | None) -> Any:
    try:
        return json.loads(text) if text is not None else None
    except (ValueError, RecursionError):
        return text  # unreadable: compared as text (malformed-snapshot reports it on its own)


def _sql(text: str | None) -> str | None:
    if text is None:
        return None
    return " ".join(_SQL_COMMENT.sub(" ", text).split())


def _journal_entries(text: str | None) -> list[Any]:
    data = _json(text)
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, list) else []


def _kind(st: State, path: str, legacy_sql: set[str]) -> str:
    """What history file `path` is: "snapshot", "sql", "journal", or ""."""
    name = posixpath.basename(path)
    folder = posixpath.basename(posixpath.dirname(path))
    if path in set(st.opt("snapshots")):
        return ""  # a single-file snapshot is rewritten by every migration, by design
    if st.name_pattern("v1_folder_pattern").match(folder):
        if name == str(st.opt("v1_migration_file")):
            return "sql"
        if matches(path, tuple(st.opt("snapshot_globs"))):
            return "snapshot"
    if matches(path, tuple(st.opt("journal_globs"))):
        return "journal"
    if st.name_pattern("legacy_snapshot_pattern").match(name) and folder == "meta":
        return "snapshot"
    if path in legacy_sql:
        return "sql"
    return ""


def _legacy_sql(st: State) -> set[str]:
    """The SQL files the base's legacy journals name (`<migrations>/<tag>.sql`)."""
    found: set[str] = set()
    for path in st.files:
        if not matches(path, tuple(st.opt("journal_globs"))):
            continue
        folder = posixpath.dirname(posixpath.dirname(path))
        for entry in _journal_entries(st.ctx.base.text(path)):
            if isinstance(entry, dict) and isinstance(entry.get("tag"), str):
                found.add(posixpath.join(folder, entry["tag"] + ".sql"))
    return found


# Keys shown first when several changed: the chain's own links.
_LINK_KEYS = ("prevIds", "prevId", "id")


def _changed_keys(old: Any, new: Any) -> list[str]:
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return []
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return sorted(keys, key=lambda k: (k not in _LINK_KEYS, _LINK_KEYS.index(k) if k in _LINK_KEYS else 0, k))


def _where(st: State, f: ChangedFile, keys: list[str]) -> Location | None:
    """The first changed key's lines when the patch edited them, else the patch's first edit of the file."""
    spans = top_level_spans(st.ctx.patched.text(f.path) or "")
    for key in keys:
        line, end = spans.get(key, (0, 0))
        added = [n for n in range(line, end + 1) if line and n in f.added_lines]
        if added:
            last = added[0]
            while last + 1 in f.added_lines and last + 1 <= end:
                last += 1
            return Location(f.path, added[0], last, "rewritten here")
    where = edit_span(f, "rewritten here")
    return where[0] if where else None


def _changed_meaning(st: State, f: ChangedFile, kind: str) -> tuple[str, list[str]]:
    """Why the change of `f` rewrites history ("" when it keeps the meaning), and the keys that changed."""
    before, after = st.ctx.base.text(f.old_path or f.path), st.ctx.patched.text(f.path)
    if kind == "snapshot":
        old, new = _json(before), _json(after)
        if old == new:
            return "", []
        keys = _changed_keys(old, new)
        if keys:
            return "its " + ", ".join(f"`{k}`" for k in keys[:4]) + (" and more" if len(keys) > 4 else "") + " changed", keys
        return "its content changed", []
    if kind == "sql":
        return ("" if _sql(before) == _sql(after) else "its statements changed"), []
    old_entries, new_entries = _journal_entries(before), _journal_entries(after)
    kept = new_entries[: len(old_entries)]
    changed = [i for i, (a, b) in enumerate(zip(old_entries, kept)) if a != b]
    if len(kept) < len(old_entries):
        return f"{len(old_entries) - len(kept)} of its existing entries were removed", ["entries"]
    if changed:
        tag = old_entries[changed[0]].get("tag") if isinstance(old_entries[changed[0]], dict) else None
        return f"its existing entry {changed[0]}" + (f" (`{tag}`)" if tag else "") + " changed", ["entries"]
    return "", []


def check_edited_in_place(st: State) -> None:
    """A migration, snapshot or journal entry of the base tree keeps its meaning."""
    legacy_sql = _legacy_sql(st)
    for path, f in sorted(st.files.items()):
        if path != f.path or f.status is not FileStatus.MODIFIED:
            continue
        kind = _kind(st, path, legacy_sql)
        if not kind:
            continue
        st.touched = True
        why, keys = _changed_meaning(st, f, kind)
        if not why:
            continue
        name = posixpath.basename(posixpath.dirname(path)) if kind != "journal" else posixpath.basename(path)
        what = {"snapshot": "snapshot", "sql": "migration", "journal": "journal"}[kind]
        st.add(
            "migration-edited",
            title=f"existing {what} {name} edited in place",
            message=(
                f"`{path}` is part of the base tree's migration history, and the patch rewrites it: {why}. "
                "A database that already ran it never runs it again, so it keeps what the old version did, "
                "while a new database gets what the new version does; the two no longer agree. "
                "Add a new migration (and snapshot) instead."
            ),
            location=_where(st, f, keys),
            failure_sequence=(
                f"deployed databases applied `{name}` as the base tree has it",
                "the patch changes what that migration says",
                "the migrator skips it on those databases: it is recorded as applied",
                "they keep the old schema or data, new databases get the new one, and the code meets both",
            ),
            anchor=f"{path}:edited",
        )
