"""Source text as its author wrote it, folded onto one line: what a message quotes.

`syntax.normalized` is for matching and finding ids: it drops every space it
can, so `size > 100 ? 100 : size || 1` reads `size>100?100:size||1`, which is
right for comparing two spellings and wrong for showing one. Here each run
of whitespace becomes one space, line breaks included, except a line break
just inside a bracket or before a `.` link, which goes (`foo(\\n  a,\\n)`
reads `foo(a,)`, `db\\n  .select()` reads `db.select()`). String, template and
regex literals keep their spaces, which are content, and fold only their
line breaks; block comments stay as written; line comments go, since folded
onto one line a `// note` would swallow the code after it.

Quotes never grow with the input: past `WRITTEN_LIMIT` characters the text
is cut to its head and tail around `…`, and for a long node only a window at
each end is read, so a message about a megabyte-long expression costs what
one about a short one does.
"""

from __future__ import annotations

import re
from typing import Callable

import tree_sitter as ts

# Characters of a quote, `…` included: long enough for a condition or a
# `.limit(..)` argument, short enough for a title or a related-location note.
WRITTEN_LIMIT = 120

# Bytes of source read per character kept, at each end of a long node:
# indentation rarely shrinks code by more than this when folded.
_BYTES_PER_CHAR = 8

_LITERALS = frozenset({"string", "template_string", "regex"})
_SPACE = re.compile(r"\s+")
# Every character `str.splitlines` breaks at, so a quote is one line wherever it is shown.
_BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK = re.compile(f"[{_BREAKS}]")
# A whitespace run in a literal or comment that holds a line break.
_FOLDED_BREAK = re.compile(f"[^\\S{_BREAKS}]*[{_BREAKS}][\\s{_BREAKS}]*")
_OPENERS = frozenset("([")
_CLOSERS = frozenset(")]")


def written(node: ts.Node, limit: int = WRITTEN_LIMIT) -> str:
    """The node's source folded onto one line (see the module docstring), at most `limit` characters."""
    start, end = node.start_byte, node.end_byte
    window = max(limit, 2) * _BYTES_PER_CHAR
    if end - start <= 2 * window:
        return _clip(_fold(node, start, end), limit)
    head_keep = limit // 2
    tail_keep = limit - head_keep - 1
    head = _fold(node, start, start + window)[:head_keep]
    tail = _fold(node, end - window, end)
    tail = tail[len(tail) - tail_keep :] if tail_keep > 0 else ""
    return head.rstrip() + "…" + tail.lstrip()


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit // 2
    tail = limit - head - 1
    return text[:head].rstrip() + "…" + (text[len(text) - tail :].lstrip() if tail > 0 else "")


def _fold(node: ts.Node, lo: int, hi: int) -> str:
    """The source of `node` between bytes `lo` and `hi`, folded onto one line."""
    raw = node.text or b""
    base = node.start_byte
    lo, hi = _char_bounds(raw, lo - base, hi - base)
    pieces: list[tuple[bool, str]] = []  # (is code, text)
    at = lo
    for mark_start, mark_end, kind in _marks(node, base + lo, base + hi):
        mark_start, mark_end = max(mark_start - base, lo), min(mark_end - base, hi)
        if mark_start > at:
            pieces.append((True, raw[at:mark_start].decode("utf-8", "replace")))
        body = raw[mark_start:mark_end].decode("utf-8", "replace")
        if kind == "comment" and body.startswith("//"):
            pieces.append((True, "\n"))  # a line comment reads as the line break it ends with
        else:
            pieces.append((False, _FOLDED_BREAK.sub(" ", body)))
        at = max(at, mark_end)
    if hi > at:
        pieces.append((True, raw[at:hi].decode("utf-8", "replace")))
    return _join(pieces).strip()


def _char_bounds(raw: bytes, lo: int, hi: int) -> tuple[int, int]:
    """`lo`/`hi` moved onto UTF-8 character boundaries (a window must not split a character)."""
    lo, hi = max(lo, 0), min(hi, len(raw))
    while lo < hi and 0x80 <= raw[lo] < 0xC0:
        lo += 1
    while hi > lo and hi < len(raw) and 0x80 <= raw[hi] < 0xC0:
        hi -= 1
    return lo, hi


def _marks(node: ts.Node, lo: int, hi: int) -> list[tuple[int, int, str]]:
    """(start, end, kind) of the literals and comments under `node` that overlap bytes [lo, hi), in order.

    A cursor walk that jumps to the first child reaching `lo` and stops at the
    first node starting at `hi`: a window at the end of a long node costs its
    depth, not its size.
    """
    out: list[tuple[int, int, str]] = []
    cursor = node.walk()
    while True:
        current = cursor.node
        if current.start_byte >= hi:
            return out  # document order: everything after starts later still
        descended = False
        if current.end_byte > lo:
            kind = current.type
            if kind in _LITERALS or kind == "comment":
                out.append((current.start_byte, current.end_byte, kind))
            elif current.child_count and cursor.goto_first_child_for_byte(lo) is not None:
                descended = True
        if descended:
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent() or cursor.node == node:
                return out


def _join(pieces: list[tuple[bool, str]]) -> str:
    """Code pieces with their whitespace folded, literal pieces as they are."""
    merged: list[tuple[bool, str]] = []
    for is_code, text in pieces:
        if is_code and merged and merged[-1][0]:
            merged[-1] = (True, merged[-1][1] + text)
        elif text:
            merged.append((is_code, text))
    out: list[str] = []
    for index, (is_code, text) in enumerate(merged):
        if not is_code:
            out.append(text)
            continue
        following = merged[index + 1][1] if index + 1 < len(merged) else ""
        position = 0
        for run in _SPACE.finditer(text):
            out.append(text[position : run.start()])
            before = _last_char(out)
            after = text[run.end() : run.end() + 2] or following[:2]
            out.append(_gap(run.group(), before, after))
            position = run.end()
        out.append(text[position:])
    return "".join(out)


def _last_char(out: list[str]) -> str:
    for text in reversed(out):
        if text:
            return text[-1]
    return ""


def _gap(space: str, before: str, after: str) -> str:
    """What a whitespace run between `before` and `after` becomes: one space, or nothing for
    a line break just inside a bracket or before a `.`/`?.` link (not a `...` spread)."""
    if not before:
        return ""
    if _BREAK.search(space) and (
        before in _OPENERS
        or after[:1] in _CLOSERS
        or (after[:1] == "." and after[1:2] != ".")
        or after == "?."
    ):
        return ""
    return " "


# Strings (normal forms, source text) up to this many characters are kept on
# the value once computed; longer ones are sliced again when asked, so that
# asking for every link of a long chain does not keep a copy of it per link.
_KEEP_CHARS = 256


def small_cached(owner: object, slot: str, compute: Callable[[], str]) -> str:
    """`compute()`, kept on `owner` under `slot` when short (see _KEEP_CHARS)."""
    cache = owner.__dict__
    value = cache.get(slot)
    if value is None:
        value = compute()
        if len(value) <= _KEEP_CHARS:
            cache[slot] = value
    return value
