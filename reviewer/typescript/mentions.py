"""What code mentions: the names, strings and `throw`s written in an expression.

Only tokens count: a word in a comment or a string is never mistaken for a
name, and a string's value is read from its literal. Small expressions are
read directly; large ones are answered from the module's token positions,
built once. `words_on_lines` and `error_scope` read tokens inside ERROR
regions too, where they no longer form expressions.
"""

from __future__ import annotations

import bisect
from typing import Callable, Iterator, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, _parts
from reviewer.typescript.module import Module

# Leaf tokens that are names (identifiers of values, properties and types).
_NAMES = frozenset(
    {
        "identifier",
        "property_identifier",
        "shorthand_property_identifier",
        "shorthand_property_identifier_pattern",
        "type_identifier",
        "private_property_identifier",
    }
)


def names_in(expr: Expr | Call) -> frozenset[str]:
    """Every identifier, property and type name written in `expr` (not in strings or comments)."""
    _, node = _parts(expr)
    return frozenset(sx.text(leaf) for leaf in _leaves(node) if leaf.type in _NAMES)


_WRITES = {"assignment_expression": "left", "augmented_assignment_expression": "left", "update_expression": "argument"}


def assignments_in(expr: Expr | Call) -> dict[str, tuple[Expr | None, ...]]:
    """The variables `expr` writes, each named by the root of its target (`state.given = true` writes
    `state`), with the value each plain `=` of the variable itself stores (None for `+=`, `++`, `--`
    and writes to a member)."""
    module, node = _parts(expr)
    out: dict[str, list[Expr | None]] = {}
    for current in _cursor_walk(node, lambda n: n.type not in _NOT_INTO):
        field = _WRITES.get(current.type)
        target = sx.field(current, field) if field is not None else None
        if target is None:
            continue
        plain = current.type == "assignment_expression" and target.type == "identifier"
        while target is not None and target.type in ("member_expression", "subscript_expression", "parenthesized_expression"):
            target = sx.field(target, "object") or (target.named_children[0] if target.named_children else None)
        if target is not None and target.type in ("identifier", "this"):
            right = sx.field(current, "right") if plain else None
            out.setdefault(sx.text(target), []).append(Expr(module, right) if right is not None else None)
    return {name: tuple(values) for name, values in out.items()}


def strings_in(expr: Expr | Call) -> frozenset[str]:
    """The values of the string literals (and substitution-free templates) in `expr`."""
    _, node = _parts(expr)
    return frozenset(value for value, _, _ in _strings(node))


def mentions_name(expr: Expr | Call, name: str) -> bool:
    """`name in names_in(expr)`, without reading all of a large expression each time.

    Rules ask this of every handler, and handlers nest (a catch inside a
    catch inside ...): above _DIRECT_BYTES of source the question goes to
    the module's token positions, built once, and costs a bisection.
    """
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return any(leaf.type in _NAMES and sx.text(leaf) == name for leaf in _leaves(node))
    return _in_range(_tokens(module).names.get(name, ()), node.start_byte, node.end_byte)


def mentions_string(expr: Expr | Call, value: str) -> bool:
    """`value in strings_in(expr)`, answered like `mentions_name` for large expressions."""
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return any(found == value for found, _, _ in _strings(node))
    spans = _tokens(module).strings.get(value, ())
    at = bisect.bisect_left(spans, (node.start_byte,))
    while at < len(spans) and spans[at][0] < node.end_byte:
        if spans[at][1] <= node.end_byte:
            return True
        at += 1
    return False


def throws(expr: Expr | Call) -> bool:
    """`expr` contains a `throw` statement (nested callbacks included; not inside a string or template)."""
    module, node = _parts(expr)
    if node.end_byte - node.start_byte <= _DIRECT_BYTES:
        return _throws_directly(node)
    start, end = node.start_byte, node.end_byte
    found = _tokens(module).throws
    at = bisect.bisect_left(found, (start,))
    while at < len(found) and found[at][0] < end:
        _, outer_start, outer_end = found[at]
        # the string/template the throw sits in (if any) must not be inside `expr`:
        # a walk down from `expr` would not have entered it
        if outer_start < 0 or outer_start < start or outer_end > end:
            return True
        at += 1
    return False


# Expressions up to this much source are read directly; larger ones are
# answered from the module's token positions (_Tokens).
_DIRECT_BYTES = 2048
_NOT_INTO = frozenset({"comment", "string", "regex"})


