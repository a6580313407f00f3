"""Callee names, fluent chains, pipe stages and the function a binding stands for, computed on nodes."""

from __future__ import annotations

import re
from typing import Callable, Container, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.literals import picked
from reviewer.typescript.roles import ALL, LAST, VALUES
from reviewer.typescript.source import Indexed, Names

# Function-form pipe: `pipe(x, a, b)` imported from "effect" or via `Function.pipe`.
PIPE_FUNCTIONS = frozenset({"pipe", "Function.pipe"})


_MAX_CHAIN = 64  # deeper fluent chains (generated code) are left unnamed, not a RecursionError
# Longer names (absurd identifiers, or 64 links of long ones) are left unnamed
# too: every call keeps its callee, so a name must not grow with the input.
_MAX_NAME = 4096
# An unnamed callee is reported by its normal form, cut to this around a `…`
# when longer (`(yield* x).pipe`, but not a 20,000-link chain once per link).
_MAX_UNNAMED = 512

Parent = Callable[[ts.Node], "ts.Node | None"]


def _ts_parent(node: ts.Node) -> ts.Node | None:
    return node.parent


def qualified_name(module: Names, node: ts.Node | None, depth: int = 0) -> str | None:
    """Import-resolved dotted name of a callee/reference expression.

    `Claim.clear` -> `SessionExecutionClaim.clear`; a fluent receiver keeps its
    call marker (`db.select().from`) so chain members stay distinguishable;
    a curried callee gets `()` (`Effect.fn()`). None when there is no name,
    when naming it means going through more than _MAX_CHAIN calls, or when
    the name would be longer than _MAX_NAME.
    """
    node = picked(node)
    if node is None or depth > _MAX_CHAIN:
        return None
    if node.type == "call_expression":
        inner = qualified_name(module, sx.field(node, "function"), depth + 1)
        return _bound(inner) if inner and _binds_declared(module, node) else _curried(inner)
    split = sx.member_segments(node)
    if split is None:
        return None
    root, props = split
    if root is not None and root.type == "call_expression" and props:
        return _member(inner=qualified_name(module, sx.field(root, "function"), depth + 1), props=props)
    return _rooted(module, root, props, depth)


# Function.prototype's ways to call a function: `f.call(this, a)` and `f.apply(this, [a])` call `f`;
# `f.bind(this, a)` makes a function that calls `f`. Objects have methods of these names too
# (`store.apply(patch)`), so `f` must be a function the program declares.
_INVOKERS = frozenset({"call", "apply"})
# A name that may have come from an invoker spelling (`Locks.drop.call.call`, `f.bind().apply`, `Reflect.apply`).
_MAY_INVOKE = re.compile(r"\.(?:call|apply)$|\.bind\(\)|\.bind\.call\(\)$|^Reflect\.apply$")


def _declared_function(module: Names, root: ts.Node, props: list[str]) -> bool:
    if root.type != "identifier":
        return False
    dotted = ".".join([sx.text(root), *props])
    return module.program.definition(module.path, dotted) is not None


def _binds_declared(module: Names, call: ts.Node) -> bool:
    """Whether `call` is `f.bind(..)` of a declared function `f`."""
    split = sx.member_segments(sx.strip(sx.field(call, "function")))
    return split is not None and split[0] is not None and len(split[1]) >= 1 and split[1][-1] == "bind" \
        and _declared_function(module, split[0], split[1][:-1])


_PROTOTYPE = frozenset({"Function.prototype.call", "Function.prototype.apply", "Function.prototype.bind"})
_MAX_INVOKERS = 8  # `f.call.call.call…` deeper than this is left as written


