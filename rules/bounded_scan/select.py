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
from reviewer.rules.bounded_scan.where import helper_function, pins_entity, unread_spreads
from reviewer.typescript import arguments_of, property_value

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


# Members a property read may take from a spread the reviewer cannot follow (see property_value).
_UNREAD_MEMBERS = frozenset({"spread_element", "pair"})


def fold_number(program: "Program", expr: "Expr", depth: int = 0) -> float | None:
    """The value of a `.limit(..)` argument: literal, constant (across imports), arithmetic, `Math.*`,
    a member of a `const` object (`opts.limit`, spreads of `const` objects followed, the last one winning).

    None when it does not fold to a number, or folds to NaN (no bound proven either way).
    """
    if expr.normalized in _UNBOUNDED_GLOBALS:
        return _UNBOUNDED_GLOBALS[expr.normalized]
    member = property_value(program, expr) if depth < 4 and expr.kind in ("member_expression", "subscript_expression") else None
    if member is not None:
        return None if member.kind in _UNREAD_MEMBERS else fold_number(program, member, depth + 1)
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
        return [Location(s.path, s.line, s.end_line, f"`{s.written}`: a value the bound is computed from")
                for s in program.fold_sources(expr)] if module is not None else []
    head, _, rest = name.partition(".")
    imp = module.imports.get(head)
    target, declared = module, head
    if imp is not None and imp.module:
        target = program.module(imp.module)
        declared = rest if imp.imported == "*" and rest else imp.imported
    lines = target.declaration_lines(declared) if target is not None else None
    out = [Location(target.path, lines[0], lines[1], f"`{declared}`: the bound's declaration")] if lines else []
    # Every value the fold read on the way (`const PAGE = RAW`, then `RAW`'s, through barrels):
    # raising any of them raises the bound, however far from the scan it is written.
    for source in program.fold_sources(expr):
        here = Location(source.path, source.line, source.end_line, f"`{source.written}`: a value the bound is computed from")
        if not any(o.path == here.path and o.line <= here.line and here.end_line <= o.end_line for o in out):
            out.append(here)
    return out


# ---------------------------------------------------------------- order


@dataclass(frozen=True)
class OrderKey:
    column: str | None  # None when the key is not a column of the scanned table
    descending: bool
    text: str  # the key as written (written.py), for messages only
    # `T.col` or `asc(Other.col)`: a column of some table, as opposed to an
    # expression (sql`random()`) whose fairness cannot be read at all.
    is_column_ref: bool
    expr: "Expr | None" = None  # where the key is written (a `const` array's element may be in another file)


def order_keys(program: "Program", query: Query) -> tuple["Expr", ...]:
    """The `.orderBy(..)` keys, spreads of `const` arrays (and helpers returning one) flattened; a spread
    that cannot be read stays a `spread_element`."""
    order = query.step("orderBy")
    return arguments_of(program, order) if order is not None else ()


def first_order_key(program: "Program", query: Query, opts: Options) -> OrderKey | None:
    keys = order_keys(program, query)
    if not keys:
        return None
    key = keys[0]
    if key.kind == "identifier":  # `const byAttempts = asc(T.wake_attempts)`
        bound = program.bound_value(key)
        key = bound if bound is not None and bound.call is not None else key
    descending = False
    inner = key
    call = key.call
    if call is not None and callee_name(call) in ("asc", "desc") and call.args:
        descending = callee_name(call) == "desc"
        inner = call.args[0]
    column = resolve_column(program.module(inner.path), inner, opts)
    name = column[1] if column is not None and column[0] == query.table else None
    dotted = inner.member_path
    return OrderKey(name, descending, key.written, dotted is not None and "." in dotted, key)


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


def where_helpers(program: "Program", query: Query) -> list[Location]:
    """Helpers that build the query's `where` (`pendingFor(id)`): a patch that only edits one
    of them changes what the scan reads."""
    where = query.step("where")
    if where is None or not where.args:
        return []
    arg = where.args[0]
    module = program.module(where.path)
    calls = ([arg.call] if arg.call is not None else []) + [c for c in arg.calls if c is not arg.call]
    out: list[Location] = []
    for call in calls:
        fn = helper_function(program, module, call, where.enclosing)
        if fn is not None:
            out.append(Location(fn.path, fn.line, fn.end_line, f"`{fn.name or call.callee_written}`: builds this query's `where`"))
    return out


