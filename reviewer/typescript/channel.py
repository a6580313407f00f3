"""Effect's error channel: what each combinator does to the failures of the effect it is applied to.

One table, written from Effect's own documentation and source (v3 and v4 names,
`packages/effect/src/Effect.ts`), so a family asks "can this failure still
escape here?" instead of keeping its own list of catches. Names are the
library's API, import-resolved (`Effect.either` however `Effect` was imported),
never the reviewed code's vocabulary.

Treatments:

- `VALUE`: every failure becomes a success value (`either`, `exit`, `ignore`,
  `match`, …): nothing escapes and there is no handler to judge.
- `HANDLER`: failures go to a handler argument, which decides (`catchAll`,
  `catchTag`, `orElse`, `matchEffect`'s `onFailure`, `retryOrElse`'s fallback).
- `RACE`: the effect is one of several alternatives and the first *success*
  wins (`race`, `raceAll`, `firstSuccessOf`): its failure is masked whenever
  another alternative succeeds.
- `RETRY`: the effect runs again on failure (`retry`): the failure escapes
  only when the schedule ends, so a schedule without an end never lets it out.
- `COLLECT`: `Effect.all` and friends; it depends on the `mode` option
  (`"either"` turns each failure into a value, `"validate"` still fails).

Anything not in the table keeps the failure (`mapError`, `tapError`, `orDie`,
`timeout`, `raceFirst`, `sandbox`): it still escapes, perhaps changed.
"""

from __future__ import annotations

from enum import Enum
from types import MappingProxyType
from typing import Iterable, Mapping


class Treatment(Enum):
    VALUE = "value"
    HANDLER = "handler"
    RACE = "race"
    RETRY = "retry"
    COLLECT = "collect"


def _table(**groups: Iterable[str]) -> Mapping[str, Treatment]:
    out: dict[str, Treatment] = {}
    for treatment, names in groups.items():
        for name in names:
            out[f"Effect.{name}"] = Treatment[treatment.upper()]
    return MappingProxyType(out)


COMBINATORS: Mapping[str, Treatment] = _table(
    value=(
        # "converts an effect that may fail into an effect that always succeeds"
        "either", "result", "exit", "option", "merge",
        # success and failure swap places: the failure is the success now
        "flip",
        # "discards both the success and failure values"
        "ignore", "ignoreLogged", "ignoreCause",
        "orElseSucceed",
        # `onFailure` returns a plain value
        "match", "matchEager", "matchCause", "matchCauseEager",
        # "runs every effect and never fails"
        "partition",
        # "retries an effect until it succeeds, discarding failures"
        "eventually",
    ),
    handler=(
        "catchAll", "catchAllCause", "catchAllDefect", "catchSomeDefect", "catch", "catchCause",
        "catchDefect", "catchIf", "catchCauseIf", "catchFilter", "catchCauseFilter", "catchSome",
        "catchSomeCause", "catchEager", "catchTag", "catchTags", "catchReason", "catchReasons",
        "orElse", "retryOrElse", "repeatOrElse",
        "matchEffect", "matchCauseEffect", "matchCauseEffectEager",
    ),
    race=("race", "raceAll", "firstSuccessOf"),
    retry=("retry",),
    collect=("all", "allWith"),
)

# Effect constructors that never succeed; any other `Effect.*` value a handler returns
# (`Effect.void`, `Effect.logInfo(..)`, `Effect.sleep(..)`, `Effect.succeedNone`) is a success.
NEVER_SUCCEEDS = frozenset(
    f"Effect.{name}"
    for name in ("fail", "failSync", "failCause", "failCauseSync", "die", "dieSync", "dieMessage", "interrupt", "never")
)

# A value a `VALUE` combinator produced turns back into the failure through these.
REFAIL = ("Effect.flatten", "Effect.fromResult", "Effect.fromEither", "Effect.fromExit")



def treatment(name: str | None) -> Treatment | None:
    """What the combinator `name` (import-resolved, call marks stripped) does to failures; None: it keeps them."""
    return COMBINATORS.get(name or "")


def succeeds(name: str | None) -> bool:
    """`name` (an `Effect.*` constant or constructor, import-resolved) produces a success value."""
    return bool(name) and name.startswith("Effect.") and name not in NEVER_SUCCEEDS and name not in COMBINATORS


def collect_mode(mode: str | None) -> Treatment | None:
    """`Effect.all(.., { mode })`: "either" turns each failure into a value; anything else fails."""
    return Treatment.VALUE if mode == "either" else None
