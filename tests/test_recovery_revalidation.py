"""recovery-revalidation's readers and judgements on small drizzle/Effect snippets, and the family's
scope behaviour on a real repository.

Every expected value was worked out by hand from the snippet text; lines are 1-based.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.engine.api import Options
from reviewer.typescript import Program

from reviewer.rules.recovery_revalidation import drizzle as dz
from reviewer.rules.recovery_revalidation.spec import OPTIONS
from reviewer.rules.recovery_revalidation.wakes import loops, revalidation, swallowed_by

OPTS = Options(OPTIONS, {})


def _ts(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _head(program: Program, path: str, method: str, line: int):
    return next(c for c in program.module(path).calls() if c.method == method and c.line == line)


READS = {
    "reads.ts": _ts(
        """
        import { and, asc, desc, eq, isNull, or } from "drizzle-orm"
        const T = SessionInputTable
        const EXACT = and(eq(T.id, id), eq(T.session_id, s), isNull(T.promoted_seq))
        const a = db.select().from(T).where(EXACT).orderBy(desc(T.time_created)).limit(1).all()
        const b = db.select().from(T).orderBy(asc(T.time_created)).limit(1).get()
        const c = db.select().from(T).orderBy(desc(T.time_created)).limit(2).all()
        const d = db.select().from(T).orderBy(desc(T.time_created)).get()
        const e = db.update(T).set({ promoted_seq: 3 }).where(or(eq(T.id, id), isNull(T.promoted_seq))).run()
        const f = db.update(T).set({ promoted_seq: null }).where(eq(T.id, id)).run()
        const g = db.update(T).set({ promoted_seq: 1 }).where(sql`id = ${id}`).run()
        """
    )
}


def test_newest_first_single_row_reads_only() -> None:
    program = Program(READS.get)
    recency = {line: dz.is_recency_read(program, _head(program, "reads.ts", "select", line).chain) for line in (4, 5, 6, 7)}
    # desc + limit(1); asc (FIFO) is not recency; desc with two rows is not one row; desc + get() is.
    assert recency == {4: True, 5: False, 6: False, 7: True}


def _atoms(query) -> set[tuple[str, str]]:
    return {(t.op, t.column) for t in query.terms if t.column is not None}


def test_conditions_read_through_const_and_alias_and_skip_or() -> None:
    program = Program(READS.get)
    found = dz.query(program, _head(program, "reads.ts", "select", 4).chain)
    assert _atoms(found) == {("eq", "id"), ("eq", "session_id"), ("isNull", "promoted_seq")}
    assert found.pins(["id"]) and found.pins(["session_id"]) and not found.unread
    # Conditions under `or` are not required: nothing is known from them.
    e = dz.query(program, _head(program, "reads.ts", "update", 8).chain)
    assert _atoms(e) == set() and not e.unread
    g = dz.query(program, _head(program, "reads.ts", "update", 10).chain)
    assert _atoms(g) == set() and len(g.unread) == 1


def test_promotion_set_needs_a_non_null_promoted_column_on_an_input_table() -> None:
    program = Program(READS.get)
    assert dz.chain_table(program, _head(program, "reads.ts", "update", 8).chain) == "SessionInputTable"
    assert dz.promotion_set(program, _head(program, "reads.ts", "update", 8).chain, OPTS) is not None
    assert dz.promotion_set(program, _head(program, "reads.ts", "update", 9).chain, OPTS) is None


LOOPS = {
    "loop.ts": _ts(
        """
        import { Effect } from "effect"
        const check = (db, id) => db.update(SessionInputTable).set({ wake_pending: false }).where(eq(SessionInputTable.id, id)).run()
        export const wakeAll = Effect.fn("wakeAll")(function* (db, execution, ids) {
          const rows = yield* db.select().from(SessionInputTable).all()
          const listed = yield* store.listSuspended()
          const local = [1, 2]
          yield* Effect.forEach(rows, (row) => execution.wake(row.session_id))
          listed.forEach((id) => execution.resume(id))
          yield* Effect.forEach(local, (id) => execution.wake(id))
          yield* Effect.forEach(ids, (id) => execution.wake(id))
          yield* check(db, 1).pipe(Effect.catchAll((e) => Effect.logWarning(e)))
          yield* check(db, 2).pipe(Effect.catchAll((e) => Effect.logWarning(e).pipe(Effect.andThen(Effect.die(e)))))
        })
        """
    )
}


def test_candidate_loops_come_from_durable_reads_only() -> None:
    program = Program(LOOPS.get)
    entry = program.function("loop.ts", "wakeAll")
    found = sorted((loop.name, loop.driver.line) for loop in loops(program, entry, OPTS))
    # `local` is an array literal and `ids` a parameter: neither was read from durable state.
    assert found == [("listed", 8), ("rows", 7)]


def test_revalidation_kinds_and_swallowing() -> None:
    program = Program(LOOPS.get)
    first = _head(program, "loop.ts", "check", 11)
    second = _head(program, "loop.ts", "check", 12)
    # A helper doing a conditional write is a re-validation, one call deep.
    assert revalidation(program, first, OPTS) == "helper"
    assert swallowed_by(program, first, OPTS) is not None
    # The handler logs, then dies: the failure still stops the path.
    assert swallowed_by(program, second, OPTS) is None
    assert revalidation(program, _head(program, "loop.ts", "select", 4), OPTS) is None


SQL = _ts(
    """
    import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core"
    export const SessionInputTable = sqliteTable("session_input", { id: text(), session_id: text(), promoted_seq: integer() })
    """
)

BASE_INPUT = _ts(
    """
    import { and, eq, isNull } from "drizzle-orm"
    import { SessionInputTable } from "./sql"
    export const promote = (db: any, id: string, seq: number) =>
      db.update(SessionInputTable).set({ promoted_seq: seq }).where(and(eq(SessionInputTable.id, id), isNull(SessionInputTable.promoted_seq))).run()
    """
)


def _invariant(tmp_path: Path, patched_input: str, scope: str = "changed"):
    base = {"packages/core/src/session/sql.ts": SQL, "packages/core/src/session/input.ts": BASE_INPUT}
    patched = {**base, "packages/core/src/session/input.ts": patched_input}
    repo, base_sha, patch_path, _ = make_change(tmp_path, base, patched)
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch_path), scope=scope))
    return next(i for i in outcome.report.invariants if i.id == "recovery-revalidation")


def test_unchanged_inexact_promotion_is_pre_existing_not_the_patchs(tmp_path: Path) -> None:
    invariant = _invariant(tmp_path, BASE_INPUT + "export const unrelated = 1\n")
    assert invariant.status.value == "pre-existing"
    assert not invariant.findings


def test_changed_inexact_promotion_is_reported_with_what_is_missing(tmp_path: Path) -> None:
    changed = BASE_INPUT.replace("set({ promoted_seq: seq })", "set({ promoted_seq: seq, wake_pending: false })")
    invariant = _invariant(tmp_path, changed)
    assert invariant.status.value == "violated"
    [finding] = invariant.findings
    assert finding.rule == "recovery-revalidation/promotion-not-exact"
    assert (finding.location.path, finding.location.line) == ("packages/core/src/session/input.ts", 4)
    assert "its Session" in finding.message and "the row's id" not in finding.message
    assert finding.failure_sequence
