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

The family is one package, split by concern; each module imports what it
uses from its siblings, and none imports this `__init__`:

* `spec`: the options and the checks the family declares;
* `state`: the review's shared state (`State`);
* `snapshots`: parsing snapshots and their JSON spans; single-file snapshots,
  whose ids are compared byte for byte, as drizzle-kit compares them;
* `history`: where the base's git history had an id (an earlier version's
  id, or only a parent some version named);
* `tsread`: reading TypeScript values and parse errors through the model;
* `migrations`: the migration directory and its registry;
* `chains`: drizzle-kit folder chains (v1 folders, legacy journals);
* `edited`: migrations, snapshots and journal entries of the base rewritten in place;
* `ddl`: table-declaration changes without a snapshot change, and the reverse;
* here: the checks in the order the engine's template runs them, and `FAMILY`.
"""

from __future__ import annotations

import posixpath

from reviewer.report.model import Finding, Severity
from reviewer.engine.api import Family
from reviewer.engine.template import Template
from reviewer.rules.schema_prev_ids.chains import check_chain, check_v1_snapshots_present, find_chains
from reviewer.rules.schema_prev_ids.ddl import check_ddl, check_snapshot_without_ddl
from reviewer.rules.schema_prev_ids.edited import check_edited_in_place
from reviewer.rules.schema_prev_ids.migrations import check_migrations
from reviewer.rules.schema_prev_ids.snapshots import check_single, short
from reviewer.rules.schema_prev_ids.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.schema_prev_ids.state import State


# --------------------------------------------------------------------------- entry point


def _snapshots(st: State) -> list[Finding]:
    """Single-file snapshots: `prevIds` names the base id, the id is fresh."""
    for path in sorted(set(st.opt("snapshots"))):
        res = check_single(st, path)
        if res is not None:
            st.singles.append(res)
            shown = ", ".join(short(i) for i in res.snapshot.prev_ids)
            if res.expected and list(res.snapshot.prev_ids) == list(res.expected):
                what = "--expect-prev-id" if st.opt("expect_prev_id") else ("base id" if res.base else "root id")
                st.parts.append(f"{posixpath.basename(path)} prevIds = [{shown}] = {what}, id {short(res.snapshot.id)} fresh")
    return st.taken()


def _migrations(st: State) -> list[Finding]:
    """The migration directory and its registry."""
    st.parts.extend(check_migrations(st, st.singles[0] if st.singles else None))
    return st.taken()


def _chains(st: State) -> list[Finding]:
    """drizzle-kit folder chains: every parent resolves, no duplicate id, one root; v1 folders complete."""
    for chain in find_chains(st):
        summary = check_chain(st, chain)
        if summary:
            st.parts.append(summary)
    check_v1_snapshots_present(st)
    return st.taken()


def _edited(st: State) -> list[Finding]:
    """A migration, snapshot or journal entry the base tree has keeps its meaning."""
    check_edited_in_place(st)
    return st.taken()


def _ddl(st: State) -> list[Finding]:
    """A DDL change comes with a snapshot change, and the reverse."""
    ddl_files = check_ddl(st, st.parts)
    check_snapshot_without_ddl(st, st.singles, ddl_files)
    return st.taken()


def _proved(st: State, findings: tuple[Finding, ...]) -> str:
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        titles = list(dict.fromkeys(f.title for f in blocking))
        return "; ".join(titles[:3]) + (f"; and {len(titles) - 3} more" if len(titles) > 3 else "")
    return "; ".join(st.parts + st.notes) or "changed migration files checked: no snapshot change to verify"


TEMPLATE = Template(
    reading=None,  # snapshots, journals and migrations are read by path (`tsread` notes their parse errors)
    start=lambda ctx: State(ctx, ctx.changeset.by_either_path),
    checks=(_snapshots, _migrations, _chains, _edited, _ddl),
    unreadable=lambda st: "; ".join(st.errors),
    examined=lambda st: int(st.touched),
    unexamined=lambda st, findings: "no snapshot, migration or table-declaration file changed",
    proved=_proved,
    phrases=None,  # the basis names the violated checks by their titles
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="Migration snapshots form one clean chain; each new snapshot has a registered, newest migration.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
)
