"""Reads not written as select chains, judged for the same bound as one: a raw `SELECT` in a `sql`
tagged template (drizzle's, @effect/sql's) and drizzle's relational API
(`db.query.jobs.findMany({ where, limit })`). Each needs a limit (a number, or an expression that
folds to one) at most the bound, to read one row, or an equality pinning one entity.

Raw statements are read by the model (reviewer/typescript/sql.py, sqlglot); a template sqlglot
cannot parse is said to be unread, never taken for a bounded query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.engine.api import Options
from reviewer.report.model import Finding, Location
from reviewer.rules.bounded_scan.chains import callee_name
from reviewer.rules.bounded_scan.select import fold_number
from reviewer.typescript import Call, Expr, exits, sql_statement

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
        found = sql_statement(call)
        if found is not None and found.operation in ("select", "unreadable"):
            host = call.host
            # `db.get(sql\`..\`)` runs a template; `db.get("SELECT ..")` runs its own argument
            runner = host if host is not None and host.args[:1] == (call.expr,) else (call if call.args else None)
            out.append(RawScan(
                call, "sql", found.table,
                single_row=runner is not None and callee_name(runner) in opts.single_row_terminals or found.limit == 1,
                pinned=bool(set(found.pins) & set(opts.entity_keys)),
                has_limit=found.has_limit, limit=found.limit, limit_expr=found.limit_expr, unreadable=found.reason,
            ))
            continue
        relational = _relational(program, call, opts)
        if relational is not None:
            out.append(relational)
    return out


# drizzle's relational queries: `db.query.<table>.findMany(config)` / `.findFirst(config)`.
_RELATIONAL = {"findMany": False, "findFirst": True}


def _relational(program: "Program", call: Call, opts: Options) -> RawScan | None:
    parts = call.callee.split(".")
    if len(parts) < 3 or parts[-1] not in _RELATIONAL or parts[-3] != "query":
        return None
    config = call.args[0] if call.args else None
    if config is not None and config.identifier is not None:
        config = program.bound_value(config) or config  # `findMany(page)`, `const page = { limit: 50 }`
    where = config.prop("where") if config is not None else None
    limit = config.prop("limit") if config is not None else None
    return RawScan(
        call, "relational", parts[-2], single_row=_RELATIONAL[parts[-1]],
        pinned=where is not None and _relational_pin(where, opts),
        has_limit=limit is not None, limit=None, limit_expr=limit,
    )


def _relational_pin(where: Expr, opts: Options) -> bool:
    """`where: { id: x }` (a value, not an operator object), or `eq(t.id, x)` on an entity key against
    something other than a column of the same table, inline or in a `(t, { eq }) => ..` callback,
    alone or inside a top-level `and(..)`: under `or`, `not` or anything else it pins nothing."""
    for key, value in where.props:
        if key in opts.entity_keys and not value.props and value.normalized not in ("undefined", "null") and value.kind != "object":
            return True
    function = where.function
    body = _returned(function) if function is not None else where
    return body is not None and _pins(body, opts, 0)


def _returned(function) -> Expr | None:
    ends = exits(function)
    return ends[0].value if len(ends) == 1 else None


def _pins(condition: Expr, opts: Options, depth: int) -> bool:
    call = condition.call
    if call is None or depth > 8:
        return False
    name = callee_name(call)
    if name == "and":
        return any(_pins(arg, opts, depth + 1) for arg in call.args)
    if name != "eq" or len(call.args) != 2:
        return False
    for column, value in ((call.args[0], call.args[1]), (call.args[1], call.args[0])):
        path = column.member_path or ""
        root, _, field = path.rpartition(".")
        if root and field in opts.entity_keys and (value.member_path or "").rpartition(".")[0] != root:
            return True
    return False


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
                f"{', '.join(f'`{k}`' for k in sorted(opts.entity_keys))} with a value), so one pass reads every "
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
