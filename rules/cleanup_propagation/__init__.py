"""cleanup-propagation: a failing cleanup finalizes first, then propagates (seed 002, invariant 6).

When the coordinator's or the execution's cleanup (`Effect.onExit`, `Effect.ensuring`, the release
of `Effect.acquireRelease`, `Effect.addFinalizer`, the coordinator's `settled` hook) fails, it must
first finalize the run's durable state (clear or settle the claim, record the terminal phase) or
start the pending successor, and only then let the failure through. Two ways to break it: a step
that can fail runs before the finalization on the same path (`order`), or the cleanup's failure is
swallowed so nobody learns the Session is stuck (`swallow`).

This package: the declarations (`spec`), where cleanups are and what finalizes (`regions`), one
module per check (`order`, `swallow`), and here the family on the engine's template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template
from reviewer.text import plural
from reviewer.report.model import Finding
from reviewer.typescript import Role

from reviewer.rules import _effect as fx
from reviewer.rules.cleanup_propagation.order import OrderTally, Steps, check_order
from reviewer.rules.cleanup_propagation.regions import Cleanup, Targets, cleanups, finalizes
from reviewer.rules.cleanup_propagation.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.cleanup_propagation.swallow import SwallowTally, check_swallow
from reviewer.rules.cleanup_propagation.vocabulary import HINTS, infer

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

_COMBINATORS = ("onExit", "ensuring", "acquireRelease", "acquireUseRelease", "addFinalizer", "onInterrupt")


def _tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a cleanup this family judges."""
    return sorted(set(opts.finalize) | set(opts.successor) | set(opts.cleanup_hooks) | {f"Effect.{c}" for c in _COMBINATORS})


@dataclass
class Run:
    """One run's state: the cleanups of the reviewed files, the ones that finalize, what the checks counted."""

    ctx: "ReviewContext"
    changed: tuple[str, ...] = ()
    found: list[Cleanup] = field(default_factory=list)  # every finalizer of the reviewed files
    relevant: list[Cleanup] = field(default_factory=list)  # those that finalize the run or start a successor
    order: OrderTally = field(default_factory=OrderTally)
    swallow: SwallowTally = field(default_factory=SwallowTally)
    targets: Targets | None = None
    steps: Steps | None = None


def _prepare(run: Run) -> None:
    ctx = run.ctx
    run.targets = Targets(ctx.program, ctx.opts)
    run.steps = Steps(ctx.program, ctx.opts)
    run.found = cleanups(ctx.program, run.changed, ctx.opts.cleanup_hooks)
    run.relevant = [c for c in run.found if finalizes(run.targets, c)]


def _order(run: Run) -> Iterator[Finding]:
    """fallible-before-finalization, over each finalizing cleanup."""
    assert run.steps is not None and run.targets is not None
    for cleanup in run.relevant:
        yield from check_order(run.ctx, run.steps, run.targets, cleanup, run.order)


def _swallow(run: Run) -> Iterator[Finding]:
    """cleanup-failure-swallowed, over each finalizing cleanup."""
    assert run.targets is not None
    for cleanup in run.relevant:
        yield from check_swallow(run.ctx, run.ctx.program, run.ctx.opts, run.targets, cleanup, run.swallow)


def _unexamined(run: Run, findings: tuple[Finding, ...]) -> str:
    opts = run.ctx.opts
    looked = "/".join(fx.strip_call_marks(n) for n in tuple(opts.finalize) + tuple(opts.successor))
    return (
        f"{plural(len(run.found), 'finalizer')} in {plural(len(run.changed), 'file')} examined, none of "
        f"which finalizes the run or starts a successor ({looked}, or a publish of "
        f"{'/'.join(opts.finalize_events)})"
    )


def _proved(run: Run, findings: tuple[Finding, ...]) -> str:
    summary = (
        f"{plural(len(run.relevant), 'finalizing cleanup')} of {plural(len(run.found), 'finalizer')}, each finalizing "
        "before any step that can fail and none swallowing its failure"
    )
    if run.order.steps or run.swallow.stages:
        summary += (
            f" on changed lines ({plural(run.order.steps, 'fallible step')} before a finalization and "
            f"{plural(run.swallow.stages, 'swallowing stage')} in unchanged code)"
        )
    return summary + f" ({plural(len(run.changed), 'file')})"


TEMPLATE = Template(
    reading=Reading(
        idioms="cleanup",
        unchecked="finalizers",
        region_title="Unparsed region in a file with run cleanup",
        tokens=_tokens,
        ignore="ignore_paths",
        within="paths",
        roles=(Role.FINALIZER,),
        handled="cleanup steps",
    ),
    nothing=lambda ctx: "no changed production TypeScript file" + (
        "" if tuple(ctx.opts.paths) == ("**",) else " under the cleanup paths (" + ", ".join(ctx.opts.paths) + ")"),
    start=Run,
    prepare=_prepare,
    checks=(_order, _swallow),
    examined=lambda run: len(run.relevant),
    unexamined=_unexamined,
    proved=_proved,
    phrases={
        "fallible-before-finalization": "cleanup can fail before it finalizes",
        "cleanup-failure-swallowed": "cleanup failure swallowed",
    },
    notes_everywhere=True,
)


FAMILY = Family(
    id=FAMILY_ID,
    summary=(
        "A failing coordinator cleanup first finalizes the run's durable state or starts the successor, and only "
        "then propagates its failure; it never swallows it."
    ),
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
