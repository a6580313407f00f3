"""Loops of statements: those that keep running, and those that walk a collection once.

A `while`/`do` loop, or a `for (;;)` without a condition, repeats its body
until something stops it: code in it runs on every tick, like code repeated by
a schedule. A `for (... of rows)` walks a collection once and is not one; it
is a per-element loop (`collection_loops`), the statement form of
`rows.forEach(..)`. Nested functions are not entered by `repeating_spans`: a
loop written inside a callback belongs to that callback.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class CollectionLoop:
    """`for (const row of rows) { .. }` (or `for await`): `iterated` is `rows` when it is a plain name."""

    iterated: str | None
    element: str | None  # the loop variable, when it is a plain name
    body: tuple[str, int, int]  # (path, start byte, end byte) of the body: what runs per element
    line: int
    end_line: int
    pattern: str = ""  # the loop variable as written (`row`, `{ run_id }`)


def collection_loops(fn: "Function") -> tuple[CollectionLoop, ...]:
    """The `for .. of` loops written in `fn`, nested functions (an `Effect.gen` body) included."""
    out: list[CollectionLoop] = []
    stack = [fn._node]
    while stack:
        node = stack.pop()
        if node.type == "for_in_statement" and any(c.type == "of" for c in node.children):
            right, left, body = sx.field(node, "right"), sx.field(node, "left"), sx.field(node, "body")
            if body is not None:
                line, end = node_lines(node)
                out.append(CollectionLoop(
                    sx.text(right) if right is not None and right.type == "identifier" else None,
                    sx.text(left) if left is not None and left.type == "identifier" else None,
                    (fn.path, body.start_byte, body.end_byte), line, end,
                    sx.text(left) if left is not None else "",
                ))
        stack.extend(reversed(node.named_children))
    return tuple(sorted(out, key=lambda loop: loop.body))
