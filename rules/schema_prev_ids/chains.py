"""schema-prev-ids: drizzle-kit folder chains, v1 folders and legacy journals.

The whole chain of the patched tree is checked (every parent resolves, no
duplicate id, one root, each new snapshot follows the newest one), but only
defects the patch introduces are reported. A new snapshot needs its
migration (v1 `migration.sql`, or a legacy journal entry and its SQL), sorted
after the base migrations; a new v1 migration folder needs its snapshot.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from reviewer.change.changeset import FileStatus
from reviewer.engine.context import TreeView
from reviewer.engine.globs import matches
from reviewer.report.model import Location
from reviewer.rules.schema_prev_ids.snapshots import (
    REVEAL_FORK,
    UUID_FORM,
    Broken,
    Snapshot,
    fmt_ids,
    is_uuid,
    loc,
    loose_match,
    parse_snapshot,
    quoted,
    short,
    show_id,
    top_level_spans,
)
from reviewer.rules.schema_prev_ids.state import State


# ----- drizzle folder layouts (v1 and legacy)


def _fmt_prev(snap: "Snapshot") -> str:
    """prevIds as a list, the legacy single prevId as a value."""
    return show_id(snap.prev_ids[0]) if snap.prev_key == "prevId" else fmt_ids(snap.prev_ids)


@dataclass(frozen=True)
class _Chain:
    kind: str  # "v1" | "legacy"
    root: str  # the folder the chain lives in
    patched: tuple[str, ...]
    base: tuple[str, ...]
    journal: str | None = None

    @property
    def prev_key(self) -> str:
        return "prevId" if self.kind == "legacy" else "prevIds"


def find_chains(st: State) -> list[_Chain]:
    """The chains the patch touches: a chain none of whose files changed has
    nothing this patch introduced (check_chain would pass it over), so only
    the roots of changed paths are looked up, each by prefix, never by
    matching every path of both trees."""
    singles = set(st.opt("snapshots"))
    v1_globs = tuple(st.opt("snapshot_globs"))
    journal_globs = tuple(st.opt("journal_globs"))
    legacy_name = st.name_pattern("legacy_snapshot_pattern")
    folder = st.name_pattern("v1_folder_pattern")

    def v1_root(p: str) -> str | None:
        if p not in singles and matches(p, v1_globs) and folder.match(posixpath.basename(posixpath.dirname(p))):
            return posixpath.dirname(posixpath.dirname(p))
        return None

    def is_journal(p: str) -> bool:
        return p not in singles and matches(p, journal_globs) and not v1_root(p)

    def under(tree: TreeView, root: str) -> tuple[str, ...]:
        return tree.paths(root + "/" if root else "")

    changed = sorted(st.files)
    chains: dict[tuple[str, str], dict[str, set[str]]] = {}
    for root in sorted({r for p in changed if (r := v1_root(p)) is not None}):
        chains[("v1", root)] = {side: {p for p in under(tree, root) if v1_root(p) == root}
                                for side, tree in (("base", st.ctx.base), ("patched", st.ctx.patched))}
    # A legacy chain is a journal's folder; a changed snapshot there touches it too.
    legacy_roots = {posixpath.dirname(p) for p in changed
                    if is_journal(p) or legacy_name.match(posixpath.basename(p))}
    for root in sorted(legacy_roots):
        sides = {"base": st.ctx.base, "patched": st.ctx.patched}
        if not any(is_journal(p) and posixpath.dirname(p) == root for tree in sides.values() for p in under(tree, root)):
            continue
        prefix = root + "/" if root else ""
        chains[("legacy", root)] = {
            side: {p for p in tree.paths(prefix) if "/" not in p[len(prefix):] and legacy_name.match(posixpath.basename(p))}
            for side, tree in sides.items()
        }
    out: list[_Chain] = []
    for (kind, root), sets in sorted(chains.items()):
        journal = None
        if kind == "legacy":
            journal = next((p for p in sorted(st.ctx.patched.paths(root + "/")) if matches(p, journal_globs)), None)
        out.append(_Chain(kind, root, tuple(sorted(sets["patched"])), tuple(sorted(sets["base"])), journal))
    return out


def _load(tree: TreeView, paths: Iterable[str], prev_key: str) -> dict[str, Snapshot | Broken]:
    return {p: parse_snapshot(p, tree.text(p), prev_key) for p in sorted(paths)}


@dataclass(frozen=True)
class _Defects:
    duplicates: dict[str, tuple[str, ...]]  # id -> paths
    dangling: frozenset[tuple[str, str]]  # (path, missing parent)
    roots: tuple[str, ...]  # paths


def _defects(snaps: Mapping[str, Snapshot | Broken], roots_ids: frozenset[str]) -> _Defects:
    good = [s for s in snaps.values() if isinstance(s, Snapshot)]
    by_id: dict[str, list[str]] = {}
    for s in good:
        by_id.setdefault(s.id, []).append(s.path)
    ids = set(by_id)
    dangling = frozenset((s.path, p) for s in good for p in s.prev_ids if p not in ids and p not in roots_ids)
    roots = tuple(sorted(s.path for s in good if all(p in roots_ids for p in s.prev_ids)))
    return _Defects({i: tuple(sorted(ps)) for i, ps in sorted(by_id.items()) if len(ps) > 1}, dangling, roots)


def check_chain(st: State, chain: _Chain) -> str | None:
    changed = sorted(p for p in set(chain.patched) | set(chain.base) if p in st.files)
    journal_changed = chain.journal is not None and chain.journal in st.files
    if not changed and not journal_changed:
        return None
    st.touched = True
    st.snapshot_changed = True
    roots_ids = frozenset(st.opt("root_ids"))
    patched = _load(st.ctx.patched, chain.patched, chain.prev_key)
    base = _load(st.ctx.base, chain.base, chain.prev_key)
    before = len(st.findings)
    for path in changed:
        snap = patched.get(path)
        if isinstance(snap, Broken):
            st.add(
                "malformed-snapshot",
                title=f"{path.rsplit('/', 2)[-2]}/{posixpath.basename(path)} {snap.reason.split(' (')[0]}",
                message=f"The changed snapshot `{path}` {snap.reason}; drizzle-kit refuses it and the chain cannot be verified.",
                location=Location(path, snap.line, snap.line),
                failure_sequence=(
                    f"`{path}` cannot be read as a snapshot",
                    "`drizzle-kit check` and `generate` stop with an error",
                    "the chain through this snapshot is unproven",
                ),
                anchor=f"{path}:malformed",
            )
        elif isinstance(snap, Snapshot) and (not is_uuid(snap.id) or snap.id in roots_ids):
            like = _loose_of(snap.id, sorted(s.id for s in base.values() if isinstance(s, Snapshot)), "the base id")
            st.add(
                "id-not-fresh",
                title=f"snapshot id {short(snap.id) if is_uuid(snap.id) else quoted(snap.id)} is not a fresh UUID",
                message=f"`{path}` has id {show_id(snap.id)}, which is "
                + ("the root id." if snap.id in roots_ids
                   else f"not a UUID as drizzle-kit writes it ({UUID_FORM})" + (f": it is {like}." if like else ".")),
                location=loc(snap, "id"),
                failure_sequence=(
                    f"the snapshot is recorded under {show_id(snap.id)}",
                    "a child naming it cannot be told apart from the root / other ids",
                    *REVEAL_FORK[1:],
                ),
                anchor=f"{path}:id:{snap.id}",
            )
    now = _defects(patched, roots_ids)
    was = _defects(base, roots_ids)
    _report_graph(st, chain, patched, base, now, was, set(changed))
    _check_new_parents(st, chain, patched, base, now, roots_ids)
    _check_chain_migrations(st, chain, patched, set(changed))
    good = sum(1 for s in patched.values() if isinstance(s, Snapshot))
    if len(st.findings) == before:
        where = chain.root or "."
        return f"{where}: {good} snapshots, one root, every parent resolves"
    return None


def _report_graph(
    st: State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], base: Mapping[str, Snapshot | Broken],
    now: _Defects, was: _Defects, changed: set[str],
) -> None:
    for ident, paths in sorted(now.duplicates.items()):
        if was.duplicates.get(ident) == paths:
            continue  # pre-existing
        culprits = [p for p in paths if p in changed] or list(paths)
        at = culprits[-1]
        snap = patched[at]
        assert isinstance(snap, Snapshot)
        st.add(
            "duplicate-id",
            title=f"snapshot id {short(ident)} used by {len(paths)} snapshots",
            message=f"`{at}` has id `{ident}`, which {', '.join('`' + p + '`' for p in paths if p != at)} also has.",
            location=loc(snap, "id"),
            related=[loc(patched[p], "id", "same id") for p in paths if p != at and isinstance(patched[p], Snapshot)],
            failure_sequence=(
                f"two snapshots answer to `{ident}`",
                "every child naming that id has two possible parents",
                *REVEAL_FORK[1:],
            ),
            anchor=f"{at}:duplicate:{ident}",
        )
    base_ids = {s.id: s for s in base.values() if isinstance(s, Snapshot)}
    chain_ids = sorted({s.id for s in patched.values() if isinstance(s, Snapshot)} | set(base_ids))
    for path, parent in sorted(now.dangling - was.dangling):
        snap = patched[path]
        assert isinstance(snap, Snapshot)
        gone = base_ids.get(parent)
        related = []
        if gone is not None:
            related.append(Location(gone.path, gone.span("id")[0], gone.span("id")[1], "the parent in the base tree, removed or renumbered by the patch"))
        # An id in another case or with whitespace around it is another id to drizzle-kit: say which one it spells loosely.
        like = _loose_of(parent, chain_ids, "the id") or _loose_of(parent, sorted(st.opt("root_ids")), "the root id")
        st.add(
            "dangling-parent",
            title=f"snapshot names missing parent {short(parent) if is_uuid(parent) else quoted(parent)}",
            message=(
                f"`{path}` names {show_id(parent)} in {snap.prev_key}, but no snapshot of `{chain.root or '.'}` has that id"
                + (
                    f": it is not an id as drizzle-kit writes it ({UUID_FORM})" + (f"; it is {like}" if like else "")
                    + ", and drizzle-kit compares ids byte for byte."
                    if not is_uuid(parent)
                    else " any more (the patch removed or renumbered it)." if gone
                    else " (it was generated on another branch or against a deleted snapshot)."
                )
            ),
            location=loc(snap, snap.prev_key),
            related=related,
            failure_sequence=(
                f"`{path}` was generated against a schema with id `{parent}`",
                "that schema is not part of this chain",
                "drizzle-kit cannot place the snapshot in the history (its `check` does not notice)",
                "the next generate diffs against an unknown schema and emits wrong DDL",
            ),
            anchor=f"{path}:dangling:{parent}",
        )
    if len(now.roots) > 1:
        for path in now.roots:
            if path in was.roots:
                continue
            snap = patched[path]
            assert isinstance(snap, Snapshot)
            others = [p for p in now.roots if p != path]
            st.add(
                "multiple-roots",
                title=f"second root snapshot in {chain.root or '.'}",
                message=f"`{path}` has no parent ({snap.prev_key} {_fmt_prev(snap)}), but `{others[0]}` is already the chain's root.",
                location=loc(snap, snap.prev_key),
                related=[loc(patched[p], patched[p].prev_key, "existing root") for p in others if isinstance(patched[p], Snapshot)],
                failure_sequence=(
                    "the folder now holds two unrelated histories",
                    "the migrator applies both, each starting from an empty database",
                    "the second history's CREATE TABLE fails on a table the first already created",
                ),
                anchor=f"{path}:root",
            )


def _check_new_parents(
    st: State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], base: Mapping[str, Snapshot | Broken],
    now: _Defects, roots_ids: frozenset[str],
) -> None:
    """Each added snapshot names exactly the open leaves of the chain before it (the newest snapshot)."""
    added = [p for p in sorted(patched) if p not in base and isinstance(patched[p], Snapshot)]
    if not added:
        return
    given = str(st.opt("expect_prev_id") or "")
    open_leaves = _leaves(patched)
    linear = _linear(patched, now, open_leaves)
    if linear and not given:
        return  # one root, one newest snapshot, every parent resolves: nothing forks
    existing = {p: s for p, s in patched.items() if p in base and isinstance(s, Snapshot)}
    ids = {s.id for s in existing.values()}
    leaves = set(ids) - {pid for s in existing.values() for pid in s.prev_ids}
    dangling_paths = {p for p, _ in now.dangling}
    new_ids: set[str] = set()  # ids of the snapshots this patch added before the current one
    # New snapshots already reported as dangling or a second root, and the new
    # links that follow them: their children repeat that one defect.
    orphans: set[str] = set()
    for index, path in enumerate(added):
        snap = patched[path]
        assert isinstance(snap, Snapshot)
        if index == 0 and given:
            expected = {given}
        elif leaves:
            expected = set(leaves)
        else:
            expected = set(sorted(roots_ids)[:1])
        prev = set(snap.prev_ids)
        # Dangling parents and second roots have their own, more precise findings.
        if path in dangling_paths or (path in now.roots and len(now.roots) > 1) or (prev and prev <= orphans):
            orphans.add(snap.id)
            continue  # reported as dangling-parent / multiple-roots; not a node of this chain
        first_root = not leaves and prev <= roots_ids and not (index == 0 and given)
        if prev != expected and not first_root and not _continues_new_link(prev, leaves, new_ids):
            st.add(
                "prev-id-mismatch",
                title=f"new snapshot does not follow the newest snapshot {short(sorted(expected)[0])}",
                message=(
                    f"`{path}` has {snap.prev_key} {_fmt_prev(snap)}, but the chain's newest snapshot"
                    f"{'s are' if len(expected) > 1 else ' is'} {fmt_ids(sorted(expected))}"
                    + (" (--expect-prev-id)" if index == 0 and given else "")
                    + _mismatch_consequence(prev, expected, open_leaves, linear)
                ),
                location=loc(snap, snap.prev_key),
                related=[loc(s, "id", "newest snapshot before the patch") for s in existing.values() if s.id in expected][:3],
                failure_sequence=(
                    f"the newest snapshot of `{chain.root or '.'}` is {fmt_ids(sorted(expected))}",
                    f"the new snapshot names {_fmt_prev(snap)} instead",
                    *REVEAL_FORK,
                ),
                anchor=f"{path}:prev:{','.join(snap.prev_ids)}",
            )
        leaves = (leaves - prev) | {snap.id}
        new_ids.add(snap.id)


def _continues_new_link(prev: set[str], leaves: set[str], new_ids: set[str]) -> bool:
    """The snapshot follows snapshots this patch itself added, each still a leaf.

    In a chain of new snapshots only the link that departs from the base chain
    is a defect (reported there); the links after it that name their new
    predecessor are generated correctly and would only repeat that finding.
    """
    return bool(prev) and prev <= new_ids and prev <= leaves


def _loose_of(value: str, ids: Iterable[str], label: str) -> str:
    """"<label> `<id>` in upper case" (or with a leading space, ...) when `value` spells one of `ids` loosely, else ""."""
    for ident in ids:
        how = loose_match(value, ident)
        if how:
            return f"{label} `{ident}` {how}"
    return ""


def _leaves(patched: Mapping[str, Snapshot | Broken]) -> list[str]:
    """Ids of the patched chain's newest snapshots: those no snapshot names as a parent."""
    good = [s for s in patched.values() if isinstance(s, Snapshot)]
    named = {p for s in good for p in s.prev_ids}
    return sorted({s.id for s in good if s.id not in named})


