"""terminal-commit-order's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, handler_unresolved_check, parse_error_check


FAMILY_ID = "terminal-commit-order"

OPTIONS: tuple[Option, ...] = (
    Option(
        'success_events',
        ["SessionEvent.Step.Ended", "Step.Ended"],
        Kind.NAMES,
        'Events that end a step successfully (first argument of a publish).',
        vocabulary=True,
    ),
    Option(
        'failure_events',
        ["SessionEvent.Step.Failed", "Step.Failed"],
        Kind.NAMES,
        'Events that end a step with a failure (first argument of a publish).',
        vocabulary=True,
    ),
    Option(
        'failure_cases',
        ["provider-error", "error"],
        Kind.NAMES,
        '`case "<label>":` branches that handle a failure.',
    ),
    Option(
        'terminal_hooks',
        ["terminalCommit"],
        Kind.NAMES,
        'Commit-hook properties run when a terminal event commits.',
        vocabulary=True,
    ),
    Option(
        'phase_key',
        "phase",
        Kind.TEXT,
        "The property of a terminal commit's update that holds the execution's phase.",
    ),
    Option(
        'safe_phase',
        "safe",
        Kind.TEXT,
        'The phase value that marks the execution safe to drop (tools settled, step final).',
    ),
    Option(
        'settle_tools',
        ["failUnsettledTools", "awaitToolFibers"],
        Kind.NAMES,
        'Calls that settle tool outcomes; all must precede a terminal commit on its path.',
        vocabulary=True,
    ),
    Option(
        'hook_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'Where hook definitions may live when only their invoker changed (globs).',
    ),
    Option(
        'recovery_paths',
        ["packages/core/src/session/recovery.ts"],
        Kind.GLOBS,
        'Startup recovery files.',
    ),
    Option(
        'reconcile',
        ["reconcileTools", "failUnsettledTools", "SessionTools.reconcile"],
        Kind.NAMES,
        "Calls in startup recovery that reconcile a crashed run's tools.",
    ),
    Option(
        'release',
        ["SessionExecutionClaim.clear", "SessionExecutionClaim.release", "SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        'Calls that delete an execution claim.',
    ),
    Option(
        'ignore_paths',
        ["**/test/**", "**/*.test.*", "**/*.spec.*", "**/__tests__/**"],
        Kind.GLOBS,
        'Files never checked (tests drive the terminal API directly).',
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/success-after-failure",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Success terminal after a failure",
        summary="Step.Ended (or a helper publishing it) runs after Step.Failed on the same path, or inside a failure handler.",
        why=(
            "A step has exactly one terminal outcome. Publishing Step.Ended after Step.Failed (or from a catch "
            "handler / provider-error branch) records a failed step as finished, so the Session continues as if "
            "the model's answer were complete and the failure is lost from the durable history. The terminal "
            "events are the configured ones, or, inferred from the base tree, the success and failure members of "
            "one event group (`Ended`/`Completed`/`Done`… beside `Failed`/`Faulted`/`Crashed`…), events or string "
            "constants, published directly or handed to a helper that records them (`record(sql, id, "
            "RunEvent.Failed)`). \"After\" includes a failure published in a handler that recovers "
            "(`Effect.catchAll(() => publish(Failed))`, a `catch` clause that does not rethrow) when the success "
            "runs next, unless the success is guarded by the handler's result (`if (failed) return`)."
        ),
        bad=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* endAssistant(\"error\")   // publishes Step.Ended"
        ),
        good=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* failAssistant(event.message)   // publishes Step.Failed"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/terminal-before-tools",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Terminal commit marks safe before tools settle",
        summary="A terminal publish whose commit sets phase \"safe\" runs before awaitToolFibers/failUnsettledTools on its path.",
        why=(
            "`phase: \"safe\"` tells startup recovery that every tool outcome of the step is durable. If the "
            "process crashes after the terminal commit but before running tools finish or unsettled tools are "
            "failed, recovery trusts `safe`, drops the claim, and those tools stay `running` forever with their "
            "side effects unrecorded."
        ),
        bad=(
            "case \"provider-error\":\n"
            "  yield* failAssistant(event.message)   // Step.Failed commits phase: \"safe\"\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")"
        ),
        good=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* failAssistant(event.message)"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/recovery-clears-safe-unreconciled",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Recovery clears a safe claim without reconciling tools",
        summary="Startup recovery deletes a claim in phase \"safe\" with no reconcileTools call before it on the path.",
        why=(
            "A crash can land between the terminal commit and the tool outcomes (or a patch can commit safe too "
            "early). Recovery is the last chance to record those outcomes; clearing the claim first leaves the "
            "tools unknown and nothing ever revisits them."
        ),
        bad=(
            "if (row.phase === \"safe\") {\n"
            "  yield* SessionExecutionClaim.clear(db, claim)\n"
            "  return\n"
            "}"
        ),
        good=(
            "if (row.phase === \"safe\" || row.phase === \"interrupted\") {\n"
            "  yield* dependencies.reconcileTools(row.session_id, row.assistant_message_id)\n"
            "  yield* SessionExecutionClaim.clear(db, claim)\n"
            "  return\n"
            "}"
        ),
    ),
    handler_unresolved_check(FAMILY_ID, "terminal publishes"),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a file with terminal commits",
        summary="The TypeScript parser left an ERROR region (untouched, or changed but without the family's idioms) in a file this family inspects.",
        why="Rules run on the partial tree; terminal publishes or tool settlement inside an ERROR region are invisible to them.",
    ),
)
