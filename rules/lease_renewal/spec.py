"""lease-renewal's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, handler_unresolved_check, parse_error_check


FAMILY_ID = "lease-renewal"

OPTIONS: tuple[Option, ...] = (
    Option(
        'release',
        ["SessionExecutionClaim.clear", "SessionExecutionClaim.release", "SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        "Calls that delete the claim row (release the Session's lock).",
        vocabulary=True,
    ),
    Option(
        'renew',
        ["SessionExecutionClaim.renew", "SessionExecutionClaim.update"],
        Kind.NAMES,
        "Calls that extend the lease (opencode's own claim module spells it `update`).",
        vocabulary=True,
    ),
    Option(
        'interrupt_hooks',
        ["interruptedCommit"],
        Kind.NAMES,
        'Commit-hook properties run while an interruption is committed.',
        vocabulary=True,
    ),
    Option(
        'interrupt_events',
        ["SessionEvent.Step.Interrupted", "Step.Interrupted"],
        Kind.NAMES,
        'Events whose commit is an interruption.',
    ),
    Option(
        'coordinator',
        ["RunCoordinator.interrupt"],
        Kind.NAMES,
        "The coordinator's interrupt: its cleanup argument runs after the runner's finalizers.",
    ),
    Option(
        'coordinator_cleanup_arg',
        1,
        Kind.INTEGER,
        "Index of the cleanup argument of the coordinator's interrupt.",
    ),
    Option(
        'hook_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'Where interruption hooks may be defined when only a helper they call changed (globs).',
    ),
    Option(
        'allowed_release_sites',
        ["packages/core/src/session/execution/**"],
        Kind.GLOBS,
        "The execution module: finalizers here are the run's own final cleanup.",
    ),
    Option(
        'allowed_release_paths',
        ["packages/core/src/session/recovery.ts"],
        Kind.GLOBS,
        'Files that own claims outright (startup recovery deletes claims it took over).',
    ),
    Option(
        'acquire',
        ["SessionExecutionClaim.acquire", "SessionExecutionClaim.takeover"],
        Kind.NAMES,
        "Acquisition calls: a release after one of these in the same function rolls back a claim that never ran (e.g. the coordinator refused to start it), which is not a run's release.",
        vocabulary=True,
    ),
    Option(
        'stale_claim_cleanup',
        ["SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        "Releases that drop a dead owner's claim (not this run's) and may run on the wake path of the execution module outside finalizers.",
    ),
    Option(
        'ignore_paths',
        ["**/test/**", "**/*.test.*", "**/*.spec.*", "**/__tests__/**"],
        Kind.GLOBS,
        'Files never checked (tests drive the claim API directly).',
    ),
    Option(
        'lost_tags',
        ["Lost", "SessionExecutionClaim.Lost"],
        Kind.NAMES,
        'Error tags / classes of a lost renewal.',
    ),
    Option(
        'catch_tag',
        ["Effect.catchTag"],
        Kind.NAMES,
        'Combinators that catch one error tag (`Effect.catchTag("Lost", ...)`).',
    ),
    Option(
        'catch_tags',
        ["Effect.catchTags"],
        Kind.NAMES,
        'Combinators that catch by a table of tags (`Effect.catchTags({ Lost: ... })`).',
    ),
    Option(
        'catch_all',
        [
        "Effect.catchAll",
        "Effect.catchAllCause",
        "Effect.catchAllDefect",
        "Effect.catchDefect",
        "Effect.catchCause",
        "Effect.catch",
        "Effect.catchIf",
        "Effect.catchSome",
        "Effect.catchSomeDefect",
        "Effect.orElse",
        "Effect.orElseSucceed",
        "Effect.catchFilter",
        "Effect.catchCauseIf",
        "Effect.catchCauseFilter",
        "Effect.catchEager",
        "Effect.retryOrElse",
        "Effect.matchEffect",
        "Effect.matchCauseEffect",
    ],
        Kind.NAMES,
        'Handlers that catch everything (a lost claim included); `matchEffect`-like ones through their `onFailure`.',
    ),
    Option(
        'ignore',
        ["Effect.ignore", "Effect.ignoreLogged", "Effect.orElseSucceed"],
        Kind.NAMES,
        'Stages that turn any failure into success.',
    ),
    Option(
        'fail',
        ["Effect.fail", "Effect.die", "Effect.failCause", "Effect.dieMessage", "Effect.failSync", "Effect.dieSync", "Effect.interrupt"],
        Kind.NAMES,
        'What re-fails inside a handler.',
    ),
    Option(
        'success',
        ["Effect.void", "Effect.succeed", "Effect.unit", "Effect.asVoid", "Effect.log", "Effect.logWarning", "Effect.logError", "Effect.logDebug", "Effect.sync", "return;"],
        Kind.NAMES,
        'What a swallowing handler returns.',
    ),
    Option(
        'repeat',
        ["Effect.repeat", "Effect.schedule", "Effect.repeatOrElse"],
        Kind.NAMES,
        "Combinators that repeat an effect on a schedule (a heartbeat's loop).",
    ),
    Option(
        'fork',
        ["Effect.fork", "Effect.forkScoped", "Effect.forkDaemon", "Effect.forkIn", "Effect.forkChild"],
        Kind.NAMES,
        'Combinators that fork an effect into a fiber of its own.',
    ),
    Option(
        'join',
        ["Fiber.join", "Fiber.await", "Fiber.joinAll", "Fiber.awaitAll", "Effect.raceFirst", "Effect.race", "Effect.raceAll", "Fiber.zip", "Fiber.zipWith"],
        Kind.NAMES,
        'Calls that join a fiber (surface its failure) when handed it.',
    ),
    Option(
        'join_members',
        ["await", "join"],
        Kind.NAMES,
        'Members that join a fiber: `fiber.await`, `fiber.join()`.',
    ),
    Option(
        'lease_constant',
        "SESSION_EXECUTION_LEASE_MS",
        Kind.TEXT,
        "The constant holding the claim's lease in milliseconds; renewal periods are compared with it.",
        vocabulary=True,
    ),
    Option(
        'lease_ms_fallback',
        30000,
        Kind.INTEGER,
        'The lease (ms) assumed when `lease_constant` cannot be resolved (the summary says so).',
    ),
    Option(
        'max_period_fraction',
        0.5,
        Kind.NUMBER,
        'A renewal period must be below this fraction of the lease.',
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/release-in-interrupt-commit",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Claim released inside the interruption commit",
        summary="The claim is deleted while Step.Interrupted commits, before the run's finalizers have finished.",
        why=(
            "The claim row is the Session's lock. An interruption commits Step.Interrupted first and only then "
            "runs the runner's finalizers (tool fibers killed, temp files removed), which can block. Deleting the "
            "claim in the commit lets another process insert a successor claim and start the Session while the "
            "old run still finalizes: two owners run one Session."
        ),
        bad=(
            "createLLMEventPublisher(events, {\n"
            "  terminalCommit: () => updateExecution({ phase: \"safe\" }),\n"
            "  interruptedCommit: () => SessionExecutionClaim.clear(db, claim),\n"
            "})"
        ),
        good=(
            "createLLMEventPublisher(events, {\n"
            "  interruptedCommit: () => updateExecution({ phase: \"interrupted\" }),\n"
            "})\n"
            "// the claim is cleared by the run's own finalizer in execution/local.ts:\n"
            "drain(claim).pipe(Effect.ensuring(SessionExecutionClaim.clear(db, claim).pipe(Effect.orDie)))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/release-outside-finalizer",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Claim released outside the run's final cleanup",
        summary="A claim release runs in ordinary code instead of a finalizer of the run (or the coordinator's cleanup).",
        why=(
            "Only the run's finalizer knows that every other finalizer has completed. A release on an ordinary "
            "path frees the Session's lock while the run (or its tool fibers) may still be executing, so a second "
            "owner can start it. A hand-off is not a finding (the basis names it): a release that, on every "
            "path to it, follows an interruption that waits for the work to stop (`Fiber.interrupt(work)`, "
            "`FiberSet.clear(..)`, or `Fiber.joinAll(stopping)` where `stopping` collects forks of an "
            "`interrupt..` call). Which fibers were interrupted is not checked against the claim."
        ),
        bad=(
            "const steer = Effect.fn(function* (claim: Claim) {\n"
            "  if (text.length === 0) yield* SessionExecutionClaim.release(db, claim)  // run continues\n"
            "})"
        ),
        good=(
            "Effect.scoped(run(claim)).pipe(\n"
            "  Effect.onExit(() => SessionExecutionClaim.release(db, claim).pipe(Effect.orDie)),\n"
            ")"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/lost-suppressed",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Lost claim turned into success",
        summary="A renewal/release failure with SessionExecutionClaim.Lost is caught and ignored instead of failing closed.",
        why=(
            "Lost means another owner may hold the Session now. Swallowing it lets this process keep running "
            "(or report a clean stop) without the lock, so the two owners' writes interleave. Every way Effect "
            "has of ending a failure counts (reviewer/typescript/channel.py): a handler that never fails again "
            "(`catchTag`, `catchAll`, `matchEffect`'s `onFailure`, returning `Effect.void`, `Effect.logInfo(..)`, "
            "`Effect.sleep(..)`), a combinator that makes the failure a value (`ignore`, `either`, `result`, "
            "`exit`, `option`, `merge`, `flip`, `match`, `eventually`), a race or fallback where another "
            "alternative's success masks it (`race`, `raceAll`, `firstSuccessOf`), `Effect.all(.., { mode: "
            "\"either\" })`, and a `retry` whose schedule never ends. A value turned back into the failure "
            "(`Effect.flatten`, `Effect.failCause(exit.cause)` later in the same function) is not a finding. "
            "In plain async code: a renewal awaited in a `try` whose `catch` neither throws nor rejects, and a "
            "renewal function that failed in the base when its write matched no row but no longer fails. "
            "Two successes still fail closed and are not findings (the basis names them): a handler that "
            "gives the claim up on every path it succeeds by, emptying whole a collection the renewal "
            "copies or routes work by (`MutableHashSet.clear(owned)` when the renewal is "
            "`refresh(me, [...owned])`; not one key removed, not a clear in a loop, a `try`, a callback "
            "handed to anything but Effect's sequencing, after `Effect.never`/`Effect.sleep`, or followed "
            "by a refill; a path skipped by a latch made open that the handler closes, or by a flag it sets "
            "from the opposite constant and tests the right way round, is allowed; a counter, a flag only "
            "read or set from the error, or a path chosen by the error is not), and a renewal of an "
            "empty list where the same renewal elsewhere passes the held list "
            "(a probe holds nothing). Clearing by assignment or `Ref.set` is not recognised."
        ),
        bad="SessionExecutionClaim.clear(db, claim).pipe(Effect.catchTag(\"Lost\", () => Effect.void))",
        good="SessionExecutionClaim.clear(db, claim).pipe(Effect.orDie)  // a lost claim is a defect of the run",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/renewal-not-joined",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Forked renewal loop is never joined",
        summary="A forked heartbeat (renew + repeat + fork) whose fiber nobody joins, awaits or races.",
        why=(
            "A forked fiber's failure is invisible unless someone joins it. When the renewal finds the claim "
            "lost, the heartbeat dies silently and the run carries on without the lock. The same holds for a "
            "helper that returns the repeated renewal (`keepAlive(db, id)` forked), and in plain async code for "
            "a heartbeat function (a loop that waits and renews, or a `setInterval` that renews) whose promise "
            "is dropped (`void keepAlive(..)`) or bound and never read again. A forked heartbeat whose "
            "failures a catch-everything stage answers by giving the claim up (see lost-suppressed) never dies "
            "and leaves no work on a lost claim: not a finding."
        ),
        bad=(
            "yield* SessionExecutionClaim.renew(db, claim).pipe(\n"
            "  Effect.repeat(Schedule.spaced(\"10 seconds\")),\n"
            "  Effect.forkScoped,\n"
            ")\n"
            "yield* drain"
        ),
        good=(
            "const heartbeat = yield* SessionExecutionClaim.renew(db, claim).pipe(\n"
            "  Effect.repeat(Schedule.spaced(\"10 seconds\")),\n"
            "  Effect.forkScoped,\n"
            ")\n"
            "yield* drain.pipe(Effect.raceFirst(Fiber.join(heartbeat)))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/renewal-period",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Renewal period not well inside the lease",
        summary="The heartbeat's period is at least the configured fraction (1/2) of SESSION_EXECUTION_LEASE_MS.",
        why=(
            "A renewal can be late by a GC pause, a busy SQLite writer or a slow tick. With a period near the "
            "lease one late renewal lets the claim expire and startup recovery on another process takes it over "
            "while this run is alive. A heartbeat is a renewal repeated by a schedule, by a loop that waits "
            "between renewals (`while (await sleep(ms)) await renew(..)`) or by `setInterval(.., ms)`. When the "
            "patch changes only the period's constant, the finding points at that constant."
        ),
        bad="Effect.repeat(Schedule.spaced(\"20 seconds\"))  // SESSION_EXECUTION_LEASE_MS = 30 * 1000",
        good="Effect.repeat(Schedule.spaced(Duration.millis(SESSION_EXECUTION_LEASE_MS / 3)))",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/period-unresolved",
        severity=Severity.MUST_FIX,
        impact=Impact.TWO_OWNERS,
        title="Renewal period could not be verified",
        summary="A changed heartbeat's schedule does not fold to a constant period, so renewal-period could not judge it.",
        why=(
            "Never green by silence: a period the model cannot compute (a schedule built at run time, a "
            "combinator it does not know, a constant it cannot resolve) is not a period that is known to be "
            "short enough, and it blocks like one known to be too long (a patch could otherwise pass by writing "
            "the period so it does not fold). The finding names the schedule so a reviewer can check it against "
            "the lease by hand."
        ),
        bad="Effect.repeat(SessionExecutionClaim.renew(db, claim), makeSchedule(config))  // period known only at run time",
        good="Effect.repeat(SessionExecutionClaim.renew(db, claim), Schedule.spaced(Duration.millis(SESSION_EXECUTION_LEASE_MS / 3)))",
    ),
    handler_unresolved_check(FAMILY_ID, "claim releases"),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a file with claim handling",
        summary="The TypeScript parser left an ERROR region (untouched, or changed but without the family's idioms) in a file this family inspects.",
        why="Rules run on the partial tree; claim releases or renewals inside an ERROR region are invisible to them.",
    ),
)
