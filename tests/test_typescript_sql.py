"""Raw SQL in `sql` tagged templates, read with sqlglot: operation, table, pins, limit, order."""

from __future__ import annotations

import subprocess
import sys

from reviewer.typescript import Program, sql_statement

SOURCE = """\
const a = yield* sql`SELECT * FROM jobs WHERE lease_expires_at < ${now} ORDER BY lease_expires_at DESC`
const b = db.all(sql`select * from ${JobTable} where job_id = ${id}`)
const c = yield* sql`SELECT * FROM jobs WHERE job_id = job_id`
const d = yield* sql`SELECT * FROM jobs LIMIT ${PAGE}`
const e = yield* sql`SELECT * FROM jobs LIMIT 5000`
const f = yield* sql`UPDATE jobs SET owner = ${me} WHERE job_id = ${id}`
const g = yield* sql`this is not sql at all ((`
const h = yield* sql`SELECT * FROM ${sql("jobs")} WHERE (owner = ${me} OR owner IS NULL)`
const i = yield* sql`SELECT * FROM jobs WHERE job_id = ? AND kind = 'x' LIMIT -1`
const j = yield* db`SELECT * FROM jobs WHERE a = ${a}`
const k = sql("jobs")
const l = html`select a plan`
const m = sql.unsafe(`SELECT * FROM jobs -- no limit \
LIMIT 10`)
const n = yield* sql`SELECT * FROM jobs WHERE id = ${sql("id")} LIMIT .5e`
const o = db.execute("(SELECT * FROM jobs WHERE id = $1::uuid) EXCEPT SELECT * FROM gone")
const p = yield* sql`SELECT * FROM jobs FETCH FIRST ROW ONLY`
"""


def _read(source: str) -> dict:
    """The statements of a one-file program, by line."""
    module = Program({"a.ts": source}.get).module("a.ts")
    return {c.line: s for c in module.calls() if (s := sql_statement(c)) is not None}


def _statements():
    module = Program({"a.ts": SOURCE}.get).module("a.ts")
    return {c.line: s for c in module.calls() if (s := sql_statement(c)) is not None}


def test_statements_are_read_for_what_a_scan_check_asks() -> None:
    found = _statements()
    # Any tag whose text is a statement over a table (an @effect/sql client bound to `db`), and runners
    # of SQL text; `sql("jobs")` is an identifier, `html` text that starts like SQL is not SQL.
    assert sorted(found) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16]
    summary = {
        line: (s.operation, s.table, s.pins, s.has_limit, s.limit, s.limit_expr.written if s.limit_expr else None)
        for line, s in found.items()
    }
    assert summary == {
        1: ("select", "jobs", (), False, None, None),
        2: ("select", "JobTable", ("job_id",), False, None, None),  # `${T}` names the table it interpolates
        3: ("select", "jobs", (), False, None, None),  # a column equal to itself pins nothing
        4: ("select", "jobs", (), True, None, "PAGE"),
        5: ("select", "jobs", (), True, 5000.0, None),
        6: ("update", "jobs", ("job_id",), False, None, None),
        7: ("unreadable", None, (), False, None, None),
        8: ("select", "jobs", (), False, None, None),  # a pin under OR is no pin
        9: ("select", "jobs", ("job_id", "kind"), True, -1.0, None),
        10: ("select", "jobs", ("a",), False, None, None),
        13: ("select", "jobs", (), False, None, None),  # a line continuation puts the LIMIT in the comment
        14: ("unreadable", None, (), False, None, None),  # `id = "id"`, and a LIMIT Python cannot read
        15: ("select", "jobs", ("id",), False, None, None),  # a cast parameter is a value
        16: ("select", "jobs", (), True, 1.0, None),
    }
    assert [(o.column, o.descending) for o in found[1].order] == [("lease_expires_at", True)]
    assert found[7].reason  # says why


WRITES = """\
const a = await sql`UPDATE run_lease SET valid_until = now() WHERE run_id = ${id} AND owner_id = ${me} AND valid_until > now()`
const b = await sql`INSERT INTO locks (shard_id, address, acquired_at) VALUES (${s}, ${me}, now())
  ON CONFLICT (shard_id) DO UPDATE SET address = ${me}, acquired_at = now() WHERE locks.acquired_at < ${expired}`
const c = await sql`UPDATE hold SET held_by = NULL, hold_until = NULL WHERE seat = ${s}`
const d = await sql`UPDATE jobs SET attempts = attempts + 1 WHERE attempts < ${max}`
const e = await sql`DELETE FROM hold WHERE seat = ${s}`
const f = await sql`SELECT * FROM hold WHERE hold_until < now()`
"""


def test_writes_say_what_they_assign_what_they_bound_and_whether_they_only_clear() -> None:
    module = Program({"w.ts": WRITES}.get).module("w.ts")
    found = {c.line: s for c in module.calls() if (s := sql_statement(c)) is not None}
    shape = {line: (s.operation, s.writes, s.ranges, s.clears) for line, s in found.items()}
    assert shape == {
        1: ("update", ("valid_until",), ("valid_until",), False),
        # an upsert's list and its ON CONFLICT assignments; the conflict's WHERE bounds acquired_at
        2: ("insert", ("acquired_at", "address", "shard_id"), ("acquired_at",), False),
        4: ("update", ("held_by", "hold_until"), (), True),
        5: ("update", ("attempts",), ("attempts",), False),
        6: ("delete", (), (), False),
        7: ("select", (), ("hold_until",), False),
    }


