"""The release-outside-finalizer check: a changed release runs only in the run's final cleanup.

Allowed: finalizers of code that holds a claim (a function that acquires or renews
it, or the configured execution module) and what they reach, the
coordinator's cleanup, claim-owning files, stale-claim cleanup, and the
rollback of a claim this code just acquired.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from reviewer.engine import globs
from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Program, Role, callers_of, guards, run_calls

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.coordinator import coordinator_locations, is_coordinator_interrupt
from reviewer.rules.lease_renewal.scan import Scan


# ------------------------------------------------------------------ check 2: release outside finalizer


def check_release_sites(scan: Scan) -> Iterator[Finding]:
    program, opts = scan.program, scan.opts
    candidates = [
        c
        for c in fx.iter_calls(program, scan.changed)
        if scan.is_release(c) and (c.changed or scan.widened) and not _owns_api(program, c, opts)
    ]
    allowed = _allowed_releases(scan)
    checked = 0
    for call in fx.in_key_order(candidates):
        checked += 1
        if fx.key(call) in scan.reported_releases:
            continue
        if globs.matches(call.path, opts.allowed_release_paths):
            continue
        if fx.key(call) in allowed:
            continue
        if scan.is_run_site(call) and (
            Role.FINALIZER in call.confined_roles or scan.released_as_finalizer(call)
            or fx.matches(call.callee, opts.stale_claim_cleanup)
        ):
            continue
        if _rolls_back(scan, call):
            continue
        stopped = _after_work_stopped(call)
        if stopped is not None:
            scan.facts.append(f"the release at {call.path}:{call.line} hands the claim over after "
                              f"`{stopped.callee_written}` at {stopped.path}:{stopped.line} stopped the work")
            continue
        yield _outside_finding(scan, call)
    helpers, through_helpers = _helper_releases(scan, allowed, {fx.key(c) for c in candidates})
    yield from through_helpers
    through = f" and {helpers} changed call(s) of a helper that releases" if helpers else ""
    scan.facts.append(
        f"{checked} changed release(s){through}, each in a run finalizer, the coordinator's cleanup or an allowed site"
    )


def _helper_releases(
    scan: Scan, allowed: set[tuple[str, int, str]], direct: set[tuple[str, int, str]]
) -> tuple[int, list[Finding]]:
    """A changed call of a helper that releases (`yield* cleanupClaim(db, claim)`, the helper unchanged or
    in a file no rule reviews) releases as surely as the release itself: judged where it is called. A
    release this check judges itself (changed, in a reviewed file) is judged there, once."""
    program, opts = scan.program, scan.opts
    judged = 0
    found: list[Finding] = []
    for call in fx.in_key_order([c for c in fx.iter_calls(program, scan.changed) if c.changed or scan.widened]):
        if scan.is_release(call) or scan.is_renew(call) or _owns_api(program, call, opts):
            continue
        paths = program.reaches(call.expr, list(opts.release), max_depth=3)
        path = next((p for p in sorted(paths, key=lambda p: [fx.key(c) for c in p]) if p[0] is call), None)
        if path is None or len(path) < 2:
            continue
        judged += 1
        release = path[-1]
        if fx.key(release) in direct:
            continue
        if fx.key(call) in scan.reported_releases or fx.key(call) in allowed or fx.key(release) in scan.reported_releases:
            continue
        if globs.matches(call.path, opts.allowed_release_paths) or Role.FINALIZER in call.confined_roles:
            continue
        if _holders_finalizer(scan, release):
            continue  # the holding run's own scope finalizer (`Effect.addFinalizer(() => drop(..))`): released at its end
        if globs.matches(release.path, opts.allowed_release_paths) and globs.matches(call.path, opts.allowed_release_paths):
            continue
        if _rolls_back(scan, call):
            continue
        scan.reported_releases.add(fx.key(call))
        finding = _outside_finding(scan, call)
        via = " → ".join(f"`{c.callee_written}`" for c in path)
        related = (*finding.related, fx.call_loc(release, f"the release it reaches ({via})"))
        found.append(dataclasses.replace(
            finding,
            title=f"`{call.callee}` releases the claim outside the run's final cleanup",
            message=f"`{call.callee}` reaches `{release.callee}` ({release.path}:{release.line}). " + finding.message,
            related=fx.unique_sorted(list(related)),
        ))
    return judged, found


def _holders_finalizer(scan: Scan, release: Call) -> bool:
    """`release` runs in a finalizer of a function that holds the lease while it works: it renews it
    (directly or through a keepalive helper) in the same scope. An admin action's `Effect.ensuring`
    around a release is no run's final cleanup."""
    if Role.FINALIZER not in release.roles and Role.FINALIZER not in release.confined_roles:
        return False
    owner = fx.outer_named(release.enclosing)
    if owner is None:
        return False
    renew = list(scan.opts.renew)
    return any(scan.is_renew(c) or scan.program.reaches(c.expr, renew, max_depth=2) for c in owner.all_calls)


