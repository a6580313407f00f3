"""Where clauses and raw SQL: does a condition pin one entity, which columns it reads.

Helper functions a condition calls are followed (a few levels, across files);
a raw `sql` template is read only through the columns it interpolates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine.api import Options
from reviewer.rules.bounded_scan.chains import callee_name, resolve_column
from reviewer.typescript import arguments_of

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


def pins_entity(
    program: "Program", module: "Module | None", expr: "Expr", table: str, opts: Options, depth: int = 0
) -> bool | None:
    """Does `expr` (a where condition) force an equality on the table's entity key?

    Only `eq(T.key, x)` directly or under `and(...)`: `or(...)` and anything
    else may widen the result, so it does not pin. The conditions of an `and`
    may come from spreads of `const` arrays (`and(...mine)`); a name may stand
    for a `const` condition (local or imported). None when it does not pin as
    far as the reviewer reads, but a spread it cannot read (`and(...extra)`)
    might hold the pin.
    """
    if expr is None or depth > 3:
        return False
    if module is None or module.path != expr.path:
        module = program.module(expr.path)
    call = expr.call
    if call is None:
        if expr.kind in ("identifier", "member_expression"):
            constant = program.bound_value(expr)
            if constant is not None:
                return pins_entity(program, None, constant, table, opts, depth + 1)
        return False
    name = callee_name(call)
    if name == "eq":
        sides = [resolve_column(module, arg, opts) for arg in call.args[:2]]
        for i, column in enumerate(sides):
            other = sides[1 - i] if len(sides) == 2 else None
            # `eq(T.session_id, T.session_id)` holds on every row, and `eq(T.session_id, T.parent_id)`
            # compares two columns of each row: neither names one entity.
            if column is not None and column[0] == table and column[1] in opts.entity_keys and \
                    not (other is not None and other[0] == table):
                return True
        return False
    if name == "and":
        answers = [
            None if a.kind == "spread_element" else pins_entity(program, None, a, table, opts, depth + 1)
            for a in arguments_of(program, call)
        ]
        return True if any(answers) else (None if None in answers else False)
    helper = helper_function(program, module, call, expr.enclosing_function)
    if helper is None:
        return False
    return _helper_pins(program, helper, table, opts, depth + 1)


def unread_spreads(program: "Program", expr: "Expr", depth: int = 0) -> tuple["Expr", ...]:
    """The spreads in a condition's `and(...)`s (through `const` conditions and arrays) that the reviewer cannot read."""
    if expr is None or depth > 3:
        return ()
    call = expr.call
    if call is None:
        constant = program.bound_value(expr) if expr.kind in ("identifier", "member_expression") else None
        return unread_spreads(program, constant, depth + 1) if constant is not None else ()
    if callee_name(call) != "and":
        return ()
    out: list["Expr"] = []
    for arg in arguments_of(program, call):
        out += [arg] if arg.kind == "spread_element" else unread_spreads(program, arg, depth + 1)
    return tuple(out)


def _helper_pins(program: "Program", helper: "Function", table: str, opts: Options, depth: int) -> bool:
    """A where-helper (`const owned = (c) => and(eq(T.id, c.id), ...)`) pins when its
    body is an `and`/`eq` over the entity key and it never branches through `or`."""
    calls = list(helper.all_calls)
    if any(callee_name(c) in ("or", "not") for c in calls):
        return False
    helper_module = program.module(helper.path)
    for call in calls:
        name = callee_name(call)
        if name == "eq" and pins_entity(program, helper_module, call.expr, table, opts, depth) is True:
            return True
        if name not in ("eq", "and") and depth < 3:
            nested = helper_function(program, helper_module, call, helper)
            if nested is not None and nested is not helper and _helper_pins(program, nested, table, opts, depth + 1) is True:
                return True
    return False


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