def _function_valued(module: Names, node: ts.Node | None, depth: int = 0) -> bool:
    """`node` is a function value the reviewer can name: a declared function, one of
    Function.prototype's invokers of one (`f.call`, `f.bind(..)`), or the prototype's own."""
    node = sx.strip(node)
    if node is None or depth > _MAX_INVOKERS:
        return False
    if node.type == "call_expression":
        bound = invoker(sx.field(node, "function"))
        return bound is not None and bound[1] == "bind" and _function_valued(module, bound[0], depth + 1)
    split = sx.member_segments(node)
    if split is None or split[0] is None:
        return False
    root, props = split
    if props and props[-1] in _INVOKERS | {"bind"} and _function_valued(module, _object(node), depth + 1):
        return True
    if root.type == "identifier" and sx.text(root) == "Function" and ".".join(["Function", *props]) in _PROTOTYPE:
        return True
    return _declared_function(module, root, props)


def invoker(node: ts.Node | None) -> tuple[ts.Node, str] | None:
    """(object, "call" | "apply" | "bind") of a member expression `object.call`, else None."""
    node = sx.strip(node)
    if node is None or node.type != "member_expression":
        return None
    prop = sx.text(sx.field(node, "property"))
    target = sx.field(node, "object")
    return (target, prop) if prop in ("call", "apply", "bind") and target is not None else None


def _object(member: ts.Node) -> ts.Node | None:
    return sx.field(member, "object")


def _listed(node: ts.Node | None) -> list[ts.Node] | None:
    """The elements of an array literal argument; None when not known (a spread, a variable)."""
    node = sx.strip(node)
    if node is None or node.type != "array" or any(c.type == "spread_element" for c in sx.named(node)):
        return None
    return sx.named(node)


def _invoke(
    module: Names, fn: ts.Node | None, this: ts.Node | None, args: list[ts.Node] | None, depth: int = 0
) -> tuple[ts.Node | None, list[ts.Node] | None]:
    """The function a value invoked with (`this`, `args`) ends up running, and the arguments it gets.

    Function.prototype.call runs its `this` (`f.call(t, a)` runs `f`; so does
    `f.call.call(f, t, a)` and `Function.prototype.call.call(f, t, a)`), apply
    spreads an array literal, a bound function runs its target with the bound
    arguments first, and `Reflect.apply(f, t, [a])` is apply. Arguments are
    None when they cannot be known (a spread, a variable).
    """
    fn = sx.strip(fn)
    if fn is None or depth > _MAX_INVOKERS:
        return fn, args
    way = invoker(fn)
    if way is not None and way[1] in _INVOKERS and (
        _function_valued(module, way[0]) or qualified_name(module, fn) in _PROTOTYPE
    ):
        if this is None:
            return None, None
        rest = args or []
        if way[1] == "call":
            return _invoke(module, this, rest[0] if rest else None, rest[1:] if args is not None else None, depth + 1)
        return _invoke(module, this, rest[0] if rest else None, _listed(rest[1]) if len(rest) > 1 else [], depth + 1)
    if fn.type == "call_expression":
        bound = invoker(sx.field(fn, "function"))
        if bound is not None and bound[1] == "bind" and _function_valued(module, bound[0]):
            given = arguments(fn)
            before = given[1:]
            return _invoke(module, bound[0], given[0] if given else None, None if args is None else before + args, depth + 1)
        if qualified_name(module, sx.field(fn, "function")) == "Function.prototype.bind.call":
            # `Function.prototype.bind.call(f, t, a)(b)` is `f.bind(t, a)(b)`
            given = arguments(fn)
            if given and _function_valued(module, given[0]):
                rest = None if args is None else given[2:] + args
                return _invoke(module, given[0], given[1] if len(given) > 1 else None, rest, depth + 1)
    if fn.type == "member_expression" and sx.text(sx.field(fn, "property")) == "apply" \
            and qualified_name(module, fn) == "Reflect.apply":
        rest = args or []
        if rest and _function_valued(module, rest[0]):
            listed = _listed(rest[2]) if len(rest) > 2 else []
            return _invoke(module, rest[0], rest[1] if len(rest) > 1 else None, listed, depth + 1)
    return fn, args