def _in_range(starts: Sequence[int], start: int, end: int) -> bool:
    at = bisect.bisect_left(starts, start)
    return at < len(starts) and starts[at] < end


def _cursor_walk(node: ts.Node, into: Callable[[ts.Node], bool]) -> Iterator[ts.Node]:
    """`node` and its descendants in document order, not below nodes `into` refuses.

    A tree cursor, not `.children`: py-tree-sitter keeps the children it
    hands out on the node asked, so walking from a node a rule keeps (a
    handler's Expr) would keep its whole subtree alive, once per handler.
    """
    cursor = node.walk()
    while True:
        current = cursor.node
        yield current
        if into(current) and cursor.goto_first_child():
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return


def _leaves(node: ts.Node) -> Iterator[ts.Node]:
    """Leaves under `node`, outside comments, strings and regexes (template substitutions are code)."""
    for current in _cursor_walk(node, lambda n: n.type not in _NOT_INTO):
        if current.child_count == 0 and current.type not in _NOT_INTO:
            yield current


def _strings(node: ts.Node) -> Iterator[tuple[str, int, int]]:
    """(value, start, end) of each string literal and substitution-free template under `node`."""
    for current in _cursor_walk(node, lambda n: n.type not in ("comment", "string")):
        if current.type in ("string", "template_string"):
            value = sx.string_value(current)
            if value is not None:
                yield value, current.start_byte, current.end_byte


def _throws_directly(node: ts.Node) -> bool:
    into = lambda n: n.type not in ("comment", "string", "template_string")  # noqa: E731
    return any(current.type == "throw_statement" for current in _cursor_walk(node, into))


class _Tokens:
    """Where a module writes each name, string value and `throw`, in document order.

    Built in one cursor walk the first time a large expression is asked
    about, then every question is a bisection over the expression's span.
    """

    def __init__(self, root: ts.Node) -> None:
        self.names: dict[str, list[int]] = {}
        self.strings: dict[str, list[tuple[int, int]]] = {}
        # (start of the throw, span of the string/template around it or (-1, -1))
        self.throws: list[tuple[int, int, int]] = []
        names, strings, throws = self.names, self.strings, self.throws
        cursor = root.walk()
        # innermost string/template span around the cursor, per level
        outer: list[tuple[int, int]] = [(-1, -1)]
        while True:
            current = cursor.node
            kind = current.type
            if current.child_count == 0:
                if kind in _NAMES:
                    names.setdefault(sx.text(current), []).append(current.start_byte)
            elif kind in ("string", "template_string"):
                value = sx.string_value(current)
                if value is not None:
                    strings.setdefault(value, []).append((current.start_byte, current.end_byte))
            elif kind == "throw_statement":
                throws.append((current.start_byte, *outer[-1]))
            if kind != "comment" and cursor.goto_first_child():
                outer.append((current.start_byte, current.end_byte) if kind in ("string", "template_string") else outer[-1])
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    return
                outer.pop()


def _tokens(module: Module) -> _Tokens:
    index = module.index
    found = index.__dict__.get("_tokens")
    if found is None:
        found = index.__dict__["_tokens"] = _Tokens(module.root)
    return found


def words_on_lines(module: Module, start: int, end: int) -> frozenset[str]:
    """Names and string fragments written on lines `start`..`end` (1-based), comments excluded.

    Works inside tree-sitter ERROR regions too, where the tokens are still
    tokens but no longer form expressions.
    """
    out: set[str] = set()
    stack = [module.root]
    while stack:
        node = stack.pop()
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        if last < start or first > end or node.type == "comment":
            continue
        if node.child_count == 0:
            if node.is_named and start <= first <= end:
                out.add(sx.text(node))
            continue
        stack.extend(node.children)
    return frozenset(out)


def error_scope(module: Module, start: int, end: int) -> tuple[int, int]:
    """Lines an ERROR region at `start`..`end` may have broken: every top-level
    statement it overlaps, and, for a region that is itself a top-level
    statement, the statements on either side of it.

    tree-sitter's recovery can move the tokens of a broken declaration anywhere
    inside it, so the words *on* a region's lines understate what it hides.
    """
    children = module.root.children
    lo, hi = start, end
    for i, node in enumerate(children):
        first, last = node.start_point[0] + 1, node.end_point[0] + 1
        if last < start or first > end:
            continue
        around = children[max(i - 1, 0) : i + 2] if node.is_error or node.is_missing else (node,)
        for n in around:
            lo, hi = min(lo, n.start_point[0] + 1), max(hi, n.end_point[0] + 1)
    return lo, hi
