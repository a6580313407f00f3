"""Whether two nodes of one file sit on different sides of a branch (if/else, ternary, switch).

`Call.precedes` asks it: source order proves nothing between calls that
never run on the same path.
"""

from __future__ import annotations

from typing import Iterable, Protocol

import tree_sitter as ts

from reviewer.typescript import syntax as sx


class Tree(Protocol):
    """Parents of a module's nodes (ModuleIndex has them, without tree-sitter's upward walk)."""

    def parent(self, node: ts.Node) -> ts.Node | None: ...

    def ancestors(self, node: ts.Node) -> Iterable[ts.Node]: ...


def exclusive(index: Tree, a: ts.Node, b: ts.Node) -> bool:
    """`a` and `b` sit on different sides of one if/else, ternary or switch.

    Decided at their lowest common ancestor. It is found from `a`'s side as
    the first of `a` and its ancestors whose span holds `b`, so the walk
    costs the distance between the two, not their depth (a deep tree would
    make every `precedes` cost its depth); if spans mislead (zero-width error
    nodes), both full ancestor chains are compared as before.
    """
    a_child: ts.Node | None = None
    candidate: ts.Node | None = a
    while candidate is not None and not (candidate.start_byte <= b.start_byte and b.end_byte <= candidate.end_byte):
        a_child, candidate = candidate, index.parent(candidate)
    if candidate is not None:
        b_child = b
        for ancestor in index.ancestors(b):
            if ancestor.id == candidate.id:
                if a_child is None:
                    return False  # `a` holds `b`
                return branches_differ(ancestor, a_child, b_child)
            b_child = ancestor
            if ancestor.end_byte - ancestor.start_byte > candidate.end_byte - candidate.start_byte:
                break  # walked past it: spans misled
    a_chain = [a, *index.ancestors(a)]
    a_ids = {n.id: i for i, n in enumerate(a_chain)}
    b_child = b
    for ancestor in index.ancestors(b):
        if ancestor.id in a_ids:
            position = a_ids[ancestor.id]
            if position == 0:
                return False
            return branches_differ(ancestor, a_chain[position - 1], b_child)
        b_child = ancestor
    return False


def branches_differ(parent: ts.Node, a: ts.Node, b: ts.Node) -> bool:
    if parent.type == "if_statement":
        sides = {sx.field(parent, "consequence"), sx.field(parent, "alternative")}
        return a != b and a in sides and b in sides
    if parent.type == "ternary_expression":
        sides = {sx.field(parent, "consequence"), sx.field(parent, "alternative")}
        return a != b and a in sides and b in sides
    if parent.type == "switch_body":
        return a != b
    return False
