"""Reads not written as select chains, judged for the same bound as one: a raw `SELECT` in a `sql`
tagged template (drizzle's, @effect/sql's) and drizzle's relational API
(`db.query.jobs.findMany({ where, limit })`). Each needs a limit (a number, or an expression that
folds to one) at most the bound, to read one row, or an equality pinning one entity.

Both are read by the model's one query model (reviewer/typescript/queries.py; raw SQL through
sql.py and sqlglot); a template sqlglot cannot parse is said to be unread, never taken for a bounded
query, and a tautology (`eq(t.id, t.id)`) pins nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.engine.api import Options
from reviewer.report.model import Finding, Location
from reviewer.rules.bounded_scan.select import fold_number
from reviewer.rules.bounded_scan.where import is_entity_key
from reviewer.typescript import Call, Expr, Query, relational_query, sql_query

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module, Program


@dataclass(frozen=True)
class RawScan:
    """A multi-row read as the bound check sees it: where it is written, its table, and what bounds it."""

    at: Call  # the template, or the relational call
    kind: str  # "sql" | "relational"
    table: str | None
    single_row: bool
    pinned: bool
    has_limit: bool
    limit: float | None  # a literal limit
    limit_expr: Expr | None  # a limit written as an expression, folded when judged
    unreadable: str = ""  # why the statement could not be read

    @property
    def template(self) -> Call:
        return self.at

    @property
    def location(self) -> Location:
        return Location(self.at.path, self.at.line, self.at.end_line)


def raw_scans(program: "Program", module: "Module", opts: Options) -> list[RawScan]:
    """Every raw `SELECT` (or unreadable statement) and relational read written in `module`, in source
    order (read once per module and options: every function a recovery origin reaches asks)."""
    memo = program.memo("bounded-scan.raw")
    key = (module.path, id(opts))
    known = memo.get(key)
    if known is None or known[0] is not opts:
        known = memo[key] = (opts, _raw_scans(program, module, opts))
    return known[1]


def _raw_scans(program: "Program", module: "Module", opts: Options) -> list[RawScan]:
    out: list[RawScan] = []
    for call in module.calls():
        query = sql_query(program, call, opts.single_row_terminals)
        if query is None or query.operation not in ("select", "unreadable"):
            query = relational_query(program, call)
        if query is not None and query.operation in ("select", "unreadable"):
            out.append(_view(query, opts))
    return out


def _view(query: Query, opts: Options) -> RawScan:
    """The model's query as the bound check reads it: pinned when a top-level equality binds an entity key."""
    literal = query.limit_value if query.limit is None else None
    return RawScan(
        query.at, "sql" if query.source == "sql" else "relational", query.table,
        single_row=query.single_row, pinned=any(t.pins and is_entity_key(t.column, opts, query.table) for t in query.terms),
        has_limit=query.has_limit, limit=literal, limit_expr=query.limit, unreadable=query.reason,
    )


def check_raw(ctx: "ReviewContext", scan: RawScan, opts: Options) -> list[Finding]:
    table = f"`{scan.table}`" if scan.table else "its table"
    what = "raw `SELECT`" if scan.kind == "sql" else "relational read"
    limit_word = "`LIMIT`" if scan.kind == "sql" else "`limit`"
    where = scan.location
    anchor = f"{scan.kind}|{scan.at.normalized}"
    if scan.unreadable:
        return [ctx.finding(
            "unresolved-bound",
            title="Cannot read a raw SQL statement",
            message=(f"The raw SQL at {where.path}:{where.line} did not parse ({scan.unreadable}), so whether it "
                     f"is a bounded read was not checked. Check by hand that it reads at most {opts.bound} rows."),
            location=where,
            anchor=anchor,
        )]
    if scan.single_row or scan.pinned:
        return []
    if not scan.has_limit:
        return [ctx.finding(
            "unbounded",
            title=f"Unbounded {'raw SQL' if scan.kind == 'sql' else 'relational'} scan of {table}",
            message=(
                f"This {what} over {table} has no {limit_word} and is not pinned to one entity (no equality on "
                f"{', '.join(f'`{k}`' for k in sorted(opts.entity_keys))} or another column naming one entity's "
                "id, with a value), so one pass reads every "
                f"matching row. Bound it with {limit_word} N, N <= {opts.bound}."
            ),
            location=where,
            failure_sequence=(
                f"rows pile up in {table} while the service is down or its work keeps failing",
                "the next pass loads the whole backlog in one query",
                "the pass stalls or runs out of memory, and a crash repeats it all",
            ),
            anchor=anchor,
        )]
    value = scan.limit
    shown = "a number"
    if scan.limit_expr is not None:
        shown = scan.limit_expr.written
        value = fold_number(ctx.program, scan.limit_expr)
    elif value is not None:
        shown = f"{value:g}"
    if value is None:
        return [ctx.finding(
            "unresolved-bound",
            title=f"Cannot resolve the scan bound `{shown}` of {table}",
            message=(f"The {what} over {table} is limited by `{shown}`, which does not fold to a constant, so "
                     f"the bound of {opts.bound} rows per pass is not proven."),
            location=where,
            anchor=f"{anchor}|limit",
        )]
    if value < 0 or value > opts.bound:
        why = "a negative LIMIT is no limit at all" if value < 0 else f"above the configured bound of {opts.bound}"
        return [ctx.finding(
            "bound-too-large",
            title=f"Scan bound `{shown}` of {table} is {'negative' if value < 0 else 'too large'}",
            message=f"The {what} over {table} is limited by `{shown}` = {value:g}: {why}.",
            location=where,
            failure_sequence=(
                "a backlog builds up",
                f"one pass loads {'every matching row' if value < 0 else f'up to {value:g} rows'} at once",
                "the burst of work stalls the runner and the database",
            ),
            anchor=f"{anchor}|limit",
        )]
    return []
