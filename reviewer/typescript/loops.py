"""Loops that keep running: the code a polling loop repeats every tick.

A `while`/`do` loop, or a `for (;;)` without a condition, repeats its body
until something stops it: code in it runs on every tick, like code repeated by
a schedule. A `for (... of rows)` walks a collection once and is not one.
Nested functions are not entered: a loop written inside a callback belongs to
that callback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.typescript import syntax as sx
from reviewer.typescript.parse import node_lines

if TYPE_CHECKING:
    import tree_sitter as ts

    from reviewer.typescript.expressions import Function

_REPEATING = frozenset({"while_statement", "do_statement"})


def _repeats(node: "ts.Node") -> bool:
    if node.type in _REPEATING:
        return True
    if node.type != "for_statement":
        return False
    # `for (;;)` and `for (init; ; step)`: no condition, no end.
    condition = sx.field(node, "condition")
    return condition is None or sx.text(condition).strip() in (";", "")


def repeating_spans(fn: "Function") -> tuple[tuple[int, int], ...]:
    """1-based (first, last) lines of each loop in `fn` that repeats until stopped, outermost first."""
    body = sx.field(fn._node, "body")
    if body is None:
        return ()
    out: list[tuple[int, int]] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node is not body and sx.is_function(node):
            continue
        if _repeats(node):
            out.append(node_lines(node))
        stack.extend(reversed(node.named_children))
    return tuple(sorted(set(out)))
