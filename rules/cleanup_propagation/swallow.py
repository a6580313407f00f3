"""The cleanup-failure-swallowed check: a finalizing cleanup's failure is not turned into success.

A stage applied to code that finalizes (a finalizing call, or an effect whose code holds or
reaches one) swallows its failure when it is an ignore stage (`Effect.ignore`), or a catch-all
whose handler produces success and never fails again (`Effect.catchAll(() => Effect.void)`,
`Effect.catchAllCause((c) => Effect.logError(c))`). A swallowed claim release or renewal alone is
left to lease-renewal/lost-suppressed (`elsewhere`), so one defect gives one finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.report.model import Finding
from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Program

from reviewer.rules import _effect as fx
from reviewer.rules._escape import swallowed
from reviewer.rules.cleanup_propagation.regions import Cleanup, Targets

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


@dataclass
class SwallowTally:
    stages: int = 0  # catch/ignore stages applied to finalizing code
    seen: fx.KeySet = field(default_factory=fx.KeySet)


def swallowing(program: Program, opts: Options, stage: fx.Stage) -> str | None:
    """Why this stage turns every failure into success, or None when it lets failures through."""
    if fx.matches(stage.name, opts.ignore):
        return f"`{fx.strip_call_marks(stage.name)}` discards every failure"
    if not fx.matches(stage.name, opts.catch_all) or stage.call is None or not stage.call.args:
        return None
    handler = stage.call.args[-1]
    if fx.handler_fails(program, handler, opts.fail) or not fx.may_succeed(program, handler, opts.success):
        return None
    return f"`{stage.call.written}` catches every failure and returns success"


def check_swallow(
    ctx: "ReviewContext", program: Program, opts: Options, targets: Targets, cleanup: Cleanup, tally: SwallowTally
) -> Iterator[Finding]:
    """Report swallowing stages applied, inside or around this cleanup, to code that finalizes."""
    elsewhere = fx.Matcher(opts.elsewhere)
    subjects: list[Call] = []
    for unit in cleanup.units:
        subjects.extend(c for c in unit.calls if c.chain and c.chain[0].span == c.span)
    for subject in fx.unique_in_key_order(subjects):
        stages = fx.stages_of(subject, hops=1)
        if not stages:
            continue
        reason: tuple[Expr, str, str] | None = None
        for stage in stages:
            why = swallowing(program, opts, stage)
            if why is not None:
                reason = (stage.expr, why, fx.strip_call_marks(stage.name))
                break
        if reason is None:
            # Effect's error channel: `either`, `exit`, a retry that never stops, a race ... (channel.py)
            channel = swallowed(program, subject, opts.fail, opts.ignore, what="the cleanup's failure")
            if channel is not None:
                reason = (channel.stage, channel.why.rstrip(","), channel.name)
        if reason is None:
            continue
        finalizing = _finalizing(targets, subject)
        if finalizing is None:
            continue
        if finalizing.span == subject.span and elsewhere(subject.callee):
            continue  # lease-renewal/lost-suppressed reports a swallowed release or renewal
        stage, why, name = reason
        tally.stages += 1
        if not (stage.changed or subject.changed or ctx.widened) or stage in tally.seen:
            continue
        tally.seen.add(stage)
        yield _finding(ctx, cleanup, subject, finalizing, stage, why, name)


def _finalizing(targets: Targets, subject: Call) -> Call | None:
    """The finalizing call the subject's effect runs: itself, one written inside it, or one it reaches."""
    if targets.kind(subject) is not None:
        return subject
    whole = subject.chain[-1] if subject.chain else subject
    for call in subject.expr.calls:
        if targets.kind(call) is not None and not _in_stage(call, whole):
            return call
    return targets.reached(subject.expr)


def _in_stage(call: Call, whole: Call) -> bool:
    """`call` sits in a pipe stage of the chain rather than in the subject itself."""
    return any(fx.within(call, stage.span) for stage in whole.pipe_stages)


def _finding(
    ctx: "ReviewContext", cleanup: Cleanup, subject: Call, finalizing: Call, stage: Expr, why: str, name: str
) -> Finding:
    what = "starts the successor" if fx.matches(finalizing.callee, ctx.opts.successor) else "finalizes the run's state"
    at = fx.loc(stage.path, stage.line, stage.end_line)
    related = [fx.call_loc(finalizing, f"`{finalizing.callee_written}` {what}; its failure is lost")]
    if cleanup.site is not None:
        related.append(fx.call_loc(cleanup.site, f"`{cleanup.how}` runs this cleanup"))
    else:
        related.append(fx.loc(cleanup.arg.path, cleanup.arg.line, cleanup.arg.end_line, f"`{cleanup.how}` runs this cleanup"))
    subject_text = subject.written if subject.span == finalizing.span else f"{subject.written}"
    return ctx.finding(
        "cleanup-failure-swallowed",
        title=f"Failure of the cleanup that {what} is swallowed",
        message=(
            f"{why} at {at.path}:{at.line}, applied to `{subject_text}`, whose `{finalizing.callee_written}` "
            f"({finalizing.path}:{finalizing.line}) {what}. When it fails the run still ends cleanly, so nobody "
            "learns that the Session is stuck. Let the failure propagate (`Effect.orDie` at most) once everything "
            "that can still be finalized has run."
        ),
        location=at,
        related=fx.unique_sorted(related),
        failure_sequence=[
            f"the run ends and the cleanup handed to `{cleanup.how}` starts",
            f"`{finalizing.callee_written}` fails, so the run's {'successor is not started' if 'successor' in what else 'claim/phase is not finalized'}",
            f"`{name}` turns the failure into success",
            "the caller and the coordinator see a clean end; the Session stays stuck with nobody told",
        ],
        anchor=f"{stage.normalized}<-{subject.normalized}",
    )
