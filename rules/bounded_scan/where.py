"""Where clauses and raw SQL: does a condition pin one entity, which columns it reads.

Helper functions a condition calls are followed (a few levels, across files);
a raw `sql` template is read only through the columns it interpolates.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

from reviewer.engine.api import Options
from reviewer.rules._vocabulary import is_group_key
from reviewer.rules.bounded_scan.chains import callee_name, resolve_column
from reviewer.typescript import arguments_of, read_where

if TYPE_CHECKING:
    from reviewer.typescript import Call, Expr, Function, Module, Program


# ---------------------------------------------------------------- where clauses


def helper_function(
    program: "Program", module: "Module | None", call: "Call", context_fn: "Function | None"
) -> "Function | None":
    """The function a plain helper call (`live(claim, now)`) denotes, if the model knows it."""
    name = call.callee_text or ""
    if not name or "(" in name:
        return None
    local = context_fn.local_function(name) if context_fn is not None and "." not in name else None
    if local is not None:
        return local
    return program.definition(module.path, name) if module is not None else None


_KEY = re.compile(r"(^id$|_id$|[a-z0-9]Id$|[a-z0-9]ID$)")


def is_entity_key(column: str | None, opts: Options, table: str | None = None) -> bool:
    """A configured entity key, or any column that names one entity by its id (`integration_id`,
    `ownerId`): an equality on it reads one entity's rows, not every entity's. A key of a group of
    entities (`shard_id`, `tenantId`: _vocabulary.is_group_key) pins no entity unless configured."""
    if column is None:
        return False
    return column in opts.entity_keys or (_KEY.search(column) is not None and not is_group_key(column, table))


def pins_entity(
    program: "Program", module: "Module | None", expr: "Expr", table: str, opts: Options, depth: int = 0
) -> bool | None:
    """Does `expr` (a where condition) force an equality on the table's entity key?

    Read by the model's query model (`read_where`): only a top-level conjunct
    pins (`eq(T.key, x)` alone, under `and(..)`, through `const` conditions,
    spreads of `const` arrays and where-helpers); `or(..)` and anything else
    may widen the result. A column compared with a column of the same table
    (`eq(T.session_id, T.session_id)`) names no entity. None when it does not
    pin as far as the reviewer reads, but a spread it cannot read
    (`and(...extra)`) might hold the pin.
    """
    if expr is None:
        return False
    terms, unread = read_where(program, expr)
    for term in terms:
        if not term.pins or not is_entity_key(term.column, opts, table) or term.column_expr is None:
            continue
        side = term.column_expr
        column = resolve_column(program.module(side.path), side, opts)
        if column is not None and column[0] == table:
            return True
    return None if any(u.kind == "spread_element" for u in unread) else False


def unread_spreads(program: "Program", expr: "Expr", depth: int = 0) -> tuple["Expr", ...]:
    """The spreads in a condition's `and(...)`s (through `const` conditions and arrays) that the reviewer cannot read."""
    if expr is None:
        return ()
    _, unread = read_where(program, expr)
    return tuple(u for u in unread if u.kind == "spread_element")


def columns_in(
    program: "Program", module: "Module | None", expr: "Expr", table: str, opts: Options, depth: int = 0
) -> set[str]:
    """Columns of `table` referenced anywhere in a condition (following helpers one level, `const`
    conditions and spreads of `const` arrays a few), including `${T.col}` interpolations of raw
    `sql` templates."""
    found: set[str] = set()
    if module is None or module.path != expr.path:
        module = program.module(expr.path)
    if expr.call is None and expr.kind in ("identifier", "member_expression") and depth < 3:
        constant = program.bound_value(expr)
        if constant is not None:
            return columns_in(program, None, constant, table, opts, depth + 1)
    for call in expr.calls:
        if is_raw_sql(call):
            found |= interpolated_columns(program, call, table, opts)
        if depth < 3 and any(arg.kind == "spread_element" for arg in call.args):
            for element in arguments_of(program, call):  # elements of `const` arrays spread into the call
                if element.kind != "spread_element" and element not in call.args:
                    found |= columns_in(program, None, element, table, opts, depth + 1)
        for arg in call.args:
            column = resolve_column(module, arg, opts)
            if column is not None and column[0] == table:
                found.add(column[1])
        if depth < 2 and callee_name(call) not in ("and", "or", "not", "eq", "ne", "isNull", "isNotNull"):
            helper = helper_function(program, module, call, expr.enclosing_function)
            if helper is not None:
                found |= columns_in(program, program.module(helper.path), helper.expr, table, opts, depth + 1)
    column = resolve_column(module, expr, opts)
    if column is not None and column[0] == table:
        found.add(column[1])
    return found


# ---------------------------------------------------------------- raw SQL
#
# A tagged template (sql`...`) is a call without an argument list. The model
# exposes the member expressions interpolated into it (`${T.wake_attempts}`)
# but not its literal text, so a raw statement is judged by the columns it
# interpolates and by how it is used, never by reading the SQL.

# Methods that run a raw statement by hand: db.run(sql`UPDATE ..`).
RAW_SQL_EXECUTORS = frozenset({"run", "execute", "exec"})


def is_raw_sql(call: "Call") -> bool:
    return callee_name(call) == "sql" and not call.args


def interpolated_columns(program: "Program", sql: "Call", table: str, opts: Options) -> set[str]:
    """Columns of `table` interpolated into a raw `sql` template (directly or in a nested call)."""
    module = program.module(sql.path)
    inside = sql.expr.calls  # the template itself and calls inside its substitutions
    found: set[str] = set()
    for name in _column_names(opts):
        for read in program.invocations(name, sql.path):
            if read.call is None or not any(read.call is c for c in inside):
                continue
            column = resolve_column(module, read.expr, opts)
            if column is not None and column[0] == table:
                found.add(column[1])
    return found


def _column_names(opts: Options) -> tuple[str, ...]:
    """Every column name a check of this family asks about."""
    names = {*opts.attempts_columns, *opts.cursor_columns, *opts.entity_keys, *opts.settled_guards, *opts.wake_flags}
    return tuple(sorted(names))
