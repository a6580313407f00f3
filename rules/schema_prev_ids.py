"""schema-prev-ids: migration snapshots form one clean chain.

Three snapshot layouts are understood:

* single-file snapshots (opencode's `packages/core/schema.json`): one file
  rewritten by every migration; its base version's `id` is the parent the
  patched `prevIds` must name;
* drizzle-kit v1 folders (`<dir>/<ts>_<name>/snapshot.json`, `id` + `prevIds`);
* legacy drizzle-kit (`meta/_journal.json` + `meta/NNNN_snapshot.json`,
  `id` + `prevId`).

For the folder layouts the whole chain of the patched tree is checked (every
parent resolves, no duplicate id, one root), stricter than `drizzle-kit check`,
but only defects the patch introduces are reported: a defect present in the
base chain as well is not this patch's doing.

Migrations of the single-file layout live under `migration_dir` and are
listed in `migration_registry` (static imports listed in a value, or dynamic
`import("./migration/..")` calls); a registry in neither form is reported as
not understood rather than passed. A v1 migration folder needs both its
migration.sql and its snapshot.json. A DDL change (`ddl_globs`) must come
with a snapshot change and the reverse; "DDL" is what drizzle-kit emits, so
type arguments and drizzle's application-only `$` builder methods do not count.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from reviewer.change.changeset import ChangedFile, FileStatus
from reviewer.engine.context import ReviewContext, TreeView
from reviewer.engine.globs import matches
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Kind, Option, Outcome

if TYPE_CHECKING:
    from reviewer.typescript import Call, Expr, Import, Module, Program

FAMILY_ID = "schema-prev-ids"

OPTIONS: tuple[Option, ...] = (
    Option(
        'snapshots',
        ["packages/core/schema.json"],
        Kind.GLOBS,
        "Single-file snapshots: the base version's `id` is the patched `prevIds`.",
    ),
    Option(
        'snapshot_globs',
        ["**/snapshot.json"],
        Kind.GLOBS,
        'drizzle-kit v1: <dir>/<timestamp>_<name>/snapshot.json beside migration.sql.',
    ),
    Option(
        'v1_migration_file',
        "migration.sql",
        Kind.TEXT,
        'The migration file beside each drizzle-kit v1 `snapshot.json`.',
    ),
    Option(
        'v1_folder_pattern',
        r"^\d{14}_",
        Kind.PATTERN,
        'Only snapshot.json files in a timestamped folder are drizzle snapshots; other snapshot.json files (test data, caches) are not part of any chain.',
    ),
    Option(
        'journal_globs',
        ["**/meta/_journal.json"],
        Kind.GLOBS,
        'Legacy drizzle-kit: meta/_journal.json + meta/NNNN_snapshot.json.',
    ),
    Option(
        'legacy_snapshot_pattern',
        r"^(\d+)_snapshot\.json$",
        Kind.PATTERN,
        'File names of legacy drizzle-kit snapshots in `meta/` (group 1: the journal index).',
    ),
    Option(
        'migration_dir',
        "packages/core/src/database/migration",
        Kind.TEXT,
        'The directory of hand-registered migrations.',
    ),
    Option(
        'migration_registry',
        "packages/core/src/database/migration.gen.ts",
        Kind.TEXT,
        'The generated module that lists every migration the migrator runs, in order.',
    ),
    Option(
        'migration_timestamp',
        r"^(\d{14})",
        Kind.PATTERN,
        'The sortable prefix of a migration name (a 14-digit UTC timestamp).',
    ),
    Option(
        'ddl_globs',
        ["packages/core/src/**/*.sql.ts", "packages/core/src/**/sql.ts"],
        Kind.GLOBS,
        'Table-declaration files (drizzle schema modules); a change here needs a snapshot change.',
    ),
    Option(
        'table_calls',
        ["sqliteTable", "pgTable", "mysqlTable", "sqliteView", "pgView", "mysqlView"],
        Kind.NAMES,
        'Calls that declare a table in a DDL file (matched on the last segment of the import-resolved callee, so `sqliteCore.sqliteTable` counts too).',
    ),
    Option(
        'root_ids',
        ["00000000-0000-0000-0000-000000000000"],
        Kind.NAMES,
        '`prevIds` values that mean "first snapshot of the chain".',
    ),
    Option(
        'expect_prev_id',
        "",
        Kind.TEXT,
        'Given on the command line as --expect-prev-id; empty means "the base id".',
    ),
)

_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_TS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs")

_REVEAL_FORK = (
    "two migrations now claim the same parent (or none), so the chain forks",
    "the next `drizzle-kit generate` diffs against whichever branch it picks and emits DDL "
    "that re-creates or drops tables another branch already migrated",
    "a database migrated along one branch fails (or silently diverges) when the other branch's migration runs",
)


# --------------------------------------------------------------------------- checks


def _spec(name: str, severity: Severity, title: str, summary: str, why: str, bad: str, good: str) -> CheckSpec:
    return CheckSpec(f"{FAMILY_ID}/{name}", severity, title, summary, why, bad, good)


CHECKS: tuple[CheckSpec, ...] = (
    _spec(
        "prev-id-mismatch", Severity.MUST_FIX,
        "Snapshot prevIds does not name the base snapshot",
        "A changed snapshot's prevIds must be exactly [id of the snapshot it was generated from].",
        "The snapshot chain is how drizzle-kit knows which schema a migration starts from. A snapshot whose "
        "prevIds names anything but the base snapshot forks the chain: the next generate diffs against the "
        "wrong parent, and two branches' migrations can both claim the same parent.",
        '// packages/core/schema.json (base id "0c6d6be0-…")\n'
        '{ "id": "f14a9b18-…", "prevIds": ["5cc156ed-…"] }   // names the grandparent',
        '{ "id": "f14a9b18-…", "prevIds": ["0c6d6be0-…"] }   // names the base snapshot',
    ),
    _spec(
        "id-not-fresh", Severity.MUST_FIX,
        "Snapshot id is not a fresh UUID",
        "A changed snapshot needs a new UUID id, not the base id, an id already in the chain, or a non-UUID.",
        "Snapshot ids are the nodes of the migration chain. Reusing one (typically by editing schema.json in "
        "place) makes two different schemas share an id, so the next migration's parent link is ambiguous.",
        '{ "id": "0c6d6be0-…", "prevIds": ["5cc156ed-…"], "ddl": [ /* new column */ ] }  // edited in place',
        '{ "id": "f14a9b18-…", "prevIds": ["0c6d6be0-…"], "ddl": [ /* new column */ ] }  // regenerated',
    ),
    _spec(
        "duplicate-id", Severity.MUST_FIX,
        "Two snapshots share one id",
        "Every snapshot of a drizzle migration folder has a distinct id.",
        "With two nodes of one id, every child of that id has two possible parents; drizzle-kit resolves the "
        "chain arbitrarily and diffs migrations against the wrong schema.",
        "drizzle/20250301000000_posts/snapshot.json copies the id of 20250201000000_users/snapshot.json",
        "drizzle/20250301000000_posts/snapshot.json has a new UUID and prevIds [users id]",
    ),
    _spec(
        "dangling-parent", Severity.MUST_FIX,
        "Snapshot names a parent that does not exist",
        "Every prevIds/prevId entry names an existing snapshot of the same chain (or the root id).",
        "A dangling parent means the snapshot was generated on another branch or its parent was deleted; "
        "drizzle-kit check does not notice, and the next generate starts from an unknown schema.",
        '{ "id": "9b1c…", "prevIds": ["a-snapshot-that-only-exists-on-another-branch"] }',
        '{ "id": "9b1c…", "prevIds": ["<id of the newest snapshot in this folder>"] }',
    ),
    _spec(
        "multiple-roots", Severity.MUST_FIX,
        "Migration chain has more than one root",
        "Exactly one snapshot of a chain has the root id (all zeros) as its parent.",
        "A second root starts a second, unrelated history in the same folder: the migrator applies both "
        "`CREATE TABLE` sequences and the later one fails on an existing table.",
        '{ "id": "9b1c…", "prevIds": ["00000000-0000-0000-0000-000000000000"] }  // but a root already exists',
        '{ "id": "9b1c…", "prevIds": ["<id of the newest snapshot>"] }',
    ),
    _spec(
        "malformed-snapshot", Severity.MUST_FIX,
        "Changed snapshot is malformed",
        "A changed snapshot is valid JSON with a string id and prevIds (prevId in the legacy layout).",
        "drizzle-kit refuses a malformed snapshot, and this rule cannot prove the chain without one.",
        '{ "id": "f14a9b18-…", "prevIds": ["0c6d6be0-…"], }   // trailing comma',
        '{ "id": "f14a9b18-…", "prevIds": ["0c6d6be0-…"] }',
    ),
    _spec(
        "migration-missing", Severity.MUST_FIX,
        "Snapshot changed without a new migration",
        "A new snapshot version comes with a new migration file.",
        "The snapshot claims the schema moved on, but no migration moves the database: every existing "
        "database keeps the old tables while the code (and the next generate) assumes the new ones.",
        "schema.json gets a new id and a new column; packages/core/src/database/migration/ has no new file",
        "packages/core/src/database/migration/20260914170650_session-recovery.ts adds the column",
    ),
    _spec(
        "snapshot-missing", Severity.MUST_FIX,
        "New migration without its snapshot",
        "A new drizzle-kit v1 migration folder (`<timestamp>_<name>/`) holds both migration.sql and snapshot.json.",
        "drizzle-kit generates the next migration by diffing the code against the newest snapshot. A migration "
        "whose snapshot is missing leaves the chain one schema behind: the next generate diffs against the "
        "previous snapshot and emits this migration's DDL a second time, which fails on every database that "
        "already ran it.",
        "drizzle/20250201000000_posts/migration.sql   // no drizzle/20250201000000_posts/snapshot.json",
        "drizzle/20250201000000_posts/migration.sql + snapshot.json, both from one `drizzle-kit generate`",
    ),
    _spec(
        "migration-unregistered", Severity.MUST_FIX,
        "New migration is not registered",
        "Every new migration file is imported and listed in the migration registry (migration.gen.ts).",
        "The migrator only runs what the registry lists; an unregistered migration never runs, so the "
        "database lacks the tables the snapshot (and the code) rely on.",
        'import m20260302094500 from "./migration/20260302094500_session-execution"\n'
        "export const migrations = [m20260302094500]   // the new 20260914170650 file is missing",
        'import m20260302094500 from "./migration/20260302094500_session-execution"\n'
        'import m20260914170650 from "./migration/20260914170650_session-recovery"\n'
        "export const migrations = [m20260302094500, m20260914170650]",
    ),
    _spec(
        "migration-order", Severity.MUST_FIX,
        "New migration does not sort after the base migrations",
        "A new migration's timestamp sorts after every base migration, and the registry lists it last.",
        "Databases that already applied the base migrations only run migrations newer than the last one "
        "they recorded; a migration dated earlier, or listed before an older one, is skipped or runs out "
        "of order against a schema it was not written for.",
        "migration/20260101000000_session-recovery.ts   // older than 20260302094500_session-execution",
        "migration/20260914170650_session-recovery.ts   // newest",
    ),
    _spec(
        "ddl-without-snapshot", Severity.MUST_FIX,
        "Table definition changed without a snapshot change",
        "A change to a table declaration (ddl_globs) comes with a new snapshot (and migration).",
        "The code now reads or writes a column no migration creates; the first query against an existing "
        "database fails with `no such column`.",
        'export const SessionTable = sqliteTable("session", {\n  wake_attempts: integer().notNull(),  // schema.json unchanged',
        "the same column, plus schema.json regenerated and a migration adding it",
    ),
    _spec(
        "snapshot-without-ddl", Severity.SHOULD_FIX,
        "Snapshot schema changed without a DDL or migration change",
        "A snapshot whose schema changed is accompanied by a table-definition change or a migration.",
        "A snapshot edited by hand (or regenerated from another branch) records a schema the code does "
        "not declare and no migration creates; the next generate emits a surprising diff.",
        "schema.json gains a column; no *.sql.ts / sql.ts and no migration file changed",
        "schema.json, sql.ts and a new migration change together",
    ),
    _spec(
        "registry-not-understood", Severity.CONSIDER,
        "Migration registry not understood: registration not checked",
        "The migration registry names its migrations by static imports listed in a value, or by dynamic "
        "`import(\"./migration/…\")` calls; a registry in neither form cannot be checked.",
        "The migrator runs only what the registry lists. When the registry builds its list some other way (a "
        "glob, a generated manifest, a loop over file names), this family cannot prove that a new migration "
        "is registered, so it says so instead of passing the patch silently.",
        'export const migrations = import.meta.glob("./migration/*.ts")   // no migration named',
        'export const migrations = () => Promise.all([import("./migration/20260101120000_init")])',
    ),
    _spec(
        "parse-error", Severity.CONSIDER,
        "Registry or DDL file has a parse error outside the change",
        "tree-sitter left ERROR nodes in untouched lines of a file this family reads.",
        "The family reads the registry's imports and the DDL files' table declarations from the syntax "
        "tree; an unparsed region outside the change is unlikely to matter but is not proven.",
        "interface KeyedMutex<in Key> { … }   // variance annotation tree-sitter 0.23 cannot parse",
        "(no ERROR regions)",
    ),
)


# --------------------------------------------------------------------------- small pure helpers


def _short(value: str) -> str:
    return value[:8] + "…" if len(value) > 12 else value


def _fmt_ids(ids: Sequence[str]) -> str:
    return "[" + ", ".join(f"`{i}`" for i in ids) + "]"


def _fmt_prev(snap: "Snapshot") -> str:
    """prevIds as a list, the legacy single prevId as a value."""
    return f"`{snap.prev_ids[0]}`" if snap.prev_key == "prevId" else _fmt_ids(snap.prev_ids)


def _strip_ext(path: str, extensions: tuple[str, ...] = _TS_EXTENSIONS) -> str:
    return next((path[: -len(ext)] for ext in extensions if path.endswith(ext)), path)


def _stem(path: str) -> str:
    """A migration's name: its file name without its (TypeScript or `.sql`) extension."""
    return _strip_ext(posixpath.basename(path), _TS_EXTENSIONS + (".sql",))


