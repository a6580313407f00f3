"""Text from the patch or the repository, made safe to show a reader.

A terminal acts on escape sequences and a browser reorders text around
bidirectional controls ("Trojan Source"), so neither may reach a report raw:
each is written as a visible escape (`\\x1b`, `\\u202e`). Bytes that are not
UTF-8 (kept by git as surrogate escapes) are shown as `\\xNN`.
"""

from __future__ import annotations

import unicodedata

BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _visible(ch: str) -> str:
    return ch.encode("unicode_escape").decode("ascii")


def printable(text: str, keep_tabs: bool = False) -> str:
    """`text` with every control and bidirectional character escaped."""
    raw = text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if raw.isprintable():
        return raw
    return "".join(
        _visible(ch) if (unicodedata.category(ch) == "Cc" and not (keep_tabs and ch == "\t")) or ch in BIDI_CONTROLS
        else ch
        for ch in raw
    )


def code_line(line: str) -> str:
    """A quoted line of source: its line ending dropped, tabs kept, every other control escaped."""
    return printable(line[:-1] if line.endswith("\r") else line, keep_tabs=True)
