"""cleanup-propagation: a failing cleanup finalizes first, then propagates (seed 002, invariant 6).

When the coordinator's or the execution's cleanup (`Effect.onExit`, `Effect.ensuring`, the release
of `Effect.acquireRelease`, `Effect.addFinalizer`, the coordinator's `settled` hook) fails, it must
first finalize the run's durable state (clear or settle the claim, record the terminal phase) or
start the pending successor, and only then let the failure through. Two ways to break it: a step
that can fail runs before the finalization on the same path (`order`), or the cleanup's failure is
swallowed so nobody learns the Session is stuck (`swallow`).

This package: the declarations (`spec`), where cleanups are and what finalizes (`regions`), one
module per check (`order`, `swallow`), and here the run and its summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine import globs
from reviewer.engine.api import Family, Options, Outcome
from reviewer.report.model import Severity
from reviewer.typescript import Role

from reviewer.rules import _effect as fx
from reviewer.rules.cleanup_propagation.order import OrderTally, Steps, check_order
from reviewer.rules.cleanup_propagation.regions import Targets, cleanups, finalizes
from reviewer.rules.cleanup_propagation.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.cleanup_propagation.swallow import SwallowTally, check_swallow

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

_COMBINATORS = ("onExit", "ensuring", "acquireRelease", "acquireUseRelease", "addFinalizer", "onInterrupt")


def _tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a cleanup this family judges."""
    return sorted(set(opts.finalize) | set(opts.successor) | set(opts.cleanup_hooks) | {f"Effect.{c}" for c in _COMBINATORS})


_PHRASES = {
    "fallible-before-finalization": "cleanup can fail before it finalizes",
    "cleanup-failure-swallowed": "cleanup failure swallowed",
}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    paths = tuple(
        p for p in fx.reviewed_paths(ctx, opts.ignore_paths, _tokens(opts)) if globs.matches(p, opts.paths)
    )
    if not paths:
        return Outcome("no changed TypeScript file under the cleanup paths (" + ", ".join(opts.paths) + ")")
    program = ctx.program
    regions = fx.error_regions(program, ctx, paths, _tokens(opts))
    first = fx.blocking_region(regions)
    if first is not None:
        why = fx.unparsed_summary(first, "finalizer or cleanup idioms", "cleanup order and swallowed failures")
        return Outcome(why, unreadable=why)
    targets = Targets(program, opts)
    steps = Steps(program, opts)
    found = cleanups(program, paths, opts.cleanup_hooks)
    relevant = [c for c in found if finalizes(targets, c)]
    order, swallow = OrderTally(), SwallowTally()
    for cleanup in relevant:
        check_order(ctx, steps, targets, cleanup, order)
        check_swallow(ctx, program, opts, targets, cleanup, swallow)
    notes = fx.unresolved_handler_findings(ctx, program, paths, (Role.FINALIZER,), "cleanup steps")
    notes += fx.parse_error_findings(
        ctx, regions, title="Unparsed region in a file with run cleanup", idioms="cleanup",
        unchecked="finalizers",
    )
    findings = tuple(sorted(order.findings + swallow.findings + notes, key=lambda f: f.sort_key()))
    if not relevant:
        looked = "/".join(fx.strip_call_marks(n) for n in tuple(opts.finalize) + tuple(opts.successor))
        summary = (
            f"{_plural(len(found), 'finalizer')} in {_plural(len(paths), 'file')} under the cleanup paths, none of "
            f"which finalizes the run or starts a successor ({looked}, or a publish of "
            f"{'/'.join(opts.finalize_events)})"
        )
        return Outcome(summary, findings)
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    if blocking:
        summary = fx.violation_summary(blocking, _PHRASES)
    else:
        summary = (
            f"{_plural(len(relevant), 'finalizing cleanup')} of {_plural(len(found), 'finalizer')}, each finalizing "
            "before any step that can fail and none swallowing its failure"
        )
        if order.steps or swallow.stages:
            summary += (
                f" on changed lines ({_plural(order.steps, 'fallible step')} before a finalization and "
                f"{_plural(swallow.stages, 'swallowing stage')} in unchanged code)"
            )
        summary += f" ({_plural(len(paths), 'file')})"
    return Outcome(summary, findings, examined=len(relevant))


FAMILY = Family(
    id=FAMILY_ID,
    summary=(
        "A failing coordinator cleanup first finalizes the run's durable state or starts the successor, and only "
        "then propagates its failure; it never swallows it."
    ),
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
