"""Roles a piece of code runs in, and the idioms that establish them.

The table is data, not code, so a repository's `reviewer.toml` (read from the
base commit) can teach the model its own helpers without touching the walker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Mapping


class Role(str, Enum):
    """The region code runs in: a failure handler, a finalizer, a commit hook, a forked fiber, or none."""

    ORDINARY = "ordinary"
    FAILURE_HANDLER = "failure-handler"
    FINALIZER = "finalizer"
    COMMIT_HOOK = "commit-hook"
    FORKED = "forked"


# Argument selectors understood in RoleTable mappings.
ALL = "all"
LAST = "last"
VALUES = "values"


def _frozen(mapping: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class RoleTable:
    """Which callees/properties open a handler region, and over which arguments; and how far values are followed.

    Selectors: "all" (every argument), "last", a decimal index ("0", "1", ...),
    or "values" (the property values of an object-literal argument, as in
    `Effect.catchTags({ A: ..., B: ... })`). "last" is the default choice for
    Effect combinators because it is right for both the data-last
    (`Effect.catchAll(h)`) and the data-first (`Effect.catchAll(self, h)`) forms.
    """

    failure_handlers: Mapping[str, str]
    finalizers: Mapping[str, str]
    forks: frozenset[str]
    commit_hooks: frozenset[str]
    # `case "provider-error":` branches are failure paths too (DESIGN.md); kept
    # separate from callees because they are string labels, not names.
    failure_cases: frozenset[str] = field(default_factory=frozenset)
    # How many names, factory calls and returns value resolution follows before
    # it gives up (members.py); bounds the work on generated or cyclic code.
    max_hops: int = 6

    def __post_init__(self) -> None:
        # Callers may hand in plain dicts/sets (e.g. from TOML); freeze them so a
        # table shared between programs can never change under them.
        object.__setattr__(self, "failure_handlers", _frozen(self.failure_handlers))
        object.__setattr__(self, "finalizers", _frozen(self.finalizers))
        object.__setattr__(self, "forks", frozenset(self.forks))
        object.__setattr__(self, "commit_hooks", frozenset(self.commit_hooks))
        object.__setattr__(self, "failure_cases", frozenset(self.failure_cases))

    @property
    def combinators(self) -> frozenset[str]:
        """Every callee that opens a region: its callbacks are handlers, not bodies."""
        return frozenset(self.failure_handlers) | frozenset(self.finalizers) | self.forks

    def __hash__(self) -> int:
        return hash(
            (
                tuple(sorted(self.failure_handlers.items())),
                tuple(sorted(self.finalizers.items())),
                self.forks,
                self.commit_hooks,
                self.failure_cases,
                self.max_hops,
            )
        )


# The Effect idioms the model knows: the table a Program uses unless it is given another.
DEFAULT_ROLES = RoleTable(
    failure_handlers={
        "Effect.catchAll": LAST,
        "Effect.catchAllCause": LAST,
        "Effect.catchAllDefect": LAST,
        "Effect.catchTag": LAST,
        "Effect.catchTags": VALUES,
        "Effect.catchIf": LAST,
        "Effect.catchSome": LAST,
        "Effect.catchSomeCause": LAST,
        "Effect.catchSomeDefect": LAST,
        "Effect.catchDefect": LAST,
        "Effect.catchCause": LAST,
        "Effect.catch": LAST,
        "Effect.orElse": LAST,
        "Effect.orElseSucceed": LAST,
        "Effect.orElseFail": LAST,
        "Effect.retryOrElse": LAST,
        "Effect.onError": LAST,
        "Effect.tapError": LAST,
        "Effect.tapErrorCause": LAST,
        "Effect.tapErrorTag": LAST,
        "Effect.tapDefect": LAST,
    },
    finalizers={
        "Effect.onExit": LAST,
        "Effect.ensuring": LAST,
        "Effect.onInterrupt": LAST,
        "Effect.acquireRelease": "1",
        "Effect.acquireUseRelease": "2",
        "Effect.addFinalizer": LAST,
        "Scope.addFinalizer": LAST,
        "Scope.addFinalizerExit": LAST,
    },
    forks=frozenset(
        {
            "Effect.fork",
            "Effect.forkScoped",
            "Effect.forkDaemon",
            "Effect.forkIn",
            "Effect.forkChild",
            "Effect.forkAll",
            "Effect.forkWithErrorHandler",
            "FiberSet.run",
            "FiberMap.run",
            "FiberHandle.run",
        }
    ),
    commit_hooks=frozenset({"interruptedCommit", "terminalCommit", "commit"}),
    failure_cases=frozenset({"provider-error"}),
)
