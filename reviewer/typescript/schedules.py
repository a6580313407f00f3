"""What Effect's Duration and Schedule APIs mean, as the tables the constant folder (values.py) reads.

Written from Effect's documentation and source (`Duration.ts`, `Schedule.ts`):
duration units and constructors, schedules written as values, constructors
that wait a constant or a growing delay, and what each combinator does to the
pace of the schedule it is applied to, with its data-first arity.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

MS_PER_UNIT = {
    "nano": 1e-6,
    "micro": 1e-3,
    "milli": 1.0,
    "second": 1_000.0,
    "minute": 60_000.0,
    "hour": 3_600_000.0,
    "day": 86_400_000.0,
    "week": 604_800_000.0,
}
# Effect's DurationInput string form: "<number> <unit>[s]".
DURATION_STRING = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*(nano|micro|milli|second|minute|hour|day|week)s?\s*$")
# `Duration.seconds(n)` and friends; `Duration.millis` is the unit "milli".
DURATION_CONSTRUCTORS = {
    "nanos": "nano",
    "micros": "micro",
    "millis": "milli",
    "seconds": "second",
    "minutes": "minute",
    "hours": "hour",
    "days": "day",
    "weeks": "week",
}
# Calls whose duration is their first argument's.
DURATION_PASSTHROUGH = frozenset({"Duration.decode", "Duration.fromInput", "Duration.fromInputUnsafe"})


class Pace(NamedTuple):
    """How a schedule recurs: the longest delay between recurrences (ms) and whether it may stop."""

    delay: float
    stops: bool


# Schedules written as values.
SCHEDULE_VALUES = {
    "Schedule.forever": Pace(0.0, False),
    "Schedule.once": Pace(0.0, True),
    "Schedule.stop": Pace(0.0, True),
}
# Constructors whose one argument is the delay they wait, and whether they stop.
CONSTANT_DELAY = {
    "Schedule.spaced": False,
    "Schedule.fixed": False,
    "Schedule.windowed": False,
    "Schedule.fromDelay": True,
}
# Constructors whose delays grow from their first argument.
GROWING = frozenset({"Schedule.exponential", "Schedule.fibonacci", "Schedule.linear"})
# What a combinator does to the pace of the schedule it is applied to.
KEEP, MAY_STOP, NEVER_STOPS, JITTER, JITTER_WITH, UNION, INTERSECT, AND_THEN = range(8)
KEEPERS_1 = ("passthrough", "asVoid", "repetitions", "delays", "collectAllOutputs")
KEEPERS_2 = (
    "map", "mapEffect", "as", "tap", "tapInput", "tapOutput", "mapInput", "mapInputEffect",
    "mapInputContext", "onDecision", "ensuring", "provideContext",
)  # fmt: skip
FILTERS = (
    "upTo", "while", "check", "checkEffect", "whileInput", "whileInputEffect", "whileOutput",
    "whileOutputEffect", "untilInput", "untilInputEffect", "untilOutput", "untilOutputEffect",
)  # fmt: skip
# Each with its data-first arity: Effect's `dual` makes the call with one argument
# fewer the data-last operator that `.pipe(..)` applies.
COMBINATORS: dict[str, tuple[int, int]] = {
    **{f"Schedule.{name}": (KEEP, 1) for name in KEEPERS_1},
    **{f"Schedule.{name}": (KEEP, 2) for name in KEEPERS_2},
    "Schedule.provideService": (KEEP, 3),
    **{f"Schedule.{name}": (MAY_STOP, 2) for name in FILTERS},
    "Schedule.repeatForever": (NEVER_STOPS, 1),
    "Schedule.jittered": (JITTER, 1),
    "Schedule.jitteredWith": (JITTER_WITH, 2),
    "Schedule.union": (UNION, 2),
    "Schedule.either": (UNION, 2),
    **{f"Schedule.{name}": (INTERSECT, 2) for name in ("intersect", "zipLeft", "zipRight", "compose")},
    "Schedule.zipWith": (INTERSECT, 3),
    "Schedule.andThen": (AND_THEN, 2),
}
# Effect's default jitter bounds (`jitteredWith(self, { min: 0.8, max: 1.2 })`).
JITTER_MIN, JITTER_MAX = 0.8, 1.2


def parse_duration_string(value: str) -> float | None:
    if value.strip() == "Infinity":
        return math.inf
    match = DURATION_STRING.match(value)
    if match is None:
        return None
    return float(match.group(1)) * MS_PER_UNIT[match.group(2)]