def _is_uuid(value: str) -> bool:
    return bool(_UUID.match(value))


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


def _loc(snap: Snapshot, key: str, note: str = "") -> Location:
    line, end = snap.span(key)
    return Location(snap.path, line, end, note)


def _edit_span(f: ChangedFile, note: str) -> list[Location]:
    """Where the patch edited a file: makes an unchanged reported line (a stale id) in scope."""
    added = sorted(f.added_lines)
    if not added:
        return []
    end = added[0]
    while end + 1 in f.added_lines:  # the first contiguous edit is enough to show it
        end += 1
    return [Location(f.path, added[0], end, note)]


# --------------------------------------------------------------------------- the review


@dataclass
class _State:
    ctx: ReviewContext
    files: dict[str, ChangedFile]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    snapshot_changed: bool = False
    migration_changed: bool = False
    touched: bool = False

    def opt(self, key: str) -> Any:
        return self.ctx.opts[key]

    def name_pattern(self, key: str) -> re.Pattern[str]:
        """A pattern option; these match file and folder names, never file contents."""
        return self.ctx.opts[key]

    def add(self, check: str, **kwargs: Any) -> None:
        self.findings.append(self.ctx.finding(check, **kwargs))


def _same_json(a: str | None, b: str | None) -> bool:
    try:
        return a is not None and b is not None and json.loads(a) == json.loads(b)
    except (ValueError, RecursionError):
        return False


