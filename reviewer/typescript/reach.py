"""Reachability: the call paths from a function or expression to calls of given names.

Control enters a callee's definition (locals first, then imports; methods of
objects, factories' results and class instances through members.py), the
functions handed to a call by reference, and the commit hooks an opaque
`hooks.commit()` may run. Bounded: `max_depth` hops and _MAX_PATHS paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, Function
from reviewer.typescript.members import value_member
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex

_MAX_PATHS = 256  # reaches() stops enumerating after this many paths


def reaches(
    program: Resolver, start: Function | Expr, target: str | Iterable[str], max_depth: int = 4
) -> list[tuple[Call, ...]]:
    """See Program.reaches."""
    targets = {target} if isinstance(target, str) else set(target)
    # The changed files (plus the start's): built once, not per call.
    changed = program.changed_paths
    scope = changed if start.path in changed else changed | {start.path}
    found: list[tuple[Call, ...]] = []
    if isinstance(start, Function):
        _reach(program, start.all_calls, targets, (), frozenset({_key(start)}), max_depth, scope, found)
        return found
    index = start._module.index
    first, stop = index.call_span(start._node)
    if stop - first > _DIRECT_REACH:  # counted, not copied: handlers nest
        _reach_remembered(program, start, targets, max_depth, scope, found)
    else:
        _reach(program, index.calls[first:stop], targets, (), frozenset(), max_depth, scope, found)
    return found


def _reach_remembered(
    program: Resolver, start: Expr, targets: set[str], budget: int, scope: frozenset[str], found: list[tuple[Call, ...]]
) -> None:
    """`_reach` over the calls of a large expression, each call's paths found once per question.

    From an expression nothing is visited yet, so what a call contributes
    (its paths, in order) depends only on the call and the question; the
    answer is their concatenation in document order, cut at _MAX_PATHS,
    as the plain walk finds it. Rules ask this of every handler and
    handlers nest, so calls already known to reach nothing are jumped over.
    """
    index = start._module.index
    key = (frozenset(targets), budget, scope)
    memo = index.reach_memos.get(key)
    if memo is None:
        memo = index.reach_memos[key] = _Reached(len(index.calls))
    calls = index.calls
    at, stop = index.call_span(start._node)
    at = memo.next(at)
    while at < stop and len(found) < _MAX_PATHS:
        paths = memo.paths.get(at)
        if paths is None:
            paths = []
            _reach(program, (calls[at],), targets, (), frozenset(), budget, scope, paths)
            if paths:
                memo.paths[at] = paths
            else:
                memo.skip(at)
        found.extend(paths[: _MAX_PATHS - len(found)])
        at = memo.next(at + 1)

def _reach(
    program: Resolver,
    body: tuple[Call, ...],
    targets: set[str],
    prefix: tuple[Call, ...],
    visited: frozenset[tuple[str, int]],
    budget: int,
    scope: frozenset[str],
    found: list[tuple[Call, ...]],
) -> None:
    for call in body:
        if len(found) >= _MAX_PATHS:
            return
        if call.callee in targets or not targets.isdisjoint(call.runs):
            found.append((*prefix, call))
            continue
        if budget <= 0:
            continue
        for function in _entered(program, call, scope):
            key = _key(function)
            if key in visited:
                continue
            _reach(program, run_calls(function), targets, (*prefix, call), visited | {key}, budget - 1, scope, found)


def run_calls(function: Function) -> tuple[Call, ...]:
    """The calls that run when `function` is called: its own, and those of nested functions it hands to
    a call (`Effect.gen(function* ..)`, `items.map((x) => ..)`), not of nested functions it only
    defines (an object's methods, a `const` arrow, a returned function): those run when called."""
    memo = function._module.index.memo("reach.run-calls")
    key = function._node.id
    known = memo.get(key)
    if known is None:
        known = memo[key] = tuple(c for c in function.all_calls if not _only_defined_between(c, function))
    return known


def _only_defined_between(call: Call, outer: Function) -> bool:
    index = call._module.index
    current = call.enclosing
    while current is not None and current._node != outer._node:
        if _defined_only(index, current._node):
            return True
        current = current.parent
    return False


def _defined_only(index: "ModuleIndex", node: ts.Node) -> bool:
    """A function written as a value to keep (bound, stored in an object or class, returned) rather
    than handed to a call."""
    if node.type in ("method_definition", "function_declaration", "generator_function_declaration"):
        return True
    parent = index.parent(node)
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        parent = index.parent(parent)
    if parent is None:
        return False
    if parent.type == "call_expression" and sx.field(parent, "function") is not None and sx.strip(sx.field(parent, "function")) != node:
        # `Effect.fn("x")(function* ..)`: a curried wrapper is a definition when it is itself kept
        return parent.type == "call_expression" and _kept(index, parent)
    return parent.type in ("pair", "variable_declarator", "return_statement", "public_field_definition",
                           "assignment_expression", "arrow_function", "export_statement")


def _kept(index: "ModuleIndex", call: ts.Node) -> bool:
    """Whether a wrapper call's value is kept rather than run: `const f = Effect.fn(..)(..)`, `{ f: Effect.fn(..)(..) }`."""
    callee = sx.strip(sx.field(call, "function"))
    if callee is None or callee.type != "call_expression":
        return False  # `Effect.gen(fn)`, `xs.map(fn)`: the function runs with the call
    parent = index.parent(call)
    return parent is not None and parent.type in ("pair", "variable_declarator", "return_statement", "public_field_definition")


def _entered(program: Resolver, call: Call, scope: frozenset[str]) -> tuple[Function, ...]:
    """Functions control may enter from `call`: its definition, and functions
    handed to it by reference (as arguments or object-literal values).

    Remembered per call and scope: nested handlers each walk the calls nested in them, so a call
    deep inside is entered once per handler around it. Only outside a member resolution (reaches
    runs at the top of a rule's question), where what `value_member` finds does not depend on
    how many hops are already spent.
    """
    if program.member_hops.depth:
        return _enter(program, call, scope)
    memo = call._module.index.memo("reach.entered")
    key = (call._node.id, scope)
    known = memo.get(key)
    if known is None:
        known = memo[key] = _enter(program, call, scope)
    return known


def _enter(program: Resolver, call: Call, scope: frozenset[str]) -> tuple[Function, ...]:
    out: list[Function] = []
    callee_node = sx.strip(sx.field(call._node, "function"))
    callee_path = sx.dotted_path(callee_node)
    if callee_path is None and callee_node is not None and callee_node.type == "member_expression":
        # `new RunLock(db).drop(c)`, `makeStore(db).release(c)`
        target = sx.field(callee_node, "object")
        prop = sx.field(callee_node, "property")
        if target is not None and prop is not None:
            method = value_member(program, call._module, target, sx.text(prop))
            if method is not None:
                out.append(method)
    if callee_path is not None:
        defined = program.scoped_definition(call._module, call.enclosing, callee_path, call._node)
        if defined is not None:
            out.append(defined)
        elif "." in callee_path and call.method in program.roles.commit_hooks:
            out.extend(_hooks(program, call.method, scope | {call.path}))
    for reference in _references(call.args):
        function = program.function_of(reference)
        if function is not None:
            out.append(function)
        else:
            dotted = reference.member_path or ""
            prop = dotted.rsplit(".", 1)[-1]
            if "." in dotted and prop in program.roles.commit_hooks:
                out.extend(_hooks(program, prop, scope | {call.path}))
    return tuple(out)


def _hooks(program: Resolver, prop: str, scope: frozenset[str]) -> list[Function]:
    """Commit hooks named `prop` defined in the reviewed files: what an
    opaque `hooks.prop()` may run."""
    return [cb.function for cb in program.callbacks(prop, scope) if cb.function is not None]


class _Reached:
    """One reachability question over one module's calls: the paths of the calls that
    reach something, and jumps over the runs of calls known to reach nothing."""

    def __init__(self, count: int) -> None:
        self.paths: dict[int, list[tuple[Call, ...]]] = {}
        self._next = list(range(count + 1))  # _next[i] == i: call i is unknown or reaches something

    def skip(self, at: int) -> None:
        self._next[at] = at + 1

    def next(self, at: int) -> int:
        """The first call from `at` on that is unknown or reaches something (path-compressed)."""
        jumps = self._next
        root = at
        while jumps[root] != root:
            root = jumps[root]
        while jumps[at] != root:
            jumps[at], at = root, jumps[at]
        return root


# Expressions with more calls than this use _Reached (see Program._reach_remembered).
_DIRECT_REACH = 64


def _key(function: Function) -> tuple[str, int]:
    return (function.path, function._node.start_byte)


def _references(args: tuple[Expr, ...], depth: int = 0) -> Iterator[Expr]:
    """Identifier/member arguments, including inside object and array literals."""
    for arg in args:
        if arg.kind in ("identifier", "member_expression", "shorthand_property_identifier"):
            yield arg
        elif arg.kind == "object" and depth < 3:
            yield from _references(tuple(value for _, value in arg.props), depth + 1)
        elif arg.kind == "array" and depth < 3:
            yield from _references(arg.elements, depth + 1)