def _linear(patched: Mapping[str, Snapshot | Broken], now: _Defects, open_leaves: list[str]) -> bool:
    """The chain the patch leaves is one line: every snapshot readable, one root, no
    duplicate id, every parent resolves, and exactly one newest snapshot. A new
    snapshot inserted between two old ones (the later one re-parented onto it)
    leaves such a chain; its place in time is migration-order's business."""
    readable = all(isinstance(s, Snapshot) for s in patched.values())
    return readable and len(now.roots) == 1 and not now.duplicates and not now.dangling and len(open_leaves) == 1


def _mismatch_consequence(prev: set[str], expected: set[str], open_leaves: list[str], linear: bool) -> str:
    if linear:
        return "; the chain is one line, but it does not continue from the snapshot the patch was expected to follow."
    if len(open_leaves) > 1:
        shown = ", ".join(f"`{short(i)}`" for i in open_leaves[:4])
        left = "; it names only some of them, so" if prev < expected else "; so"
        return f"{left} the patched chain has {len(open_leaves)} newest snapshots ({shown}): it forks."
    return "; the chain the patch leaves is not one line from a single root (see the other findings on it)."


def _check_chain_migrations(
    st: State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], changed: set[str]
) -> None:
    added = sorted(
        p for p in changed
        if p in patched and isinstance(patched[p], Snapshot) and st.files[p].status is not FileStatus.MODIFIED
    )
    if chain.kind == "v1":
        migration = str(st.opt("v1_migration_file"))
        # Only migrations the patch leaves in place: a folder it deletes or renames away is not run any more.
        folders = sorted(posixpath.basename(posixpath.dirname(p)) for p in chain.base if p in patched)
        for path in added:
            snap = patched[path]
            assert isinstance(snap, Snapshot)
            folder = posixpath.dirname(path)
            sql = posixpath.join(folder, migration)
            if not st.ctx.patched.exists(sql):
                _missing(st, snap, sql)
            name = posixpath.basename(folder)
            later = [f for f in folders if f >= name and posixpath.join(chain.root, f) != folder]
            if later:
                _out_of_order(st, snap, name, later)
        return
    journal = _journal_entries(st.ctx.patched.text(chain.journal) if chain.journal else None)
    base_journal = _journal_entries(st.ctx.base.text(chain.journal) if chain.journal else None)
    name_re = st.name_pattern("legacy_snapshot_pattern")
    for path in added:
        snap = patched[path]
        assert isinstance(snap, Snapshot)
        m = name_re.match(posixpath.basename(path))
        idx = int(m.group(1)) if m else -1
        entry = journal.get(idx)
        if entry is None or not isinstance(entry.get("tag"), str):
            st.add(
                "migration-unregistered",
                title=f"snapshot {posixpath.basename(path)} has no journal entry",
                message=(
                    f"`{chain.journal}` has no entry with idx {idx} and a tag for the new snapshot `{path}`; "
                    "drizzle's migrator only runs journal entries."
                ),
                location=loc(snap, "id"),
                related=[_journal_location(st, chain.journal)] if chain.journal else [],
                failure_sequence=(
                    "the snapshot and its SQL are committed",
                    "the migrator walks `_journal.json` and never sees the migration",
                    "deployed databases keep the old schema while the code assumes the new one",
                ),
                anchor=f"{path}:journal",
            )
            continue
        sql = posixpath.join(posixpath.dirname(chain.root), f"{entry.get('tag')}.sql")
        if not st.ctx.patched.exists(sql):
            _missing(st, snap, sql)
        if base_journal and idx in base_journal:
            continue
        when = _number(entry.get("when"))
        newer = [e for i, e in sorted(base_journal.items()) if i >= idx or _number(e.get("when")) >= when]
        if newer:
            _out_of_order(st, snap, str(entry.get("tag")), [str(e.get("tag")) for e in newer])