# ----- single-file snapshots (schema.json)


@dataclass(frozen=True)
class _SingleResult:
    snapshot: Snapshot
    base: Snapshot | None
    expected: tuple[str, ...]
    schema_changed: bool


def _check_single(st: _State, path: str) -> _SingleResult | None:
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
    return _SingleResult(snap, base_snap, expected, schema_changed)


def _check_single_prev(
    st: _State, snap: Snapshot, base: Snapshot | None, expected: tuple[str, ...], source: str
) -> None:
    if not expected or list(snap.prev_ids) == list(expected):
        return
    name = posixpath.basename(snap.path)
    parent = expected[0]
    if base is not None and set(snap.prev_ids) & set(base.prev_ids):
        shared = sorted(set(snap.prev_ids) & set(base.prev_ids))
        why = (
            f"{'prevIds is left as in the base version: it ' if list(snap.prev_ids) == list(base.prev_ids) else 'it '}"
            f"names the base snapshot's own parent {_fmt_ids(shared)}, so the base snapshot `{base.id}` and this one "
            "both claim that parent"
        )
        fork = f"the base snapshot `{base.id}` and the patched one both descend from {_fmt_ids(shared)}: the chain forks"
    elif base is not None and base.id in snap.prev_ids and len(snap.prev_ids) > 1:
        extra = [p for p in snap.prev_ids if p != base.id]
        why = f"it names the base id together with {_fmt_ids(extra)}, which are not open leaves of this chain"
        fork = "the snapshot claims extra parents, so the chain no longer has one newest snapshot"
    elif base is not None and base.id in snap.prev_ids:
        why = f"it names the base snapshot's id, but the parent was given as `{parent}`: the patch is not based on the expected snapshot"
        fork = f"the patch's migration lands after `{base.id}` instead of `{parent}`, forking the chain the deployment expects"
    else:
        why = "no snapshot of the base chain has that id"
        fork = f"the snapshot hangs off {_fmt_ids(snap.prev_ids)}, outside the chain the patch was generated in"
    related = (
        [_loc(base, "id", f"base version of this file: id `{_short(base.id)}`, the parent the patched prevIds must name")]
        if base
        else []
    )
    f = st.files[snap.path]
    if base is None or snap.id != base.id:
        related.append(_loc(snap, "id", "the patch gives the snapshot a new id here but not a new parent"))
    if not f.touches(*snap.span(snap.prev_key)) and not f.touches(*snap.span("id")):
        related += _edit_span(f, "the patch changes the snapshot here, keeping the old prevIds")
    st.add(
        "prev-id-mismatch",
        title=(
            f"{name} prevIds names {', '.join(_short(p) for p in snap.prev_ids) or 'nothing'}, "
            f"not the {'expected parent' if source == '--expect-prev-id' else 'base id'} {_short(parent)}"
        ),
        message=(
            f"`{snap.path}` has prevIds {_fmt_ids(snap.prev_ids)}, but its parent must be {_fmt_ids(expected)} "
            f"({source}); {why}."
        ),
        location=_loc(snap, snap.prev_key),
        related=related,
        failure_sequence=(
            f"the patch was generated against the schema with id `{parent}`",
            f"its snapshot instead claims {_fmt_ids(snap.prev_ids)} as parent",
            fork,
            *_REVEAL_FORK[1:],
        ),
        anchor=f"{snap.path}:prevIds:{','.join(snap.prev_ids)}",
    )


def _check_single_id(st: _State, snap: Snapshot, base: Snapshot | None, roots: tuple[str, ...]) -> None:
    name = posixpath.basename(snap.path)
    problem = ""
    if not _is_uuid(snap.id):
        problem = "is not a UUID"
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
    related = [_loc(base, "id", f"base version of this file: id `{_short(base.id)}`")] if base else []
    if not st.files[snap.path].touches(*snap.span("id")):
        related += _edit_span(st.files[snap.path], "the patch changes the snapshot here, keeping the old id")
    st.add(
        "id-not-fresh",
        title=f"{name} id {_short(snap.id)} is not a fresh UUID",
        message=f"The patched `{snap.path}` has id `{snap.id}`, which {problem}. A new snapshot version needs a new UUID.",
        location=_loc(snap, "id"),
        related=related,
        failure_sequence=(
            f"the schema in this patch is recorded under id `{snap.id}`",
            "another snapshot (or none) already answers to that id",
            "the next migration's prevIds cannot say which schema it starts from",
            "drizzle-kit diffs against the wrong schema and regenerates DDL that is already applied",
        ),
        anchor=f"{snap.path}:id:{snap.id}",
    )


# ----- opencode migrations (migration_dir + registry)


def _migration_files(paths: Iterable[str], migration_dir: str) -> list[str]:
    prefix = migration_dir.rstrip("/") + "/"
    return sorted(p for p in paths if p.startswith(prefix) and "/" not in p[len(prefix):])


