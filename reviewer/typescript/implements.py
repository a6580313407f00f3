"""Which function implements a member of an Effect service, named as callers name it (`Locks.renew`).

    Locks.of({ renew: (id) => .. })            // this arrow is `Locks.renew`
    Layer.succeed(Locks, { renew: .. })        // so is this one
    const make = (raw: Raw) => Locks.of({ renew: (id) => raw.renew(id) })
    make({ renew: (id) => sql`UPDATE ..` })    // and this one, through the encoder
    const make = Effect.gen(function* () { return { renew: .. } })
    Layer.effect(Locks, make)                  // and an object a layer's constructor returns

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
        return _layer_built(program, module, obj) if hops == 0 else None
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


# Layer constructors taking the tag, then what builds the service (data-first or curried).
_LAYERS = frozenset({"Layer.effect", "Layer.scoped", "Layer.sync", "Layer.succeed"})
_WRAPPERS = ("parenthesized_expression", "as_expression", "satisfies_expression")


def _layer_built(program: "Resolver", module: "Module", obj: ts.Node) -> str | None:
    """The tag a layer of this module builds from `obj`: the object returned by the generator of
    `Effect.gen` (or a thunk) whose value, or the `const` holding it, a layer constructor is handed
    with a service tag (`Layer.effect(Tag, make)`, `Layer.effect(Tag)(make)`)."""
    layers = _layer_tags(program, module)
    if not layers:
        return None
    index = module.index
    parent = index.parent(obj)
    while parent is not None and parent.type in _WRAPPERS:
        parent = index.parent(parent)
    if parent is None:
        return None
    if parent.type == "return_statement":
        enclosing = index.enclosing_function(obj)
        function = enclosing._node if enclosing is not None else None
    elif sx.is_function(parent) and sx.field(parent, "body") is not None:
        function = parent  # `() => ({ .. })`
    else:
        return None
    if function is None:
        return None
    # The function, or the call it is handed to (`Effect.gen(function* () { .. })`), is the builder.
    builder = function
    holder = index.parent(builder)
    if holder is not None and holder.type == "arguments":
        outer = index.parent(holder)
        if outer is not None and outer.type == "call_expression":
            builder = outer
    found = layers.get(sx.text(builder))
    declarator = index.parent(builder)
    if found is None and declarator is not None and declarator.type == "variable_declarator" and sx.field(declarator, "value") == builder:
        name = sx.field(declarator, "name")
        found = layers.get(sx.text(name)) if name is not None else None
    return found


def _layer_tags(program: "Resolver", module: "Module") -> dict[str, str]:
    """What each layer constructor of the module is handed to build (as written) -> the tag it provides.
    Worked out once per module: every object literal returned by a function asks."""
    memo = module.index.__dict__.setdefault("_layer_tags", {})
    if "tags" in memo:
        return memo["tags"]
    out: dict[str, str] = {}
    for call in module.calls():
        if call.callee.endswith("()"):  # `Layer.effect(Tag)(make)`
            inner = call.callee_expr.call if call.callee_expr is not None else None
            layer, built, tags = call.callee[:-2], call.args[:1], (inner.args[:1] if inner is not None else ())
        else:
            layer, built, tags = call.callee, call.args[1:2], call.args[:1]
        if layer not in _LAYERS or not tags or not built:
            continue
        tag = tags[0]._node
        if is_service_tag(program, module, tag):
            name = cx.qualified_name(module, tag)
            if name is not None:
                out.setdefault(sx.text(built[0]._node), name)
    memo["tags"] = out
    return out
