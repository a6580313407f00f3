"""Path globs for rule options (`packages/core/src/session/**`, `**/snapshot.json`).

`**` crosses directories (and `**/` may match none); `*` and `?` stay inside
one path component. Shared by every family so the same option means the same
thing everywhere.
"""

from __future__ import annotations

import functools
import re
from typing import Iterable


@functools.lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns: Iterable[str]) -> bool:
    return any(compile_glob(p).match(path) for p in patterns)


def literal_prefix(pattern: str) -> str:
    """The directory part of a glob before its first wildcard (for listing a tree)."""
    head = re.split(r"[*?]", pattern, maxsplit=1)[0]
    return head if head.endswith("/") or "/" not in head else head.rsplit("/", 1)[0] + "/"