def _name_line(program: "Program", path: str, stem: str) -> int:
    """The line of the string naming the migration (its `name:` property), else its first line."""
    module = program.module(path)
    if module is None:  # not TypeScript (a `.sql` migration) or not in the tree
        return 1
    for value in _top_level_values(module):
        for leaf in _leaves(value):
            text = leaf.string_value
            if text is not None and stem in text:
                return leaf.line
    return 1


def _order_key(stem: str, pattern: re.Pattern[str]) -> tuple[str, str] | None:
    m = pattern.match(stem)
    if not m:
        return None
    return (m.group(1) if pattern.groups else m.group(0), stem)


def _check_migrations(st: _State, single: _SingleResult | None) -> list[str]:
    """New migration files: present, registered, newest. Returns the summary parts."""
    migration_dir = str(st.opt("migration_dir"))
    base_migrations = _migration_files(st.ctx.base.paths(migration_dir.rstrip("/") + "/"), migration_dir)
    changed_migrations = _migration_files(st.files, migration_dir)
    added = [
        p for p in changed_migrations
        if st.files[p].path == p and st.files[p].status in (FileStatus.ADDED, FileStatus.RENAMED, FileStatus.COPIED)
    ]
    if changed_migrations:
        st.touched = True
        st.migration_changed = True
    parts: list[str] = []
    if single is not None and not added:
        edited = [p for p in changed_migrations if p in base_migrations and st.files[p].status is FileStatus.MODIFIED]
        instead = (
            f" It edits {', '.join('`' + _stem(p) + '`' for p in edited)} instead, which deployed databases have "
            "already applied and will not run again."
            if edited
            else ""
        )
        st.add(
            "migration-missing",
            title=f"{posixpath.basename(single.snapshot.path)} changed without a new migration",
            message=(
                f"`{single.snapshot.path}` is a new snapshot version (id `{single.snapshot.id}`), but the patch adds "
                f"no migration under `{migration_dir}/`; existing databases never get the schema it describes.{instead}"
            ),
            location=_loc(single.snapshot, "id"),
            related=[Location(p, 1, 1, "base migration edited in place") for p in edited],
            failure_sequence=(
                "the snapshot records the new schema",
                "no migration changes any deployed database",
                "code that relies on the new tables or columns fails against every existing database",
                "the next generate diffs from the new snapshot and never emits the missing DDL",
            ),
            anchor=f"{single.snapshot.path}:migration-missing",
        )
    if not added:
        return parts
    pattern = st.name_pattern("migration_timestamp")
    registered = _check_registry(st, added, base_migrations)
    for path in added:
        newest = _check_name_order(st, path, base_migrations, pattern)
        bits = ["registered"] if registered.get(path) else []
        if newest:
            bits.append("newest")
        parts.append(f"migration {_stem(path)}" + (" " + ", ".join(bits) if bits else ""))
    return parts


def _check_name_order(st: _State, path: str, base_migrations: list[str], pattern: re.Pattern[str]) -> bool:
    """True when the new migration sorts after every base migration."""
    stem = _stem(path)
    line = _name_line(st.ctx.program, path, stem)
    key = _order_key(stem, pattern)
    older = [b for b in base_migrations if b != path]
    if key is None:
        later = older
        why = f"its name `{stem}` has no sortable timestamp prefix (pattern `{pattern.pattern}`)"
    else:
        later = [b for b in older if (_order_key(_stem(b), pattern) or ("", _stem(b))) >= key]
        why = f"`{stem}` sorts before base migration(s) {', '.join('`' + _stem(b) + '`' for b in later)}"
    if not later:
        return True
    st.add(
        "migration-order",
        title=f"migration {stem} does not sort after the base migrations",
        message=f"The new migration `{path}` must sort after every base migration, but {why}.",
        location=Location(path, line, line),
        related=[Location(b, 1, 1, "base migration that sorts at or after the new one") for b in later[:3]],
        failure_sequence=(
            f"a deployed database has applied up to `{_stem(older[-1]) if older else '(none)'}`",
            f"the migrator only runs migrations that sort after the last one it recorded; `{stem}` does not",
            "the migration is skipped (or runs before a migration it depends on)",
            "the database lacks the schema the code and snapshot now assume",
        ),
        anchor=f"{path}:order",
    )
    return False


@dataclass(frozen=True)
class _Entry:
    local: str
    module: str  # repo path without extension
    line: int  # where the registry first lists it; 0 if never used
    order: int  # position among the registry's references, for uses on one line


def _import_target(registry: str, imp: "Import") -> str | None:
    """The repository path (without extension) an import names; a missing file still names one."""
    if imp.module:
        return _strip_ext(imp.module)
    if not imp.specifier.startswith("."):
        return None  # a package
    return _strip_ext(posixpath.normpath(posixpath.join(posixpath.dirname(registry), imp.specifier)))


def _registry_entries(program: "Program", registry: str, migration_dir: str) -> list[_Entry]:
    """The migrations a registry imports, each with where it is first listed."""
    module = program.module(registry)
    if module is None:
        return []
    prefix = _strip_ext(migration_dir.rstrip("/")) + "/"
    targets: dict[str, str] = {}
    for local, imp in sorted(module.imports.items()):
        target = _import_target(registry, imp)
        if target is not None and target.startswith(prefix):
            targets[local] = target
    uses = _first_uses(module, set(targets))
    static = [_Entry(local, target, *uses.get(local, (0, 0))) for local, target in targets.items()]
    return static + _dynamic_entries(module, registry, prefix)


# Dynamic imports sort after static references on the same line; generated
# registries use one form or the other, so the tie-break only keeps order stable.
_DYNAMIC_ORDER = 1_000_000


def _dynamic_entries(module: "Module", registry: str, prefix: str) -> list[_Entry]:
    """`import("./migration/x")` calls, in document order: each one registers its migration.

    Registries built as `Promise.all([import(..), ..])` or as an object of
    `() => import(..)` entries name their migrations this way. The specifier
    must be a plain string (a template or a variable names nothing provable).
    """
    out: list[_Entry] = []
    for order, call in enumerate(module.calls()):
        if call.callee != "import" or not call.args:
            continue
        specifier = call.args[0].string_value
        if specifier is None or not specifier.startswith("."):
            continue
        target = _strip_ext(posixpath.normpath(posixpath.join(posixpath.dirname(registry), specifier)))
        if target.startswith(prefix):
            out.append(_Entry(f'import("{specifier}")', target, call.line, _DYNAMIC_ORDER + order))
    return out


def _first_uses(module: "Module", names: set[str]) -> dict[str, tuple[int, int]]:
    """(line, order) of the first reference to each name in the module's code.

    References are read from the values of top-level bindings (`export const
    migrations = [a, b]`, `export default [..]`, `{ a, b }`, `[a].concat(b)`)
    and from the receivers and arguments of every call (`register(a)`);
    imports, comments and strings are not references. A list returned from
    a function body, or hidden behind a spread (`[...older]`), is not seen:
    the model exposes no other way to enumerate a module's identifiers.
    """
    found: dict[str, tuple[int, int]] = {}
    roots = [*_top_level_values(module), *(call.expr for call in module.calls())]
    order = 0
    for root in roots:
        for leaf in _leaves(root):
            order += 1
            head = (leaf.identifier or leaf.member_path or "").split(".", 1)[0]
            if head in names:
                found[head] = min(found.get(head, (leaf.line, order)), (leaf.line, order))
    return found


