"""The release-in-interrupt-commit check: no claim release while an interruption commits.

Follows interruption hooks and the commits of interruption-event publishes
to the releases they reach, and gathers where the hook is invoked (and from
which finalizer) as evidence.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Call, Callback, Expr, Function, Role

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.coordinator import coordinator_locations
from reviewer.rules.lease_renewal.scan import Scan


# ------------------------------------------------------------------ check 1: release in interrupt commit


def check_interrupt_commit(scan: Scan) -> Iterator[Finding]:
    program, opts = scan.program, scan.opts
    hooks_seen = 0
    for hook in opts.interrupt_hooks:
        files = sorted(set(scan.changed) | set(_files_mentioning(scan, hook)))
        for cb in sorted(program.callbacks(hook, files), key=lambda c: (c.path, c.line)):
            hooks_seen += 1
            start: Function | Expr = cb.function if cb.function is not None else cb.value
            reached = program.reaches(start, opts.release, max_depth=4)
            for path in sorted(reached, key=lambda p: [fx.key(c) for c in p]):
                release = path[-1]
                if fx.key(release) in scan.reported_releases:
                    continue
                touched = scan.files.get(cb.path)
                if not (scan.widened or any(c.changed for c in path)
                        or (touched is not None and touched.touches(cb.line, cb.end_line))):
                    continue  # pre-existing wiring the patch did not touch
                scan.reported_releases.add(fx.key(release))
                scan.hook_releases.add(fx.key(release))
                yield _hook_finding(scan, cb, path)
    scan.facts.append(f"{hooks_seen} `{'`/`'.join(opts.interrupt_hooks)}` hook(s) reach no claim release")
    yield from _check_interrupt_events(scan)


def _files_mentioning(scan: Scan, word: str) -> list[str]:
    """Unchanged files under `hook_paths` that may define `word` (a hook there may now reach a changed helper)."""
    return list(fx.files_naming(scan.ctx, scan.opts.hook_paths, (word,), scan.opts.ignore_paths))


def _hook_finding(scan: Scan, cb: Callback, path: tuple[Call, ...]) -> Finding:
    release = path[-1]
    related: list[Location] = []
    if not (release.path == cb.path and cb.line <= release.line <= cb.end_line):
        via = " → ".join(f"`{c.callee_written}`" for c in path)
        related.append(fx.call_loc(release, f"the release the hook reaches ({via})"))
    # Every step of the way: a patch that changes only a middle hop (a helper that now calls a
    # releasing one) is what makes the hook release, so the finding is the patch's.
    related.extend(fx.call_loc(step, f"on the way to the release: `{step.callee_written}`") for step in path[:-1])
    invokers = _invokers(scan, cb.prop, [cb])
    related.extend(invokers)
    related.extend(coordinator_locations(scan))
    invoker_note = f" In {invokers[0].path}, {invokers[0].note}." if invokers else ""
    related.extend(_invoker_callers(scan, cb.prop, [cb]))
    at = "" if release.path == cb.path and cb.line <= release.line <= cb.end_line else f" ({release.path}:{release.line})"
    message = (
        f"The `{cb.prop}` hook at {cb.path}:{cb.line} runs `{release.callee}`{at}, deleting the claim row while the interruption is being "
        f"committed.{invoker_note} The runner's finalizers "
        "(tool fibers, scope cleanup) run only after that commit, so the lease is gone while the old "
        "run still executes. Record the interruption in the commit (e.g. `phase: \"interrupted\"`) and release "
        "the claim in the run's own finalizer or the coordinator's interrupt cleanup."
    )
    return scan.ctx.finding(
        "release-in-interrupt-commit",
        title=f"`{cb.prop}` releases the claim before the run's finalizers finish",
        message=message,
        location=fx.loc(cb.path, cb.line, cb.end_line),
        related=fx.unique_sorted(related),
        failure_sequence=_interrupt_sequence(release),
        anchor=f"{cb.prop}:{release.normalized}",
    )


def _interrupt_sequence(release: Call) -> list[str]:
    return [
        f"Cancellation commits Step.Interrupted and `{release.callee}` deletes the claim row",
        "the runner keeps running its finalizers (interrupting tool fibers, scope cleanup), which can block",
        "another process (or the next wake) inserts a successor claim for the same work and starts it",
        "two owners run the same work at once; the old run's heartbeat then finds its claim Lost",
    ]


def _check_interrupt_events(scan: Scan) -> Iterator[Finding]:
    """A release reached from the `commit` of an interruption event publish, hook or not."""
    program, opts = scan.program, scan.opts
    # Filtered before sorting: the sort key normalises calls that share a line, and
    # only interruption publishes need an order.
    publishes = [c for c in fx.iter_calls(program, scan.changed) if _publishes_interruption(c, opts)]
    for call in fx.in_key_order(publishes):
        args = call.args
        for arg in args[1:]:
            for name, value in arg.props:
                if name in opts.interrupt_hooks or not _is_function_like(value):
                    continue
                reached = program.reaches(value, opts.release, max_depth=4)
                for path in sorted(reached, key=lambda p: [fx.key(c) for c in p]):
                    release = path[-1]
                    if fx.key(release) in scan.reported_releases or not (
                            scan.widened or any(c.changed for c in path) or call.changed):
                        continue
                    scan.reported_releases.add(fx.key(release))
                    first = path[0]
                    event, shown = args[0].normalized, args[0].written  # the anchor's, the reader's
                    related = [fx.call_loc(call, f"publishes `{shown}` with this commit")]
                    if first is not release:
                        related.append(fx.call_loc(release, "the release the commit reaches"))
                    related.extend(fx.call_loc(step, f"on the way to the release: `{step.callee_written}`")
                                   for step in path[1:-1])
                    related.extend(coordinator_locations(scan))
                    yield (
                        scan.ctx.finding(
                            "release-in-interrupt-commit",
                            title=f"`{shown}` commit releases the claim before the run's finalizers finish",
                            message=(
                                f"The `{name}` of the `{shown}` publish at {call.path}:{call.line} runs "
                                f"`{release.callee}` ({release.path}:{release.line}), so the claim row is deleted "
                                "in the same transaction that records the interruption, before the interrupted "
                                "run's finalizers have completed. Release the claim only in the run's finalizer "
                                "or in the coordinator's interrupt cleanup."
                            ),
                            location=fx.call_loc(first),
                            related=fx.unique_sorted(related),
                            failure_sequence=_interrupt_sequence(release),
                            anchor=f"{event}:{release.normalized}",
                        )
                    )


def _publishes_interruption(call: Call, opts: Options) -> bool:
    args = call.args
    return bool(args) and fx.matches(args[0].member_path or fx.ref_name(args[0]), opts.interrupt_events)


def _is_function_like(expr: Expr) -> bool:
    return expr.kind in ("arrow_function", "function_expression", "function", "identifier", "member_expression", "call_expression")


def _invokers(scan: Scan, prop: str, skip: Sequence[Callback] = ()) -> list[Location]:
    """Where the hook runs: `hooks.<prop>()` in the changed files and the files they import."""
    program = scan.program
    paths = _around_hooks(scan, skip)
    out: list[Location] = []
    found = []
    for inv in sorted(program.invocations(prop, paths), key=lambda i: (i.path, i.line)):
        if inv.call is None or fx.last(inv.call.callee) != prop:
            continue
        if any(cb.path == inv.path and cb.line <= inv.line <= cb.end_line for cb in skip):
            continue  # the hook calling a look-alike of itself is not its invoker
        host = fx.publish_around(scan.program, inv.path, inv.line)
        found.append((inv, fx.event_of(host) if host is not None else None))
    # Prefer invokers that commit an interruption event; fall back to any.
    committing = [(inv, host) for inv, host in found if host and fx.matches(host, scan.opts.interrupt_events)]
    for inv, host in committing or found:
        named = fx.outer_named(inv.enclosing, skip=("commit",) + scan.opts.interrupt_hooks)
        event = f" while committing `{host}`" if host else ""
        if named is not None:
            out.append(fx.fn_loc(named, f"`{named.name}` runs the hook (:{inv.line}){event}"))
        else:
            out.append(fx.loc(inv.path, inv.line, inv.end_line, f"runs the hook{event}"))
    return out


def _around_hooks(scan: Scan, hooks: Sequence[Callback]) -> list[str]:
    """The changed files, the hooks' files, and the files they import: where a hook is invoked."""
    own = {cb.path for cb in hooks}
    # The imports of a union are the union of the imports: the changed files' part is read once per run.
    return sorted(set(scan.changed) | own | scan.imports_of_changed() | set(fx.imported_paths(scan.program, own)))