def invocation(module: Names, call: ts.Node) -> tuple[ts.Node, list[ts.Node] | None] | None:
    """For a call written through Function.prototype or Reflect (`X.clear.call(u, db)`,
    `X.clear.bind(u, db)(claim)`, `X.clear.call.call(X.clear, u, db)`, `Reflect.apply(X.clear, u, [db])`):
    the function it runs and the arguments that function receives. None for any other call,
    and for `call`/`apply`/`bind` of something not known to be a function (`store.apply(patch)`)."""
    callee = sx.strip(sx.field(call, "function"))
    if callee is None:
        return None
    if callee.type != "call_expression" and invoker(callee) is None:
        return None  # the common case: no invoker in sight
    this = _object(callee) if callee.type == "member_expression" else None
    target, args = _invoke(module, callee, this, arguments(call))
    if target is None or target == callee:
        return None
    return target, args


def _invoked_name(module: Names, call: ts.Node, name: str | None) -> str | None:
    """`name`, or for a call written through an invoker the name of the function it runs."""
    if name is None or not _MAY_INVOKE.search(name):
        return name
    found = invocation(module, call)
    return (qualified_name(module, found[0]) if found is not None else None) or name


def _rooted(module: Names, root: ts.Node | None, props: list[str], depth: int = 0) -> str | None:
    """The name of a member path whose root is not a call (`f.call`/`f.apply` of a declared `f` is `f`)."""
    if root is None:
        return None
    if len(props) >= 1 and props[-1] in _INVOKERS and _declared_function(module, root, props[:-1]):
        props = props[:-1]
    if root.type == "identifier" and sx.text(root) == "globalThis" and props and props[0][:1].isupper():
        # `globalThis.Reflect.apply` is `Reflect.apply`: a global reached through the global object
        return _capped(".".join(props))
    if root.type == "identifier":
        name = sx.text(root)
        head = module.scoped_declaration(root, name)
        if head is None:
            head = module.alias_of(root, name, depth, member=bool(props))
        if head is None:
            head = module.program.qualified_head(module, name)
    elif root.type in ("this", "super"):
        head = root.type
    else:
        return None
    return _capped(".".join([head, *props]))


def _bound(inner: str) -> str | None:
    """Calling `f.bind(..)`'s result calls `f`."""
    return inner[: -len(".bind")] if inner.endswith(".bind") else _curried(inner)


def _curried(inner: str | None) -> str | None:
    return _capped(inner + "()") if inner else None


def _member(inner: str | None, props: list[str]) -> str | None:
    return _capped(".".join([inner + "()", *props])) if inner is not None else None


def _capped(name: str) -> str | None:
    return name if len(name) <= _MAX_NAME else None


def _inner_call(call: ts.Node) -> tuple[ts.Node | None, ts.Node | None, list[str] | None, ts.Node | None]:
    """How `qualified_name` names a call's callee, read once.

    (stripped callee, the call whose name it builds on or None, the member
    segments after that call or else after the path's root (None when the
    callee is not a path), the path's root when there is no inner call).
    """
    callee = picked(sx.field(call, "function"))
    if callee is None:
        return None, None, None, None
    if callee.type == "call_expression":
        return callee, callee, [], None
    split = sx.member_segments(callee)
    if split is None:
        return callee, None, None, None
    root, props = split
    if root is not None and root.type == "call_expression" and props:
        return callee, root, props, None
    return callee, None, props, root


