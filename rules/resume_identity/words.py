"""What the checks share: name segments and resume words, empty values, identity pins, the run's state."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Function, Program

from reviewer.rules import _effect as fx

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

_SEGMENT = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# Values a fallback returns in place of decoded state, compared without spaces.
EMPTY_VALUES = frozenset(
    {"[]", "{}", "undefined", "null", "newMap()", "newSet()", "Option.none()", "Effect.void", "Effect.succeedNone"}
)
SUCCEED = ("Effect.succeed", "Promise.resolve", "Option.some")


@dataclass
class Scan:
    ctx: "ReviewContext"
    program: Program
    opts: Options
    changed: tuple[str, ...] = ()  # the files judged (changed, or all named under --scope all): set by the template
    scope: tuple[str, ...] = ()  # those and the files they import (`prepare`)
    examined: dict[str, int] = field(default_factory=dict)  # construct kind -> how many were judged

    @property
    def paths(self) -> tuple[str, ...]:
        return self.changed

    def count(self, kind: str) -> None:
        self.examined[kind] = self.examined.get(kind, 0) + 1

    def judged(self, *items: Call | Expr | Function) -> bool:
        """The patch touched one of these (or the review judges everything)."""
        return self.ctx.widened or any(item.changed for item in items)


def segments(name: str) -> list[str]:
    """`latestRecovery` -> [latest, recovery]; `restore_session` -> [restore, session]."""
    return [s.lower() for s in _SEGMENT.findall(name)]


def stems(words: Iterable[str]) -> tuple[str, ...]:
    # `resume` should match `resumed` and `resuming`; `continue`, `continuation`.
    return tuple(w.lower()[:-1] if w.lower().endswith("e") else w.lower() for w in words if w)


def says_resume(name: str | None, resume_stems: tuple[str, ...]) -> bool:
    """A segment of the name starts with a resume stem (`recovery` for `recover`)."""
    if not name:
        return False
    return any(seg.startswith(stem) for seg in segments(fx.strip_call_marks(name)) for stem in resume_stems)


def is_empty(expr: Expr | None) -> bool:
    """`[]`, `{}`, `undefined`, `null`, `new Map()`, `Option.none()`, `Effect.succeed([])`, ..."""
    if expr is None:
        return True
    text = expr.normalized.replace(" ", "")
    if text in EMPTY_VALUES:
        return True
    call = expr.call
    if call is not None and fx.matches(call.callee, SUCCEED):
        args = call.args
        return not args or (len(args) == 1 and is_empty(args[0]))
    return False


_TIME_LIKE = re.compile(r"(^|[._])(time|ts)([_A-Z.]|$)|(_at|At|_on|On)$|(?i:expir|until|deadline)")


def recency(scan: "Scan", column: str | None) -> str | None:
    """The column (or property path) a newest-first order ranks rows by age with: a configured recency
    field, or any time-like column (`recorded_at`, `lockedAt`, `time_created`, `expires_at`)."""
    found = field_matches(column, scan.opts.recency_fields)
    if found is not None or not column:
        return found
    last = column.rsplit(".", 1)[-1]
    return last if _TIME_LIKE.search(last) else None


def field_matches(path: str | None, fields: Iterable[str]) -> str | None:
    """The configured field a member path ends with (`b.time.updated` ends with `time.updated`)."""
    if not path:
        return None
    for f in fields:
        if path == f or path.endswith("." + f):
            return f
    return None

