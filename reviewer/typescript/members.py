"""Members to functions: the method an `x.name` call runs when `x` is an object, a factory's result or an instance.

    const store = makeStore(db)        // makeStore returns { release: (c) => .. }
    store.release(claim)               // runs that arrow
    const lock = new RunLock(db)
    lock.drop(claim)                   // runs RunLock's `drop` method
    this.drop(claim)                   // inside RunLock: the same method

What a value is comes from its source: an object literal, a call of a
function whose returns are written in its body (an Effect wrapper's body
included: `const s = yield* makeStore` reads `makeStore`'s returned object),
`new C(..)` of a class declared in the reviewed tree, or another name bound
to one of these. Values that come from elsewhere (parameters, `let`s assigned
later, a `Context.Tag` service) are not followed: the answer is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Function
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.module import Module


_CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})


def member_function(program: Resolver, module: "Module", at: ts.Node, dotted: str) -> Function | None:
    """The function `dotted` (`x.name`, `this.name`, `a.b.name`) names as seen from `at`, when its root is a value."""
    head, _, rest = dotted.partition(".")
    if not rest:
        return None
    # Resolving a member may resolve others (a factory's callee is itself a
    # member): the depth is the Program's, so mutual recursion ends too.
    with program.member_hops.nested() as allowed:
        return _member_function(program, module, at, head, rest) if allowed else None


def _member_function(program: Resolver, module: "Module", at: ts.Node, head: str, rest: str) -> Function | None:
    if head == "this":
        owner = _enclosing_class(module, at)
        values = [(module, owner)] if owner is not None else []
    else:
        values = list(_values_of_name(program, module, at, head, 0))
    for value_module, value in values:
        found = _member(program, value_module, value, rest.split("."), 0)
        if found is not None:
            return found
    return None


def value_member(program: Resolver, module: "Module", value: ts.Node, prop: str) -> Function | None:
    """The function member `prop` of the value an expression is (`new C().prop`, `make().prop`)."""
    with program.member_hops.nested() as allowed:
        return _member(program, module, value, [prop], 0) if allowed else None


def _member(program: Resolver, module: "Module", value: ts.Node | None, props: list[str], hops: int) -> Function | None:
    if value is None or hops > program.roles.max_hops:
        return None
    for value_module, candidate in _shapes(program, module, value, hops):
        found = _own_member(program, value_module, candidate, props[0], hops)
        if found is None:
            continue
        found_module, found_node = found
        if len(props) == 1:
            function = _function_at(found_module, found_node)
            if function is not None:
                return function
            continue
        deeper = _member(program, found_module, found_node, props[1:], hops + 1)
        if deeper is not None:
            return deeper
    return None


def _shapes(program: Resolver, module: "Module", value: ts.Node, hops: int) -> Iterator[tuple["Module", ts.Node]]:
    """The object literals and classes a value expression may be (at most `max_hops` away)."""
    node = sx.strip(value)
    while node is not None and node.type in ("await_expression", "yield_expression"):
        inner = sx.named(node)
        node = sx.strip(inner[0]) if inner else None
    if node is None or hops > program.roles.max_hops:
        return
    kind = node.type
    if kind in ("object", *_CLASSES):
        yield module, node
    elif kind == "new_expression":
        constructor = sx.field(node, "constructor")
        path = sx.dotted_path(constructor)
        if path is not None:
            yield from _class_named(program, module, node, path)
    elif kind in ("identifier", "member_expression"):
        path = sx.dotted_path(node)
        if path is None:
            return
        if "." not in path:
            for target_module, target in _values_of_name(program, module, node, path, hops + 1):
                yield from _shapes(program, target_module, target, hops + 1)
        else:
            found = program.lookup_scoped(module, path, node)
            if found is not None:
                yield from _shapes(program, found[0], found[1], hops + 1)
    elif kind == "call_expression":
        callee = sx.field(node, "function")
        fn = program.function_of(module.index.expr(callee)) if callee is not None else None
        if fn is None:
            fn = program.function_of(module.index.expr(node))  # `Effect.gen(function* () { return {..} })`
        if fn is not None:
            for returned in returns(fn):
                yield from _shapes(program, fn._module, returned, hops + 1)


def _values_of_name(
    program: Resolver, module: "Module", at: ts.Node, name: str, hops: int
) -> Iterator[tuple["Module", ts.Node]]:
    """What a bare name is bound to: a local `const`, a top-level binding (through imports), or a class."""
    if hops > program.roles.max_hops:
        return
    found = program.lookup_scoped(module, name, at)
    if found is not None:
        yield found
        return
    index = module.index
    if index.binds(index.enclosing_function(at), name):
        return  # a parameter or a `let`: its value is not written here
    yield from _class_named(program, module, at, name)


def _class_named(program: Resolver, module: "Module", at: ts.Node, dotted: str) -> Iterator[tuple["Module", ts.Node]]:
    found = program.lookup_scoped(module, dotted, at)
    node = sx.strip(found[1]) if found is not None else None
    if found is not None and node is not None and node.type in _CLASSES:
        yield found[0], node


def _own_member(
    program: Resolver, module: "Module", shape: ts.Node, prop: str, hops: int
) -> tuple["Module", ts.Node] | None:
    """The node bound to `prop` on an object literal or a class body (methods, fields, shorthand)."""
    if shape.type == "object":
        for member in sx.named(shape):
            if member.type == "pair" and sx.property_key(sx.field(member, "key")) == prop:
                value = sx.field(member, "value")
                return (module, value) if value is not None else None
            if member.type == "method_definition" and sx.property_key(sx.field(member, "name")) == prop:
                return module, member
            if member.type == "shorthand_property_identifier" and sx.text(member) == prop:
                found = next(iter(_values_of_name(program, module, member, prop, hops + 1)), None)
                if found is not None:
                    return found
                function = program.scoped_definition(module, module.index.enclosing_function(member), prop, member)
                return (function._module, function._node) if function is not None else None
        return None
    body = sx.field(shape, "body")
    for member in sx.named(body) if body is not None else ():
        if member.type == "method_definition" and sx.property_key(sx.field(member, "name")) == prop:
            return module, member
        if member.type == "public_field_definition" and sx.property_key(sx.field(member, "name")) == prop:
            value = sx.field(member, "value")
            return (module, value) if value is not None else None
    return None


def _function_at(module: "Module", node: ts.Node) -> Function | None:
    index = module.index
    stripped = sx.strip(node)
    if stripped is None:
        return None
    found = index.function_at(stripped)
    if found is not None:
        return found
    from reviewer.typescript.calls import function_of_value

    target = function_of_value(stripped, module.program.roles.combinators)
    return index.function_at(target) if target is not None else None


def returns(fn: Function) -> Iterator[ts.Node]:
    """The expressions `fn` returns as written: an arrow's expression body, or each `return x` of its own body."""
    body = sx.field(fn._node, "body")
    if body is None:
        return
    if body.type != "statement_block":
        yield body
        return
    stack = list(reversed(body.named_children))
    while stack:
        node = stack.pop()
        if sx.is_function(node) or node.type in _CLASSES:
            continue  # a nested function's returns are its own
        if node.type == "return_statement":
            value = next(iter(sx.named(node)), None)
            if value is not None:
                yield value
            continue
        stack.extend(reversed(node.named_children))


def _enclosing_class(module: "Module", at: ts.Node) -> ts.Node | None:
    return module.index.nearest(at, "class", _is_class)


def _is_class(node: ts.Node) -> bool:
    return node.type in _CLASSES
