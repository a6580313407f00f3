"""terminal-commit-order: no success terminal after a failure, no terminal before tools settle.

DESIGN.md family 2. A step ends with exactly one terminal event. A failed step
must never also end successfully (Step.Ended after Step.Failed, or from a
failure handler). The terminal commit that marks the execution `safe` tells
startup recovery that every tool outcome is durable, so it must come after
tool settlement on the same path; and recovery must not drop a `safe` claim
without reconciling tools, since a crash can land between the two.

This package: the declarations (`spec`), the per-run state (`scan`), one
module per check (`failure`, `tools`, `recovery`), what they share about
failure handlers and the helpers that commit terminals (`handlers`), and here
the run: which changed files are relevant, their parse errors, and the summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine import globs
from reviewer.report.model import Severity
from reviewer.engine.api import Family, Options, Outcome
from reviewer.typescript import Module, Role

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.failure import check_success_after_failure
from reviewer.rules.terminal_commit_order.recovery import check_recovery
from reviewer.rules.terminal_commit_order.scan import Scan
from reviewer.rules.terminal_commit_order.vocabulary import HINTS, infer
from reviewer.rules.terminal_commit_order.spec import CHECKS, FAMILY_ID, OPTIONS
from reviewer.rules.terminal_commit_order.tools import check_terminal_before_tools

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


# ------------------------------------------------------------------ run


def _relevant(scan: Scan, module: Module) -> bool:
    opts = scan.opts
    if globs.matches(module.path, opts.recovery_paths):
        return True
    terminals = opts.success_events + opts.failure_events
    settles = {fx.last(s) for s in opts.settle_tools}
    for call in module.calls():
        if fx.matches(fx.event_of(call), terminals):
            return True
        if call.method in settles:
            return True
    for hook in opts.terminal_hooks:
        if scan.program.callbacks(hook, module.path):
            return True
        if scan.program.invocations(hook, module.path):
            return True
    return False


_VIOLATION_PHRASES = {
    "success-after-failure": "success terminal after a failure",
    "terminal-before-tools": "`safe` terminal committed before tools settle",
    "recovery-clears-safe-unreconciled": "recovery clears `safe` claims without reconciling tools",
}


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a terminal-order violation."""
    names = opts.terminal_hooks + opts.settle_tools + opts.reconcile + opts.release
    events = {".".join(e.split(".")[-2:]) for e in opts.success_events + opts.failure_events}
    return sorted(set(names) | events)


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    changed = fx.reviewed_paths(ctx, opts.ignore_paths, _idiom_tokens(opts))
    if not changed:
        return Outcome("no changed TypeScript file")
    program = ctx.program
    scan = Scan(ctx, program, opts, (), (), [], [], {})
    # Regions first, over every changed file: calls inside an ERROR region are
    # invisible to the model, so a broken file could otherwise look irrelevant.
    regions = fx.error_regions(program, ctx, changed, _idiom_tokens(opts))
    first = fx.blocking_region(regions)
    if first is not None:
        unreadable = fx.unparsed_summary(first, "terminal/tool idioms", "terminal publishes and tool settlement")
        return Outcome(unreadable, unreadable=unreadable)
    relevant = tuple(p for p in changed if (m := program.module(p)) is not None and _relevant(scan, m))
    if not relevant:
        return Outcome(
            "no changed file publishes a step terminal, defines/invokes a terminal commit, settles tools or is recovery",
        )
    regions = [r for r in regions if r.path in relevant]
    scan.changed = relevant
    scan.scope = tuple(sorted(set(relevant) | set(fx.imported_paths(program, relevant))))
    scan.files = ctx.changeset.by_path
    shorts = {fx.last(n) for n in opts.settle_tools}
    for call in fx.iter_calls(program, scan.scope):
        if call.method in shorts:
            scan.settle_callees.setdefault(call.method, set()).add(call.callee)
    check_success_after_failure(scan)
    early = check_terminal_before_tools(scan)
    check_recovery(scan, early)
    scan.findings.extend(
        fx.unresolved_handler_findings(ctx, program, relevant, (Role.FAILURE_HANDLER,), "terminal publishes")
    )
    scan.findings.extend(
        fx.parse_error_findings(
            ctx,
            regions,
            title="Unparsed region in a file with terminal commits",
            idioms="terminal/tool",
            unchecked="terminal publishes or tool settlement",
        )
    )
    findings = tuple(sorted(scan.findings, key=lambda f: f.sort_key()))
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    summary = fx.violation_summary(blocking, _VIOLATION_PHRASES) if blocking else "; ".join(scan.facts)
    return Outcome(summary, findings, examined=len(relevant))


FAMILY = Family(
    id=FAMILY_ID,
    summary="No success terminal after a failure, and no terminal commit marking safe before tools settle.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
