"""`_effect.matches` for a tuple of patterns: a set lookup per dotted tail of the name.

`matches(name, patterns)` asks whether `name` is a pattern or ends with one on a
segment boundary (`SessionEvent.Step.Interrupted` matches `Step.Interrupted`).
Rules ask it of every call they read, with the same option tuples each time;
scanning the tuple with `endswith` per pattern was a tenth of the Python calls
of a review of a deep handler. The tails of `a.b.c` after each `.` are `b.c`
and `c`, so `name.endswith("." + p)` for a pattern `p` is the same as one of
those tails being `p`.
"""

from __future__ import annotations

from functools import lru_cache


def tail_in(name: str, patterns: tuple[str, ...]) -> bool:
    """`any(name == p or name.endswith("." + p) for p in patterns if p)`."""
    wanted, longest = _wanted(patterns)
    if name in wanted:
        return True
    # From the right, and no tail longer than the longest pattern: a callee 64 links long
    # (`x.pipe().pipe()...`) is asked about its last few segments, not sliced at every one.
    at = len(name)
    while True:
        at = name.rfind(".", 0, at)
        if at < 0 or len(name) - at - 1 > longest:
            return False
        if name[at + 1:] in wanted:
            return True


@lru_cache(maxsize=256)
def _wanted(patterns: tuple[str, ...]) -> tuple[frozenset[str], int]:
    # Keyed by the tuple itself: a family's options are the same tuples all review long.
    wanted = frozenset(p for p in patterns if p)
    return wanted, max(map(len, wanted), default=0)