def test_sql_the_parser_keeps_as_a_command_writes_nothing_to_the_terminal() -> None:
    """T-SQL's `IF .. CREATE TABLE` is read as an opaque command; sqlglot's warning about it must not reach
    stderr (in a process of its own: pytest's log capture would hide what a user's terminal shows)."""
    script = (
        "from reviewer.typescript import Program, sql_statement\n"
        "source = \"const a = yield* sql`IF OBJECT_ID(N'jobs', N'U') IS NULL CREATE TABLE jobs (id INT)`\\n\"\n"
        "module = Program({'t.ts': source}.get).module('t.ts')\n"
        "print([s.operation for c in module.calls() if (s := sql_statement(c)) is not None])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['other']"
    assert done.stderr == ""


def test_a_query_config_object_is_read_for_its_text() -> None:
    # node-postgres' `client.query({ text, values, name })`, with a line continuation before the statement
    source = (
        "await client.query({\n"
        "  text: `\\\nupdate ${schema}.jobs set locked_at = null, locked_by = null where locked_at < now() - interval '4 hours'`,\n"
        "  values: [],\n"
        "})\n"
        "await client.query({ text: 'SELECT * FROM jobs WHERE id = $1', values: [id] })\n"
        "await client.query({ name: 'not sql', values: [] })\n"
        "render({ text: 'select a plan' })\n"
    )
    found = _read(source)
    assert sorted(found) == [1, 6]
    update, select = found[1], found[6]
    assert (update.operation, update.table, update.clears, update.below) == ("update", "jobs", True, ("locked_at",))
    assert (select.operation, select.table, select.pins) == ("select", "jobs", ("id",))


def test_an_aggregate_without_group_by_reads_one_row() -> None:
    source = (
        "await db.query(`select count(*) from jobs where kind = 'latency'`)\n"
        "await db.query(`select max(run_at) as latest, min(run_at) from jobs`)\n"
        "await db.query(`select kind, count(*) from jobs group by kind`)\n"
        "await db.query(`select id, count(*) over () from jobs`)\n"
    )
    found = _read(source)
    assert [found[n].aggregate for n in (1, 2, 3, 4)] == [True, True, False, False]


def test_sql_text_held_in_a_const_is_read() -> None:
    source = (
        "const EXPIRED = `SELECT id FROM run WHERE lease_until < now()`\n"
        "export async function sweep(client: any) {\n"
        "  const text = `UPDATE run SET owner = null WHERE lease_until < now()`\n"
        "  await client.query({ text, values: [] })\n"
        "  await client.query(EXPIRED)\n"
        "  const label = 'select a plan'\n"
        "  await client.query(label)\n"
        "}\n"
    )
    found = _read(source)
    assert sorted(found) == [4, 5]
    assert (found[4].operation, found[4].below) == ("update", ("lease_until",))
    assert (found[5].operation, found[5].table) == ("select", "run")


def test_the_conditions_of_a_where_are_counted() -> None:
    found = _read(
        "await sql`UPDATE jobs SET owner = ${me} WHERE id = ${id} AND owner IS NULL RETURNING id`\n"
        "await sql`UPDATE jobs SET attempts = attempts + 1 WHERE id = ${id}`\n"
        "await sql`DELETE FROM jobs`\n"
        "await sql`UPDATE jobs SET owner = null WHERE (id = ${id} AND (owner = ${me} OR owner IS NULL))`\n"
    )
    assert [found[n].conditions for n in (1, 2, 3, 4)] == [2, 1, 0, 2]


def _writes(source: str, path: str = "a.ts") -> bool:
    from reviewer.typescript import writes_in_literals

    module = Program({path: source}.get).module(path)
    return writes_in_literals(path, module.root)


def test_a_file_is_read_for_writes_only_when_a_literal_could_be_one() -> None:
    """`writes_in_literals` lets a search for INSERTs and UPDATEs skip indexing a file; it must never
    skip one `sql_statement` would read a write from."""
    writes = [
        "const f = yield* sql`UPDATE jobs SET owner = ${me} WHERE job_id = ${id}`\n",  # tagged `sql`
        "const f = yield* db`\n  -- take it\n  insert into jobs (id) values (${id})`\n",  # another tag
        'const q = "update jobs set owner = $1"\nclient.query({ text: q })\n',  # a string a runner is given
        "const f = db.execute(`WITH x AS (SELECT 1) UPDATE jobs SET a = 1`)\n",  # starts a statement
        'const f = db.execute("\\x55PDATE jobs SET a = 1")\n',  # an escape, cooked
        "const f = () => sql`${sql.raw(\"UPDATE jobs\")} SET a = 1`\n",  # the keyword in a fragment
    ]
    for source in writes:
        assert _writes(source), source
        assert _writes(source, "a.tsx"), source
    reads_or_prose = [
        "export const updateJob = (x: number) => x // update the job\n",  # code and comments
        'log.info("Failed to update the job")\n',  # prose in a string
        'bus.publish("session.updated", { at: 1 })\n',  # an event name
        "const q = sql`SELECT * FROM jobs WHERE updated_at < ${t}`\n",  # a read naming a column
        "const d = yield* sql`DELETE FROM jobs WHERE id = ${id}`\n",  # a delete is neither
    ]
    for source in reads_or_prose:
        assert not _writes(source), source


def test_every_write_the_filter_passes_over_is_one_sql_statement_does_not_read() -> None:
    """On the statements of this file's SOURCE: where `sql_statement` reads an insert or update, the
    file holding it alone passes the filter."""
    for line in SOURCE.splitlines():
        found = _read(line + "\n")
        if any(s.operation in ("insert", "update") for s in found.values()):
            assert _writes(line + "\n"), line
