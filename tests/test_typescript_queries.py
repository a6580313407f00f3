"""The one query model (reviewer/typescript/queries.py): the same read written three ways is one Query.

A job queue in a vocabulary unlike opencode's: `jobs` rows with an owner
and a lease; each query is read from source with the real grammar and the
real SQL parser, never from a mock.
"""

from __future__ import annotations

import textwrap

from reviewer.typescript import Program, builder_query, relational_query, sql_query

SOURCE = textwrap.dedent(
    """\
    import { and, desc, eq, eq as same, isNull, or, sql } from "drizzle-orm"
    import { jobs } from "./schema"
    const PAGE = 25
    const mine = (owner: string) => and(eq(jobs.owner, owner), isNull(jobs.done_at))
    export const a = (db, owner) => db.select().from(jobs).where(eq(jobs.owner, owner)).orderBy(desc(jobs.expires_at)).limit(PAGE).all()
    export const b = (db, owner) => db.query.jobs.findMany({ where: (t, { eq }) => eq(t.owner, owner), limit: PAGE })
    export const c = (db, owner) => db.all(sql`select * from jobs where owner = ${owner} order by expires_at desc limit ${PAGE}`)
    export const d = (db) => db.select().from(jobs).where(eq(jobs.owner, jobs.owner)).all()
    export const e = (db, owner) => db.select().from(jobs).where(or(eq(jobs.owner, owner), isNull(jobs.owner))).all()
    export const f = (db, owner) => db.select().from(jobs).where(mine(owner)).get()
    export const g = (db, extra) => db.select().from(jobs).where(and(...extra)).all()
    export const h = (db, id) => db.update(jobs).set({ owner: null }).where(and(eq(jobs.id, id), isNull(jobs.done_at))).run()
    export const i = (db, owner) => db.query.jobs.findFirst({ where: { owner } })
    export const j = (db) => db.all(sql`select * from jobs where owner = owner`)
    export const k = (db, o) => db.select().from(jobs).where(same(jobs.owner, o)).orderBy(sql`${jobs.expires_at} desc, id`).limit(1).get()
    """
)


def _queries():
    program = Program({"src/q.ts": SOURCE, "src/schema.ts": "export const jobs = {}\n"}.get)
    module = program.module("src/q.ts")
    out = {}
    for call in module.calls():
        query = sql_query(program, call) or relational_query(program, call)
        if query is None and call.chain_position == 0:
            query = builder_query(program, call.chain)
        if query is not None:
            out.setdefault(call.line, query)
    return out


def test_the_same_read_written_three_ways_is_one_query() -> None:
    q = _queries()
    for line in (5, 6, 7):
        query = q[line]
        assert query.operation == "select" and query.table == "jobs", (line, query)
        assert query.pins(["owner"]), line
        assert query.has_limit and query.limit_value == 25, line
    assert q[5].newest_first and q[7].newest_first
    assert [q[line].source for line in (5, 6, 7)] == ["builder", "relational", "sql"]


def test_a_tautology_or_a_disjunction_pins_nothing() -> None:
    q = _queries()
    assert not q[8].pins(["owner"])  # eq(jobs.owner, jobs.owner) holds on every row
    assert not q[9].pins(["owner"])  # under `or`, nothing binds every row
    assert not q[14].pins(["owner"])  # the same tautology in raw SQL


def test_helpers_are_followed_and_unread_spreads_are_said() -> None:
    q = _queries()
    assert q[10].pins(["owner"]) and q[10].has("isNull", ["done_at"]) and q[10].single_row
    assert not q[11].pins(["owner"]) and [u.kind for u in q[11].unread] == ["spread_element"]
    assert q[12].operation == "update" and q[12].pins(["id"]) and q[12].has("isNull", ["done_at"])
    assert q[13].single_row and q[13].pins(["owner"])  # `{ owner }` shorthand is a value


def test_an_order_in_a_sql_fragment_and_a_renamed_operator_are_read() -> None:
    query = _queries()[15]
    assert query.pins(["owner"])  # `eq as same`
    assert query.newest_first and [(k.column, k.descending) for k in query.order] == [("expires_at", True), ("id", False)]


def test_time_passed_is_read_whichever_side_the_column_is_on() -> None:
    source = textwrap.dedent(
        """\
        import { and, gt, lt, lte } from "drizzle-orm"
        import { jobs } from "./schema"
        export const a = (db, now) => db.select().from(jobs).where(lt(jobs.expires_at, now)).all()
        export const b = (db, now) => db.select().from(jobs).where(gt(now, jobs.expires_at)).all()
        export const c = (db, now) => db.select().from(jobs).where(lt(now, jobs.expires_at)).all()
        export const d = (db) => db.select().from(jobs).where(and(lte(jobs.expires_at, Date.now()), gt(jobs.attempts, 0))).all()
        """
    )
    program = Program({"src/q.ts": source, "src/schema.ts": "export const jobs = {}\n"}.get)
    module = program.module("src/q.ts")
    below = {}
    for call in module.calls():
        if call.chain_position == 0 and call.method == "select":
            query = builder_query(program, call.chain)
            below[call.line] = (query.below, query.ranges)
    assert below == {
        3: (("expires_at",), ("expires_at",)),
        4: (("expires_at",), ("expires_at",)),  # `now > expires_at`: the time has passed
        5: ((), ("expires_at",)),  # `now < expires_at`: still held
        6: (("expires_at",), ("attempts", "expires_at")),
    }
