"""cleanup-propagation's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, handler_unresolved_check, parse_error_check

FAMILY_ID = "cleanup-propagation"

OPTIONS: tuple[Option, ...] = (
    Option(
        "paths",
        ["**"],
        Kind.GLOBS,
        "Files examined for run cleanup (globs; every production file by default, reviewer/engine/production.py): "
        "set it only to narrow.",
    ),
    Option(
        "ignore_paths",
        ["**/test/**", "**/*.test.*", "**/*.spec.*", "**/__tests__/**"],
        Kind.GLOBS,
        "Files never checked (tests build cleanups that are meant to fail).",
    ),
    Option(
        "finalize",
        [
            "SessionExecutionClaim.clear",
            "SessionExecutionClaim.release",
            "SessionExecutionClaim.update",
            "SessionExecutionClaim.consumeSuspended",
        ],
        Kind.NAMES,
        "Calls that finalize the run's durable state (drop or settle its claim, record its terminal phase), "
        "matched import-resolved on whole trailing segments.",
        vocabulary=True,
    ),
    Option(
        "finalize_events",
        ["Execution.Succeeded", "Execution.Failed", "Execution.Interrupted"],
        Kind.NAMES,
        "Events whose publish records how the run ended (a publish call's first argument).",
        vocabulary=True,
    ),
    Option(
        "successor",
        ["start", "settle", "wake"],
        Kind.NAMES,
        "Calls inside a cleanup that start the next execution of the key (the successor).",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "cleanup_hooks",
        ["settled"],
        Kind.NAMES,
        "Object-literal properties the coordinator runs as cleanup after every exit (like a finalizer).",
        vocabulary=True,
    ),
    Option(
        "infallible",
        [
            "Effect.sync",
            "Effect.void",
            "Effect.succeed",
            "Effect.yieldNow",
            "Effect.log",
            "Effect.logInfo",
            "Effect.logDebug",
            "Effect.logWarning",
            "Effect.logError",
            "Effect.logTrace",
            "Effect.annotateCurrentSpan",
            "Deferred.succeed",
            "Deferred.done",
            "Deferred.doneUnsafe",
            "Deferred.complete",
            "Deferred.completeWith",
            "Fiber.interrupt",
            "FiberSet.clear",
            "Ref.set",
            "Ref.get",
            "Ref.update",
            "Clock.currentTimeMillis",
        ],
        Kind.NAMES,
        "Effects that cannot fail: running one before a finalization never skips it.",
    ),
    Option(
        "sequence",
        ["Effect.andThen", "Effect.flatMap", "Effect.zipRight", "Effect.tap", "Effect.zip", "Effect.zipLeft"],
        Kind.NAMES,
        "Stages that run their argument after the effect they are applied to (`a.pipe(Effect.andThen(b))`).",
    ),
    Option(
        "recover",
        ["Effect.exit", "Effect.either", "Effect.result"],
        Kind.NAMES,
        "Stages that capture a failure as a value so the next step still runs (the failure can be re-raised later).",
    ),
    Option(
        "ignore",
        ["Effect.ignore", "Effect.ignoreLogged", "Effect.orElseSucceed"],
        Kind.NAMES,
        "Stages that turn any failure into success.",
    ),
    Option(
        "catch_all",
        [
            "Effect.catchAll",
            "Effect.catchAllCause",
            "Effect.catchAllDefect",
            "Effect.catchDefect",
            "Effect.catchCause",
            "Effect.catch",
            "Effect.orElse",
        ],
        Kind.NAMES,
        "Handlers that catch every failure; they swallow it when the handler returns success.",
    ),
    Option(
        "fail",
        ["Effect.fail", "Effect.die", "Effect.failCause", "Effect.dieMessage", "Effect.failSync", "Effect.dieSync"],
        Kind.NAMES,
        "What re-raises inside a handler (a handler that does is not swallowing).",
    ),
    Option(
        "success",
        [
            "Effect.void",
            "Effect.succeed",
            "Effect.unit",
            "Effect.asVoid",
            "Effect.log",
            "Effect.logWarning",
            "Effect.logError",
            "Effect.logDebug",
            "Effect.sync",
            "return;",
        ],
        Kind.NAMES,
        "What a swallowing handler returns (a log is still a success: the run's failure is gone).",
    ),
    Option(
        "elsewhere",
        [
            "SessionExecutionClaim.clear",
            "SessionExecutionClaim.release",
            "SessionExecutionClaim.consumeSuspended",
            "SessionExecutionClaim.renew",
            "SessionExecutionClaim.update",
        ],
        Kind.NAMES,
        "Calls whose own swallowed failure lease-renewal/lost-suppressed already reports (one finding per defect).",
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/fallible-before-finalization",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Cleanup can fail before it finalizes state or starts the successor",
        summary=(
            "Inside a finalizer (`onExit`, `ensuring`, an `acquireRelease` release, `addFinalizer`, the "
            "coordinator's `settled`, a `finally` block), a step that can fail runs before the claim/phase "
            "finalization or the successor start on the same path (a promise step whose failure is captured, "
            "`.catch(h)`, `.then(ok, h)` or a `try` inside the block, cannot fail)."
        ),
        why=(
            "A finalizer stops at its first failure. When a read, a write or a publish fails before the step that "
            "clears the claim, records the terminal phase or starts the pending successor, that step never runs: "
            "the failure propagates, but the Session is left with a live claim and no run (stuck until the lease "
            "expires and recovery guesses), or with a pending wake nobody starts. Finalize first, then propagate."
        ),
        bad=(
            "Effect.onExit((exit) =>\n"
            "  Effect.gen(function* () {\n"
            "    yield* events.publish(SessionEvent.Execution.Failed, { sessionID })  // can fail\n"
            "    yield* SessionExecutionClaim.clear(db, claim)                         // then skipped\n"
            "  }),\n"
            ")"
        ),
        good=(
            "Effect.onExit((exit) =>\n"
            "  Effect.gen(function* () {\n"
            "    const published = yield* Effect.exit(events.publish(SessionEvent.Execution.Failed, { sessionID }))\n"
            "    yield* SessionExecutionClaim.clear(db, claim)\n"
            "    yield* published  // propagate only after the claim is finalized\n"
            "  }),\n"
            ")"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/cleanup-failure-swallowed",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Cleanup failure swallowed",
        summary=(
            "A cleanup that finalizes state or starts the successor has its failure turned into success "
            "(`Effect.ignore`, `catchAll(() => Effect.void)`, `orElse(() => Effect.void)`, `catchAllCause` that logs)."
        ),
        why=(
            "When the finalization fails and the failure is swallowed, the run reports a clean end while the claim "
            "or the terminal phase was never written, or the successor never started. Nobody learns that the "
            "Session is stuck; the next wake finds a live claim and gives up. Let the failure propagate "
            "(`Effect.orDie` at most) after whatever can still be finalized."
        ),
        bad=(
            "run.pipe(\n"
            "  Effect.ensuring(finishRun(claim).pipe(Effect.catchAll(() => Effect.void))),\n"
            ")"
        ),
        good="run.pipe(Effect.ensuring(finishRun(claim).pipe(Effect.orDie)))",
    ),
    handler_unresolved_check(FAMILY_ID, "cleanup steps"),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed region in a file with run cleanup",
        summary="A tree-sitter ERROR region in a file whose finalizers this family checks.",
        why=(
            "Calls inside an ERROR region are invisible to the model, so a finalizer there was not checked; the "
            "family fails closed when the region overlaps changed lines that mention its idioms."
        ),
    ),
)
