"""Raw SQL scans: a `SELECT` written in a `sql` tagged template (drizzle's, @effect/sql's) is a read
like a select chain, and judged for the same bound: a `LIMIT` (a number, or a substitution that
folds to one) at most the bound, one row, or an equality pinning one entity.

The statement is read by the model (reviewer/typescript/sql.py, sqlglot); a template sqlglot
cannot parse is said to be unread, never taken for a bounded query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.engine.api import Options
from reviewer.report.model import Finding, Location
from reviewer.rules.bounded_scan.chains import callee_name
from reviewer.rules.bounded_scan.select import fold_number
from reviewer.typescript import Call, SqlStatement, sql_statement

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module


@dataclass(frozen=True)
class RawScan:
    """A raw `SELECT` and the call that runs it (`db.all(sql..)`), when it is handed to one."""

    template: Call
    statement: SqlStatement
    runner: Call | None

    @property
    def location(self) -> Location:
        return Location(self.template.path, self.template.line, self.template.end_line)


def raw_scans(module: "Module") -> list[RawScan]:
    """Every raw `SELECT` (or unreadable statement) written in `module`, in source order."""
    out: list[RawScan] = []
    for call in module.calls():
        found = sql_statement(call)
        if found is None or found.operation not in ("select", "unreadable"):
            continue
        host = call.host
        out.append(RawScan(call, found, host if host is not None and host.args[:1] == (call.expr,) else None))
    return out


def check_raw(ctx: "ReviewContext", scan: RawScan, opts: Options) -> list[Finding]:
    statement = scan.statement
    table = f"`{statement.table}`" if statement.table else "its table"
    where = scan.location
    anchor = f"raw|{scan.template.normalized}"
    if statement.operation == "unreadable":
        return [ctx.finding(
            "unresolved-bound",
            title="Cannot read a raw SQL statement",
            message=(f"The raw SQL at {where.path}:{where.line} did not parse ({statement.reason}), so whether it "
                     f"is a bounded read was not checked. Check by hand that it reads at most {opts.bound} rows."),
            location=where,
            anchor=anchor,
        )]
    runner = scan.runner
    if runner is not None and callee_name(runner) in opts.single_row_terminals:
        return []
    if set(statement.pins) & set(opts.entity_keys):
        return []
    if not statement.has_limit:
        return [ctx.finding(
            "unbounded",
            title=f"Unbounded raw SQL scan of {table}",
            message=(
                f"This raw `SELECT` over {table} has no `LIMIT` and is not pinned to one entity (no `=` on "
                f"{', '.join(f'`{k}`' for k in sorted(opts.entity_keys))} with a value), so one pass reads every "
                f"matching row. Bound it with `LIMIT N`, N <= {opts.bound}."
            ),
            location=where,
            failure_sequence=(
                f"rows pile up in {table} while the service is down or its work keeps failing",
                "the next pass loads the whole backlog in one query",
                "the pass stalls or runs out of memory, and a crash repeats it all",
            ),
            anchor=anchor,
        )]
    value = statement.limit
    shown = "a number"
    if statement.limit_expr is not None:
        shown = statement.limit_expr.written
        value = fold_number(ctx.program, statement.limit_expr)
    elif value is not None:
        shown = f"{value:g}"
    if value is None:
        return [ctx.finding(
            "unresolved-bound",
            title=f"Cannot resolve the raw SQL scan bound `LIMIT {shown}`",
            message=(f"The raw `SELECT` over {table} is limited by `{shown}`, which does not fold to a constant, so "
                     f"the bound of {opts.bound} rows per pass is not proven."),
            location=where,
            anchor=f"{anchor}|limit",
        )]
    if value == 1:
        return []
    if value < 0 or value > opts.bound:
        why = "a negative LIMIT is no limit at all" if value < 0 else f"above the configured bound of {opts.bound}"
        return [ctx.finding(
            "bound-too-large",
            title=f"Raw SQL scan bound `LIMIT {shown}` of {table} is {'negative' if value < 0 else 'too large'}",
            message=f"The raw `SELECT` over {table} is limited by `LIMIT {shown}` = {value:g}: {why}.",
            location=where,
            failure_sequence=(
                "a backlog builds up",
                f"one pass loads {'every matching row' if value < 0 else f'up to {value:g} rows'} at once",
                "the burst of work stalls the runner and the database",
            ),
            anchor=f"{anchor}|limit",
        )]
    return []
