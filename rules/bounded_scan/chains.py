"""Drizzle chains over the configured tables, and how findings name them.

Names resolve however a table was imported (`T`, `Alias`, `Ns.T`); a `Query`
is one select or update query from its opening call to where it runs. A
query is judged whole: a builder bound to a `const` and finished later
(`const q = db.select()..; q.limit(10).all()`), or returned by a plain
helper and finished by its callers (`pending(db).orderBy(..).all()`, in
this file or another), is one query made of every chain that builds it,
located where it is finished; the opening chain alone is judged only when
it runs as written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Iterable

from reviewer.report.model import Location
from reviewer.engine.api import Options
from reviewer.typescript import routes_to, uses_of

if TYPE_CHECKING:
    from reviewer.typescript import Call, Expr, Function, Module, Program, Use


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
    """One drizzle query over a configured table, from its opening call to where it runs.

    `steps` are the calls that build it, in order, across every chain it is written in; `path`,
    `line`, `end_line` and `enclosing` say where it is finished (for a query written in one chain,
    that chain). `earlier` are the chains written elsewhere that it continues (the opening first);
    `gave_up` says where its builder went that the reviewer cannot follow (a call argument, a `let`,
    too many hops), "" when every step is seen.
    """

    path: str
    kind: str  # "select" | "update"
    table: str
    table_ref: str  # the reference as written, e.g. `Inputs`, `Sql.SessionInputTable`
    steps: tuple["Call", ...]  # Calls from the opening call on
    line: int
    end_line: int
    enclosing: "Function | None"
    earlier: tuple[Location, ...] = ()
    gave_up: str = ""
    via: str = ""  # the names and helper calls that carried the builder, for the anchor

    def step(self, method: str) -> "Call | None":
        """The last `method` link: drizzle keeps the last `.where`/`.orderBy`/`.limit` set on a
        (dynamic) builder, so a continuation's overrides the opening's."""
        return next((c for c in reversed(self.steps) if c.method == method), None)

    @property
    def methods(self) -> tuple[str, ...]:
        return tuple(c.method for c in self.steps)

    @property
    def anchor(self) -> str:
        last = self.steps[-1].normalized if self.steps else ""
        return f"{self.via}|{last}" if self.via else last

    @property
    def spans(self) -> tuple[tuple[str, int, int], ...]:
        """Every place the query is written: where it is finished, then the chains it continues."""
        return ((self.path, self.line, self.end_line), *((e.path, e.line, e.end_line) for e in self.earlier))


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


def queries(
    module: "Module | None", opts: Options, any_table: bool = False, callers: Iterable[str] = ()
) -> list[Query]:
    """The queries over the configured tables (over any table with `any_table`) that `module` opens or
    finishes, each judged whole (see the module docstring), by path and line.

    A builder opened here and finished elsewhere is followed to the files in `callers` (besides this
    one): its queries there are returned too. A builder opened in another file and finished here is
    found from here. Remembered per module for the same options (roles.py asks once per reached span).
    """
    if module is None:
        return []
    # The same callers for every module of a run: one frozenset, shared by every key (a copy per
    # module held thousands of paths each on a large review).
    shared = callers if isinstance(callers, frozenset) else frozenset(callers)
    key = (module.path, id(opts), any_table, shared)
    memo = module.program.memo("bounded-scan.queries")
    known = memo.get(key)
    if known is None or known[0] is not opts:
        known = memo[key] = (opts, _queries(module, opts, any_table, key[3]))
    return list(known[1])



def _queries(module: "Module", opts: Options, any_table: bool, callers: frozenset[str]) -> list[Query]:
    program = module.program
    paths = frozenset({module.path, *callers})
    found: dict[tuple, Query] = {}
    openers = frozenset(opts.select_methods) | {"update"}
    for call in module.calls():
        if call.method not in openers:
            continue
        query = query_of(module, call, opts, any_table)
        if query is not None:
            for done in completed(program, query, opts, paths):
                found.setdefault(identity(done), done)
    for opening in _opened_elsewhere(program, module, opts, any_table):
        for done in completed(program, opening, opts, paths | {opening.path}):
            if done.path == module.path:
                found.setdefault(identity(done), done)
    return sorted(found.values(), key=lambda q: (q.path, q.line, q.end_line, q.kind, q.via))


def identity(query: Query) -> tuple:
    """What makes two `Query`s the same query (found from its opening and from where it is finished)."""
    return (query.path, query.line, query.end_line, query.kind, query.spans, query.steps[0], query.steps[-1], query.via)


# Methods that run a drizzle query: after one of them the value is rows, a result or an effect.
FINISHERS = frozenset({"all", "get", "run", "values", "execute", "sync", "then", "catch", "finally", "pipe"})
# Links that mark a chain as continuing a query builder (looked up from here to where it was opened).
_BUILDER_STEPS = frozenset(
    {"where", "orderBy", "limit", "offset", "groupBy", "having", "innerJoin", "leftJoin", "rightJoin",
     "fullJoin", "$dynamic", "all", "get", "values", "execute", "run"}
)
# Hops followed from an opening to where its query is finished, and places it may be finished.
_MAX_HOPS = 6
_MAX_COMPLETIONS = 64
# Uses of a builder that the reviewer cannot follow: a limit may be added out of sight.
_GAVE_UP = {
    "argument": "is handed to {where}",
    "stored": "is stored where the reviewer does not follow it (a `let`, an assignment, an export or a destructuring)",
    "unfollowed": "is carried further than the reviewer follows (past {where})",
}


def finished(steps: Iterable["Call"], opts: Options) -> bool:
    return any(s.method in FINISHERS or s.method in opts.single_row_terminals for s in steps)


def completed(
    program: "Program", query: Query, opts: Options, paths: frozenset[str], hops: int = 0, budget: list[int] | None = None
) -> list[Query]:
    """The queries an opening (or a partly built query) ends up as: itself when it runs as written,
    else one per place its builder is finished, through the `const`s and helpers that carry it
    (at most _MAX_COMPLETIONS: the rest are reported as not followed)."""
    budget = budget if budget is not None else [_MAX_COMPLETIONS]
    if finished(query.steps, opts):
        return [query]
    uses = uses_of(program, query.steps[-1].expr, paths)
    if not uses:
        return [query]  # a `const` never read: judged as written
    out: list[Query] = []
    for use in uses:
        budget[0] -= 1
        if use.kind == "chain":
            longer = _continued(query, use)
            if (hops + 1 >= _MAX_HOPS or budget[0] <= 0) and not finished(use.links, opts):
                out.append(replace(longer, gave_up=_GAVE_UP["unfollowed"].format(where=_shown(use.links[-1].expr))))
            else:
                out += completed(program, longer, opts, paths, hops + 1, budget)
        elif use.kind in _GAVE_UP:
            out.append(_ended(query, use, _GAVE_UP[use.kind].format(where=_where(use))))
        else:  # awaited, discarded, returned to no known caller, stored in a literal: runs as built so far
            out.append(_ended(query, use, ""))
    return out


def _shown(expr: "Expr", limit: int = 60) -> str:
    text = expr.written
    return f"`{text if len(text) <= limit else text[: limit - 1] + '…'}`"


def _where(use: "Use") -> str:
    if use.kind == "argument" and use.host is not None:
        return f"`{use.host.callee_written}(..)`"
    return _shown(use.expr)


def _part(query: Query, note: str) -> Location:
    return Location(query.path, query.line, query.end_line, note)


def _carriers(use: "Use") -> str:
    return ", ".join(_shown(t, 40) for t in use.through)


def _continued(query: Query, use: "Use") -> Query:
    """`query` continued by the chain `use.links`, located there."""
    links = use.links
    note = f"the builder this query continues (through {_carriers(use)})"
    return replace(
        query,
        path=links[0].path,
        steps=(*query.steps, *links),
        line=min(c.line for c in links),
        end_line=max(c.end_line for c in links),
        enclosing=links[0].enclosing,
        earlier=(*query.earlier, _part(query, note)),
        via="|".join(filter(None, (query.via, *(t.normalized for t in use.through)))),
    )


def _ended(query: Query, use: "Use", gave_up: str) -> Query:
    """`query` run (or lost) where `use` takes it: located at the name or helper call that carried it there."""
    if not use.through:
        return replace(query, gave_up=gave_up) if gave_up else query
    at = use.expr
    note = f"the builder of this query (through {_carriers(use)})"
    return replace(
        query,
        path=at.path,
        line=at.line,
        end_line=at.end_line,
        enclosing=at.enclosing_function,
        earlier=(*query.earlier, _part(query, note)),
        gave_up=gave_up,
        via="|".join(filter(None, (query.via, *(t.normalized for t in use.through)))),
    )


def _opened_elsewhere(program: "Program", module: "Module", opts: Options, any_table: bool) -> list[Query]:
    """Openings in other files of the builders this module's chains continue (`pending(db).limit(..)`)."""
    steps = _BUILDER_STEPS | frozenset(opts.single_row_terminals)
    openers = frozenset(opts.select_methods) | {"update"}
    seen: set[int] = set()
    out: dict[tuple, Query] = {}
    for call in module.calls():
        if call.method not in steps:
            continue
        chain = call.chain
        if not chain or id(chain) in seen:
            continue
        seen.add(id(chain))
        if any(c.method in openers for c in chain):
            continue  # opened here: followed from the opening
        for route in routes_to(program, chain[0]):
            opening = _route_opening(program, route.parts, openers, opts, any_table)
            if opening is not None and opening.path != module.path:
                out.setdefault((opening.path, opening.line, opening.anchor), opening)
    return list(out.values())


def _route_opening(
    program: "Program", parts: tuple[tuple["Call", ...], ...], openers: frozenset[str], opts: Options, any_table: bool
) -> Query | None:
    for part in parts:
        for call in part:
            if call.method in openers:
                return query_of(program.module(call.path), call, opts, any_table)
    return None


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
