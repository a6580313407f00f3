"""How paths end: the statement around code, the jump after a call, a function's exits.

`statement_of` finds the statement an expression is part of, `block_exit` and
`jumps_past` the `return`/`throw`/`break`/`continue` that ends the path through
a call, and `exits` every way a function produces its result, each with the
guards (statements.py) on its way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, Function, _parts
from reviewer.typescript.module import Module
from reviewer.typescript.parse import node_lines
from reviewer.typescript.statements import (
    _BODIES,
    _JUMPS,
    _LEAVES,
    _LOOPS,
    _NO_GUARDS,
    _STATEMENT_LISTS,
    Guard,
    GuardPath,
    _always_jumps,
    _child_paths,
    _early_exits,
    _statements,
)


def statement_of(expr: Expr | Call) -> Expr | None:
    """The statement `expr` is part of (within its function), or None."""
    module, node = _parts(expr)
    statement = _statement_node(module, node)
    return Expr(module, statement) if statement is not None else None


def _statement_node(module: Module, node: ts.Node) -> ts.Node | None:
    """The statement `node` is part of, within its function.

    The answer depends only on where a node sits, so every node passed on
    the way up remembers it: asked for each call of a deep nest in one
    statement, the walks add up to the nest's size, not size times depth.
    """
    index = module.index
    memo = index._nearest_memos.setdefault("statement", {})
    passed: list[int] = []
    found: ts.Node | None = None
    current = node
    while True:
        if current.id in memo:
            found = memo[current.id]
            break
        parent = index.parent(current)
        if parent is None:
            break
        if current.type in _LEAVES or parent.type in _STATEMENT_LISTS:
            found = current
            break
        if parent.type in _BODIES and current.type.endswith("_statement") and current.type != "statement_block":
            found = current  # `if (x) yield* f()`: a statement without a block
            break
        passed.append(current.id)
        if sx.is_function(parent):
            break  # an arrow's expression body
        current = parent
    for key in passed:
        memo[key] = found
    return found


def block_exit(call: Call) -> Expr | None:
    """The jump that ends the path through `call`'s block.

    The `return`/`throw` around the call itself (`return yield* fail(..)`), or
    the first `return`/`throw`/`break`/`continue` among the statements after
    the call's statement in the same block. None if the block runs on.
    """
    statement = _statement_node(call._module, call._node)
    if statement is None:
        return None
    if statement.type in _LEAVES:
        return Expr(call._module, statement)
    block = call._module.index.parent(statement)
    if block is None or block.type not in _STATEMENT_LISTS:
        return None
    later = False
    for sibling in _statements(block):
        if sibling == statement:
            later = True
        elif later and sibling.type in _JUMPS:
            return Expr(call._module, sibling)
    return None


def jumps_past(first: Call, later: Call) -> bool:
    """After `first`, a jump ends the path before `later` can run.

    A `return`/`throw` leaves the function; a `break`/`continue` only skips
    code inside the loop or switch it leaves, so code after that construct
    still runs.
    """
    jump = block_exit(first)
    if jump is None or jump.path != later.path:
        return False
    node = jump._node
    if node.type in _LEAVES:
        if sx.contains(node, first._node):
            return True  # `return yield* fail(..)`
        return node.end_byte <= later._node.start_byte
    target = _jump_target(jump._module, node)
    return target is not None and sx.contains(target, later._node) and node.end_byte <= later._node.start_byte


def _jump_target(module: Module, jump: ts.Node) -> ts.Node | None:
    """The loop (or, for `break`, the switch) a `break`/`continue` leaves."""
    for ancestor in module.index.ancestors(jump):
        if sx.is_function(ancestor):
            return None
        if ancestor.type in _LOOPS or (jump.type == "break_statement" and ancestor.type == "switch_statement"):
            return ancestor
    return None


@dataclass(frozen=True)
class Exit:
    """One way a function produces its result.

    kind: "return" (`value` is None for a bare `return`), "throw" (`value` is
    what is thrown), "end" (control falls off the end of a block body), or
    "expression" (an arrow's expression body). Values are read through
    parentheses, `yield*` and `await` (`return yield* Effect.fail(e)` gives
    `Effect.fail(e)`), and a ternary gives one exit per side. `guards` are the
    conditions on the way, outermost first.
    """

    kind: str
    value: Expr | None
    line: int
    guards: GuardPath  # a sequence of Guard, outermost first


def exits(function: Function) -> tuple[Exit, ...]:
    """Every way `function` ends, in source order (nested functions excluded).

    One walk down the body carries the guards of the code it is in (what
    `guards(statement, within=function)` would find walking up from each
    exit), so a function with thousands of nested branches costs its size.
    """
    module, node = function._module, function._node
    body = sx.field(node, "body")
    if body is None:
        return ()
    if body.type != "statement_block":
        return tuple(_split_value(module, "expression", body, _NO_GUARDS))
    out: list[Exit] = []
    stack: list[tuple[ts.Node, GuardPath]] = [(body, _NO_GUARDS)]
    case_places: dict[int, tuple[list[ts.Node], int]] = {}
    while stack:
        current, path = stack.pop()
        if current.type in _LEAVES:
            value = next(iter(sx.named(current)), None)
            kind = "return" if current.type == "return_statement" else "throw"
            if value is None:
                out.append(Exit(kind, None, node_lines(current)[0], path))
            else:
                out.extend(_split_value(module, kind, value, path))
            continue
        children = [c for c in current.named_children if not sx.is_function(c) and c.type != "comment"]
        stack.extend(reversed(_child_paths(module, current, children, path, case_places)))
    if not _always_jumps(body):
        early = _NO_GUARDS.extend(_early_exits(module, body, body))
        out.append(Exit("end", None, node_lines(body)[1], early))
    return tuple(out)


def _split_value(module: Module, kind: str, value: ts.Node, found: GuardPath) -> list[Exit]:
    """One exit per ternary leaf of `value` (consequence before alternative), in a loop."""
    out: list[Exit] = []
    stack: list[tuple[ts.Node, GuardPath]] = [(value, found)]
    while stack:
        current, path = stack.pop()
        inner = _unwrapped(current)
        if inner.type == "ternary_expression":
            test = sx.strip(sx.field(inner, "condition"))
            consequence, alternative = sx.field(inner, "consequence"), sx.field(inner, "alternative")
            if test is not None and consequence is not None and alternative is not None:
                condition = Expr(module, test)
                stack.append((alternative, path.extend((Guard(condition, False, "ternary"),))))
                stack.append((consequence, path.extend((Guard(condition, True, "ternary"),))))
                continue
        out.append(Exit(kind, Expr(module, inner), node_lines(current)[0], path))
    return out


def _unwrapped(value: ts.Node) -> ts.Node:
    """`value` without parentheses, `yield*` and `await`: the effect or value it produces."""
    node = value
    while True:
        inner = sx.strip(node)
        if inner is None:
            return node
        if inner.type not in ("yield_expression", "await_expression"):
            return inner
        argument = next(iter(sx.named(inner)), None)
        if argument is None:
            return inner  # a bare `yield`
        node = argument


def answers(function: Function) -> bool:
    """Does calling `function` answer a question? Its declared return type is not `void` (nor a
    promise or effect of `void`), or, undeclared, a `return` gives a value that is not itself an effect
    or a promise the caller runs (`return rows.length === 1`, `Effect.map((rows) => ..)` on one)."""
    declared = sx.field(function._node, "return_type")
    if declared is not None:
        text = sx.text(declared)
        return not re.search(r"(^|[<:,]\s*)(void|never)\s*(,[^>]*)?>*\s*$", text)
    for end in exits(function):
        value = end.value
        if end.kind not in ("return", "expression") or value is None:
            continue
        if value.call is None or "Effect.map(" in value.text or ".then(" in value.text:
            return True
    return False
