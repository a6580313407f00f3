"""cleanup-propagation's readers and judgements on small Effect snippets, and the family's
status and summary on real repositories.

Every expected value was worked out by hand from the snippet text; lines are 1-based.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.engine.api import Options
from reviewer.typescript import Program

from reviewer.rules.cleanup_propagation.order import Steps
from reviewer.rules.cleanup_propagation.regions import Targets, cleanups, finalizes, targets_in
from reviewer.rules.cleanup_propagation.spec import OPTIONS
from reviewer.rules.cleanup_propagation.swallow import swallowing
from reviewer.rules import _effect as fx

OPTS = Options(OPTIONS, {})


def _ts(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


def _call(program: Program, path: str, callee: str, line: int):
    return next(c for c in program.module(path).calls() if c.callee == callee and c.line == line)


STEPS = {
    "s.ts": _ts(
        """
        import { Effect } from "effect"
        const a = Effect.gen(function* () {
          yield* Effect.sync(() => 1)
          yield* Effect.exit(db.select().from(T).get())
          yield* db.select().from(T).get().pipe(Effect.orDie)
          yield* db.select().from(T).get().pipe(Effect.catchAll(() => Effect.void))
          yield* db.select().from(T).get().pipe(Effect.catchAll((e) => Effect.die(e)))
          db.select().from(T).get()
        })
        """
    )
}


def test_fallible_steps_are_yielded_effects_nothing_captures() -> None:
    program = Program(STEPS.get)
    steps = Steps(program, OPTS)
    sync = _call(program, "s.ts", "Effect.sync", 3)
    captured = _call(program, "s.ts", "Effect.exit", 4)
    or_die = _call(program, "s.ts", "db.select", 5)
    swallowed = _call(program, "s.ts", "db.select", 6)
    refails = _call(program, "s.ts", "db.select", 7)
    built_only = _call(program, "s.ts", "db.select", 8)
    # orDie still fails (a defect ends the cleanup too); a catch that dies again does not capture.
    assert [steps.fallible(c) for c in (sync, captured, or_die, swallowed, refails)] == [False, False, True, False, True]
    # A chain that is built but not yielded is not a step of the cleanup.
    assert steps.awaited(built_only) is None
    assert steps.awaited(or_die) is not None
    # Only a chain's head is a step: `.from(..)` is part of the same one.
    assert steps.awaited(_call(program, "s.ts", "db.select().from", 5)) is None


CLEANUPS = {
    "c.ts": _ts(
        """
        import { Effect } from "effect"
        import { SessionEvent } from "./event"
        const settled = (db: any, claim: any) => (exit: unknown) =>
          Effect.gen(function* () {
            yield* SessionExecutionClaim.clear(db, claim)
          })
        const finish = (db: any, claim: any) => SessionExecutionClaim.update(db, claim, { phase: "safe" })
        export const a = run.pipe(Effect.onExit(settled(db, claim)))
        export const b = run.pipe(Effect.ensuring(finish(db, claim)))
        export const c = run.pipe(Effect.ensuring(fs.remove(tmp)))
        export const d = run.pipe(Effect.ensuring(events.publish(SessionEvent.Execution.Failed, { id })))
        export const hooks = { settled: (key: string) => Effect.sync(() => settle(key)) }
        """
    )
}


def test_cleanups_are_finalizer_arguments_and_hooks_and_finalize_by_name_event_or_reach() -> None:
    program = Program(CLEANUPS.get)
    targets = Targets(program, OPTS)
    found = cleanups(program, ["c.ts"], OPTS.cleanup_hooks)
    assert [(c.how, c.arg.line) for c in found] == [
        ("Effect.onExit", 8),
        ("Effect.ensuring", 9),
        ("Effect.ensuring", 10),
        ("Effect.ensuring", 11),
        ("settled", 12),
    ]
    # The curried handler's returned function is its code: the clear inside it is found.
    assert [t.callee for t in targets_in(targets, found[0])] == ["SessionExecutionClaim.clear"]
    # A helper call reaches its update; a temp-file removal finalizes nothing; a terminal event does.
    assert [finalizes(targets, c) for c in found] == [True, True, False, True, True]
    assert targets.kind(_call(program, "c.ts", "settle", 12)) == "successor"


def test_swallowing_stages_need_a_handler_that_succeeds_without_failing() -> None:
    source = {
        "w.ts": _ts(
            """
            import { Effect } from "effect"
            const a = x.pipe(Effect.ignore)
            const b = x.pipe(Effect.catchAll(() => Effect.void))
            const c = x.pipe(Effect.catchAllCause((cause) => Effect.logError("failed", cause)))
            const d = x.pipe(Effect.catchAll((e) => Effect.fail(new Wrapped(e))))
            const e = x.pipe(Effect.orDie)
            """
        )
    }
    program = Program(source.get)
    verdicts = []
    for line in range(2, 7):
        pipe = next(c for c in program.module("w.ts").calls() if c.line == line and c.method == "pipe")
        stage = pipe.pipe_stages[0]
        verdicts.append(swallowing(program, OPTS, fx.Stage(stage, fx.ref_name(stage) or "", stage.call)) is not None)
    assert verdicts == [True, True, True, False, False]


# ------------------------------------------------------------------ the family on a repository

CLAIM = _ts(
    """
    export * as SessionExecutionClaim from "./claim"
    import { Effect } from "effect"
    export const clear = (db: any, claim: any) => Effect.void
    """
)

LOCAL_OK = _ts(
    """
    import { Effect } from "effect"
    import { SessionExecutionClaim } from "./claim"
    export const drain = (db: any, events: any, claim: any, run: Effect.Effect<void>) =>
      run.pipe(
        Effect.onExit(() =>
          Effect.gen(function* () {
            yield* SessionExecutionClaim.clear(db, claim)
            yield* events.publish(Done, {})
          }),
        ),
      )
    """
)


def _invariant(tmp_path: Path, local: str, scope: str = "changed", base_local: str | None = None):
    base = {"packages/core/src/session/execution/claim.ts": CLAIM}
    if base_local is not None:
        base["packages/core/src/session/execution/local.ts"] = base_local
    patched = {**base, "packages/core/src/session/execution/local.ts": local}
    repo, base_sha, patch_path, _ = make_change(tmp_path, base, patched)
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch_path), scope=scope))
    return next(i for i in outcome.report.invariants if i.id == "cleanup-propagation")


def test_finalize_first_is_verified_and_says_what_it_examined(tmp_path: Path) -> None:
    invariant = _invariant(tmp_path, LOCAL_OK)
    assert invariant.status.value == "verified"
    assert invariant.summary.startswith("1 finalizing cleanup of 1 finalizer")


def test_no_finalizing_cleanup_is_not_applicable_and_names_what_was_looked_for(tmp_path: Path) -> None:
    local = LOCAL_OK.replace("SessionExecutionClaim.clear(db, claim)", "Effect.log(claim)")
    invariant = _invariant(tmp_path, local)
    assert invariant.status.value == "not-applicable"
    assert "1 finalizer in 1 file" in invariant.summary and "SessionExecutionClaim.clear" in invariant.summary


def test_publish_moved_before_the_clear_is_reported_at_the_publish(tmp_path: Path) -> None:
    swapped = LOCAL_OK.replace(
        "yield* SessionExecutionClaim.clear(db, claim)\n        yield* events.publish(Done, {})",
        "yield* events.publish(Done, {})\n        yield* SessionExecutionClaim.clear(db, claim)",
    )
    assert swapped != LOCAL_OK
    invariant = _invariant(tmp_path, swapped, base_local=LOCAL_OK)
    assert invariant.status.value == "violated"
    [finding] = [f for f in invariant.findings if f.severity.value == "must-fix"]
    assert finding.rule == "cleanup-propagation/fallible-before-finalization"
    assert (finding.location.path, finding.location.line) == ("packages/core/src/session/execution/local.ts", 7)
    assert "`events.publish(Done, {})`" in finding.message and "`SessionExecutionClaim.clear`" in finding.message
    assert len(finding.failure_sequence) == 4
    assert [r.line for r in finding.related] == [5, 8]
