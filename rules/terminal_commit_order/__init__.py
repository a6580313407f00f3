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
the family on the engine's template: which changed files are relevant, and the basis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.engine import globs
from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template
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
        if fx.terminal_event(call, terminals):
            return True
        if call.method in settles:
            return True
    for hook in opts.terminal_hooks:
        if scan.program.callbacks(hook, module.path):
            return True
        if scan.program.invocations(hook, module.path):
            return True
    return False


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a terminal-order violation."""
    names = opts.terminal_hooks + opts.settle_tools + opts.reconcile + opts.release
    events = {".".join(e.split(".")[-2:]) for e in opts.success_events + opts.failure_events}
    return sorted(set(names) | events)


def _start(ctx: "ReviewContext") -> Scan:
    return Scan(ctx, ctx.program, ctx.opts, files=ctx.changeset.by_path)


def _prepare(scan: Scan) -> None:
    """What every check reads: the scope (changed files and what they import) and the settle steps' spellings."""
    program, opts = scan.program, scan.opts
    scan.scope = tuple(sorted(set(scan.changed) | set(fx.imported_paths(program, scan.changed))))
    shorts = {fx.last(n) for n in opts.settle_tools}
    for call in fx.iter_calls(program, scan.scope):
        if call.method in shorts:
            scan.settle_callees.setdefault(call.method, set()).add(call.callee)


TEMPLATE = Template(
    reading=Reading(
        idioms="terminal/tool",
        unchecked="terminal publishes or tool settlement",
        region_title="Unparsed region in a file with terminal commits",
        tokens=_idiom_tokens,
        ignore="ignore_paths",
        roles=(Role.FAILURE_HANDLER,),
        handled="terminal publishes",
    ),
    start=_start,
    relevant=_relevant,
    idle=lambda scan: (
        "no changed file publishes a step terminal, defines/invokes a terminal commit, settles tools or is recovery"
    ),
    prepare=_prepare,
    checks=(check_success_after_failure, check_terminal_before_tools, check_recovery),
    proved=lambda scan, findings: "; ".join(scan.facts),
    phrases={
        "success-after-failure": "success terminal after a failure",
        "terminal-before-tools": "`safe` terminal committed before tools settle",
        "recovery-clears-safe-unreconciled": "recovery clears `safe` claims without reconciling tools",
    },
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="No success terminal after a failure, and no terminal commit marking safe before tools settle.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
