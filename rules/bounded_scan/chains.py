"""Drizzle chains over the configured tables, and how findings name them.

Names resolve however a table was imported (`T`, `Alias`, `Ns.T`); a `Query`
is one select or update chain from its opening call to its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.report.model import Location
from reviewer.engine.api import Options

if TYPE_CHECKING:
    from reviewer.typescript import Call, Expr, Function, Module


# ---------------------------------------------------------------- names


def _bare(name: str) -> str:
    while name.endswith("()"):
        name = name[:-2]
    return name.rsplit(".", 1)[-1]


def callee_name(call: "Call") -> str:
    """Last segment of a call's callee (`and`, `eq`, `asc`), however it was imported."""
    return _bare(call.callee or call.callee_text or "")


def resolve_table(module: "Module | None", dotted: str | None, opts: Options, any_table: bool = False) -> str | None:
    """The configured table a reference denotes: `T`, `Alias`, `Ns.T` (import-resolved).

    With `any_table`, the name of whatever table the reference denotes (scans by role).
    """
    if not dotted:
        return None
    head, *rest = dotted.split(".")
    imported = module.imports.get(head) if module is not None else None
    if imported is not None:
        if imported.imported == "*":
            name = rest[0] if len(rest) == 1 else None
        elif imported.imported == "default":
            name = None
        else:
            name = imported.imported if not rest else None
    else:
        name = head if not rest else None
    return name if name is not None and (any_table or name in opts.tables) else None


def resolve_column(module: "Module | None", expr: "Expr", opts: Options) -> tuple[str, str] | None:
    """(table, column) of a `T.column` reference over a configured table."""
    dotted = expr.member_path
    if not dotted or "." not in dotted:
        return None
    prefix, column = dotted.rsplit(".", 1)
    table = resolve_table(module, prefix, opts)
    return (table, column) if table else None


# ---------------------------------------------------------------- chains


@dataclass(frozen=True)
class Query:
    """One drizzle chain over a configured table, from its opening call to its end."""

    path: str
    kind: str  # "select" | "update"
    table: str
    table_ref: str  # the reference as written, e.g. `Inputs`, `Sql.SessionInputTable`
    steps: tuple["Call", ...]  # Calls from the opening call on
    line: int
    end_line: int
    enclosing: "Function | None"

    def step(self, method: str) -> "Call | None":
        return next((c for c in self.steps if c.method == method), None)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(c.method for c in self.steps)

    @property
    def anchor(self) -> str:
        return self.steps[-1].normalized if self.steps else ""


_BUILDER_KINDS = frozenset(
    {"identifier", "member_expression", "this", "parenthesized_expression", "non_null_expression"}
)


def query_of(module: "Module | None", call: "Call", opts: Options, any_table: bool = False) -> Query | None:
    receiver = call.receiver
    # A query builder is a value (`db`, `tx`, `this.db`, `deps.db`); `new Picker().select()`
    # or `items.select()` on a call result are other APIs that share the method name.
    # Decided first: it is cheap, and most links of a long chain of `.select()` are not openers.
    if receiver is None or receiver.kind not in _BUILDER_KINDS:
        return None
    steps = call.chain_from_here  # the chain from this call on
    if call.method in opts.select_methods:
        kind = "select"
        if len(steps) < 2 or steps[1].method != "from" or not steps[1].args:
            return None
        target = steps[1].args[0]
    elif call.method == "update":
        kind = "update"
        if not call.args:
            return None
        target = call.args[0]
    else:
        return None
    ref = target.member_path
    table = resolve_table(module, ref, opts, any_table)
    if table is None or ref is None:
        return None
    line = min(c.line for c in steps)
    end = max(c.end_line for c in steps)
    return Query(module.path, kind, table, ref, steps, line, end, call.enclosing)


def queries(module: "Module | None", opts: Options, any_table: bool = False) -> list[Query]:
    """The chains of `module` over the configured tables (over any table with `any_table`), in line order."""
    found: list[Query] = []
    for call in module.calls():
        if call.method not in opts.select_methods and call.method != "update":
            continue
        query = query_of(module, call, opts, any_table)
        if query is not None:
            found.append(query)
    return sorted(found, key=lambda q: (q.line, q.end_line, q.kind))


# ---------------------------------------------------------------- labels


def outermost(fn: "Function | None") -> "Function | None":
    while fn is not None and fn.parent is not None:
        fn = fn.parent
    return fn


def loc(query: Query, note: str = "") -> Location:
    return Location(query.path, query.line, query.end_line, note)


def fn_label(fn: "Function | None") -> str:
    return f"`{fn.name}`" if fn is not None and fn.name else "this function"


def owner_label(query: Query) -> str:
    """The function a reader knows the query by: the nearest named one around it
    (a method of a service object, not the `layer` factory that builds it)."""
    fn = query.enclosing
    while fn is not None and not fn.name:
        fn = fn.parent
    return fn_label(fn if fn is not None else outermost(query.enclosing))


def table_label(query: Query) -> str:
    if query.table_ref == query.table:
        return f"`{query.table}`"
    return f"`{query.table_ref}` (`{query.table}`)"