def _rolls_back(scan: Scan, release: Call) -> bool:
    """A release after an acquire/takeover in the same function: the claim is this code's own and no run holds it."""
    fn = fx.outer_named(release.enclosing) or release.enclosing
    if fn is None:
        return False
    # The acquire must run whenever the release does: under no condition (and in no callback
    # region) the release is not under too. A dead `if (never) acquire()` proves nothing.
    release_guards = {(g.test, g.holds, g.kind) for g in guards(release, fn)}
    claim = release.args[-1].normalized if release.args else None
    # Only acquires that run with the function (not in a closure it merely defines), of the same claim.
    for call in run_calls(fn):
        if not fx.matches(call.callee, scan.opts.acquire) or (call.line, call.end_line) >= (release.line, release.line):
            continue
        if claim is None or (call.binding != ("bound", claim) and all(arg.normalized != claim for arg in call.args)):
            continue  # `const claim = yield* acquire(..)` or `acquire(db, claim)`: the claim released
        if Role.FAILURE_HANDLER in call.roles and Role.FAILURE_HANDLER not in release.roles:
            continue  # runs only on a failure the release's path need not take
        if all((g.test, g.holds, g.kind) in release_guards for g in guards(call, fn)):
            return True
    return False


# Calls that interrupt fibers and wait until they have stopped.
_INTERRUPTS = ("Fiber.interrupt", "Fiber.interruptAll", "Fiber.interruptAs", "FiberSet.clear", "FiberMap.clear",
               "FiberHandle.clear")
# Calls that wait for fibers to end.
_JOINS = ("Fiber.join", "Fiber.joinAll", "Fiber.await", "Fiber.awaitAll")


def _after_work_stopped(release: Call) -> Call | None:
    """A hand-off: before the release, on every path to it, the work was interrupted and waited for
    (`Fiber.interrupt(work)`, or `Fiber.joinAll(stopping)` where `stopping` collects forks of an
    `interrupt..` call). The run no longer executes, so the claim is free to give up. Returns the call
    that stopped it."""
    fn = fx.outer_named(release.enclosing) or release.enclosing
    if fn is None:
        return None
    release_guards = {(g.test, g.holds, g.kind) for g in guards(release, fn)}
    earlier = [c for c in run_calls(fn) if (c.line, c.end_line) < (release.line, release.line)]
    for call in earlier:
        if not all((g.test, g.holds, g.kind) in release_guards for g in guards(call, fn)):
            continue  # runs only on some of the paths the release takes
        if fx.matches(call.callee, _INTERRUPTS):
            return call
        if fx.matches(call.callee, _JOINS) and call.args and _collects_interrupts(earlier, call.args[0].identifier):
            return call
    return None


def _collects_interrupts(calls: list[Call], name: str | None) -> bool:
    """`name` is a list the function pushes forks of an interruption into (`stopping.push(yield* fork(m.interruptX(..)))`)."""
    if name is None:
        return False
    for call in calls:
        if call.method != "push" or call.receiver is None or call.receiver.identifier != name:
            continue
        if any(inner.method.startswith("interrupt") for arg in call.args for inner in arg.calls):
            return True
    return False


def _owns_api(program: Program, call: Call, opts: Options) -> bool:
    """Calls inside the module that defines the release API itself (one release built on another):
    the file exports itself under the API's namespace *and* the release it calls is declared in it.
    Naming a file after the API (`export * as SessionExecutionClaim from "./finish"`) owns nothing."""
    module = program.module(call.path)
    if module is None or module.namespace is None or module.namespace != fx.owner(call.callee):
        return False
    callee = call.callee_expr
    target = program.function_of(callee) if callee is not None else None
    return target is not None and target.path == call.path


