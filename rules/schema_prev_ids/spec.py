"""schema-prev-ids: what the family declares, its options and its checks.

Everything the configuration, `reviewer rules` and `--explain` read about
the family; nothing here runs during a review.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option


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
        ["**"],
        Kind.GLOBS,
        'Where table-declaration files are (globs; everywhere by default, set it only to narrow): a production '
        'source file that declares a table (a `table_calls` call) is one, and a change to a table there needs a '
        'snapshot change.',
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


# --------------------------------------------------------------------------- checks


def _spec(name: str, severity: Severity, title: str, summary: str, why: str, bad: str, good: str) -> CheckSpec:
    # A broken chain makes the next generated migration diff against the wrong
    # schema: what the database holds and what the code expects part ways.
    impact = Impact.HYGIENE if name in ("registry-not-understood", "parse-error") else Impact.LOST_OUTCOME
    return CheckSpec(f"{FAMILY_ID}/{name}", severity, title, summary, why, bad, good, impact=impact)


CHECKS: tuple[CheckSpec, ...] = (
    _spec(
        "prev-id-mismatch", Severity.MUST_FIX,
        "Snapshot prevIds does not name the base snapshot",
        "A changed snapshot's prevIds must be exactly [id of the snapshot it was generated from], compared as "
        "drizzle-kit compares ids: byte for byte, no case folding, no trimming. A single-file snapshot must name its "
        "base version's id (or the id given as --expect-prev-id); an entry that is not an id as drizzle-kit writes it "
        "(lowercase hex, 8-4-4-4-12: another case, whitespace around it) is reported quoted, with the id expected; the "
        "root id is allowed only on a new snapshot, not as a reset of one whose base had a snapshot; an id an earlier "
        "version had (found in the base's git history: the patch was generated against an older schema) and an id no "
        "snapshot ever had (a squashed branch's intermediate) are reported too, never exempted. A folder chain the "
        "patch leaves as one line (one root, one newest snapshot, every parent resolving) passes.",
        "The snapshot chain is how drizzle-kit knows which schema a migration starts from. A snapshot whose "
        "prevIds names anything but the base snapshot forks the chain: the next generate diffs against the "
        "wrong parent, and two branches' migrations can both claim the same parent.",
        '// packages/core/schema.json (base id "0c6d6be0-…")\n'
        '{ "id": "f14a9b18-…", "prevIds": ["5cc156ed-…"] }   // names the grandparent\n'
        '{ "id": "f14a9b18-…", "prevIds": ["0C6D6BE0-…"] }   // the base id in upper case: another id to drizzle-kit\n'
        '{ "id": "f14a9b18-…", "prevIds": ["00000000-0000-0000-0000-000000000000"] }   // resets the chain',
        '{ "id": "f14a9b18-…", "prevIds": ["0c6d6be0-…"] }   // names the base snapshot',
    ),
    _spec(
        "id-not-fresh", Severity.MUST_FIX,
        "Snapshot id is not a fresh UUID",
        "A changed snapshot needs a new UUID id as drizzle-kit writes it (lowercase hex, 8-4-4-4-12): not the base "
        "id, an id already in the chain, an id in another case or with whitespace around it, or a non-UUID.",
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
        "Every prevIds/prevId entry names an existing snapshot of the same chain (or the root id), compared byte for "
        "byte: an id in another case or with whitespace around it names none.",
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
        "A new migration's timestamp sorts after every base migration the patch leaves; with a registry, it may be "
        "dated earlier only when the registry lists it at its timestamp's place, never after a newer or before an older one.",
        "Databases that already applied the base migrations only run migrations newer than the last one "
        "they recorded; a migration dated earlier, or listed before an older one, is skipped or runs out "
        "of order against a schema it was not written for.",
        "migration/20260101000000_session-recovery.ts   // older than 20260302094500_session-execution",
        "migration/20260914170650_session-recovery.ts   // newest",
    ),
    _spec(
        "migration-edited", Severity.MUST_FIX,
        "Existing migration edited in place",
        "A migration the base tree already has keeps its meaning: a drizzle-kit v1 folder's migration.sql and "
        "snapshot.json, a legacy meta/NNNN_snapshot.json, the SQL a legacy journal entry names, and the journal's "
        "existing entries. Meaning is compared as drizzle-kit reads it (parsed JSON; SQL statements with whitespace "
        "and comments collapsed), so a regenerated snapshot that only changed its formatting passes.",
        "The migrator records every migration it ran and never runs it again. A rewritten migration reaches new "
        "databases only: every database that ran the old version keeps its old schema or data, and the code, the "
        "next generate and the chain of snapshots now describe a history those databases never had.",
        "drizzle/20250201000000_posts/migration.sql   // a merged migration gains `DELETE FROM posts;`",
        "drizzle/20250301000000_reset_posts/migration.sql   // a new migration does the new step",
    ),
    _spec(
        "ddl-without-snapshot", Severity.MUST_FIX,
        "Table definition changed without a snapshot change",
        "A change to a table declaration (ddl_globs) comes with a new snapshot (and migration). Tables are compared "
        "by meaning (names, column builders resolved through imports, constraints), so import-only or formatting-only "
        "edits are no change; a package without any snapshot or migration is not checked.",
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
        "const x = f(a, b))   // a region tree-sitter 0.23 cannot parse",
        "(no ERROR regions)",
    ),
)