# ----- reading TypeScript values through the model

_MAX_NESTING = 12  # generated registries are flat; deeper values are not walked


def _top_level_values(module: "Module") -> list["Expr"]:
    """Values of the module's top-level bindings (`const X = ..`, `export default ..`), in source order."""
    values = (module.constant(name) for name in sorted(module.declarations))
    return sorted((v for v in values if v is not None), key=lambda v: (v.line, v.end_line))


def _leaves(expr: "Expr", depth: int = 0) -> Iterator["Expr"]:
    """The leaf values inside `expr` in source order, through array elements,
    object property values, and a call's receiver and arguments."""
    if depth > _MAX_NESTING:
        return
    children = _children(expr)
    if not children:
        yield expr
        return
    for child in children:
        yield from _leaves(child, depth + 1)


def _children(expr: "Expr") -> tuple["Expr", ...]:
    if expr.elements:
        return expr.elements
    if expr.props:
        return tuple(value for _, value in expr.props)
    call = expr.call
    if call is None:
        return ()
    receiver = call.receiver
    return ((receiver,) if receiver is not None else ()) + call.args


def _check_registry(st: _State, added: list[str], base_migrations: list[str]) -> dict[str, bool]:
    registry = str(st.opt("migration_registry"))
    migration_dir = str(st.opt("migration_dir"))
    result: dict[str, bool] = {}
    if not registry or not (st.ctx.base.exists(registry) or st.ctx.patched.exists(registry)):
        return result  # this repository has no registry: nothing to register in
    text = st.ctx.patched.text(registry)
    if text is not None and _parse_error_blocks(st, registry):
        return result
    entries = _registry_entries(st.ctx.program, registry, migration_dir)
    in_base = st.ctx.base.exists(registry)
    base_entries = _registry_entries(st.ctx.base_program, registry, migration_dir) if in_base else []
    if _not_understood(entries, base_entries, in_base, bool(base_migrations), st.ctx.patched.exists(registry)):
        _report_not_understood(st, registry, text, added)
        return result
    # A module imported under two names counts by its listed name.
    by_module = {e.module: e for e in sorted(entries, key=lambda e: (e.line > 0, -e.line, -e.order))}
    listed = _first_listings(entries)
    position = {e.module: i for i, e in enumerate(listed)}
    base_stems = {_strip_ext(b) for b in base_migrations}
    for path in added:
        key = _strip_ext(path)
        entry = by_module.get(key)
        if entry is None or entry.line <= 0:
            how = "is not imported" if entry is None else f"is imported as `{entry.local}` but never listed"
            line = _name_line(st.ctx.program, path, _stem(path))
            related = _registry_related(registry, text, entry, listed)
            st.add(
                "migration-unregistered",
                title=f"migration {_stem(path)} is not registered in {posixpath.basename(registry)}",
                message=f"The new migration `{path}` {how} in `{registry}`; the migrator only runs what the registry lists.",
                location=Location(path, line, line),
                related=related,
                failure_sequence=(
                    "the patch deploys with the new snapshot and the code that uses the new schema",
                    f"the migrator walks `{registry}` and never sees `{_stem(path)}`",
                    "the database keeps the old schema",
                    "the first query against the new tables or columns fails",
                ),
                anchor=f"{path}:unregistered",
            )
            result[path] = False
            continue
        result[path] = True
        after = [e for e in listed if e.module in base_stems and position[e.module] > position[key]]
        if after:
            st.add(
                "migration-order",
                title=f"{posixpath.basename(registry)} lists {_stem(path)} before an older migration",
                message=(
                    f"`{registry}` lists the new migration `{entry.local}` before base migration(s) "
                    f"{', '.join('`' + e.local + '`' for e in after)}; it must come last."
                ),
                location=Location(registry, entry.line, entry.line),
                related=[Location(registry, e.line, e.line, f"base migration {posixpath.basename(e.module)} listed after it") for e in after[:3]],
                failure_sequence=(
                    "a fresh database runs the registry in order",
                    f"`{_stem(path)}` runs before a migration it was generated after",
                    "it alters tables that do not exist yet, or the older migration then fails on the altered schema",
                ),
                anchor=f"{registry}:order:{entry.local}",
            )
    return result


def _first_listings(entries: list[_Entry]) -> list[_Entry]:
    """Listed entries in registry order, each migration at its first listing only
    (a later `import("./migration/x")` of a listed migration is a use, not a re-registration)."""
    seen: set[str] = set()
    out: list[_Entry] = []
    for e in sorted((e for e in entries if e.line > 0), key=lambda e: (e.line, e.order)):
        if e.module not in seen:
            seen.add(e.module)
            out.append(e)
    return out


def _not_understood(
    entries: list[_Entry], base_entries: list[_Entry], in_base: bool, has_base_migrations: bool, in_patched: bool
) -> bool:
    """The registry names no migration in any form this family reads.

    A base registry that named migrations and now names none was emptied by the
    patch: that is checked (every new migration is unregistered). A registry
    with no migrations to name yet (`export const migrations = []` before the
    first one) is understood as empty.
    """
    if entries or base_entries or not in_patched:
        return False
    return has_base_migrations or not in_base


def _report_not_understood(st: _State, registry: str, text: str | None, added: list[str]) -> None:
    st.notes.append(f"{posixpath.basename(registry)} names no migration in a form this review reads: registration not checked")
    end = max(1, len((text or "").splitlines()))
    st.add(
        "registry-not-understood",
        title=f"{posixpath.basename(registry)} not understood: registration of {len(added)} new migration(s) not checked",
        message=(
            f"`{registry}` names no migration by a static import listed in a value or by a dynamic "
            f"`import(\"./…\")` call, so this review cannot tell whether "
            f"{', '.join('`' + _stem(p) + '`' for p in added[:3])}{' and others' if len(added) > 3 else ''} "
            "will run. Check the registry by hand."
        ),
        location=Location(registry, 1, end),
        related=[
            Location(p, line, line, "new migration whose registration is unproven")
            for p in added[:3]
            for line in (_name_line(st.ctx.program, p, _stem(p)),)
        ],
        failure_sequence=(
            "the registry builds its list in a form this review does not read",
            "a new migration missing from it would never run, and nothing here would notice",
        ),
        anchor=f"{registry}:not-understood",
    )


