"""Small, pure helpers over tree-sitter nodes. Nothing here leaves the package."""

from __future__ import annotations

import re
from typing import Iterator

import tree_sitter as ts

FUNCTION_TYPES = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "generator_function",
        "arrow_function",
        "method_definition",
    }
)

# Wrappers that do not change which value an expression denotes.
_TRANSPARENT = frozenset(
    {"parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression", "type_assertion"}
)

_WORD = re.compile(r"[A-Za-z0-9_$]")


def text(node: ts.Node) -> str:
    raw = node.text
    return raw.decode("utf-8", "replace") if raw is not None else ""


def strip(node: ts.Node | None) -> ts.Node | None:
    """The expression inside parentheses, `!`, `as T`, `satisfies T`, `<T>x`."""
    while node is not None and node.type in _TRANSPARENT:
        inner = next((c for c in node.named_children if c.type != "comment"), None)
        if inner is None:
            return node
        node = inner
    return node


def named(node: ts.Node) -> list[ts.Node]:
    return [c for c in node.named_children if c.type != "comment"]


def field(node: ts.Node | None, name: str) -> ts.Node | None:
    return node.child_by_field_name(name) if node is not None else None


def is_function(node: ts.Node | None) -> bool:
    return node is not None and node.type in FUNCTION_TYPES


def function_kind(node: ts.Node) -> str:
    if node.type == "arrow_function":
        return "arrow"
    if node.type == "method_definition":
        return "method"
    if node.type in ("generator_function", "generator_function_declaration"):
        return "generator"
    return "function"


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _unescape(seq: str) -> str:
    body = seq[1:]
    if not body:
        return ""
    if body[0] in _ESCAPES and len(body) == 1:
        return _ESCAPES[body[0]]
    if body[0] in "xu":
        digits = body[1:].strip("{}")
        try:
            return chr(int(digits, 16))
        except ValueError:
            return seq
    if body[0] in "\r\n":  # line continuation
        return ""
    return body


def string_value(node: ts.Node | None) -> str | None:
    """Value of a string literal or a template literal without substitutions."""
    node = strip(node)
    if node is None:
        return None
    if node.type == "string":
        parts: list[str] = []
        for child in node.named_children:
            if child.type == "string_fragment":
                parts.append(text(child))
            elif child.type == "escape_sequence":
                parts.append(_unescape(text(child)))
        return "".join(parts)
    if node.type == "template_string":
        if any(c.type == "template_substitution" for c in node.named_children):
            return None
        raw = text(node)
        return raw[1:-1] if len(raw) >= 2 else ""
    return None


def number_literal(raw: str) -> int | float | None:
    """A JavaScript numeric literal (`30_000`, `0x10`, `1e3`, `10n`)."""
    raw = raw.replace("_", "")
    if raw.endswith("n"):
        raw = raw[:-1]
    try:
        lowered = raw.lower()
        if lowered.startswith("0x"):
            return int(lowered, 16)
        if lowered.startswith("0o"):
            return int(lowered, 8)
        if lowered.startswith("0b"):
            return int(lowered, 2)
        if re.fullmatch(r"\d+", raw):
            return int(raw)
        return float(raw)
    except ValueError:
        return None


def property_key(node: ts.Node | None) -> str | None:
    """Name of an object/class key: `a`, `"a"`, `1`, `["a"]`."""
    if node is None:
        return None
    if node.type in ("property_identifier", "identifier", "private_property_identifier", "shorthand_property_identifier"):
        return text(node)
    if node.type == "string":
        return string_value(node)
    if node.type == "number":
        return text(node)
    if node.type == "computed_property_name":
        inner = named(node)
        return string_value(inner[0]) if inner else None
    return None


def member_segments(node: ts.Node | None) -> tuple[ts.Node | None, list[str]] | None:
    """Split `root.a.b["c"]` into (root node, ["a", "b", "c"]); None if not a path.

    The root is whatever is left of the first `.`: an identifier, `this`, a
    call (for fluent chains) or another expression; callers decide.
    """
    node = strip(node)
    props: list[str] = []
    while node is not None:
        if node.type == "member_expression":
            prop = field(node, "property")
            if prop is None:
                return None
            props.append(text(prop))
            node = strip(field(node, "object"))
        elif node.type == "subscript_expression":
            key = string_value(field(node, "index"))
            if key is None:
                return None
            props.append(key)
            node = strip(field(node, "object"))
        else:
            break
    props.reverse()
    return node, props


def dotted_path(node: ts.Node | None) -> str | None:
    """`A.b.c` for identifier-rooted member paths (and `this.x`), else None."""
    split = member_segments(node)
    if split is None:
        return None
    root, props = split
    if root is None or root.type not in ("identifier", "this", "shorthand_property_identifier"):
        return None
    return ".".join([text(root), *props])


def normalized(node: ts.Node) -> str:
    """Source of `node` with comments dropped and whitespace collapsed.

    Tokens are re-joined with a single space only where two word characters
    would otherwise fuse, so reformatting never changes the result; string
    and template literals are kept verbatim since their spaces are content.
    """
    out: list[str] = []
    for token in _tokens(node):
        if out and _WORD.match(out[-1][-1]) and _WORD.match(token[0]):
            out.append(" ")
        out.append(token)
    return "".join(out)


def compact(node: ts.Node) -> str:
    """`normalized`, with a fast path for the common one-line, comment-free case."""
    raw = text(node)
    if not any(ch in raw for ch in " \t\r\n/"):
        return raw
    return normalized(node)


def _tokens(node: ts.Node) -> Iterator[str]:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "comment":
            continue
        if current.child_count == 0 or current.type in ("string", "template_string", "regex"):
            token = text(current)
            if token:
                yield token
            continue
        stack.extend(reversed(current.children))


def ancestors(node: ts.Node) -> Iterator[ts.Node]:
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def contains(outer: ts.Node, inner: ts.Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte
