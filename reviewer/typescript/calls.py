"""Callee names, fluent chains and pipe stages, computed on nodes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.roles import ALL, LAST, VALUES

if TYPE_CHECKING:
    from reviewer.typescript.module import Module

# Function-form pipe: `pipe(x, a, b)` imported from "effect" or via `Function.pipe`.
PIPE_FUNCTIONS = frozenset({"pipe", "Function.pipe"})


_MAX_CHAIN = 64  # deeper fluent chains (generated code) are left unnamed, not a RecursionError


def qualified_name(
    module: "Module", node: ts.Node | None, memo: dict[int, str | None] | None = None, depth: int = 0
) -> str | None:
    """Import-resolved dotted name of a callee/reference expression.

    `Claim.clear` -> `SessionExecutionClaim.clear`; a fluent receiver keeps its
    call marker (`db.select().from`) so chain members stay distinguishable;
    a curried callee gets `()` (`Effect.fn()`). None when there is no name.
    """
    node = sx.strip(node)
    if node is None or depth > _MAX_CHAIN:
        return None
    if node.type == "call_expression":
        inner = _callee_name(module, node, memo, depth)
        return inner + "()" if inner else None
    split = sx.member_segments(node)
    if split is None:
        return None
    root, props = split
    if root is None:
        return None
    if root.type == "identifier":
        scoped = module.scoped_declaration(root, sx.text(root))
        head = scoped if scoped is not None else module.program.qualified_head(module, sx.text(root))
    elif root.type in ("this", "super"):
        head = root.type
    elif root.type == "call_expression" and props:
        inner = _callee_name(module, root, memo, depth)
        if inner is None:
            return None
        head = inner + "()"
    else:
        return None
    return ".".join([head, *props])


def _callee_name(module: "Module", call: ts.Node, memo: dict[int, str | None] | None, depth: int) -> str | None:
    if memo is not None and call.id in memo:
        return memo[call.id]
    name = qualified_name(module, sx.field(call, "function"), memo, depth + 1)
    if memo is not None:
        memo[call.id] = name
    return name


def last_segment(name: str) -> str:
    while name.endswith("()"):
        name = name[:-2]
    return name.rsplit(".", 1)[-1]


def arguments(call: ts.Node) -> list[ts.Node]:
    args = sx.field(call, "arguments")
    if args is None or args.type != "arguments":
        return []  # tagged templates carry a template string here
    return sx.named(args)


def member_callee(call: ts.Node) -> ts.Node | None:
    callee = sx.strip(sx.field(call, "function"))
    return callee if callee is not None and callee.type == "member_expression" else None


def receiver(call: ts.Node) -> ts.Node | None:
    callee = member_callee(call)
    return sx.field(callee, "object") if callee is not None else None


def receiver_call(call: ts.Node) -> ts.Node | None:
    inner = sx.strip(receiver(call))
    return inner if inner is not None and inner.type == "call_expression" else None


def outer_chain_call(call: ts.Node) -> ts.Node | None:
    """The call for which `call` is the receiver (`call.next(..)`), if any."""
    node = call
    parent = node.parent
    while parent is not None and parent.type in ("parenthesized_expression", "non_null_expression"):
        node, parent = parent, parent.parent
    if parent is None or parent.type != "member_expression" or sx.field(parent, "object") != node:
        return None
    grand = parent.parent
    if grand is not None and grand.type == "call_expression" and sx.field(grand, "function") == parent:
        return grand
    return None


def chain_nodes(call: ts.Node) -> list[ts.Node]:
    """The whole fluent chain `call` belongs to, innermost receiver first."""
    before: list[ts.Node] = []
    node: ts.Node | None = receiver_call(call)
    while node is not None:
        before.append(node)
        node = receiver_call(node)
    before.reverse()
    after: list[ts.Node] = []
    node = outer_chain_call(call)
    while node is not None:
        after.append(node)
        node = outer_chain_call(node)
    return [*before, call, *after]


def pipe_parts(module: "Module", call: ts.Node, callee: str) -> tuple[ts.Node | None, list[ts.Node]]:
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
                    elif member.type == "method_definition":
                        values.append(member)
                return values
        return []
    if selector.isdigit():
        index = int(selector)
        return [args[index]] if index < len(args) else []
    return []