def _registry_related(registry: str, text: str | None, entry: _Entry | None, listed: list[_Entry]) -> list[Location]:
    """Where to look in the registry for an unregistered migration.

    The model's imports carry no position, so an imported-but-unlisted
    migration points at the list that leaves it out (the registry's other
    migrations) rather than at its import line.
    """
    if entry is not None and listed:
        first, last = listed[0].line, max(e.line for e in listed)
        return [Location(registry, first, last, f"the registry's list: `{entry.local}` is imported but not in it")]
    if text is None:
        return []
    note = f"imports `{entry.local}`, never lists it" if entry is not None else "the migration registry"
    return [Location(registry, 1, max(1, len(text.splitlines())), note)]


# ----- parse errors of the TypeScript files this family reads


def _parse_error_blocks(st: _State, path: str) -> bool:
    """True when an ERROR region overlaps changed lines (the family must report `error`)."""
    regions = st.ctx.program.parse_errors(path)
    f = st.files.get(path)
    for start, end in sorted(regions):
        if f is not None and f.touches(start, end):
            st.errors.append(
                f"{path}:{start}-{end} does not parse (tree-sitter ERROR over changed lines), so its "
                "table declarations / migration imports cannot be proven"
            )
            return True
    if regions:
        start, end = sorted(regions)[0]
        st.add(
            "parse-error",
            title=f"{posixpath.basename(path)} has unparsed lines {start}-{end}",
            message=f"tree-sitter could not parse `{path}` lines {start}-{end} (outside the change); "
            "this family's reading of the file is partial there.",
            location=Location(path, start, end),
            related=_edit_span(f, "the change this family checked in the same file") if f else [],
            anchor=f"{path}:parse-error",
        )
    return False


# ----- DDL files


# drizzle's `$`-prefixed column builder methods act in the application only:
# `$type<T>()` is compile-time, `$default`/`$defaultFn`/`$onUpdate`/`$onUpdateFn`
# run in drizzle-orm at insert/update time. drizzle-kit emits no DDL for them.
_APP_ONLY_PREFIX = "$"

# A value's DDL form: nested tuples of strings, equal exactly when drizzle-kit
# would emit the same DDL for both values (as far as the syntax shows).
_Form = tuple[Any, ...]


@dataclass(frozen=True)
class _Part:
    """One piece of a table declaration: a column (`0.id`: argument 0, key `id`) or a whole argument (`2`)."""

    key: str
    form: _Form
    line: int
    end_line: int


@dataclass(frozen=True)
class _Table:
    name: str
    line: int
    end_line: int
    callee: str
    parts: tuple[_Part, ...]
    code_lines: frozenset[int]  # lines holding its syntax, not comments or blank lines

    @property
    def ddl(self) -> _Form:
        return (self.callee, tuple((p.key, p.form) for p in self.parts))


def _tables(program: "Program", path: str, calls: frozenset[str]) -> list[_Table]:
    module = program.module(path)
    if module is None:
        return []
    out: list[_Table] = []
    for call in module.calls():
        last = call.callee.rsplit(".", 1)[-1]
        if last not in calls:
            continue
        name = call.args[0].string_value if call.args else None
        out.append(_Table(name or f"@{call.line}", call.line, call.end_line, last, _parts(call), _code_lines(call)))
    return sorted(out, key=lambda t: (t.line, t.name))


def _parts(call: "Call") -> tuple[_Part, ...]:
    parts: list[_Part] = []
    for index, arg in enumerate(call.args):
        if arg.props:
            parts.extend(_Part(f"{index}.{key}", _ddl_form(value), value.line, value.end_line) for key, value in arg.props)
        else:
            parts.append(_Part(str(index), _ddl_form(arg), arg.line, arg.end_line))
    return tuple(parts)


def _ddl_form(expr: "Expr", depth: int = 0) -> _Form:
    """What drizzle-kit turns into DDL, read from the syntax tree.

    A column builder chain (`text({ mode: "json" }).$type<T>().notNull()`) is
    its calls by name with their arguments' forms: type arguments are not
    part of a call's name or arguments, and application-only `$` methods are
    left out, so a change confined to them is no DDL change. Objects and
    arrays are compared member by member; anything else (a callback such as
    `(t) => [index(..).on(t.id)]`, a literal) by its text with comments and
    formatting dropped, which keeps a type annotation inside a callback a
    (conservative) change.
    """
    if depth > _MAX_NESTING:
        return ("text", expr.normalized)
    if expr.props:
        return ("object", tuple((key, _ddl_form(value, depth + 1)) for key, value in expr.props))
    if expr.elements:
        return ("array", tuple(_ddl_form(e, depth + 1) for e in expr.elements))
    call = expr.call
    if call is None:
        return ("text", expr.normalized)
    chain = call.chain
    upto = next((i for i, c in enumerate(chain) if c.expr == call.expr), len(chain) - 1)
    links: list[_Form] = []
    for position, link in enumerate(chain[: upto + 1]):
        name = link.callee_text if position == 0 else link.method
        if position > 0 and name.startswith(_APP_ONLY_PREFIX):
            continue
        links.append((name, tuple(_ddl_form(a, depth + 1) for a in link.args)))
    return ("call", tuple(links))


def _code_lines(call: "Call") -> frozenset[int]:
    """Lines a table declaration's syntax occupies: its first and last line, each
    column's value (`integer().notNull()`, however many lines it spans) and its
    other arguments. A comment between two columns lies on none of them."""
    lines = {call.line, call.end_line}
    for arg in call.args:
        for part in tuple(value for _, value in arg.props) or (arg,):
            lines.update(range(part.line, part.end_line + 1))
    return frozenset(lines)


def _changed_part_lines(new: _Table, old: _Table | None) -> frozenset[int]:
    """Lines of the columns (or arguments) whose DDL form differs from the base's."""
    before = {p.key: p.form for p in old.parts} if old is not None else {}
    lines: set[int] = set()
    for part in new.parts:
        if before.get(part.key) != part.form:
            lines.update(range(part.line, part.end_line + 1))
    return frozenset(lines)


def _ddl_changes(st: _State, f: ChangedFile) -> list[tuple[str, int, int]]:
    """(table, first changed line, last changed line) per table declaration of `f` whose DDL changed."""
    calls = frozenset(st.opt("table_calls"))
    patched = _tables(st.ctx.program, f.path, calls) if f.status is not FileStatus.DELETED else []
    base = _tables(st.ctx.base_program, f.source_path, calls) if f.status is not FileStatus.ADDED else []
    base_by_name = {t.name: t for t in base}
    out: list[tuple[str, int, int]] = []
    for t in patched:
        old = base_by_name.get(t.name)
        if old is not None and old.ddl == t.ddl:
            continue  # types, comments or formatting only
        # Point at the changed columns; a removed column leaves only the table's own lines.
        inside = sorted(n for n in f.added_lines if n in _changed_part_lines(t, old)) or sorted(
            n for n in f.added_lines if n in t.code_lines
        )
        out.append((t.name, inside[0] if inside else t.line, inside[-1] if inside else t.end_line))
    names = {t.name for t in patched}
    for old in base:
        if old.name not in names:
            # A deleted file is reported at its base lines (DESIGN.md); otherwise at the hunk.
            line = old.line if f.status is FileStatus.DELETED else _hunk_line_for_base(f, old.line)
            out.append((old.name, line, line))
    return sorted(out, key=lambda x: (x[1], x[0]))


