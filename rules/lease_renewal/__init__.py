"""lease-renewal: an execution claim stays owned until every finalizer of its run is done.

DESIGN.md family 1. The claim row is the Session's uniqueness lock: while it
exists nobody else can start the Session. So it may only be deleted where the
run is over (a finalizer of the run in the execution module, or the cleanup the
coordinator runs after the runner's finalizers), its loss must fail closed, the
renewal loop that keeps it alive must be joined, and must renew well inside
the lease.

This package: the declarations (`spec`), the per-run state (`scan`), the
coordinator's interrupt (`coordinator`), one module per check or group of
checks (`interrupt`, `sites`, `lost`, `loops`), and here the family on
the engine's template: which changed files use the claim idioms, and the basis.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.report.model import Finding
from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template
from reviewer.typescript import Module, Role

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.interrupt import check_interrupt_commit
from reviewer.rules.lease_renewal.loops import check_loops
from reviewer.rules.lease_renewal.lost import check_lost, mentions_lost
from reviewer.rules.lease_renewal.plain import check_plain_lost
from reviewer.rules.lease_renewal.scan import Scan
from reviewer.rules.lease_renewal.sites import check_release_sites
from reviewer.rules.lease_renewal.vocabulary import HINTS, infer
from reviewer.rules.lease_renewal.spec import CHECKS, FAMILY_ID, OPTIONS

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


# ------------------------------------------------------------------ run


def _relevant(scan: Scan, module: Module) -> bool:
    """Does this file use the claim idioms at all (else the family does not apply to it)?"""
    opts = scan.opts
    for call in module.calls():
        if scan.is_release(call) or scan.is_renew(call):
            return True
        if fx.matches(call.callee, opts.catch_tag + opts.catch_tags) and mentions_lost(call.expr, opts):
            return True
    for hook in opts.interrupt_hooks:
        if scan.program.callbacks(hook, module.path):
            return True
    if opts.lease_constant in module.imports or opts.lease_constant in module.declarations:
        return True
    # A changed call of a helper that releases or renews (`closeOut(db, claim)`, the helper
    # unchanged) changes what the claim does as surely as a release written here; asked only
    # when the tree names the claim API at all (one grep, shared), since a walk per call costs.
    if not _api_named(scan):
        return False
    claim_calls = list(opts.release + opts.renew)
    return any(call.changed and scan.program.reaches(call.expr, claim_calls, max_depth=3) for call in module.calls())


def _api_named(scan: Scan) -> bool:
    """Some file of the patched tree writes the claim API's name (its namespace, or a bare name)."""
    if scan.api_named is None:
        names = scan.opts.release + scan.opts.renew
        words = sorted({fx.owner(n).rsplit(".", 1)[-1] or fx.last(n) for n in names} - {""})
        scan.api_named = bool(scan.ctx.patched.words_present(words)) if words else False
    return scan.api_named


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a claim violation."""
    names = opts.release + opts.renew + opts.acquire + opts.lost_tags + opts.interrupt_hooks
    return sorted(set(names) | {opts.lease_constant})


def _start(ctx: "ReviewContext") -> Scan:
    return Scan(ctx, ctx.program, ctx.opts, files=ctx.changeset.by_path)


def _proved(scan: Scan, findings: tuple[Finding, ...]) -> str:
    return "; ".join(scan.facts) + f" ({len(scan.changed)} file(s))"


TEMPLATE = Template(
    reading=Reading(
        idioms="claim",
        unchecked="claim releases or renewals",
        region_title="Unparsed region in a file with claim handling",
        tokens=_idiom_tokens,
        ignore="ignore_paths",
        roles=(Role.FINALIZER, Role.FAILURE_HANDLER),
        handled="claim releases",
    ),
    start=_start,
    relevant=_relevant,
    idle=lambda scan: (
        "no changed file releases, renews or catches a session execution claim, or defines an interruption hook"
    ),
    checks=(check_interrupt_commit, check_release_sites, check_lost, check_plain_lost, check_loops),
    proved=_proved,
    phrases={
        "release-in-interrupt-commit": "claim released in the interruption commit",
        "release-outside-finalizer": "claim released outside the run's finalizers",
        "lost-suppressed": "`Lost` swallowed",
        "renewal-not-joined": "forked heartbeat never joined",
        "renewal-period": "renewal period not inside the lease",
    },
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="An execution claim stays owned until every finalizer of its run has completed.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
