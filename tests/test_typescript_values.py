"""Durations and schedule periods folded from source (issue 12).

`Program.duration_ms` of a schedule is the longest delay it can put between two
recurrences: what a heartbeat must stay under. Each expected value was worked
out by hand from Effect's semantics (see the docstring of
reviewer/typescript/values.py); None is the answer whenever the source does not
decide it.
"""

from __future__ import annotations

import math
import textwrap
import time

import pytest

from reviewer.typescript import Program


def _ts(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


LEASE = "src/lease.ts"
SCHEDULES = "src/schedules.ts"

FILES: dict[str, str] = {
    LEASE: _ts(
        """
        import { Schedule } from "effect"
        export const LEASE_MS = 30 * 1000
        export const LEASE_S = LEASE_MS / 1000
        export const brisk = Schedule.spaced(LEASE_MS / 6).pipe(Schedule.jittered)
        export const wide = { max: 1.5 }
        """
    ),
    "src/index.ts": _ts(
        """
        export { LEASE_MS as LEASE, brisk as quick } from "./lease"
        """
    ),
    SCHEDULES: _ts(
        """
        import { Duration, Schedule, pipe } from "effect"
        import * as S from "effect/Schedule"
        import * as Fn from "effect/Function"
        import { pipe as flow } from "./flow"
        import { LEASE_MS, LEASE_S, brisk, wide } from "./lease"
        import { LEASE, quick } from "./index"

        const five = "5 seconds"
        const tight = { min: 0.9, "max": 1.1 }
        const spread = { ...wide }

        export const jittered = Schedule.spaced("5 seconds").pipe(Schedule.jittered)
        export const jitteredFirst = Schedule.jittered(Schedule.spaced(five))
        export const jitteredFn = pipe(Schedule.spaced("5 seconds"), Schedule.jittered)
        export const jitteredNs = Fn.pipe(S.spaced("5 seconds"), S.jittered)
        export const jitterWith = Schedule.jitteredWith(Schedule.spaced("10 seconds"), { min: 0.5, max: 1.5 })
        export const jitterWithLast = Schedule.spaced("10 seconds").pipe(Schedule.jitteredWith(tight))
        export const jitterWithDefault = Schedule.spaced("10 seconds").pipe(Schedule.jitteredWith({ min: 0.1 }))
        export const jitterWithImported = Schedule.spaced("10 seconds").pipe(Schedule.jitteredWith(wide))

        export const unionFirst = Schedule.union(Schedule.spaced("5 seconds"), Schedule.spaced("20 seconds"))
        export const unionLast = Schedule.spaced("20 seconds").pipe(Schedule.union(Schedule.spaced("5 seconds")))
        export const either = Schedule.either(Schedule.spaced("20 seconds"), Schedule.fixed("7 seconds"))
        export const unionStops = Schedule.union(Schedule.spaced("20 seconds"), Schedule.recurs(3))
        export const unionBothStop = Schedule.union(
          Schedule.spaced("20 seconds").pipe(Schedule.upTo("1 minute")),
          Schedule.spaced("5 seconds").pipe(Schedule.upTo("2 minutes")),
        )
        export const unionForever = Schedule.union(Schedule.spaced("20 seconds"), Schedule.forever)
        export const unionCapsBackoff = Schedule.union(Schedule.exponential("100 millis"), Schedule.spaced("1 second"))

        export const intersectFirst = Schedule.intersect(Schedule.spaced("5 seconds"), Schedule.spaced("20 seconds"))
        export const intersectRecurs = Schedule.spaced("5 seconds").pipe(Schedule.intersect(Schedule.recurs(10)))
        export const zipped = Schedule.zipWith(Schedule.spaced("3 seconds"), Schedule.spaced("4 seconds"), (a, b) => a)
        export const composed = Schedule.spaced("6 seconds").pipe(Schedule.compose(Schedule.recurs(3)))
        export const andThenStops = Schedule.andThen(Schedule.spaced("1 second").pipe(Schedule.upTo("5 seconds")), Schedule.spaced("9 seconds"))
        export const andThenNever = Schedule.spaced("2 seconds").pipe(Schedule.andThen(Schedule.spaced("9 seconds")))

        export const filtered = Schedule.spaced("5 seconds").pipe(
          Schedule.upTo("1 minute"),
          Schedule.whileOutput((n) => n < 10),
          Schedule.untilInput((e) => e === "done"),
          Schedule.tapOutput((n) => log(n)),
          Schedule.asVoid,
        )
        export const filterFirst = Schedule.whileInput(Schedule.spaced("5 seconds"), (e) => e !== "stop")

        export const exponential = Schedule.exponential("1 second")
        export const exponentialFlat = Schedule.exponential("2 seconds", 1)
        export const exponentialShrinks = Schedule.exponential(Duration.seconds(2), 0.5)
        export const exponentialZero = Schedule.exponential(0)
        export const fibonacci = Schedule.fibonacci("1 second")
        export const backoffCapped = Schedule.exponential("10 millis").pipe(Schedule.jittered, Schedule.either(Schedule.spaced("4 seconds")))
        export const backoffJittered = Schedule.exponential("10 millis").pipe(Schedule.jittered)

        export const forever = Schedule.forever
        export const once = Schedule.once
        export const recurs = Schedule.recurs(5)
        export const windowed = Schedule.windowed(Duration.minutes(1))
        export const fromDelays = Schedule.fromDelays("1 second", "3 seconds", "2 seconds")
        export const v4Max = Schedule.max([Schedule.spaced("1 second"), Schedule.spaced("3 seconds")])
        export const v4Min = Schedule.min([Schedule.spaced("1 second"), Schedule.spaced("3 seconds")])

        export const fromConstant = Schedule.spaced(Duration.millis(LEASE_MS / 3))
        export const fromTemplate = Schedule.spaced(`${LEASE_S / 4} seconds`)
        export const fromMath = Schedule.spaced(Duration.seconds(Math.floor(LEASE / 3000)))
        export const importedSchedule = brisk
        export const reexportedSchedule = quick.pipe(Schedule.upTo("1 hour"))
        export const boundTwice = importedSchedule

        export const addDelay = Schedule.spaced("5 seconds").pipe(Schedule.addDelay(() => "1 second"))
        export const modifyDelay = Schedule.modifyDelay(Schedule.spaced("5 seconds"), (_, d) => d)
        export const delayedFn = Schedule.delayed(Schedule.spaced("5 seconds"), (d) => Duration.times(d, 2))
        export const unknownStage = Schedule.spaced("5 seconds").pipe(Schedule.resetWhen((n) => n > 3))
        export const arrowStage = Schedule.spaced("5 seconds").pipe((s) => s)
        export const operatorOnly = Schedule.union(Schedule.spaced("5 seconds"))
        export const dataFirstAsStage = Schedule.spaced("5 seconds").pipe(Schedule.jittered(Schedule.forever))
        export const unknownBackoffBase = Schedule.exponential(config.base)
        export const unknownFactor = Schedule.exponential("1 second", config.factor)
        export const spreadJitter = Schedule.spaced("5 seconds").pipe(Schedule.jitteredWith(spread))
        export const unfoldedJitter = Schedule.spaced("5 seconds").pipe(Schedule.jitteredWith({ max: config.max }))
        export const projectPipe = flow(Schedule.spaced("5 seconds"), Schedule.jittered)
        export const unknownSide = Schedule.union(Schedule.spaced("5 seconds"), config.schedule)
        export const spreadMax = Schedule.max([...all])
        export const notSchedule = Schedule.spaced("5 seconds").pipe(Schedule.nonsense)
        export const effectPipe = Effect.succeed(1).pipe(Effect.delay("1 second"))
        """
    ),
}

EXPECTED: dict[str, float | None] = {
    "jittered": 6000.0,
    "jitteredFirst": 6000.0,
    "jitteredFn": 6000.0,
    "jitteredNs": 6000.0,
    "jitterWith": 15000.0,
    "jitterWithLast": 11000.0,
    "jitterWithDefault": 12000.0,
    "jitterWithImported": 15000.0,
    "unionFirst": 5000.0,
    "unionLast": 5000.0,
    "either": 7000.0,
    "unionStops": 20000.0,
    "unionBothStop": 20000.0,
    "unionForever": 0.0,
    "unionCapsBackoff": 1000.0,
    "intersectFirst": 20000.0,
    "intersectRecurs": 5000.0,
    "zipped": 4000.0,
    "composed": 6000.0,
    "andThenStops": 9000.0,
    "andThenNever": 2000.0,
    "filtered": 5000.0,
    "filterFirst": 5000.0,
    "exponential": math.inf,
    "exponentialFlat": 2000.0,
    "exponentialShrinks": 2000.0,
    "exponentialZero": 0.0,
    "fibonacci": math.inf,
    "backoffCapped": 4000.0,
    "backoffJittered": math.inf,
    "forever": 0.0,
    "once": 0.0,
    "recurs": 0.0,
    "windowed": 60000.0,
    "fromDelays": 3000.0,
    "v4Max": 3000.0,
    "v4Min": 1000.0,
    "fromConstant": 10000.0,
    "fromTemplate": 7500.0,
    "fromMath": 10000.0,
    "importedSchedule": 6000.0,
    "reexportedSchedule": 6000.0,
    "boundTwice": 6000.0,
    # undecidable: computed delays, unknown operators, values that do not fold
    "addDelay": None,
    "modifyDelay": None,
    "delayedFn": None,
    "unknownStage": None,
    "arrowStage": None,
    "operatorOnly": None,
    "dataFirstAsStage": None,
    "unknownBackoffBase": None,
    "unknownFactor": None,
    "spreadJitter": None,
    "unfoldedJitter": None,
    "projectPipe": None,
    "unknownSide": None,
    "spreadMax": None,
    "notSchedule": None,
    "effectPipe": None,
}


@pytest.fixture(scope="module")
def program() -> Program:
    return Program(FILES.get)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schedule_period(program: Program, name: str) -> None:
    module = program.module(SCHEDULES)
    assert module is not None
    assert program.duration_ms(module.constant(name)) == EXPECTED[name]


def test_every_binding_is_expected(program: Program) -> None:
    """A case added to the fixture source without an expectation is a test nobody wrote."""
    module = program.module(SCHEDULES)
    assert module is not None
    exported = {name for name in module.exported if module.constant(name) is not None}
    assert exported == set(EXPECTED)


HEARTBEAT = _ts(
    """
    import { Duration, Effect, Schedule } from "effect"
    import { LEASE_MS } from "./lease"

    const every = Schedule.spaced(Duration.millis(LEASE_MS / 4)).pipe(Schedule.jittered)

    export const beat = (renew: Effect.Effect<void>, period: Schedule.Schedule<unknown>) =>
      Effect.gen(function* () {
        const third = LEASE_MS / 3
        const local = Schedule.spaced(Duration.millis(third)).pipe(Schedule.intersect(Schedule.recurs(99)))
        yield* Effect.repeat(renew, every)
        yield* Effect.repeat(renew, local)
        yield* renew.pipe(Effect.repeat(Duration.millis(third)))
        yield* Effect.repeat(renew, `${LEASE_MS / 1000 / 5} seconds`)
        yield* Effect.repeat(renew, period)
        yield* Effect.repeat(renew, period.pipe(Schedule.jittered))
      })
    """
)


def test_schedules_bound_to_constants_inside_functions() -> None:
    program = Program({**FILES, "src/heartbeat.ts": HEARTBEAT}.get)
    module = program.module("src/heartbeat.ts")
    assert module is not None
    repeats = [c for c in module.calls() if c.callee == "Effect.repeat"]
    periods = [program.duration_ms(c.args[-1]) for c in repeats]
    # top-level const (7.5 s x 1.2); local const; local arithmetic; template; a parameter stays unknown
    assert periods == [9000.0, 10000.0, 10000.0, 6000.0, None, None]


def test_durations_that_are_not_schedules_are_unchanged(program: Program) -> None:
    files = {
        "d.ts": _ts(
            """
            import { Duration } from "effect"
            export const a = Duration.seconds(5)
            export const b = "2 minutes"
            export const c = Duration.infinity
            export const d = 1500000000n
            export const e = Duration.decode("3 seconds")
            export const f = 250
            """
        )
    }
    local = Program(files.get)
    module = local.module("d.ts")
    assert module is not None
    got = {name: local.duration_ms(module.constant(name)) for name in "abcdef"}
    assert got == {"a": 5000.0, "b": 120000.0, "c": math.inf, "d": 1500.0, "e": 3000.0, "f": 250.0}


def test_cycles_and_shared_bindings_stay_bounded() -> None:
    """A schedule built from itself is None; one built from the same binding eight times per level
    is answered once per level, not 8**levels times."""
    levels = 40
    lines = ['import { Schedule } from "effect"', 'export const s0 = Schedule.spaced("1 second")']
    lines += [f"export const s{i} = Schedule.max([{', '.join([f's{i - 1}'] * 8)}])" for i in range(1, levels)]
    lines += [
        "export const loop = Schedule.union(loop, Schedule.spaced('1 second'))",
        "export const ping = pong.pipe(Schedule.jittered)",
        "export const pong = ping.pipe(Schedule.jittered)",
        "export const opts = opts",
        "export const selfJitter = Schedule.spaced('1 second').pipe(Schedule.jitteredWith(opts))",
    ]
    program = Program({"c.ts": "\n".join(lines) + "\n"}.get)
    module = program.module("c.ts")
    assert module is not None
    started = time.monotonic()
    assert program.duration_ms(module.constant("s10")) == 1000.0  # within the depth bound
    assert program.duration_ms(module.constant(f"s{levels - 1}")) is None  # past it: never a guess
    assert program.duration_ms(module.constant("loop")) is None
    assert program.duration_ms(module.constant("ping")) is None
    assert program.duration_ms(module.constant("selfJitter")) is None
    assert time.monotonic() - started < 60  # a hang guard: an exponential walk would never end
