"""One query model: what a database query does, however it is written.

A `Query` is read from any of the three ways the code under review talks to
its database, and every family asks the same questions of it:

- drizzle's builder: `db.select().from(T).where(..).orderBy(..).limit(n)`,
  `db.update(T).set(..).where(..)`, `db.delete(T)` (`builder_query`);
- drizzle's relational API: `db.query.t.findMany({ where, orderBy, limit })`,
  `findFirst` (`relational_query`);
- raw SQL in a `sql` tagged template, drizzle's or @effect/sql's, read by
  sqlglot in sql.py (`sql_query`).

The `where` is read into its top-level conjuncts (`terms`): only those bind
every row the query touches. An equality pins a column only when its other
side is a value: `eq(T.session_id, T.session_id)` compares a column with
itself and pins nothing. What cannot be read (a spread, a raw fragment, a
helper the model cannot follow) is in `unread`, never taken for a pin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from reviewer.typescript.collections import arguments_of
from reviewer.typescript.endings import exits
from reviewer.typescript.expressions import Call, Expr
from reviewer.typescript.resolver import Resolver
from reviewer.typescript import syntax as sx
from reviewer.typescript.sql import order_fragment, statement

SELECTS = ("select", "selectDistinct", "selectDistinctOn")
WRITES = ("update", "delete")
_ORDERED = frozenset({"lt", "lte", "gt", "gte", "between", "notBetween"})
_FLIPPED = {"lt": "gt", "gt": "lt", "lte": "gte", "gte": "lte"}
_MAX_DEPTH = 8  # `and(and(and(..)))` and `const` hops deeper than this are unread
# drizzle's condition operators: a call of any other name may be a where-helper to follow.
_OPERATORS = frozenset({
    "and", "or", "not", "eq", "ne", "gt", "gte", "lt", "lte", "isNull", "isNotNull", "inArray", "notInArray",
    "exists", "notExists", "between", "notBetween", "like", "notLike", "ilike", "notIlike", "arrayContains",
    "arrayContained", "arrayOverlaps",
})


@dataclass(frozen=True)
class Term:
    """One top-level conjunct of a `where`: `eq(T.id, id)` is ("eq", "id", the value)."""

    op: str  # "eq", "isNull", "isNotNull", "ne", "in", ... the drizzle operator (last segment)
    column: str | None  # the column it constrains, when one side is a column
    value: Expr | None  # the other side
    pins: bool  # an equality with a value that is not a column of the same table
    column_expr: Expr | None = None  # the column side as written (`T.id`), for a family to resolve its table


@dataclass(frozen=True)
class OrderKey:
    column: str | None  # None: an expression the model cannot name
    descending: bool


@dataclass(frozen=True)
class Query:
    """What one query does (see the module docstring)."""

    source: str  # "builder" | "relational" | "sql"
    operation: str  # "select" | "update" | "delete" | "insert" | "other" | "unreadable"
    table: str | None
    at: Call  # where it is written: the chain's first link, the relational call, the template
    where: Expr | None
    terms: tuple[Term, ...]
    unread: tuple[Expr, ...]  # parts of the `where` that could not be read
    order: tuple[OrderKey, ...]
    has_limit: bool
    limit: Expr | None  # the limit as written (None for SQL with a literal LIMIT, see `limit_value`)
    limit_value: float | None  # the limit when it is a number or folds to one
    single_row: bool  # `.get()`, `findFirst`, `LIMIT 1`
    reason: str = ""  # why an unreadable statement is unreadable
    ranges: tuple[str, ...] = ()  # columns its condition compares by order (`lt(T.until, now)`, `c >= $1`)
    below: tuple[str, ...] = ()  # of those, the ones on the smaller side: rows whose time has passed
    conditions: int = 0  # raw SQL: the top-level conjuncts of its WHERE, pins or not (`owner IS NULL`)

    def has(self, op: str, columns: Sequence[str]) -> bool:
        """A top-level conjunct applies `op` to one of `columns`."""
        return any(t.op == op and t.column in columns for t in self.terms)

    def pins(self, columns: Sequence[str]) -> bool:
        """A top-level equality binds one of `columns` to a value: the query reads one entity's rows."""
        return any(t.pins and t.column in columns for t in self.terms)

    @property
    def newest_first(self) -> bool:
        return bool(self.order) and self.order[0].descending


# ------------------------------------------------------------------ drizzle's builder


def link(chain: Sequence[Call], method: str) -> Call | None:
    """The first link of a chain calling `method` (`where`, `limit`, `get`), or None."""
    return next((c for c in chain if c.method == method), None)


def _last(name: str) -> str:
    return name.replace("()", "").rsplit(".", 1)[-1]


def operator(program: Resolver, call: Call) -> str:
    """A drizzle operator's name however it was imported: `import { desc as newest }` keeps the local
    name in callees, so a bare callee is read through the import it names."""
    name = call.callee.replace("()", "")
    if "." not in name:
        module = program.module(call.path)
        imported = module.imports.get(name) if module is not None else None
        if imported is not None and imported.imported not in ("*", "default"):
            return imported.imported
    return _last(name)