def check_v1_snapshots_present(st: State) -> None:
    """A new drizzle-kit v1 migration folder holds its snapshot (migration-missing's mirror).

    The chains are found from snapshot files, so a folder whose migration.sql
    arrives without one is invisible to them; it is found here from the SQL.
    """
    migration = str(st.opt("v1_migration_file"))
    folder_re = st.name_pattern("v1_folder_pattern")
    globs = tuple(st.opt("snapshot_globs"))
    for path, f in sorted(st.files.items()):
        folder = posixpath.dirname(path)
        if path != f.path or posixpath.basename(path) != migration or f.status is FileStatus.DELETED:
            continue
        if not folder_re.match(posixpath.basename(folder)):
            continue  # not a timestamped migration folder (seed data, fixtures)
        st.touched = True
        st.migration_changed = True
        prefix = folder + "/"
        if any(matches(p, globs) for p in st.ctx.patched.paths(prefix) if "/" not in p[len(prefix):]):
            continue
        had = [p for p in st.ctx.base.paths(prefix) if "/" not in p[len(prefix):] and matches(p, globs)]
        new = f.status in (FileStatus.ADDED, FileStatus.RENAMED, FileStatus.COPIED)
        if not new and not had:
            continue  # a folder that never had a snapshot: not this patch's doing
        name = posixpath.basename(folder)
        st.add(
            "snapshot-missing",
            title=f"migration {name} has no snapshot.json",
            message=(
                f"`{path}` is a {'new' if new else 'changed'} migration, but `{folder}/` has no snapshot"
                + (f" (the patch deletes `{had[0]}`)" if had else "")
                + ": the chain does not record the schema this migration creates."
            ),
            location=Location(path, 1, 1),
            related=[Location(had[0], 1, 1, "the snapshot the base tree had here")] if had else [],
            failure_sequence=(
                f"`{name}` migrates deployed databases, but no snapshot records the schema it leaves",
                "the next `drizzle-kit generate` diffs the code against the previous snapshot",
                "it emits this migration's DDL again in a new migration",
                "that migration fails (`table already exists`) on every database that ran this one",
            ),
            anchor=f"{path}:snapshot-missing",
        )


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _journal_location(st: State, journal: str) -> Location:
    text = st.ctx.patched.text(journal) or ""
    line, end = top_level_spans(text).get("entries", (1, 1))
    return Location(journal, line, end, "the journal's entries: the migrator runs only these")