def check_select(ctx: "ReviewContext", module: "Module | None", query: Query, opts: Options) -> ScanResult:
    program = ctx.program
    if any(m in opts.single_row_terminals for m in query.methods):
        return ScanResult("single-row")
    where = query.step("where")
    pinned = pins_entity(program, program.module(where.path), where.args[0], query.table, opts) if where is not None and where.args else False
    if pinned:
        return ScanResult("pinned")
    table = table_label(query)
    owner = owner_label(query)
    limit = query.step("limit")
    if limit is None or not limit.args:
        unread = unread_spreads(program, where.args[0]) if pinned is None and where is not None else ()
        if query.gave_up or unread:
            return ScanResult("unresolved", findings=(_unfollowed(ctx, query, unread, opts),))
        finding = ctx.finding(
            "unbounded",
            title=f"Unbounded scan of {query.table} in {owner}",
            message=(
                f"This select over {table} in {owner} has no `.limit(N)` and is not pinned to one entity "
                f"(no `eq` on {', '.join(f'`{k}`' for k in sorted(opts.entity_keys))}), so one pass reads every "
                f"matching row of every Session. Bound it with `.limit(N)`, N <= {opts.bound}, ordered by the "
                f"attempts column.{_built_elsewhere(query)}"
            ),
            location=loc(query),
            related=(*query.earlier, *where_helpers(program, query)),
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
    # Quoted as written; whether the value needs spelling out is decided on the normal form.
    shown = bound_expr.written
    limit_loc = Location(bound_expr.path, bound_expr.line, bound_expr.end_line, f"`.limit({shown})`")
    value = fold_number(program, bound_expr)
    sources = [*query.earlier, *bound_sources(program, program.module(bound_expr.path), bound_expr)]
    bound_text = shown if value is None or bound_expr.normalized == _fmt(value) else f"{shown} = {_fmt(value)}"
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
    key = first_order_key(program, query, opts)
    fair = _is_fair(key, opts)
    if not fair:
        unread = unread_spreads(program, where.args[0]) if pinned is None and where is not None else ()
        findings.append(_order_finding(ctx, query, key, bound_text, opts, unread))
    return ScanResult("bounded", bound_text, key.column if fair and key else None, tuple(findings))


def _order_finding(
    ctx: "ReviewContext", query: Query, key: OrderKey | None, bound_text: str, opts: Options, unread: tuple["Expr", ...] = ()
) -> Finding:
    table = table_label(query)
    unpinned = (
        f" (Its `where` spreads {', '.join(f'`{e.written}`' for e in unread)}, which the reviewer cannot read: "
        "if that pins one entity, this is not a scan.)"
        if unread
        else ""
    )
    owner = owner_label(query)
    attempts = " or ".join(f"`{c}`" for c in opts.attempts_columns) or "an attempts column"
    first = key.expr if key is not None else None
    order_loc = (
        *((Location(first.path, first.line, first.end_line, "the first sort key"),) if first is not None else ()),
        *query.earlier,
    )
    if key is not None and key.column is None and not key.is_column_ref:
        unread = first is not None and first.kind == "spread_element"
        what = (
            f"the keys of `{key.text}`, which the reviewer cannot read (not a `const` array, nor a helper "
            "returning an array literal)"
            if unread
            else f"`{key.text}`, which is not a column of {query.table}"
        )
        return ctx.finding(
            "unresolved-order",
            title=f"Cannot read the scan order `{key.text}` in {owner}",
            message=(
                f"The bounded scan of {table} orders first by {what}; fairness (attempts first: {attempts}) "
                f"is not proven.{unpinned}"
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
            f"{unpinned}"
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


def _built_elsewhere(query: Query) -> str:
    if not query.earlier:
        return ""
    return (" The query is built across several places (see the related locations) and judged whole, "
            "as if written in one chain.")


def _unfollowed(ctx: "ReviewContext", query: Query, unread: tuple["Expr", ...], opts: Options) -> Finding:
    """A select with no visible `.limit` whose bound may be set where the reviewer cannot see: its builder
    is handed on (a call, a `let`, too many hops), or its `where` spreads conditions it cannot read."""
    table = table_label(query)
    owner = owner_label(query)
    reasons: list[str] = []
    if query.gave_up:
        reasons.append(f"its builder {query.gave_up}, where a `.limit` may or may not be added")
    if unread:
        spreads = ", ".join(f"`{e.written}`" for e in unread)
        reasons.append(f"its `where` spreads {spreads}, which the reviewer cannot read, so it may or may not "
                       f"pin one entity ({', '.join(f'`{k}`' for k in sorted(opts.entity_keys))})")
    return ctx.finding(
        "unresolved-bound",
        title=f"Cannot tell whether the scan of {query.table} in {owner} is bounded",
        message=(
            f"This select over {table} in {owner} has no `.limit(N)` the reviewer can see, and "
            f"{'; and '.join(reasons)}. Check by hand that every run of it is bounded (`.limit(N)`, N <= "
            f"{opts.bound}) or pinned to one entity."
        ),
        location=loc(query),
        related=(*query.earlier, *(Location(e.path, e.line, e.end_line, "not read by the reviewer") for e in unread)),
        anchor=f"{query.anchor}|limit",
    )