def _invoker_callers(scan: Scan, prop: str, skip: Sequence[Callback]) -> list[Location]:
    """Where the invoking helper is called from a finalizer (e.g. `Effect.onInterrupt`), before more cleanup."""
    program = scan.program
    paths = _around_hooks(scan, skip)
    names = set()
    for inv in program.invocations(prop, paths):
        if any(cb.path == inv.path and cb.line <= inv.line <= cb.end_line for cb in skip):
            continue
        named = fx.outer_named(inv.enclosing, skip=("commit",) + scan.opts.interrupt_hooks)
        if named is not None and named.name:
            names.add(named.name)
    out: list[Location] = []
    for call in _finalizer_calls_named(scan, paths, names):
        if call.enclosing is not None:
            later = [c for c in call.enclosing.calls if call.precedes(c)]
            if later:
                then = ", ".join(f"`{c.callee_written}`" for c in later[:2])
                note = f"the interruption finalizer calls `{call.callee_written}` first (:{call.line}), then {then}: those run after the claim is gone"
            else:
                note = f"the interruption finalizer runs `{call.callee_written}` (:{call.line}); the run's other finalizers follow it"
            out.append(fx.fn_loc(call.enclosing, note))
    return out


def _finalizer_calls_named(scan: Scan, paths: Sequence[str], names: set[str]) -> list[Call]:
    """Finalizer calls of `names` in `paths`, in file and source order (as `iter_calls` yields them).

    Asked once per hook finding over every changed file: each file's finalizer calls
    are indexed by method once per run instead of every call being scanned again.
    """
    out: list[Call] = []
    if not names:
        return out
    for path in sorted(set(paths)):
        table = _finalizers_of(scan, path)
        hits = sorted((hit for name in names for hit in table.get(name, ())), key=lambda hit: hit[0])
        out.extend(call for _, call in hits)
    return out


def _finalizers_of(scan: Scan, path: str) -> dict[str, list[tuple[int, Call]]]:
    if path not in scan.finalizers_by_path:
        table: dict[str, list[tuple[int, Call]]] = {}
        for position, call in enumerate(fx.iter_calls(scan.program, [path])):
            if Role.FINALIZER in call.roles and call.enclosing is not None:
                table.setdefault(call.method, []).append((position, call))
        scan.finalizers_by_path[path] = table
    return scan.finalizers_by_path[path]
