"""Small, pure helpers over tree-sitter nodes. Nothing here leaves the package."""

from __future__ import annotations

import bisect
import re
from array import array
from typing import Iterable, Iterator

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
    {"parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression", "type_assertion",
     "sequence_expression"}
)

# Characters that fuse into one word when two tokens touch: `in` on a set is
# several times cheaper than a regex match, and seams are checked per token.
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_$")


def text(node: ts.Node) -> str:
    """The node's source; an identifier's with its escapes decoded (`cl\\u0065ar` is `clear`)."""
    raw = node.text
    if raw is None:
        return ""
    decoded = raw.decode("utf-8", "replace")
    if b"\\" in raw and node.type in IDENTIFIER_TYPES:
        return identifier_name(decoded)
    return decoded


# Nodes whose text is a name: JavaScript lets a name be spelled with escapes
# (`\\u0063lear`, `\\u{63}lear`), and the name is the decoded one.
IDENTIFIER_TYPES = frozenset({
    "identifier", "property_identifier", "shorthand_property_identifier", "shorthand_property_identifier_pattern",
    "type_identifier", "private_property_identifier", "statement_identifier",
})
_ESCAPE = re.compile(r"\\u(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4}))")


def identifier_name(written: str) -> str:
    """A name as the language reads it: each `\\uXXXX` / `\\u{X…}` escape decoded (an invalid one kept)."""
    def one(m: re.Match[str]) -> str:
        value = int(m.group(1) or m.group(2), 16)
        return chr(value) if value <= 0x10FFFF else m.group(0)

    return _ESCAPE.sub(one, written)


def is_const(declaration: ts.Node | None) -> bool:
    """Whether a declaration is `const` (a `var` declaration has no `kind` field; `let` may change)."""
    if declaration is None or declaration.type != "lexical_declaration":
        return False
    kind = declaration.child_by_field_name("kind")
    return kind is not None and kind.type == "const"


def strip(node: ts.Node | None) -> ts.Node | None:
    """The expression inside parentheses, `!`, `as T`, `satisfies T`, `<T>x`, and the value of a
    comma expression, its last operand (`(0, X.clear)` is `X.clear`)."""
    while node is not None and node.type in _TRANSPARENT:
        if node.type == "sequence_expression":
            inner = next((c for c in reversed(node.named_children) if c.type != "comment"), None)
        else:
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


# Member paths longer than this are not paths: asked for every member read
# of a hostile `a.b.b.b...` (one per link), longer walks would be quadratic.
MAX_SEGMENTS = 256


def member_segments(node: ts.Node | None) -> tuple[ts.Node | None, list[str]] | None:
    """Split `root.a.b["c"]` into (root node, ["a", "b", "c"]); None if not a path.

    The root is whatever is left of the first `.`: an identifier, `this`, a
    call (for fluent chains) or another expression; callers decide. More than
    MAX_SEGMENTS segments is no path either.
    """
    node = strip(node)
    props: list[str] = []
    while node is not None:
        if len(props) >= MAX_SEGMENTS:
            return None
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


def normalized(node: ts.Node, forms: "NormalForms | None" = None) -> str:
    """Source of `node` with comments dropped and whitespace collapsed.

    Tokens are re-joined with a single space only where two word characters
    would otherwise fuse, so reformatting never changes the result; string
    and template literals are kept verbatim since their spaces are content.
    With the tree's `forms` the answer is a slice (see NormalForms).
    """
    if forms is not None:
        return forms.of(node)
    return _join(_tokens(node))


def compact(node: ts.Node, forms: "NormalForms | None" = None) -> str:
    """`normalized`, with a fast path for the common one-line, comment-free case."""
    raw = text(node)
    if not any(ch in raw for ch in " \t\r\n/"):
        return raw
    return normalized(node, forms)


def bounded_normal(node: ts.Node, forms: "NormalForms | None", limit: int) -> str:
    """`compact(node)` when it is at most `limit` characters, else its head and tail around `…`.

    For names and messages that must not grow with the input: a node's
    normal form is never longer than its source, so small nodes take the
    exact path; large ones are measured on the file's joined tokens.
    """
    if node.end_byte - node.start_byte <= limit:
        return compact(node, forms)
    if forms is not None:
        return forms.elided(node, limit)
    return _elide(_join(_tokens(node)), limit)


def _elide(full: str, limit: int) -> str:
    if len(full) <= limit:
        return full
    head = limit // 2
    return full[:head] + "…" + full[len(full) - (limit - head - 1) :]


_VERBATIM = frozenset({"string", "template_string", "regex"})


def _join(tokens: Iterable[str]) -> str:
    out: list[str] = []
    word = _WORD_CHARS
    last = ""
    for token in tokens:
        if last in word and token[0] in word:
            out.append(" ")
        out.append(token)
        last = token[-1]
    return "".join(out)


def _tokens(node: ts.Node) -> Iterator[str]:
    for _, _, token in _spans(node):
        yield token


def _spans(node: ts.Node, ascii_source: str | None = None) -> Iterator[tuple[int, int, str]]:
    """(start byte, end byte, text) of each non-empty token under `node`, in order.

    A cursor walk: about twice as fast as materialising every node's
    children. `ascii_source` is the whole file when it is pure ASCII, so a
    token is a slice (byte and character offsets agree) rather than a copy
    and a decode per token.
    """
    cursor = node.walk()
    while True:
        current = cursor.node
        kind = current.type
        if kind != "comment":
            if current.child_count == 0 or kind in _VERBATIM:
                start, end = current.start_byte, current.end_byte
                if ascii_source is None:
                    token = text(current)  # escapes in a name already decoded
                else:
                    token = ascii_source[start:end]
                    if "\\" in token and kind in IDENTIFIER_TYPES:
                        token = identifier_name(token)
                if token:
                    yield start, end, token
            elif cursor.goto_first_child():
                continue
        # Next in document order: a sibling, else the nearest ancestor's sibling.
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return


