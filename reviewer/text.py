"""Words the reports, bases and summaries share, spelt one way everywhere."""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 scan`, `2 scans`, `2 entries`, `2 queries`; `many` when the plural is irregular."""
    if n == 1:
        return f"{n} {word}"
    if many is None:
        many = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
    return f"{n} {many}"
