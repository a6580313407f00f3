"""Values picked out of literals: `[f][0]` is `f`, `({ k: f }).k` is `f`.

Syntax only (no names, no files): what a member of an array or object literal
written in place stands for, so a callee or an alias spelled as a pick is read
as what it picks.
"""

from __future__ import annotations

import tree_sitter as ts

from reviewer.typescript import syntax as sx

_MAX_PICKS = 8  # `[[f][0]][0]`… deeper than this is left as written


def picked(node: ts.Node | None) -> ts.Node | None:
    """The value a member of a literal picks out (`[f][0]` is `f`; `({ k: f }).k` and `({ k: f })["k"]`
    are `f`), through nested picks; the node itself when it picks nothing out of a literal."""
    for _ in range(_MAX_PICKS):
        node = sx.strip(node)
        if node is None or node.type not in ("subscript_expression", "member_expression"):
            return node
        target = sx.strip(sx.field(node, "object"))
        if target is None:
            return node
        if target.type == "array" and node.type == "subscript_expression":
            index = sx.number_value(sx.field(node, "index"))
            elements = sx.named(target)
            if index is None or index != int(index) or not 0 <= index < len(elements) \
                    or any(e.type == "spread_element" for e in elements[: int(index) + 1]):
                return node
            node = elements[int(index)]
        elif target.type == "object":
            key = sx.text(sx.field(node, "property")) if node.type == "member_expression" \
                else sx.string_value(sx.field(node, "index"))
            values = [value for name, value in sx.object_members(target) if name == key]
            # a later spread may override the member: then what is picked is not known
            if key is None or not values or any(m.type == "spread_element" for m in sx.named(target)):
                return node
            node = values[-1]
        else:
            return node
    return node