class NormalForms:
    """`normalized` for any node of one tree, in amortised linear time overall.

    Rules normalise every call of a file, and calls nest (`Effect.fn(..)(..)`,
    fluent `db.select().from().where()` chains): walking each call's subtree
    is quadratic in the nesting. So once the subtrees walked add up to a
    quarter of the file's size, the whole file is tokenised and joined once,
    and from then on a node's normal form is a slice: the join rule only
    looks at the two characters either side of a seam, so the normal form of
    a node is exactly the joined file from its first token to its last. A
    node that splits a token (a fragment inside a string, an expression
    inside a template literal) is always walked on its own.
    """

    def __init__(self, root: ts.Node) -> None:
        self._root = root
        # A quarter of the file: rules that normalise every call (sorting by
        # normal form) then pay at most 1.25 tokenisations of the file, and a
        # file asked for a few callee names is never tokenised whole.
        self._budget = (root.end_byte - root.start_byte) // 4
        self._joined: str | None = None

    def of(self, node: ts.Node) -> str:
        if self._joined is None:
            size = node.end_byte - node.start_byte
            if size <= self._budget:
                self._budget -= size
                return _join(_tokens(node))
            self._build()
        return self._slice(node)

    def _build(self) -> None:
        # Four machine-word arrays, not lists of ints: kept for every changed
        # file of a review, so 3,000 files must not cost a gigabyte.
        starts, ends = array("q"), array("q")  # byte range of each token
        joined_starts, joined_ends = array("q"), array("q")  # its place in the joined text
        pieces: list[str] = []
        word = _WORD_CHARS
        size = 0
        last = ""
        raw = self._root.text or b""
        ascii_source = raw.decode("ascii") if raw.isascii() and self._root.start_byte == 0 else None
        for start, end, token in _spans(self._root, ascii_source):
            if last in word and token[0] in word:
                pieces.append(" ")
                size += 1
            starts.append(start)
            ends.append(end)
            joined_starts.append(size)
            pieces.append(token)
            size += len(token)
            joined_ends.append(size)
            last = token[-1]
        self._starts, self._ends, self._joined_starts, self._joined_ends = starts, ends, joined_starts, joined_ends
        self._joined = "".join(pieces)

    def _bounds(self, node: ts.Node) -> tuple[int, int] | None:
        """The node's normal form as a range of the joined text; None when it splits a token."""
        start, end = node.start_byte, node.end_byte
        starts, ends = self._starts, self._ends
        first = bisect.bisect_left(starts, start)
        stop = bisect.bisect_left(starts, end)  # tokens starting inside the node
        if (first > 0 and ends[first - 1] > start) or (stop > first and ends[stop - 1] > end):
            return None
        if stop <= first:
            return (0, 0)
        return self._joined_starts[first], self._joined_ends[stop - 1]

    def _slice(self, node: ts.Node) -> str:
        bounds = self._bounds(node)
        if bounds is None:
            return _join(_tokens(node))
        assert self._joined is not None
        return self._joined[bounds[0] : bounds[1]]

    def elided(self, node: ts.Node, limit: int) -> str:
        """`of(node)`, cut to `limit` characters around `…` (head and tail) when longer.

        Only the kept characters are copied: asked for every link of a long
        chain this stays linear, where the whole normal form would not.
        """
        if self._joined is None:
            self._build()
        assert self._joined is not None
        bounds = self._bounds(node)
        if bounds is None:
            return _elide(_join(_tokens(node)), limit)
        start, end = bounds
        if end - start <= limit:
            return self._joined[start:end]
        head = limit // 2
        return self._joined[start : start + head] + "…" + self._joined[end - (limit - head - 1) : end]


def ancestors(node: ts.Node) -> Iterator[ts.Node]:
    """Ancestors by tree-sitter's `.parent`: each step costs the node's depth.

    Inside the package, walks that may meet deep trees go through the module
    index instead (`ModuleIndex.ancestors`, `.parent`, `.nearest`).
    """
    parent = node.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def contains(outer: ts.Node, inner: ts.Node) -> bool:
    return outer.start_byte <= inner.start_byte and inner.end_byte <= outer.end_byte


def number_value(node: ts.Node | None) -> int | float | None:
    """The value of a numeric literal or a negated one (through parentheses and casts); no folding."""
    node = strip(node)
    if node is None:
        return None
    if node.type == "number":
        return number_literal(text(node))
    if node.type == "unary_expression" and text(field(node, "operator")) == "-":
        inner = strip(field(node, "argument"))
        if inner is not None and inner.type == "number":
            value = number_literal(text(inner))
            return -value if value is not None else None
    return None


def object_members(node: ts.Node | None) -> list[tuple[str, ts.Node]]:
    """(key, value node) of each member of an object literal, in order: pairs, methods (the method
    itself), shorthands (the identifier). Spreads and computed keys that are not strings are left out."""
    node = strip(node)
    if node is None or node.type != "object":
        return []
    out: list[tuple[str, ts.Node]] = []
    for member in named(node):
        if member.type == "pair":
            key = property_key(field(member, "key"))
            value = field(member, "value")
            if key is not None and value is not None:
                out.append((key, value))
        elif member.type == "method_definition":
            key = property_key(field(member, "name"))
            if key is not None:
                out.append((key, member))
        elif member.type == "shorthand_property_identifier":
            out.append((text(member), member))
    return out
