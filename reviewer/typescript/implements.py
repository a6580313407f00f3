"""Which function implements a member of an Effect service, named as callers name it (`Locks.renew`).

    Locks.of({ renew: (id) => .. })            // this arrow is `Locks.renew`
    Layer.succeed(Locks, { renew: .. })        // so is this one
    const make = (raw: Raw) => Locks.of({ renew: (id) => raw.renew(id) })
    make({ renew: (id) => sql`UPDATE ..` })    // and this one, through the encoder

Callers reach a service's methods through its tag (`(yield* Locks).renew`,
services.py), never through the function's own name: a vocabulary inferred
from what an implementation writes must name it the way those calls do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx
from reviewer.typescript.members import returns
from reviewer.typescript.services import is_service_tag

if TYPE_CHECKING:
    from reviewer.typescript.module import Module
    from reviewer.typescript.resolver import Resolver


def implemented_member(program: "Resolver", module: "Module", function: ts.Node) -> str | None:
    """`Tag.m` when `function` is the value of property `m` of an object that implements a service:
    handed to `Tag.of(..)` or `Layer.succeed(Tag, ..)`, or to a function whose result is `Tag.of({ m: .. })`.
    None for any other function."""
    pair = module.index.parent(function)
    while pair is not None and pair.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        pair = module.index.parent(pair)
    if pair is None:
        return None
    if pair.type == "pair":
        prop = sx.property_key(sx.field(pair, "key"))
        obj = module.index.parent(pair)
    elif pair.type == "object" and function.type == "method_definition":
        prop, obj = sx.property_key(sx.field(function, "name")), pair
    else:
        return None
    if prop is None or obj is None or obj.type != "object":
        return None
    tag = implemented_tag(program, module, obj, 0)
    return f"{tag}.{prop}" if tag is not None else None


def implemented_tag(program: "Resolver", module: "Module", obj: ts.Node, hops: int) -> str | None:
    """The name of the service tag an object literal implements, as callers name it (see the module's doc)."""
    call = _argument_of(module, obj)
    if call is None:
        return None
    callee = sx.strip(sx.field(call, "function"))
    if callee is None:
        return None
    if callee.type == "member_expression" and sx.text(sx.field(callee, "property")) == "of":
        receiver = sx.field(callee, "object")
        if is_service_tag(program, module, receiver):
            return cx.qualified_name(module, receiver)
    name = cx.qualified_name(module, callee) or ""
    if name == "Layer.succeed":
        args = cx.arguments(call)
        if len(args) == 2 and args[1] == obj and is_service_tag(program, module, args[0]):
            return cx.qualified_name(module, args[0])
    if hops >= 1:
        return None
    # An encoder: `makeEncoded(obj)` whose body is `Tag.of({ .. })` (one hop: a wrapper of a wrapper is not followed).
    dotted = sx.dotted_path(callee)
    scope = module.index.enclosing_function(call)
    target = program.scoped_definition(module, scope, dotted, callee) if dotted is not None else None
    target_module = program.module(target.path) if target is not None else None
    if target is None or target_module is None:
        return None
    for returned in returns(target):
        inner = cx.picked(returned)
        args = cx.arguments(inner) if inner is not None and inner.type == "call_expression" else []
        first = cx.picked(args[0]) if args else None
        if first is not None and first.type == "object":
            found = implemented_tag(program, target_module, first, hops + 1)
            if found is not None:
                return found
    return None


def _argument_of(module: "Module", obj: ts.Node) -> ts.Node | None:
    """The call `obj` is a direct argument of."""
    parent = module.index.parent(obj)
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        parent = module.index.parent(parent)
    if parent is None or parent.type != "arguments":
        return None
    call = module.index.parent(parent)
    return call if call is not None and call.type == "call_expression" else None
