"""Where a value goes, read on nodes: the call it is an argument of, the collection it is an element
of, what its chain is bound to, its position among statements.

Node-level, below `expressions`: `Call` answers these questions by handing
its node and the module's parent table here, so the walks are written once.
"""

from __future__ import annotations

from typing import Callable, Iterable

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx

Parent = Callable[[ts.Node], "ts.Node | None"]
CalleeAt = Callable[[ts.Node], "str | None"]  # the callee name of the call at a node, None if none

# Wrappers through which a value passes unchanged to its consumer.
VALUE_WRAPPERS = frozenset(
    {
        "parenthesized_expression",
        "non_null_expression",
        "as_expression",
        "satisfies_expression",
        "yield_expression",
        "await_expression",
    }
)

# Parents whose named children are statements in execution order (class bodies included:
# a call's position counts its field initialisers too).
STATEMENT_LISTS = frozenset({"statement_block", "program", "switch_case", "switch_default", "class_body"})


def _unwrapped(node: ts.Node, parent_of: Parent) -> tuple[ts.Node, ts.Node | None]:
    """(outermost wrapper of `node`, its parent)."""
    parent = parent_of(node)
    while parent is not None and parent.type in VALUE_WRAPPERS:
        node, parent = parent, parent_of(parent)
    return node, parent


def _call_of_arguments(parent: ts.Node | None, parent_of: Parent) -> ts.Node | None:
    return parent_of(parent) if parent is not None and parent.type == "arguments" else None


def host(node: ts.Node, parent_of: Parent) -> ts.Node | None:
    """The call node whose argument `node`'s value is (`H(this, ..)`, `H(yield* this)`)."""
    _, parent = _unwrapped(node, parent_of)
    return _call_of_arguments(parent, parent_of)


def thunk_host(node: ts.Node, parent_of: Parent) -> ts.Node | None:
    """The call taking a function whose result is `node`'s value: `H(() => this)`, `H(() => { return this })`
    with the return its body's only statement (a thunk such as `Effect.suspend`)."""
    outer, parent = _unwrapped(node, parent_of)
    if parent is not None and parent.type == "return_statement":
        block = parent_of(parent)
        if block is None or block.type != "statement_block" or block.named_child_count != 1:
            return None
        outer, parent = block, parent_of(block)
    if parent is None or parent.type not in ("arrow_function", "function_expression", "function"):
        return None
    if sx.field(parent, "body") != outer:
        return None
    _, holder = _unwrapped(parent, parent_of)
    return _call_of_arguments(holder, parent_of)


def _collection(node: ts.Node, parent_of: Parent) -> tuple[ts.Node, ts.Node | None] | None:
    """(the array or object literal holding `node`'s value, wrappers included; its parent), else None."""
    _, parent = _unwrapped(node, parent_of)
    if parent is not None and parent.type == "pair":
        parent = parent_of(parent)
    if parent is None or parent.type not in ("array", "object"):
        return None
    return _unwrapped(parent, parent_of)


def element_host(node: ts.Node, parent_of: Parent) -> ts.Node | None:
    """The call node taking a collection holding `node`'s value as an argument
    (`H([.., this, ..])`, `H({ k: this })`): `Effect.all`, `Effect.firstSuccessOf`."""
    found = _collection(node, parent_of)
    return _call_of_arguments(found[1], parent_of) if found is not None else None


def collection_name(node: ts.Node, parent_of: Parent) -> str | None:
    """The `const` a collection holding `node`'s value is bound to (`const alts = [this, ..]`), else None."""
    found = _collection(node, parent_of)
    if found is None:
        return None
    holder, declarator = found
    if declarator is None or declarator.type != "variable_declarator" or sx.field(declarator, "value") != holder:
        return None
    name = sx.field(declarator, "name")
    return sx.text(name) if name is not None and name.type == "identifier" else None


_MAX_BRANCHES = 4


def binding(node: ts.Node, parent_of: Parent, callee_at: CalleeAt) -> tuple[str, str | None]:
    """What becomes of the value of the call at `node`, after the rest of its chain and pipes.

    ("bound", name) for `const name = yield* this...` or `name = ...`;
    ("discarded", None) for an expression statement (`void f()` too); ("returned", None) for
    `return ...` or an arrow's expression body; ("other", None) otherwise
    (an argument, a property value, a condition: someone else owns it).
    """
    branches = _MAX_BRANCHES
    while True:
        outer = cx.outer_chain_call(node, parent_of)
        if outer is not None:
            node = outer
            continue
        parent = parent_of(node)
        if parent is not None and parent.type in VALUE_WRAPPERS:
            node = parent
            continue
        if parent is not None and parent.type == "ternary_expression" and sx.field(parent, "condition") != node:
            branches -= 1  # a ternary nested deeper than this is "other": the walk stays linear
            if branches >= 0:
                node = parent  # `const mine = c ? yield* a() : yield* b()`: either branch's value is `mine`
                continue
        grand = _call_of_arguments(parent, parent_of)
        # `pipe(this, a, b)`: the value continues as the pipe's result
        if grand is not None and callee_at(grand) in cx.PIPE_FUNCTIONS and sx.named(parent)[0] == node:
            node = grand
            continue
        break
    parent = parent_of(node)
    if parent is None:
        return ("other", None)
    if parent.type == "variable_declarator" and sx.field(parent, "value") == node:
        name = sx.field(parent, "name")
        return ("bound", sx.text(name)) if name is not None else ("other", None)
    if parent.type == "assignment_expression" and sx.field(parent, "right") == node:
        left = sx.field(parent, "left")
        return ("bound", sx.normalized(left)) if left is not None else ("other", None)
    if parent.type == "unary_expression" and sx.text(parent).startswith("void") and sx.field(parent, "argument") == node:
        grand = parent_of(parent)  # `void heartbeat(..)`: dropped on purpose, dropped all the same
        if grand is not None and grand.type == "expression_statement":
            return ("discarded", None)
    if parent.type == "expression_statement":
        return ("discarded", None)
    if parent.type == "return_statement":
        return ("returned", None)
    if parent.type == "arrow_function" and sx.field(parent, "body") == node:
        return ("returned", None)
    return ("other", None)


def statement_index(node: ts.Node, ancestors: Iterable[ts.Node], stop: ts.Node | None) -> tuple[int, ...]:
    """`node`'s position among statements, outermost first: its index in each statement list
    around it (blocks, the program, `case` bodies, class bodies), up to `stop`."""
    path: list[int] = []
    for parent in ancestors:
        if stop is not None and parent == stop:
            break
        if parent.type in STATEMENT_LISTS:
            statements = [c for c in sx.named(parent) if c != sx.field(parent, "value")]
            position = next((i for i, c in enumerate(statements) if c == node), None)
            if position is not None:
                path.append(position)
        node = parent
    return tuple(reversed(path))
