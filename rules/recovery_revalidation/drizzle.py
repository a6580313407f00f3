"""Reading drizzle chains for recovery-revalidation: tables, `where` conditions, single-row and
newest-first reads, compare-and-set writes. Everything from the syntax tree, through `const`s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Program, arguments_of, members_of

from reviewer.rules import _effect as fx

SELECTS = ("select", "selectDistinct")
WRITES = ("update", "delete")


def link(chain: Sequence[Call], method: str) -> Call | None:
    return next((c for c in chain if c.method == method), None)


def whole(call: Call) -> tuple[Call, ...]:
    """The chain `call` opens or sits in, from its first link on."""
    return call.chain


def is_head(call: Call) -> bool:
    return call.chain_position == 0


def table_of(program: Program, expr: Expr | None) -> str | None:
    """The table a `from(T)`/`update(T)` argument names, through a `const` alias (`const T = SessionInputTable`)."""
    if expr is None:
        return None
    name = expr.member_path or expr.identifier
    if name is None:
        return None
    bound = program.bound_value(expr)
    if bound is not None and (bound.member_path or bound.identifier):
        return fx.last(bound.member_path or bound.identifier or name)
    return fx.last(name)


def chain_table(program: Program, chain: Sequence[Call]) -> str | None:
    for opener in ("from", *WRITES):
        found = link(chain, opener)
        if found is not None and found.args:
            return table_of(program, found.args[0])
    return None


def column_of(expr: Expr) -> str | None:
    """`T.promoted_seq` -> `promoted_seq` (the table itself was read where the chain opens)."""
    path = expr.member_path
    return fx.last(path) if path and "." in path else None


@dataclass
class Conditions:
    """What a `where` is known to require: `("eq", column)` and `("isNull", column)` atoms, conjunctive only."""

    atoms: set[tuple[str, str]] = field(default_factory=set)
    unread: list[Expr] = field(default_factory=list)  # parts the reviewer could not read

    def has(self, op: str, columns: Sequence[str]) -> bool:
        return any((op, c) in self.atoms for c in columns)


def conditions(program: Program, cond: Expr, out: Conditions | None = None, depth: int = 0) -> Conditions:
    out = out if out is not None else Conditions()
    if depth > 8:
        out.unread.append(cond)
        return out
    call = cond.call
    if call is None:
        if cond.kind == "spread_element":
            out.unread.append(cond)
            return out
        bound = program.bound_value(cond) if (cond.identifier or cond.member_path) else None
        if bound is not None:
            return conditions(program, bound, out, depth + 1)
        out.unread.append(cond)
        return out
    name = fx.last(call.callee)
    args = arguments_of(program, call)
    if name == "and":
        for arg in args:
            conditions(program, arg, out, depth + 1)
    elif name == "eq" and len(args) == 2:
        for side in args:
            column = column_of(side)
            if column is not None:
                out.atoms.add(("eq", column))
    elif name == "isNull" and args:
        column = column_of(args[0])
        if column is not None:
            out.atoms.add(("isNull", column))
    elif name in ("sql", "raw") or call.callee.startswith("sql"):
        out.unread.append(cond)
    # `or`, `ne`, `gt`, ...: they require nothing the exactness test asks for; not unreadable either.
    return out


def where_of(chain: Sequence[Call]) -> Expr | None:
    found = link(chain, "where")
    return found.args[0] if found is not None and found.args else None


def is_select(chain: Sequence[Call]) -> bool:
    return any(c.method in SELECTS for c in chain) and link(chain, "from") is not None


def is_recency_read(program: Program, chain: Sequence[Call]) -> bool:
    """A newest-first single-row select: `orderBy(desc(..), ..)` then `.limit(1)` or `.get()`."""
    if not is_select(chain):
        return False
    order = link(chain, "orderBy")
    if order is None:
        return False
    keys = arguments_of(program, order)
    first = keys[0].call if keys else None
    if first is None or fx.last(first.callee) != "desc":
        return False
    limit = link(chain, "limit")
    one = limit is not None and bool(limit.args) and program.fold(limit.args[0]) == 1
    return one or link(chain, "get") is not None


def is_multi_read(chain: Sequence[Call]) -> bool:
    return is_select(chain) and link(chain, "all") is not None


def is_cas(chain: Sequence[Call]) -> bool:
    """A conditional write of rows (update/delete with a `where`): succeeds only if the row still matches."""
    return any(c.method in WRITES for c in chain) and link(chain, "where") is not None and link(chain, "values") is None


def is_reread(chain: Sequence[Call]) -> bool:
    """A single-row select by condition: the candidate read again."""
    return is_select(chain) and link(chain, "where") is not None and link(chain, "get") is not None


def promotion_set(program: Program, chain: Sequence[Call], opts: Options) -> Expr | None:
    """The `.set({..})` object of an update of an input table that writes a promoted column (not to null)."""
    if link(chain, "update") is None or chain_table(program, chain) not in opts.input_tables:
        return None
    found = link(chain, "set")
    if found is None or not found.args:
        return None
    members = members_of(program, found.args[0]) or ()
    for key, value in members:
        if key in opts.promoted_columns and value.text.strip() not in ("null", "undefined"):
            return found.args[0]
    return None


def chain_lines(chain: Sequence[Call]) -> tuple[int, int]:
    return min(c.line for c in chain), max(c.end_line for c in chain)