def table_of(program: Resolver, expr: Expr | None) -> str | None:
    """The table a `from(T)`/`update(T)` argument names, through a `const` alias (`const T = Jobs`)."""
    if expr is None:
        return None
    name = expr.member_path or expr.identifier
    if name is None:
        return None
    bound = program.bound_value(expr)
    if bound is not None and (bound.member_path or bound.identifier):
        return _last(bound.member_path or bound.identifier or name)
    return _last(name)


def builder_query(program: Resolver, chain: Sequence[Call]) -> Query | None:
    """The query a drizzle builder chain (innermost link first) writes; None when it is not one.

    Read once per chain and program: several checks of several families ask about the same chain."""
    if not chain:
        return None
    memo = program.memo("queries.builder")
    key = (chain[0].span, chain[-1].span)
    if key not in memo:
        memo[key] = _builder_query(program, chain)
    return memo[key]


def _builder_query(program: Resolver, chain: Sequence[Call]) -> Query | None:
    methods = [c.method for c in chain]
    if any(m in SELECTS for m in methods) and "from" in methods:
        operation, opener = "select", link(chain, "from")
    elif "update" in methods:
        operation, opener = "update", link(chain, "update")
    elif "delete" in methods:
        operation, opener = "delete", link(chain, "delete")
    elif "insert" in methods:
        operation, opener = "insert", link(chain, "insert")
    else:
        return None
    table = table_of(program, opener.args[0] if opener is not None and opener.args else None)
    found = link(chain, "where")
    where = found.args[0] if found is not None and found.args else None
    terms, unread = read_where(program, where)
    order = link(chain, "orderBy")
    keys = tuple(k for arg in arguments_of(program, order) for k in _order_keys(program, arg)) if order is not None else ()
    limit_call = link(chain, "limit")
    limit = limit_call.args[0] if limit_call is not None and limit_call.args else None
    value = _number(program, limit)
    single = link(chain, "get") is not None or value == 1
    ranges = tuple(sorted({t.column for t in terms if t.column and t.op in _ORDERED}))
    below = tuple(sorted({t.column for t in terms if t.column and t.op in ("lt", "lte")}))
    return Query("builder", operation, table, chain[0], where, terms, unread, keys,
                 limit_call is not None, limit, value, single, ranges=ranges, below=below)


def _order_keys(program: Resolver, key: Expr) -> tuple[OrderKey, ...]:
    """`desc(T.time)`, `asc(T.time)`, `T.time`, or a `sql` fragment (sql`${T.time} desc`), which
    may hold several keys: a newest-first read is one however its order is written."""
    call = key.call
    way = operator(program, call) if call is not None else ""
    if call is not None and way in ("desc", "asc") and call.args:
        return (OrderKey(_column(call.args[0]), way == "desc"),)
    fragment = order_fragment(call) if call is not None else None
    if fragment is not None:
        return tuple(OrderKey(o.column, o.descending) for o in fragment)
    return (OrderKey(_column(key), False),)


def _column(expr: Expr) -> str | None:
    """`T.promoted_seq` -> `promoted_seq` (the table itself is read where the query opens)."""
    path = expr.member_path
    return _last(path) if path and "." in path else None


def _number(program: Resolver, expr: Expr | None) -> float | None:
    if expr is None:
        return None
    value = program.fold(expr)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def read_where(program: Resolver, where: Expr | None) -> tuple[tuple[Term, ...], tuple[Expr, ...]]:
    """The top-level conjuncts of a drizzle `where` and the parts that could not be read."""
    terms: list[Term] = []
    unread: list[Expr] = []
    if where is not None:
        _conjuncts(program, where, terms, unread, 0)
    return tuple(terms), tuple(unread)


def _either(program: Resolver, cond: Expr, terms: list[Term], unread: list[Expr], depth: int) -> None:
    """`test ? a : b`: the combined condition requires only the conjuncts both sides require
    (`test ? and(eq(T.k, x), gt(..)) : eq(T.k, x)` pins `T.k`); what one side adds is not required."""
    node = cond._node
    sides = [sx.field(node, "consequence"), sx.field(node, "alternative")]
    if any(side is None for side in sides):
        unread.append(cond)
        return
    read: list[list[Term]] = []
    for side in sides:
        side_terms: list[Term] = []
        _conjuncts(program, Expr(cond._module, side), side_terms, unread, depth + 1)
        read.append(side_terms)

    def key(term: Term) -> tuple[str, str | None, str | None, bool]:
        return (term.op, term.column, term.value.normalized if term.value is not None else None, term.pins)

    other = {key(t) for t in read[1]}
    terms.extend(t for t in read[0] if t.column is not None and key(t) in other)