def call_name(module: Names, call: ts.Node, memo: dict[int, tuple[str | None, int]] | None = None) -> str | None:
    """`qualified_name` of a call's callee; with `memo`, each call of a chain is named once.

    A chain is named from its innermost call outwards, each name built on
    the one below it, in a loop (no recursion) and without a second walk
    down the chain: the memo keeps every call's name and its level (how many
    calls naming it goes through), so the answer is `qualified_name`'s
    whatever order the calls are asked in.
    """
    if memo is None:
        return _invoked_name(module, call, qualified_name(module, sx.field(call, "function")))
    known = memo.get(call.id)
    if known is not None:
        return _invoked_name(module, call, known[0])
    pending: list[tuple[ts.Node, ts.Node | None, ts.Node | None, list[str] | None, ts.Node | None]] = []
    node: ts.Node | None = call
    while node is not None and node.id not in memo:
        callee, inner, props, root = _inner_call(node)
        pending.append((node, callee, inner, props, root))
        node = inner
    for node, callee, inner, props, root in reversed(pending):
        if inner is None:
            # what `qualified_name(module, callee)` answers, without walking the path again
            memo[node.id] = (_rooted(module, root, props) if props is not None else None, 0)
            continue
        inner_name, level = memo[inner.id]
        level += 1
        if level > _MAX_CHAIN or inner_name is None:
            memo[node.id] = (None, level)
        elif inner is callee:
            memo[node.id] = (_bound(inner_name) if _binds_declared(module, inner) else _curried(inner_name), level)
        else:
            memo[node.id] = (_member(inner_name, props or []), level)
    return _invoked_name(module, call, memo[call.id][0])


def callee_name(module: Indexed, call: ts.Node) -> str | None:
    """`qualified_name(module, <call's callee>)`, for a call of the module's index.

    A callee reached through more than _MAX_CHAIN calls has no name, and the
    walk that indexed the file measured each call's chain level the way
    `qualified_name` counts its depth: asked for every link of a 20,000-link
    chain, the deep links answer None without walking 64 links down again.
    """
    known = module.index.named_callees.get(call.id)
    if known is not None and known[1] > _MAX_CHAIN:
        return None
    return qualified_name(module, sx.field(call, "function"))


def unnamed_callee(callee: ts.Node, forms: "sx.NormalForms | None", limit: int = _MAX_UNNAMED) -> str:
    """How a callee without a name is spelled: its normal form, cut around `…` past `limit`."""
    return sx.bounded_normal(callee, forms, limit)


def last_segment(name: str) -> str:
    while name.endswith("()"):
        name = name[:-2]
    return name.rsplit(".", 1)[-1]


def arguments(call: ts.Node) -> list[ts.Node]:
    args = sx.field(call, "arguments")
    if args is None or args.type != "arguments":
        return []  # tagged templates carry a template string here
    return sx.named(args)


def invoked_arguments(module: Names, call: ts.Node) -> list[ts.Node]:
    """The arguments the called function receives: `f.call(t, a, b)` gives (a, b), `f.apply(t, [a, b])`
    (a, b) (nothing known from a spread or a variable), `f.bind(t, a)(b)` (a, b)."""
    found = invocation(module, call)
    if found is None:
        return arguments(call)
    return found[1] or []


def member_callee(call: ts.Node) -> ts.Node | None:
    callee = sx.strip(sx.field(call, "function"))
    return callee if callee is not None and callee.type == "member_expression" else None


def receiver(call: ts.Node) -> ts.Node | None:
    callee = member_callee(call)
    return sx.field(callee, "object") if callee is not None else None


def receiver_call(call: ts.Node) -> ts.Node | None:
    inner = sx.strip(receiver(call))
    return inner if inner is not None and inner.type == "call_expression" else None


def outer_chain_call(call: ts.Node, parent_of: Parent = _ts_parent) -> ts.Node | None:
    """The call for which `call` is the receiver (`call.next(..)`), if any.

    `parent_of` is the module index's constant-time parent (tree-sitter's
    own `.parent` costs the node's depth).
    """
    node = call
    parent = parent_of(node)
    while parent is not None and parent.type in ("parenthesized_expression", "non_null_expression"):
        node, parent = parent, parent_of(parent)
    if parent is None or parent.type != "member_expression" or sx.field(parent, "object") != node:
        return None
    grand = parent_of(parent)
    if grand is not None and grand.type == "call_expression" and sx.field(grand, "function") == parent:
        return grand
    return None