def _hunk_line_for_base(f: ChangedFile, base_line: int) -> int:
    for h in f.hunks:
        if h.old_start <= base_line < h.old_start + max(h.old_count, 1):
            return max(1, h.new_start)
    return 1


# ----- drizzle folder layouts (v1 and legacy)


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


def _chains(st: _State) -> list[_Chain]:
    singles = set(st.opt("snapshots"))
    v1_globs = tuple(st.opt("snapshot_globs"))
    journal_globs = tuple(st.opt("journal_globs"))
    legacy_name = st.name_pattern("legacy_snapshot_pattern")
    folder = st.name_pattern("v1_folder_pattern")
    chains: dict[tuple[str, str], dict[str, set[str]]] = {}

    def collect(side: str, paths: Iterable[str]) -> None:
        for p in paths:
            if p in singles:
                continue
            if matches(p, v1_globs) and folder.match(posixpath.basename(posixpath.dirname(p))):
                key = ("v1", posixpath.dirname(posixpath.dirname(p)))
            elif matches(p, journal_globs):
                key = ("legacy", posixpath.dirname(p))
                chains.setdefault(key, {"base": set(), "patched": set()})
                continue
            else:
                continue
            chains.setdefault(key, {"base": set(), "patched": set()})[side].add(p)

    collect("base", st.ctx.base.paths())
    collect("patched", st.ctx.patched.paths())
    for side, tree in (("base", st.ctx.base), ("patched", st.ctx.patched)):
        for (kind, root), sets in chains.items():
            if kind == "legacy":
                prefix = root + "/" if root else ""
                sets[side] |= {
                    p for p in tree.paths(prefix)
                    if "/" not in p[len(prefix):] and legacy_name.match(posixpath.basename(p))
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


def _check_chain(st: _State, chain: _Chain) -> str | None:
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
        elif isinstance(snap, Snapshot) and (not _is_uuid(snap.id) or snap.id in roots_ids):
            st.add(
                "id-not-fresh",
                title=f"snapshot id {_short(snap.id)} is not a fresh UUID",
                message=f"`{path}` has id `{snap.id}`, which is {'the root id' if snap.id in roots_ids else 'not a UUID'}.",
                location=_loc(snap, "id"),
                failure_sequence=(
                    f"the snapshot is recorded under `{snap.id}`",
                    "a child naming it cannot be told apart from the root / other ids",
                    *_REVEAL_FORK[1:],
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
    st: _State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], base: Mapping[str, Snapshot | Broken],
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
            title=f"snapshot id {_short(ident)} used by {len(paths)} snapshots",
            message=f"`{at}` has id `{ident}`, which {', '.join('`' + p + '`' for p in paths if p != at)} also has.",
            location=_loc(snap, "id"),
            related=[_loc(patched[p], "id", "same id") for p in paths if p != at and isinstance(patched[p], Snapshot)],
            failure_sequence=(
                f"two snapshots answer to `{ident}`",
                "every child naming that id has two possible parents",
                *_REVEAL_FORK[1:],
            ),
            anchor=f"{at}:duplicate:{ident}",
        )
    base_ids = {s.id: s for s in base.values() if isinstance(s, Snapshot)}
    for path, parent in sorted(now.dangling - was.dangling):
        snap = patched[path]
        assert isinstance(snap, Snapshot)
        gone = base_ids.get(parent)
        related = []
        if gone is not None:
            related.append(Location(gone.path, gone.span("id")[0], gone.span("id")[1], "the parent in the base tree, removed or renumbered by the patch"))
        st.add(
            "dangling-parent",
            title=f"snapshot names missing parent {_short(parent)}",
            message=(
                f"`{path}` names `{parent}` in {snap.prev_key}, but no snapshot of `{chain.root or '.'}` has that id"
                + (" any more (the patch removed or renumbered it)." if gone else " (it was generated on another branch or against a deleted snapshot).")
            ),
            location=_loc(snap, snap.prev_key),
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
                location=_loc(snap, snap.prev_key),
                related=[_loc(patched[p], patched[p].prev_key, "existing root") for p in others if isinstance(patched[p], Snapshot)],
                failure_sequence=(
                    "the folder now holds two unrelated histories",
                    "the migrator applies both, each starting from an empty database",
                    "the second history's CREATE TABLE fails on a table the first already created",
                ),
                anchor=f"{path}:root",
            )


def _check_new_parents(
    st: _State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], base: Mapping[str, Snapshot | Broken],
    now: _Defects, roots_ids: frozenset[str],
) -> None:
    """Each added snapshot names exactly the open leaves of the chain before it (the newest snapshot)."""
    added = [p for p in sorted(patched) if p not in base and isinstance(patched[p], Snapshot)]
    if not added:
        return
    existing = {p: s for p, s in patched.items() if p in base and isinstance(s, Snapshot)}
    ids = {s.id for s in existing.values()}
    leaves = set(ids) - {pid for s in existing.values() for pid in s.prev_ids}
    given = str(st.opt("expect_prev_id") or "")
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
                title=f"new snapshot does not follow the newest snapshot {_short(sorted(expected)[0])}",
                message=(
                    f"`{path}` has {snap.prev_key} {_fmt_prev(snap)}, but the chain's newest snapshot"
                    f"{'s are' if len(expected) > 1 else ' is'} {_fmt_ids(sorted(expected))}"
                    + (" (--expect-prev-id)" if index == 0 and given else "")
                    + _mismatch_consequence(prev, expected)
                ),
                location=_loc(snap, snap.prev_key),
                related=[_loc(s, "id", "newest snapshot before the patch") for s in existing.values() if s.id in expected][:3],
                failure_sequence=(
                    f"the newest snapshot of `{chain.root or '.'}` is {_fmt_ids(sorted(expected))}",
                    f"the new snapshot names {_fmt_prev(snap)} instead",
                    *_REVEAL_FORK,
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


def _mismatch_consequence(prev: set[str], expected: set[str]) -> str:
    if prev < expected:
        return "; it names only some of them, so the branches it leaves out stay open and the chain keeps forking."
    return "; the new snapshot forks the chain."


def _check_chain_migrations(
    st: _State, chain: _Chain, patched: Mapping[str, Snapshot | Broken], changed: set[str]
) -> None:
    added = sorted(
        p for p in changed
        if p in patched and isinstance(patched[p], Snapshot) and st.files[p].status is not FileStatus.MODIFIED
    )
    if chain.kind == "v1":
        migration = str(st.opt("v1_migration_file"))
        folders = sorted(posixpath.basename(posixpath.dirname(p)) for p in chain.base)
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
                location=_loc(snap, "id"),
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


def _check_v1_snapshots_present(st: _State) -> None:
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


def _journal_location(st: _State, journal: str) -> Location:
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


def _missing(st: _State, snap: Snapshot, sql: str) -> None:
    st.add(
        "migration-missing",
        title=f"new snapshot without {posixpath.basename(sql)}",
        message=f"`{snap.path}` is a new snapshot, but `{sql}` does not exist: nothing migrates deployed databases to it.",
        location=_loc(snap, "id"),
        failure_sequence=(
            "the snapshot records the new schema",
            "no SQL moves any deployed database there",
            "code relying on the new schema fails against every existing database",
        ),
        anchor=f"{snap.path}:migration-missing",
    )


def _out_of_order(st: _State, snap: Snapshot, name: str, later: list[str]) -> None:
    st.add(
        "migration-order",
        title=f"migration {name} does not sort after the base migrations",
        message=(
            f"The new migration `{name}` must sort after every base migration, but "
            f"{', '.join('`' + l + '`' for l in later[:3])} {'sorts' if len(later) == 1 else 'sort'} at or after it."
        ),
        location=_loc(snap, "id"),
        failure_sequence=(
            f"a deployed database has applied up to `{later[-1]}`",
            f"`{name}` sorts before it, so the migrator treats it as already applied or runs it out of order",
            "the database lacks (or mangles) the schema the code now assumes",
        ),
        anchor=f"{snap.path}:order",
    )


# ----- DDL vs snapshot


def _check_ddl(st: _State, parts: list[str]) -> list[ChangedFile]:
    """A changed table declaration needs a snapshot change. Returns the changed DDL files."""
    ddl_globs = tuple(st.opt("ddl_globs"))
    ddl_files = [f for p, f in sorted(st.files.items()) if p == f.path and (matches(f.path, ddl_globs) or matches(f.source_path, ddl_globs))]
    changed: list[tuple[ChangedFile, str, int, int]] = []
    for f in ddl_files:
        st.touched = True
        if f.patched_text is not None and f.status is not FileStatus.DELETED and _parse_error_blocks(st, f.path):
            continue
        changed.extend((f, *change) for change in _ddl_changes(st, f))
    if not changed:
        if ddl_files:
            parts.append(
                f"{', '.join(sorted(posixpath.basename(f.path) for f in ddl_files))} changed, "
                "no table's DDL changed (types, comments or formatting only)"
            )
        return ddl_files
    if st.snapshot_changed:
        parts.append(f"DDL change in {', '.join(sorted({posixpath.basename(f.path) for f, *_ in changed}))} matched by a snapshot")
        return ddl_files
    snaps = sorted(st.opt("snapshots"))
    for f, table, line, end in changed:
        path = f.path if f.status is not FileStatus.DELETED else f.source_path
        with_migration = st.migration_changed
        st.add(
            "ddl-without-snapshot",
            title=f"table {table} changed without a snapshot change",
            message=(
                f"The declaration of `{table}` in `{path}` changed, but no snapshot"
                f" ({', '.join('`' + s + '`' for s in snaps) or 'of any migration chain'}) changed with it"
                + (
                    "; the migration added alongside has no snapshot recording the schema it creates."
                    if with_migration
                    else ", and no migration creates the change."
                )
            ),
            location=Location(path, line, end),
            related=[Location(s, 1, 1, "snapshot left unchanged") for s in snaps if st.ctx.patched.exists(s)],
            failure_sequence=(
                f"the code now declares a different `{table}` table",
                *(
                    ("the snapshot still records the old table",
                     "the next `drizzle-kit generate` diffs the code against that stale snapshot and emits the same DDL again",
                     "the duplicate migration fails on every database that already ran this one")
                    if with_migration
                    else ("no migration changes it in any deployed database",
                          "the first query using the new shape fails (`no such column`) on every existing database",
                          "the next generate folds this change into an unrelated migration")
                ),
            ),
            anchor=f"{path}:ddl:{table}",
        )
    return ddl_files


def _check_snapshot_without_ddl(st: _State, singles: list[_SingleResult], ddl_files: list[ChangedFile]) -> None:
    if ddl_files or st.migration_changed:
        return
    for res in singles:
        if not res.schema_changed or res.base is None:
            continue
        line, end = res.snapshot.span("ddl") if "ddl" in res.snapshot.spans else res.snapshot.span("id")
        f = st.files[res.snapshot.path]
        inside = sorted(n for n in f.added_lines if line <= n <= end)
        st.add(
            "snapshot-without-ddl",
            title=f"{posixpath.basename(res.snapshot.path)} schema changed without DDL or migration",
            message=(
                f"`{res.snapshot.path}` records a schema change, but no table declaration ({', '.join(st.opt('ddl_globs'))}) "
                "and no migration changed with it: the snapshot no longer describes the code."
            ),
            location=Location(res.snapshot.path, inside[0] if inside else line, inside[-1] if inside else end),
            failure_sequence=(
                "the snapshot describes tables the code does not declare",
                "the next generate diffs the code against this snapshot",
                "it emits a migration that silently undoes (or duplicates) the hand-edited schema",
            ),
            anchor=f"{res.snapshot.path}:snapshot-without-ddl",
        )


# --------------------------------------------------------------------------- entry point


def run(ctx: ReviewContext) -> Outcome:
    st = _State(ctx, ctx.changeset.by_either_path)
    parts: list[str] = []

    singles: list[_SingleResult] = []
    for path in sorted(set(st.opt("snapshots"))):
        res = _check_single(st, path)
        if res is not None:
            singles.append(res)
            shown = ", ".join(_short(i) for i in res.snapshot.prev_ids)
            if res.expected and list(res.snapshot.prev_ids) == list(res.expected):
                what = "--expect-prev-id" if st.opt("expect_prev_id") else ("base id" if res.base else "root id")
                parts.append(f"{posixpath.basename(path)} prevIds = [{shown}] = {what}, id {_short(res.snapshot.id)} fresh")

    parts.extend(_check_migrations(st, singles[0] if singles else None))

    for chain in _chains(st):
        summary = _check_chain(st, chain)
        if summary:
            parts.append(summary)
    _check_v1_snapshots_present(st)

    ddl_files = _check_ddl(st, parts)
    _check_snapshot_without_ddl(st, singles, ddl_files)

    findings = tuple(sorted(st.findings, key=lambda f: f.sort_key()))
    if st.errors:
        return Outcome("; ".join(st.errors), findings, unreadable="; ".join(st.errors))
    if not st.touched:
        return Outcome("no snapshot, migration or table-declaration file changed")
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        titles = list(dict.fromkeys(f.title for f in blocking))
        summary = "; ".join(titles[:3]) + (f"; and {len(titles) - 3} more" if len(titles) > 3 else "")
        return Outcome(summary, findings, examined=1)
    summary = "; ".join(parts + st.notes) or "changed migration files checked: no snapshot change to verify"
    return Outcome(summary, findings, examined=1)


FAMILY = Family(
    id=FAMILY_ID,
    summary="Migration snapshots form one clean chain; each new snapshot has a registered, newest migration.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
