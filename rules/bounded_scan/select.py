"""The select checks: unbounded, bound-too-large, unresolved-bound, starvation-order, unresolved-order.

A select chain is read for what it is (single row, pinned to one entity,
unbounded or bounded); a bounded scan's `.limit` is folded and its first sort
key judged for fairness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.rules.bounded_scan.chains import Query, callee_name, loc, owner_label, resolve_column, table_label
from reviewer.rules.bounded_scan.where import helper_function, pins_entity

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Expr, Module, Program


# ---------------------------------------------------------------- bounds


# Globals that name "no bound at all" (or one too large to mean anything).
_UNBOUNDED_GLOBALS = {
    "Infinity": math.inf,
    "Number.POSITIVE_INFINITY": math.inf,
    "Number.MAX_SAFE_INTEGER": float(2**53 - 1),
    "Number.MAX_VALUE": math.inf,
}


def fold_number(program: "Program", expr: "Expr") -> float | None:
    """The value of a `.limit(..)` argument: literal, constant (across imports), arithmetic, `Math.*`.

    None when it does not fold to a number, or folds to NaN (no bound proven either way).
    """
    if expr.normalized in _UNBOUNDED_GLOBALS:
        return _UNBOUNDED_GLOBALS[expr.normalized]
    value = program.fold(expr)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _fmt(value: float) -> str:
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return str(int(value)) if value == int(value) else f"{value:g}"


def bound_sources(program: "Program", module: "Module | None", expr: "Expr") -> list[Location]:
    """Where a named bound is declared (`BATCH_SIZE`, `Limits.PAGE`), so a patch that only
    changes the constant is judged as changing the scan."""
    name = expr.member_path
    if module is None or not name:
        return []
    head, _, rest = name.partition(".")
    imp = module.imports.get(head)
    target, declared = module, head
    if imp is not None and imp.module:
        target = program.module(imp.module)
        declared = rest if imp.imported == "*" and rest else imp.imported
    lines = target.declaration_lines(declared) if target is not None else None
    if lines is None:
        return []
    return [Location(target.path, lines[0], lines[1], f"`{declared}`: the bound's declaration")]


# ---------------------------------------------------------------- order


@dataclass(frozen=True)
class OrderKey:
    column: str | None  # None when the key is not a column of the scanned table
    descending: bool
    text: str
    # `T.col` or `asc(Other.col)`: a column of some table, as opposed to an
    # expression (sql`random()`) whose fairness cannot be read at all.
    is_column_ref: bool


def first_order_key(module: "Module | None", query: Query, opts: Options) -> OrderKey | None:
    order = query.step("orderBy")
    if order is None or not order.args:
        return None
    key = order.args[0]
    descending = False
    inner = key
    call = key.call
    if call is not None and callee_name(call) in ("asc", "desc") and call.args:
        descending = callee_name(call) == "desc"
        inner = call.args[0]
    column = resolve_column(module, inner, opts)
    name = column[1] if column is not None and column[0] == query.table else None
    dotted = inner.member_path
    return OrderKey(name, descending, key.normalized, dotted is not None and "." in dotted)


def _is_fair(key: OrderKey | None, opts: Options) -> bool:
    if key is None or key.column is None:
        return False
    if key.column in opts.cursor_columns:
        return True
    return key.column in opts.attempts_columns and not key.descending


# ---------------------------------------------------------------- checks


@dataclass(frozen=True)
class ScanResult:
    """What one select chain turned out to be, and what is wrong with it."""

    kind: str  # "single-row" | "pinned" | "unbounded" | "bounded"
    bound_text: str = ""
    fair_column: str | None = None
    findings: tuple[Finding, ...] = ()


def where_helpers(program: "Program", module: "Module | None", query: Query) -> list[Location]:
    """Helpers that build the query's `where` (`pendingFor(id)`): a patch that only edits one
    of them changes what the scan reads."""
    where = query.step("where")
    if where is None or not where.args:
        return []
    arg = where.args[0]
    calls = ([arg.call] if arg.call is not None else []) + [c for c in arg.calls if c is not arg.call]
    out: list[Location] = []
    for call in calls:
        fn = helper_function(program, module, call, query.enclosing)
        if fn is not None:
            out.append(Location(fn.path, fn.line, fn.end_line, f"`{fn.name or call.callee_text}`: builds this query's `where`"))
    return out


def check_select(ctx: "ReviewContext", module: "Module | None", query: Query, opts: Options) -> ScanResult:
    program = ctx.program
    if any(m in opts.single_row_terminals for m in query.methods):
        return ScanResult("single-row")
    where = query.step("where")
    if where is not None and where.args and pins_entity(program, module, where.args[0], query.table, opts):
        return ScanResult("pinned")
    table = table_label(query)
    owner = owner_label(query)
    limit = query.step("limit")
    if limit is None or not limit.args:
        finding = ctx.finding(
            "unbounded",
            title=f"Unbounded scan of {query.table} in {owner}",
            message=(
                f"This select over {table} in {owner} has no `.limit(N)` and is not pinned to one entity "
                f"(no `eq` on {', '.join(f'`{k}`' for k in sorted(opts.entity_keys))}), so one pass reads every "
                f"matching row of every Session. Bound it with `.limit(N)`, N <= {opts.bound}, ordered by the "
                "attempts column."
            ),
            location=loc(query),
            related=tuple(where_helpers(program, module, query)),
            failure_sequence=(
                f"rows pile up in {query.table} while the service is down or its wakes keep failing",
                "the next pass loads the whole backlog in one query",
                "every row is processed (one write and one wake each) inside that single pass",
                "the pass stalls or runs out of memory before any Session is woken, and a crash repeats it all",
            ),
            anchor=query.anchor,
        )
        return ScanResult("unbounded", findings=(finding,))
    findings: list[Finding] = []
    bound_expr = limit.args[0]
    limit_loc = Location(query.path, bound_expr.line, bound_expr.end_line, f"`.limit({bound_expr.normalized})`")
    value = fold_number(program, bound_expr)
    sources = bound_sources(program, module, bound_expr)
    shown = bound_expr.normalized
    bound_text = shown if value is None or shown == _fmt(value) else f"{shown} = {_fmt(value)}"
    if value is None:
        findings.append(
            ctx.finding(
                "unresolved-bound",
                title=f"Cannot resolve scan bound `.limit({shown})` in {owner}",
                message=(
                    f"The scan of {table} is limited by `{shown}`, which does not fold to a constant, so the "
                    f"bound of {opts.bound} rows per pass is not proven."
                ),
                location=loc(query),
                related=(limit_loc, *sources),
                anchor=f"{query.anchor}|limit",
            )
        )
    elif value < 0:
        findings.append(
            ctx.finding(
                "bound-too-large",
                title=f"Scan bound `.limit({shown})` is negative in {owner}: no limit at all",
                message=(
                    f"The scan of {table} is limited by `.limit({bound_text})`; SQLite reads a negative LIMIT as "
                    f"no limit, so one pass reads every matching row instead of at most {opts.bound}."
                ),
                location=loc(query),
                related=(limit_loc, *sources),
                failure_sequence=(
                    "a backlog builds up",
                    "one pass loads every matching row at once",
                    "the burst of writes and wakes stalls the runner and the database",
                ),
                anchor=f"{query.anchor}|limit",
            )
        )
    elif value > opts.bound:
        findings.append(
            ctx.finding(
                "bound-too-large",
                title=f"Scan bound {_fmt(value)} exceeds {opts.bound} in {owner}",
                message=(
                    f"The scan of {table} is limited by `.limit({bound_text})`, above the configured bound of "
                    f"{opts.bound} rows per pass."
                ),
                location=loc(query),
                related=(limit_loc, *sources),
                failure_sequence=(
                    f"a backlog of more than {opts.bound} rows builds up",
                    f"one pass loads and processes up to {_fmt(value)} rows at once",
                    "the burst of writes and wakes stalls the runner and the database",
                ),
                anchor=f"{query.anchor}|limit",
            )
        )
    key = first_order_key(module, query, opts)
    fair = _is_fair(key, opts)
    if not fair:
        findings.append(_order_finding(ctx, query, key, bound_text, opts))
    return ScanResult("bounded", bound_text, key.column if fair and key else None, tuple(findings))


def _order_finding(ctx: "ReviewContext", query: Query, key: OrderKey | None, bound_text: str, opts: Options) -> Finding:
    table = table_label(query)
    owner = owner_label(query)
    attempts = " or ".join(f"`{c}`" for c in opts.attempts_columns) or "an attempts column"
    order = query.step("orderBy")
    order_loc = (
        (Location(query.path, order.args[0].line, order.args[0].end_line, "the first sort key"),)
        if order is not None and order.args
        else ()
    )
    if key is not None and key.column is None and not key.is_column_ref:
        return ctx.finding(
            "unresolved-order",
            title=f"Cannot read the scan order `{key.text}` in {owner}",
            message=(
                f"The bounded scan of {table} orders first by `{key.text}`, which is not a column of "
                f"{query.table}; fairness (attempts first: {attempts}) is not proven."
            ),
            location=loc(query),
            related=order_loc,
            anchor=f"{query.anchor}|order",
        )
    described = "has no `.orderBy(...)`" if key is None else f"orders first by `{key.text}`"
    return ctx.finding(
        "starvation-order",
        title=f"Bounded scan of {query.table} in {owner} can starve later Sessions",
        message=(
            f"The scan of {table} is bounded by `.limit({bound_text})` but {described}. It must order first by "
            f"{attempts} ascending (or a cursor) so rows whose wake failed or was a no-op sort behind fresh work."
        ),
        location=loc(query),
        related=order_loc,
        failure_sequence=(
            f"a full first page of {query.table} rows cannot be woken (another owner holds their Session, or the wake fails)",
            "each pass reads the same first page again: nothing in the order moves those rows back",
            f"rows beyond the first {bound_text} are never read",
            "later Sessions are never woken or recovered, across restarts",
        ),
        anchor=f"{query.anchor}|order",
    )