def chain_nodes(call: ts.Node, parent_of: Parent = _ts_parent) -> list[ts.Node]:
    """The whole fluent chain `call` belongs to, innermost receiver first."""
    before: list[ts.Node] = []
    node: ts.Node | None = receiver_call(call)
    while node is not None:
        before.append(node)
        node = receiver_call(node)
    before.reverse()
    after: list[ts.Node] = []
    node = outer_chain_call(call, parent_of)
    while node is not None:
        after.append(node)
        node = outer_chain_call(node, parent_of)
    return [*before, call, *after]


def pipe_parts(module: Names, call: ts.Node, callee: str) -> tuple[ts.Node | None, list[ts.Node]]:
    """(subject, stages) of `subject.pipe(a, b)` or `pipe(subject, a, b)`."""
    member = member_callee(call)
    if member is not None and sx.text(sx.field(member, "property")) == "pipe":
        return sx.field(member, "object"), arguments(call)
    if callee in PIPE_FUNCTIONS:
        args = arguments(call)
        if args:
            return args[0], args[1:]
    return None, []


def select_arguments(args: Sequence[ts.Node], selector: str) -> list[ts.Node]:
    """The argument nodes a RoleTable selector names (see RoleTable)."""
    if not args:
        return []
    if selector == ALL:
        return list(args)
    if selector == LAST:
        return [args[-1]]
    if selector == VALUES:
        for arg in reversed(args):
            obj = sx.strip(arg)
            if obj is not None and obj.type == "object":
                values: list[ts.Node] = []
                for member in sx.named(obj):
                    if member.type == "pair":
                        value = sx.field(member, "value")
                        if value is not None:
                            values.append(value)
                    elif member.type in ("method_definition", "shorthand_property_identifier"):
                        values.append(member)  # `{ LLMError }` names its handler
                return values
        # `Effect.catchTags(handlers)`: the table is written elsewhere; the name stands for it
        # (references.py follows it to the object, whose values then run in the role).
        last = sx.strip(args[-1])
        return [args[-1]] if last is not None and last.type in ("identifier", "member_expression") else []
    if selector.isdigit():
        index = int(selector)
        return [args[index]] if index < len(args) else []
    return []


def function_of_value(node: ts.Node | None, opaque: Container[str] = ()) -> ts.Node | None:
    """The function a binding's value stands for, looking through Effect wrappers.

    `() => ..`, `Effect.fn("x")(function* ..)`, `Effect.gen(function* ..)`,
    `Effect.gen(..).pipe(..)`, `Layer.effect(Tag, Effect.gen(..))`: the first
    function argument wins; for `.pipe(..)` only the piped subject counts, so
    the callbacks of stages (`Effect.catchAll(() => ..)`) are never taken for it.
    Calls named in `opaque` (handler/finalizer/fork combinators, as written)
    are not looked into: `const r = Effect.acquireRelease(a, (h) => ..)` binds
    an effect, not the release callback.
    """
    node = sx.strip(node)
    depth = 0
    while node is not None and depth < 8:
        depth += 1
        if sx.is_function(node):
            return node
        if node.type in ("await_expression", "yield_expression"):
            inner = sx.named(node)
            node = sx.strip(inner[0]) if inner else None
            continue
        if node.type != "call_expression":
            return None
        callee = sx.strip(sx.field(node, "function"))
        if sx.dotted_path(callee) in opaque:
            return None
        if callee is not None and callee.type == "member_expression" and sx.text(sx.field(callee, "property")) == "pipe":
            node = sx.strip(sx.field(callee, "object"))
            continue
        args = sx.field(node, "arguments")
        arg_nodes = [sx.strip(a) for a in sx.named(args)] if args is not None and args.type == "arguments" else []
        for arg in arg_nodes:
            if sx.is_function(arg):
                return arg
        if callee is not None and callee.type == "call_expression":
            node = callee  # curried: Effect.fn("name")(function* ..)
            continue
        nested = next((a for a in arg_nodes if a is not None and a.type == "call_expression"), None)
        node = nested
    return None