def _allowed_releases(scan: Scan) -> set[tuple[str, int, str]]:
    """Releases reached from a finalizer of the execution module or from the coordinator's cleanup."""
    program, opts = scan.program, scan.opts
    roots: list[Expr | Call] = []
    site_paths = set(fx.tree_paths(scan.ctx, opts.allowed_release_sites)) | set(scan.changed)
    finalizer_calls = [
        c for c in fx.iter_calls(program, site_paths) if Role.FINALIZER in c.confined_roles and scan.is_run_site(c)
    ]
    covered: set[int] = set()
    # Outermost first: a call nested in another finalizer call is covered by the outer one's reach.
    for call in sorted(finalizer_calls, key=lambda c: (c.path, c.line, -c.end_line)):  # stable: outer calls first
        if id(call) in covered:
            continue
        roots.append(call)
        covered.update(id(inner) for inner in call.expr.calls)
    for call in fx.iter_calls(program, set(scan.changed) | site_paths):
        if is_coordinator_interrupt(call, opts):
            args = call.args
            if len(args) > opts.coordinator_cleanup_arg:
                roots.append(args[opts.coordinator_cleanup_arg])
    allowed: set[tuple[str, int, str]] = set()
    spans = [fx.span(r) for r in roots]
    for root in roots:
        if isinstance(root, Call):
            if scan.is_release(root):
                allowed.add(fx.key(root))
                continue
            start: Expr = root.expr
        else:
            start = root
            for inner in start.calls:
                if scan.is_release(inner):
                    allowed.add(fx.key(inner))
        for path in program.reaches(start, opts.release, max_depth=4):
            if not _also_ordinary(scan, path, spans, site_paths):
                allowed.add(fx.key(path[-1]))
    return allowed


def _also_ordinary(scan: Scan, path: tuple[Call, ...], spans: list[tuple[str, int, int]], site_paths: set[str]) -> bool:
    """Whether a helper on the way from a finalizer to the release is also called outside every
    finalizer and coordinator cleanup: then the release also runs mid-run, and a finalizer that
    calls the same helper must not make it look safe."""
    searched = set(scan.changed) | site_paths
    for call in path[1:]:
        helper = call.enclosing
        while helper is not None and not helper.name:
            helper = helper.parent
        if helper is None:
            continue
        for caller in callers_of(scan.program, helper, searched):
            if Role.FINALIZER in caller.confined_roles:
                continue
            if any(fx.within(caller, span) for span in spans):
                continue
            return True
    return False


def _outside_finding(scan: Scan, call: Call) -> Finding:
    fn = fx.outer_named(call.enclosing)
    where = f"in {fx.describe(fn)}" if fn is not None else "at module level"
    role = call.role.value
    released = scan.release_name(call)
    shown = f"`{call.callee}`" if released == call.callee else f"`{call.callee}` (which runs `{released}`)"
    related: list[Location] = []
    if fn is not None:
        related.append(fx.fn_loc(fn, f"`{fn.name}` is not a finalizer of the run"))
    related.extend(coordinator_locations(scan))
    return scan.ctx.finding(
        "release-outside-finalizer",
        title=f"`{released}` runs outside the run's final cleanup",
        message=(
            f"{shown} at {call.path}:{call.line} runs {where} with role {role}: it is not a finalizer of "
            "the run in the execution module, nor the cleanup handed to the coordinator's interrupt. Releasing the "
            "claim there frees the lease while the run or its finalizers may still be executing. Move the "
            "release into the run's `Effect.onExit`/`Effect.ensuring` (or the coordinator's cleanup)."
        ),
        location=fx.call_loc(call),
        related=fx.unique_sorted(related),
        failure_sequence=[
            f"`{released}` deletes the claim row while the run is still in progress",
            "another process (or the next wake) sees no claim and inserts its own for the same work",
            "both runs append events and tool outcomes for the same work",
            "the first run's next renewal finds its claim Lost only after the damage is done",
        ],
        anchor=call.normalized,
    )
