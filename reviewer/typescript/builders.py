"""Values built in one place and continued in another: a fluent builder bound to a `const` and
finished later, or returned by a helper and finished by its callers (`q.orderBy(..).limit(10)`,
`pending(db).all()`).

Two directions over the same links:

- `uses_of(program, expr, paths)`: where the value of `expr` (the top of a chain) goes, through the
  `const` names that hold it (their uses in scope) and the plain functions that return it (their
  calls in `paths` and in the function's own file), as `Use`s;
- `routes_to(program, call)`: how the chain `call` belongs to continues a value built elsewhere, back
  through those same names and helpers, as `Route`s.

Only plain functions carry a builder to their callers: an arrow, a function expression or
declaration, or an object-literal method, that is neither `async` nor a generator (those hand their
callers a promise or an effect, which runs the builder). A `let`, a parameter, a property, an
argument or any other place is where the model stops (`Use.kind` says which); so does depth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.collections import _is_async
from reviewer.typescript.endings import exits
from reviewer.typescript.expressions import Call, Expr, Function
from reviewer.typescript.flow import _MAX_USES as _MAX_READS
from reviewer.typescript.flow import later_uses
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex
    from reviewer.typescript.module import Module

# Names and helper calls followed from one question, answers given at most, and places looked at
# (reads and calls that lead nowhere cost too) before the rest is "unfollowed".
_MAX_DEPTH = 4
_MAX_ANSWERS = 64
_MAX_STEPS = 512
_NAMES = frozenset({"identifier", "member_expression"})
# Wrappers a value passes through unchanged on its way to where it is used.
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression", "type_assertion"}
)


@dataclass(frozen=True)
class Use:
    """One place a value arrives.

    kind:
      "chain"      a fluent chain continues it: `links` are the calls applied to `expr`, innermost first
                   (`q.orderBy(..).limit(..)`, `pending(db).all()`);
      "awaited"    `yield`, `yield*` or `await` takes it;
      "discarded"  an expression statement drops it;
      "returned"   a function returns it and no call of that function was found (anonymous, `async`,
                   a generator, a combinator's callback, or not called in the searched files);
      "argument"   it is passed to a call (`host`);
      "stored"     a binding the model does not follow takes it: a `let`/`var`, an assignment, a
                   destructuring, an exported `const` (read by other files too);
      "element"    it is an array element, a property value or a spread;
      "escapes"    anything else (`q.toSQL` read but not called, an operand, a template);
      "unfollowed" the depth ran out.
    `expr` holds the value there: the name (`q`), the helper call (`pending(db)`), or the value itself
    when it goes nowhere first; `through` the names and helper calls that carried it there, in order.
    """

    kind: str
    expr: Expr
    links: tuple[Call, ...]
    through: tuple[Expr, ...]
    host: Call | None = None


@dataclass(frozen=True)
class Route:
    """How a chain continues a value built elsewhere.

    `parts` are the chains that built it, in the order they apply: the first whole (where the value
    starts), each later one only the links applied to the value (a helper call `pending(db)` is not a
    link, it is in `through`); the last part is the asking chain's own links. `through` are the names
    and helper calls that carried the value between them, in order.
    """

    parts: tuple[tuple[Call, ...], ...]
    through: tuple[Expr, ...]


# ---------------------------------------------------------------- forward


def uses_of(
    program: Resolver, expr: Expr, paths: str | Iterable[str] = (), depth: int = _MAX_DEPTH
) -> tuple[Use, ...]:
    """Where the value of `expr` goes (see `Use`); callers of a helper are looked for in `paths` and the
    helper's own file. () when a `const` holding it is never read."""
    searched = frozenset({paths} if isinstance(paths, str) else paths)
    out: list[Use] = []
    _uses(program, expr._module, expr._node, (), searched, depth, out, [_MAX_STEPS])
    return tuple(out[:_MAX_ANSWERS])


def _uses(
    program: Resolver,
    module: "Module",
    node: ts.Node,
    through: tuple[Expr, ...],
    paths: frozenset[str],
    depth: int,
    out: list[Use],
    budget: list[int],
) -> None:
    if len(out) >= _MAX_ANSWERS:
        return
    index = module.index
    budget[0] -= 1
    if budget[0] < 0:
        out.append(Use("unfollowed", Expr(module, node), (), through))
        return
    here = Expr(module, node)
    parent = index.parent(node)
    while parent is not None and parent.type in _TRANSPARENT:
        node, parent = parent, index.parent(parent)
    kind = parent.type if parent is not None else ""
    if kind == "member_expression" and sx.field(parent, "object") == node:
        outer = index.parent(parent)
        call = index.call_at(outer) if outer is not None and sx.field(outer, "function") == parent else None
        if call is not None:
            out.append(Use("chain", here, call.chain_from_here, through))
        else:
            out.append(Use("escapes", here, (), through))
    elif kind in ("yield_expression", "await_expression"):
        out.append(Use("awaited", here, (), through))
    elif kind == "expression_statement":
        out.append(Use("discarded", here, (), through))
    elif kind == "ternary_expression" and sx.field(parent, "condition") != node:
        _uses(program, module, parent, through, paths, depth, out, budget)
    elif kind == "variable_declarator" and sx.field(parent, "value") == node:
        _bound(program, module, parent, here, through, paths, depth, out, budget)
    elif kind == "return_statement" or (kind == "arrow_function" and sx.field(parent, "body") == node):
        _returned(program, module, node, here, through, paths, depth, out, budget)
    elif kind == "arguments":
        out.append(Use("argument", here, (), through, index.call_at(index.parent(parent))))
    elif kind in ("assignment_expression", "augmented_assignment_expression"):
        out.append(Use("stored", here, (), through))
    elif kind in ("array", "pair", "spread_element"):
        out.append(Use("element", here, (), through))
    else:
        out.append(Use("escapes", here, (), through))


def _bound(
    program: Resolver,
    module: "Module",
    declarator: ts.Node,
    here: Expr,
    through: tuple[Expr, ...],
    paths: frozenset[str],
    depth: int,
    out: list[Use],
    budget: list[int],
) -> None:
    """A value bound to `const name`: its uses are those of each later read of `name` (flow.later_uses:
    in the declaring block, not where a nested function rebinds the name)."""
    index = module.index
    declaration = index.parent(declarator)
    value = index.call_at(sx.strip(sx.field(declarator, "value")))
    name = sx.field(declarator, "name")
    if value is None or name is None or name.type != "identifier" or value.binding != ("bound", sx.text(name)):
        out.append(Use("stored", here, (), through))  # a destructuring, or a value that is not a call
        return
    if declaration is not None and declaration.type == "lexical_declaration":
        scope = index.parent(declaration)
        if scope is not None and scope.type == "export_statement":
            out.append(Use("stored", here, (), through))  # `export const q = ..`: read elsewhere too
    if not sx.is_const(declaration):
        out.append(Use("stored", here, (), through))  # a `let` or `var`: its value may change
        return
    reads = later_uses(value)
    if depth <= 0:
        out.append(Use("unfollowed", here, (), through))
        return
    for read in reads:
        _uses(program, module, read._node, (*through, read), paths, depth - 1, out, budget)
    if len(reads) >= _MAX_READS:
        out.append(Use("unfollowed", here, (), through))  # flow.later_uses stops counting here


def _shadowed(index: "ModuleIndex", read: ts.Node, name: str, owner: Function | None) -> bool:
    """A parameter of a function between `read` and the declaring function `owner` hides the `const`."""
    function = index.enclosing_function(read)
    while function is not None and (owner is None or function._node != owner._node):
        if name in function.params:
            return True
        function = function.parent
    return False


def _returned(
    program: Resolver,
    module: "Module",
    node: ts.Node,
    here: Expr,
    through: tuple[Expr, ...],
    paths: frozenset[str],
    depth: int,
    out: list[Use],
    budget: list[int],
) -> None:
    """A value a function returns: its uses are those of each call of the function (a plain helper)."""
    function = module.index.enclosing_function(node)
    callers = callers_of(program, function, paths) if function is not None and carries(function) else ()
    if not callers:
        out.append(Use("returned", here, (), through))
        return
    if depth <= 0:
        out.append(Use("unfollowed", here, (), through))
        return
    for call in callers:
        _uses(program, call._module, call._node, (*through, call.expr), paths, depth - 1, out, budget)


def carries(function: Function) -> bool:
    """Whether calling `function` hands its caller the value it returns as is: a named plain function
    (not `async`, not a generator, not wrapped by a combinator such as `Effect.fn`)."""
    if function.name is None or function.kind not in ("arrow", "function", "method"):
        return False
    return not _is_async(function._node)


def callers_of(program: Resolver, function: Function, paths: str | Iterable[str] = ()) -> tuple[Call, ...]:
    """Calls of `function` (by the definition their callee resolves to) in `paths` and in its own file,
    by path then document order."""
    if function.name is None:
        return ()
    if paths is program.changed_lines:
        # Asked for every handler and parameter of a large change: the changed files'
        # calls are indexed by name once per Program, not walked file by file each time.
        named = list(_changed_calls_named(program, function.name))
        if function.path not in program.changed_lines:
            own = program.module(function.path)
            named = [*(_calls_named(own, function.name) if own is not None else ()), *named]
            named.sort(key=lambda c: c.path)
    else:
        searched = {paths} if isinstance(paths, str) else set(paths)
        named = [
            call
            for path in sorted(searched | {function.path})
            if (module := program.module(path)) is not None
            for call in _calls_named(module, function.name)
        ]
    out: list[Call] = []
    for call in named:
        callee = call.callee_expr
        target = program.function_of(callee) if callee is not None else None
        if target is not None and target.path == function.path and target._node == function._node:
            out.append(call)
    return tuple(out)


def _changed_calls_named(program: Resolver, method: str) -> list[Call]:
    """Calls of the changed files whose callee's last segment is `method`, by path then document order."""
    table = program.memo("changed-calls-by-method")
    if not table:
        for path in sorted(program.changed_lines):
            module = program.module(path)
            for call in module.calls() if module is not None else ():
                table.setdefault(call.method, []).append(call)
        table.setdefault(None, [])  # marks the table built
    return table.get(method, [])


def _calls_named(module: "Module", method: str) -> list[Call]:
    """The module's calls whose callee's last segment is `method`, in document order (indexed once)."""
    table = module.index.memo("calls-by-method")
    if not table:
        for call in module.calls():
            table.setdefault(call.method, []).append(call)
        table.setdefault(None, [])  # marks the table built, even for a file without calls
    return table.get(method, [])


# ---------------------------------------------------------------- backward


def routes_to(program: Resolver, call: Call, depth: int = _MAX_DEPTH) -> tuple[Route, ...]:
    """How the chain `call` belongs to continues a value built elsewhere: through the name its first link
    is applied to (`q` in `q.orderBy(..)`, a `const` the model follows) or the plain helper its first link
    calls (`pending(db).all()`), back to where each value starts. () when it continues nothing the model
    follows (a parameter, a `let`, a package, an opaque call): the chain starts there."""
    chain = call.chain
    routes = [r for r in _chain_routes(program, chain, depth, [_MAX_STEPS]) if r.through]
    return tuple(routes[:_MAX_ANSWERS])


def _chain_routes(program: Resolver, links: tuple[Call, ...], depth: int, budget: list[int]) -> list[Route]:
    """Routes of the value the chain `links` produces (each route's last part is `links`' own)."""
    if not links:
        return []
    budget[0] -= 1
    first = links[0]
    helper = _helper(program, first) if depth > 0 and budget[0] >= 0 else None
    if helper is not None:
        out: list[Route] = []
        rest = links[1:]
        for value in _results(helper):
            for route in _value_routes(program, value, depth - 1, budget)[:_MAX_ANSWERS - len(out)]:
                parts = (*route.parts, rest) if rest else route.parts
                out.append(Route(parts, (*route.through, first.expr)))
        if out:
            return out
    receiver = first.receiver
    if receiver is not None and receiver.kind in _NAMES and depth > 0 and budget[0] >= 0:
        earlier = _value_routes(program, receiver, depth - 1, budget)
        if earlier:
            return [Route((*r.parts, links), r.through) for r in earlier]
    return [Route((links,), ())]


def _value_routes(program: Resolver, expr: Expr, depth: int, budget: list[int]) -> list[Route]:
    """Routes of the value `expr` denotes: a chain written there, or the `const` a name holds."""
    node = sx.strip(expr._node)
    if node is None or depth < 0:
        return []
    if node.type == "call_expression":
        call = expr._module.index.call_at(node)
        if call is None:
            return []
        chain = call.chain
        return _chain_routes(program, chain[: call.chain_position + 1], depth, budget)
    if node.type in _NAMES:
        value = _denoted(program, expr)
        if value is None:
            return []
        return [Route(r.parts, (*r.through, expr)) for r in _value_routes(program, value, depth - 1, budget)]
    return []


def _denoted(program: Resolver, reference: Expr) -> Expr | None:
    """`Program.bound_value`, unless a parameter between the reference and the `const` hides it."""
    value = program.bound_value(reference)
    head = (reference.member_path or "").split(".", 1)[0]
    if value is None or value.path != reference.path or not head:
        return value
    index = value._module.index
    declarator = index.parent(value._node)
    owner = index.enclosing_function(declarator) if declarator is not None else None
    return None if _shadowed(index, reference._node, head, owner) else value


def _helper(program: Resolver, call: Call) -> Function | None:
    """The plain function `call` calls, when the model knows it (see `carries`)."""
    callee = call.callee_expr
    if callee is None or sx.strip(callee._node) is None or sx.strip(callee._node).type not in _NAMES:
        return None
    function = program.function_of(callee)
    return function if function is not None and carries(function) else None


def _results(function: Function) -> list[Expr]:
    """The values `function` returns (one per side of a returned ternary); bare returns and throws give none."""
    return [e.value for e in exits(function) if e.kind in ("return", "expression") and e.value is not None]