def _conjuncts(program: Resolver, cond: Expr, terms: list[Term], unread: list[Expr], depth: int) -> None:
    if depth > _MAX_DEPTH:
        unread.append(cond)
        return
    if cond.kind == "ternary_expression":
        _either(program, cond, terms, unread, depth)
        return
    call = cond.call
    if call is None:
        bound = program.bound_value(cond) if cond.kind != "spread_element" and (cond.identifier or cond.member_path) else None
        if bound is not None:
            _conjuncts(program, bound, terms, unread, depth + 1)
        else:
            unread.append(cond)
        return
    name = operator(program, call)
    args = arguments_of(program, call)
    if name == "and":
        for arg in args:
            _conjuncts(program, arg, terms, unread, depth + 1)
        return
    if name in ("sql", "raw") or call.callee.startswith("sql"):
        unread.append(cond)
        return
    if len(args) == 2:
        for column_side, value_side in ((args[0], args[1]), (args[1], args[0])):
            column = _column(column_side)
            if column is not None:
                pins = name == "eq" and not _same_table(column_side, value_side)
                # Read with the column first: `gt(now, T.until)` is `T.until < now`.
                op = _FLIPPED.get(name, name) if column_side is args[1] else name
                terms.append(Term(op, column, value_side, pins, column_side))
                return
    if len(args) == 1 and _column(args[0]) is not None:
        terms.append(Term(name, _column(args[0]), None, False, args[0]))
        return
    if name not in _OPERATORS:
        # a where-helper (`owned(claim)`): the condition its one `return` builds is this conjunct
        helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
        ends = exits(helper) if helper is not None else ()
        if len(ends) == 1 and ends[0].value is not None:
            _conjuncts(program, ends[0].value, terms, unread, depth + 1)
            return
    # `or(..)`, `not(..)`: it requires nothing a pin or an exactness test can rely on
    terms.append(Term(name, None, None, False))


def _same_table(column: Expr, value: Expr) -> bool:
    """`eq(T.a, T.b)`: both sides columns of one table (a tautology or a self-join condition, no value)."""
    left, right = column.member_path or "", value.member_path or ""
    return bool(right) and "." in right and left.rpartition(".")[0] == right.rpartition(".")[0]


# ------------------------------------------------------------------ drizzle's relational API

_RELATIONAL = {"findMany": False, "findFirst": True}


def relational_query(program: Resolver, call: Call) -> Query | None:
    """`db.query.<table>.findMany(config)` / `.findFirst(config)`, the config through a `const`."""
    parts = call.callee.split(".")
    if len(parts) < 3 or parts[-1] not in _RELATIONAL or parts[-3] != "query":
        return None
    config = call.args[0] if call.args else None
    if config is not None and config.identifier is not None:
        config = program.bound_value(config) or config  # `findMany(page)`, `const page = { limit: 50 }`
    where = config.prop("where") if config is not None else None
    limit = config.prop("limit") if config is not None else None
    terms, unread = _relational_where(program, where)
    return Query("relational", "select", parts[-2], call, where, terms, unread, (), limit is not None, limit,
                 _number(program, limit), _RELATIONAL[parts[-1]])


def _relational_where(program: Resolver, where: Expr | None) -> tuple[tuple[Term, ...], tuple[Expr, ...]]:
    """`where: { id: x }` (a value pins; an operator object `{ gt: 1 }` does not), or a
    `(t, { eq }) => and(eq(t.id, x), ..)` callback read like a builder's `where`."""
    if where is None:
        return (), ()
    if where.function is not None:
        ends = exits(where.function)
        body = ends[0].value if len(ends) == 1 else None
        return read_where(program, body) if body is not None else ((), (where,))
    if where.call is not None:
        return read_where(program, where)
    terms = []
    for key, value in where.props:
        plain = not value.props and value.kind != "object" and value.normalized not in ("undefined", "null")
        terms.append(Term("eq" if plain else "other", key, value, plain))
    return tuple(terms), ()


# ------------------------------------------------------------------ raw SQL


def sql_query(program: Resolver, call: Call, single_row_runners: Sequence[str] = ()) -> Query | None:
    """The query a `sql` template (or a runner given SQL text) writes; None when it is no statement."""
    found = statement(call)
    if found is None:
        return None
    host = call.host
    # `db.get(sql\`..\`)` runs a template; `db.get("SELECT ..")` runs its own argument
    runner = host if host is not None and host.args[:1] == (call.expr,) else (call if call.args else None)
    single = (runner is not None and _last(runner.callee) in single_row_runners) or found.limit == 1 \
        or found.aggregate
    terms = tuple(Term("eq", column, None, True) for column in found.pins)
    keys = tuple(OrderKey(o.column, o.descending) for o in found.order)
    value = found.limit if found.limit is not None else _number(program, found.limit_expr)
    return Query("sql", found.operation, found.table, call, None, terms, (), keys, found.has_limit,
                 found.limit_expr, value, single, found.reason, ranges=found.ranges, below=found.below,
                 conditions=found.conditions)