def _journal_entries(text: str | None) -> dict[int, dict[str, Any]]:
    try:
        data = json.loads(text) if text else {}
    except (ValueError, RecursionError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) else None
    out: dict[int, dict[str, Any]] = {}
    for e in entries if isinstance(entries, list) else []:
        if isinstance(e, dict) and isinstance(e.get("idx"), int):
            out[e["idx"]] = e
    return out


def _missing(st: State, snap: Snapshot, sql: str) -> None:
    st.add(
        "migration-missing",
        title=f"new snapshot without {posixpath.basename(sql)}",
        message=f"`{snap.path}` is a new snapshot, but `{sql}` does not exist: nothing migrates deployed databases to it.",
        location=loc(snap, "id"),
        failure_sequence=(
            "the snapshot records the new schema",
            "no SQL moves any deployed database there",
            "code relying on the new schema fails against every existing database",
        ),
        anchor=f"{snap.path}:migration-missing",
    )


def _out_of_order(st: State, snap: Snapshot, name: str, later: list[str]) -> None:
    st.add(
        "migration-order",
        title=f"migration {name} does not sort after the base migrations",
        message=(
            f"The new migration `{name}` must sort after every base migration, but "
            f"{', '.join('`' + l + '`' for l in later[:3])} {'sorts' if len(later) == 1 else 'sort'} at or after it."
        ),
        location=loc(snap, "id"),
        failure_sequence=(
            f"a deployed database has applied up to `{later[-1]}`",
            f"`{name}` sorts before it, so the migrator treats it as already applied or runs it out of order",
            "the database lacks (or mangles) the schema the code now assumes",
        ),
        anchor=f"{snap.path}:order",
    )
