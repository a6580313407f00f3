"""Values picked out of literals: `[f][0]` is `f`, `({ k: f }).k` is `f`.

Syntax only (no names, no files): what a member of an array or object literal
written in place stands for, so a callee or an alias spelled as a pick is read
as what it picks.
"""

from __future__ import annotations

import tree_sitter as ts

from reviewer.typescript import syntax as sx

_MAX_PICKS = 8  # `[[f][0]][0]`… deeper than this is left as written


def picked(node: ts.Node | None, _depth: int = 0) -> ts.Node | None:
    """The value a member of a literal picks out (`[f][0]` is `f`; `({ k: f }).k` and `({ k: f })["k"]`
    are `f`), through nested picks; the node itself when it picks nothing out of a literal."""
    for _ in range(_MAX_PICKS):
        node = sx.strip(node)
        if node is None or node.type not in ("subscript_expression", "member_expression"):
            return node
        # `({ a: [f] }).a[0]`, `[{ go: f }][0].go`: the object is itself a pick
        target = picked(sx.field(node, "object"), _depth + 1) if _depth < _MAX_PICKS else sx.strip(sx.field(node, "object"))
        if target is None:
            return node
        if target.type == "array" and node.type == "subscript_expression":
            index = _index(sx.field(node, "index"))
            elements = _elements(target)
            if index is None or not 0 <= index < len(elements) \
                    or any(e is not None and e.type == "spread_element" for e in elements[: index]) or elements[index] is None:
                return node
            node = elements[index]
        elif target.type == "object":
            key = sx.text(sx.field(node, "property")) if node.type == "member_expression" \
                else sx.string_value(sx.field(node, "index"))
            values = [value for name, value in sx.object_members(target) if name == key]
            # a spread, or a computed key that is not a string, may set the member: what is picked is not known
            if key is None or not values or any(m.type == "spread_element" or _computed(m) for m in sx.named(target)):
                return node
            node = values[-1]
        else:
            return node
    return node


def destructured(pattern: ts.Node, value: ts.Node) -> list[tuple[str, ts.Node]]:
    """(local name, the value it takes) for each name a pattern binds out of a literal written in
    place: `const { go } = { go: f }` and `const [go] = [f]` bind `go` to `f`. Nothing when the
    literal may hold other members (a spread, a computed key), or for defaults and rest elements."""
    value = sx.strip(value)
    if value is None:
        return []
    if pattern.type == "object_pattern" and value.type == "object":
        if any(m.type == "spread_element" or _computed(m) for m in sx.named(value)):
            return []
        members = dict(sx.object_members(value))
        out = []
        for member in sx.named(pattern):
            if member.type == "shorthand_property_identifier_pattern":
                local, key = sx.text(member), sx.text(member)
            elif member.type == "pair_pattern" and (target := sx.field(member, "value")) is not None \
                    and target.type == "identifier":
                local, key = sx.text(target), sx.property_key(sx.field(member, "key"))
            else:
                continue
            if key is not None and key in members:
                out.append((local, members[key]))
        return out
    if pattern.type == "array_pattern" and value.type == "array":
        elements = _elements(value)
        out = []
        for position, target in enumerate(_elements(pattern)):
            if target is None or target.type != "identifier" or position >= len(elements):
                continue
            if any(e is not None and e.type == "spread_element" for e in elements[: position + 1]):
                break
            element = elements[position]
            if element is not None:
                out.append((sx.text(target), element))
        return out
    return []


def _index(node: ts.Node | None) -> int | None:
    """A literal array index: `0`, or `"1"` (a string that is an index)."""
    value = sx.number_value(node)
    if value is None:
        text = sx.string_value(node)
        value = int(text) if text is not None and text.isdigit() else None
    return int(value) if value is not None and value == int(value) else None


def _elements(array: ts.Node) -> list[ts.Node | None]:
    """An array literal's elements by index, None for a hole (`[, f]`), comments left out."""
    out: list[ts.Node | None] = []
    pending: ts.Node | None = None
    for child in array.children:
        if child.type == ",":
            out.append(pending)
            pending = None
        elif child.is_named and child.type != "comment":
            pending = child
    if pending is not None:
        out.append(pending)
    return out


def _computed(member: ts.Node) -> bool:
    key = sx.field(member, "key") if member.type == "pair" else None
    return key is not None and key.type == "computed_property_name" and sx.property_key(key) is None

