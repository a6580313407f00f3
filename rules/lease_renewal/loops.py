"""The renewal-loop checks: renewal-not-joined, renewal-period, period-unresolved.

Finds heartbeats (a renewal repeated on a schedule, maybe forked), checks a
forked one is joined, and compares its period with the lease constant.
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator

from reviewer.change.changeset import ChangedFile
from reviewer.engine import globs
from reviewer.report.model import Finding, Location
from reviewer.typescript import Call, Expr, Program, names_in

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.giveup import GiveUp, gives_up
from reviewer.rules.lease_renewal.plain import check_plain_joined, helper_calls, plain_loops
from reviewer.rules.lease_renewal.scan import Loop, Scan


# ------------------------------------------------------------------ checks 4-5: renewal loops


def _loops(scan: Scan, paths: Iterable[str]) -> list[Loop]:
    program, opts = scan.program, scan.opts
    out: list[Loop] = []
    for call in fx.in_key_order(c for c in fx.iter_calls(program, paths) if scan.is_renew(c)):
        stages = fx.stages_of(call)
        repeat = next((s for s in stages if fx.matches(s.name, opts.repeat)), None)
        if repeat is None:
            continue
        fork_at = next((i for i, s in enumerate(stages) if fx.matches(s.name, opts.fork)), None)
        schedule = _schedule_of(repeat, call)
        joined = fork_at is not None and any(fx.matches(s.name, opts.join) for s in stages[fork_at + 1 :])
        line, end = fx.outermost(call, stages)
        wrappers = [s.call for s in stages if s.wraps and s.call is not None]
        out.append(
            Loop(
                renew=call,
                path=call.path,
                line=line,
                end_line=end,
                schedule=schedule,
                fork=stages[fork_at].name if fork_at is not None else None,
                fn=call.enclosing,
                joined_inline=joined,
                outer=wrappers[-1] if wrappers else call,
            )
        )
    return out


def _started_heartbeats(scan: Scan, paths: Iterable[str], loops: list[Loop]) -> list[Loop]:
    """Calls of a heartbeat helper (`keepAlive(db, shard)`, a function that returns or runs a renewal
    loop) forked in `paths`: each is a heartbeat as surely as the loop written in place."""
    helpers: dict[tuple[str, int], Loop] = {}
    for loop in loops:
        # The helper's value is the loop (`(db, id) => renew(db, id).pipe(Effect.repeat(..))`): a function
        # that runs a whole job, its heartbeat inside it, is the job, and forking it forks no heartbeat.
        fn = loop.fn
        if fn is not None and fn.name and loop.fork is None and loop.outer.binding[0] == "returned":
            helpers.setdefault((fn.path, fn.line), (fn.name, loop))
    out: list[Loop] = []
    for call, inner in helper_calls(scan, paths, helpers):
        if inner.renew.path == call.path and fx.within(inner.renew, call.span):
            continue
        stages = fx.stages_of(call)
        fork_at = next((i for i, s in enumerate(stages) if fx.matches(s.name, scan.opts.fork)), None)
        if fork_at is None:
            continue
        joined = any(fx.matches(s.name, scan.opts.join) for s in stages[fork_at + 1:])
        line, end = fx.outermost(call, stages)
        wrappers = [s.call for s in stages if s.wraps and s.call is not None]
        out.append(Loop(inner.renew, call.path, line, end, None, stages[fork_at].name, call.enclosing, joined,
                        wrappers[-1] if wrappers else call))
    return out


def loops_in(scan: Scan, path: str) -> list[Loop]:
    """The loops of one file, found once per run (every lost finding in the file asks)."""
    if path not in scan.loops_by_path:
        scan.loops_by_path[path] = _loops(scan, [path]) + plain_loops(scan, [path])
    return scan.loops_by_path[path]


def _schedule_of(repeat: fx.Stage, renew: Call) -> Expr | None:
    """The schedule argument: the last argument that is not the renewal itself."""
    if repeat.call is None:
        return None
    args = [a for a in repeat.call.args if a.call is not renew]
    if not args:
        return None
    options = args[-1].prop("schedule")  # `Effect.repeat({ schedule: .. })`
    return options if options is not None else args[-1]


def check_loops(scan: Scan) -> Iterator[Finding]:
    program, opts = scan.program, scan.opts
    lease, lease_source, lease_changed = _lease(scan)
    scope = set(scan.changed)
    if lease_changed:
        # A shorter lease changes every heartbeat's margin: the files that renew it, wherever they are.
        scope |= set(fx.tree_paths(scan.ctx, opts.allowed_release_sites))
        scope |= set(scan.ctx.patched.files_naming(sorted({fx.last(n) for n in opts.renew})))
    paths = sorted(p for p in scope if not globs.matches(p, opts.ignore_paths))
    loops = _loops(scan, paths) + plain_loops(scan, paths)
    # A heartbeat helper is judged where it is started, which may be a file that holds no renewal.
    helpers = loops + [loop for p in sorted(_heartbeat_files(scan)) if p not in paths for loop in loops_in(scan, p)]
    yield from check_plain_joined(scan, helpers)
    loops += _started_heartbeats(scan, paths, helpers)
    periods: list[str] = []
    for loop in loops:
        touched = scan.files.get(loop.path)
        changed = scan.widened or (touched is not None and touched.touches(loop.line, loop.end_line))
        if loop.fork is not None and (changed or _function_touched(touched, loop)):
            # A join is judged wherever the patch edits the function holding the fork: taking the
            # `Fiber.join` out leaves the heartbeat's own lines untouched.
            yield from _check_joined(scan, loop)
        if loop.schedule is None:
            continue
        period = program.duration_ms(loop.schedule)
        if period is None:
            if changed or lease_changed:
                yield _unresolved_period(scan, loop)
            continue
        if period >= lease * opts.max_period_fraction:
            # Reported wherever it is: scope says whether the patch made it (a changed constant leaves the
            # loop's own lines as they were); the basis never lists a period outside the lease as inside it.
            yield _period_finding(scan, loop, period, lease, lease_source)
            continue
        periods.append(_ms(period))
    resolved = "" if lease_source.startswith(f"`{opts.lease_constant}` =") else " (assumed: the constant did not resolve)"
    bound = f"{_ms(lease * opts.max_period_fraction)} = {opts.max_period_fraction:g} × `{opts.lease_constant}` {_ms(lease)}{resolved}"
    scan.facts.append(
        f"{len(loops)} heartbeat(s), forked ones joined" + (f", period {', '.join(periods)} < {bound}" if periods else "")
    )


def _heartbeat_files(scan: Scan) -> set[str]:
    """Files the changed files import that renew the lease (where a heartbeat they start may live)."""
    return {p for p in scan.imports_of_changed() if any(scan.is_renew(c) for c in fx.iter_calls(scan.program, [p]))}


def _function_touched(touched: "ChangedFile | None", loop: Loop) -> bool:
    fn = fx.outer_named(loop.fn) or loop.fn
    return touched is not None and fn is not None and touched.touches(fn.line, fn.end_line)


def _check_joined(scan: Scan, loop: Loop) -> Iterator[Finding]:
    if loop.joined_inline:
        return
    closed = _failures_give_up(scan, loop)
    if closed is not None:
        scan.facts.append(f"the forked heartbeat at {loop.path}:{loop.line} gives the claim up on every failure: {closed.describe()}")
        return
    usage, name = loop.outer.binding
    if usage not in ("bound", "discarded") or (name is not None and "." in name):
        return  # returned, handed on or stored on an object: someone else owns the fiber
    if usage == "bound" and name is not None and _joined(scan, loop, name):
        return
    fn = fx.outer_named(loop.fn)
    what = f"bound to `{name}` but never joined" if usage == "bound" else "discarded (not bound to a variable)"
    related = [fx.call_loc(loop.renew, f"`{loop.renew.callee}` fails with Lost when the claim is gone")]
    if fn is not None:
        related.append(fx.fn_loc(fn, f"`{fn.name}` never joins, awaits or races the heartbeat fiber"))
    guarded = _guarded_work(loop)
    if guarded is not None:
        related.append(fx.call_loc(guarded, f"`{guarded.callee_written}` runs next without racing the heartbeat"))
    yield (
        scan.ctx.finding(
            "renewal-not-joined",
            title=f"Forked heartbeat {('`' + name + '` ') if name else ''}is never joined",
            message=(
                f"The renewal loop at {loop.path}:{loop.line} (`{loop.renew.callee}` repeated, then "
                f"`{fx.strip_call_marks(loop.fork or '')}`) is {what} in {fx.describe(fn)}. When a renewal finds the "
                "claim lost the fiber fails silently and the work it guards keeps running without the lock. Join it "
                "(`Effect.raceFirst(Fiber.join(heartbeat))`, `Fiber.join`) so a lost claim interrupts the work."
            ),
            location=fx.loc(loop.path, loop.line, loop.end_line),
            related=fx.unique_sorted(related),
            failure_sequence=[
                "the heartbeat renews the claim in a forked fiber",
                "the claim is lost (deleted in a commit, or expired and taken over)",
                f"`{fx.last(loop.renew.callee)}` fails with Lost and the forked fiber dies; nobody observes its exit",
                "the guarded work runs on without a claim while another owner runs the same work",
            ],
            anchor=f"{loop.renew.normalized}:{loop.fork}",
        )
    )


def _failures_give_up(scan: Scan, loop: Loop) -> GiveUp | None:
    """A catch-everything stage before the fork whose handler gives up what the renewal holds: the fiber
    never dies, and a failed renewal leaves nothing running on the claim, so nothing need wait on it."""
    for stage in fx.stages_of(loop.renew):
        if fx.matches(stage.name, scan.opts.fork):
            return None
        if stage.call is not None and stage.call.args and fx.matches(stage.name, scan.opts.catch_all):
            found = gives_up(scan.program, stage.call.args[-1], loop.renew, stage.call, tuple(scan.opts.fail))
            if found is not None:
                return found
    return None


def _guarded_work(loop: Loop) -> Call | None:
    """The first call after the loop in the same body: the work the heartbeat should guard."""
    if loop.fn is None:
        return None
    later = [c for c in loop.fn.calls if c.line > loop.end_line]
    return min(later, key=lambda c: (c.line, -c.end_line), default=None)


def _joined(scan: Scan, loop: Loop, name: str) -> bool:
    """Is the fiber bound to `name` joined/awaited/raced anywhere in the same function?"""
    fn = fx.outer_named(loop.fn) or loop.fn
    opts = scan.opts
    calls = fn.all_calls if fn is not None else tuple(fx.iter_calls(scan.program, [loop.path]))
    for call in calls:
        if call.line <= loop.end_line and call.line >= loop.line:
            continue
        if fx.matches(call.callee, opts.join):
            if any(fx.mentions(a, name) for a in call.args):
                return True
        if call.method in opts.join_members and fx.owner(call.callee) == name:
            return True
    # `heartbeat.await` read as a property (Effect 4 fibers)
    if fn is None:
        return False
    for member in opts.join_members:
        for read in scan.program.invocations(member, fn.path):
            if fn.line <= read.line <= fn.end_line and read.expr.member_path == f"{name}.{member}":
                return True
    return False


def _lease(scan: Scan) -> tuple[float, str, bool]:
    """(lease ms, where it came from, whether the patch changed its value)."""
    opts = scan.opts
    patched = _resolve_lease(scan.program, scan, patched=True)
    base = _resolve_lease(scan.ctx.base_program, scan, patched=False)
    if patched is None:
        fallback = float(opts.lease_ms_fallback)
        return fallback, f"`{opts.lease_constant}` could not be resolved; assumed {_ms(fallback)}", False
    value, where = patched
    changed = base is not None and base[0] != value
    was = f", was {_ms(base[0])} before the patch" if changed and base is not None else ""
    return value, f"`{opts.lease_constant}` = {_ms(value)} ({where}{was})", changed


def _resolve_lease(program: Program, scan: Scan, patched: bool) -> tuple[float, str] | None:
    name = scan.opts.lease_constant
    candidates: list[str] = []
    for call in fx.iter_calls(scan.program, scan.changed) if patched else ():
        if scan.is_renew(call):
            candidates.append(call.path)
            definition = scan.program.definition(call.path, call.callee_text)
            if definition is not None:
                candidates.append(definition.path)
    candidates += list(scan.changed) + list(fx.tree_paths(scan.ctx, scan.opts.allowed_release_sites))
    # Each renewal adds its file again; the first file that resolves wins, so asking once per file is the same.
    for path in dict.fromkeys(candidates):
        value = program.value(path, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            module = program.module(path)
            imp = module.imports.get(name) if module is not None else None
            where = imp.module if imp is not None and imp.module else path
            return float(value), where
    return None


def _lease_locations(scan: Scan) -> list[Location]:
    """Where the lease constant is declared (for the period finding's evidence)."""
    if scan.lease_locations is None:
        scan.lease_locations = tuple(_find_lease_locations(scan))
    return list(scan.lease_locations)


def _find_lease_locations(scan: Scan) -> list[Location]:
    name = scan.opts.lease_constant
    paths = set(scan.changed) | set(fx.imported_paths(scan.program, scan.changed))
    paths |= set(fx.imported_paths(scan.program, paths))
    for module in fx.modules(scan.program, paths):
        if name in module.declarations and name not in module.imports:
            expr = module.constant(name)
            if expr is not None:
                return [fx.loc(module.path, expr.line, expr.end_line, f"`{name} = {expr.written}`")]
    return []


def _ms(value: float) -> str:
    if math.isinf(value):
        return "an unbounded delay (it grows without limit)"
    return f"{value / 1000:g} s" if value >= 1000 else f"{value:g} ms"


def _constant_locations(scan: Scan, expr: Expr) -> list[Location]:
    """Where the module constants a period is written with are declared (`HEARTBEAT_MS`,
    `Schedule.spaced(HEARTBEAT_EVERY)`: here or imported), in name order."""
    found = (_constant_location(scan, expr, name) for name in sorted(names_in(expr)))
    return [loc for loc in found if loc is not None]


def _constant_location(scan: Scan, expr: Expr, name: str) -> Location | None:
    module = scan.program.module(expr.path)
    if module is None or not name.isidentifier():
        return None
    imp = module.imports.get(name)
    if imp is not None:
        module = scan.program.module(imp.module) if imp.module else None
        name = imp.imported
        if module is None or name in ("*", "default"):
            return None
    value = module.constant(name)
    return fx.loc(module.path, value.line, value.end_line, f"`{name} = {value.written}`") if value is not None else None


def _period_location(scan: Scan, loop: Loop) -> tuple[Location, list[Location]]:
    """Where the period finding points, and the schedule's evidence: the loop (a statement loop or timer:
    its period argument), or, when the patch left the loop as it was, the period's constant it changed:
    a finding belongs on the line that made it."""
    schedule = loop.schedule
    assert schedule is not None
    written = fx.loc(schedule.path, schedule.line, schedule.end_line, f"the schedule: `{schedule.written}`")
    at = written if loop.plain else fx.loc(loop.path, loop.line, loop.end_line)
    declared = _constant_locations(scan, schedule)
    own = scan.files.get(at.path)
    # A shorter lease stays reported at each loop it leaves too slow (the lease is their evidence).
    if not (own is not None and own.touches(at.line, at.end_line)):
        for candidate in declared:
            touched = scan.files.get(candidate.path)
            if touched is not None and touched.touches(candidate.line, candidate.end_line):
                at = fx.loc(candidate.path, candidate.line, candidate.end_line)
                break
    return at, [written, *declared]


def _period_finding(scan: Scan, loop: Loop, period: float, lease: float, source: str) -> Finding:
    schedule = loop.schedule
    assert schedule is not None
    fraction = scan.opts.max_period_fraction
    location, evidence = _period_location(scan, loop)
    return scan.ctx.finding(
        "renewal-period",
        title=(
            f"Heartbeat every {_ms(period)} against a {_ms(lease)} lease"
            if not math.isinf(period)
            else f"Heartbeat backs off without limit against a {_ms(lease)} lease"
        ),
        message=(
            f"The renewal loop at {loop.path}:{loop.line} renews `{loop.renew.callee}` every {_ms(period)} "
            f"(`{schedule.written}`), but {source}: the period must stay below {fraction:g} of the lease "
            f"({_ms(lease * fraction)}). One late tick lets the claim expire while the run is alive."
        ),
        location=location,
        related=[*evidence, *_lease_locations(scan)],
        failure_sequence=[
            f"one renewal is delayed by more than {_ms(max(lease - period, 0))} (GC pause, busy SQLite writer), so "
            f"{_ms(lease)} pass without a renewal",
            "the claim's expires_at passes while the run is still working",
            "startup recovery or another process takes the claim over",
            "the next renewal fails with Lost after the new owner already started the same work",
        ],
        anchor=f"{loop.renew.normalized}:{schedule.normalized}",
    )


def _unresolved_period(scan: Scan, loop: Loop) -> Finding:
    schedule = loop.schedule
    assert schedule is not None
    return scan.ctx.finding(
        "period-unresolved",
        title=f"Heartbeat period of `{loop.renew.callee}` not computed",
        message=(
            f"The renewal loop at {loop.path}:{loop.line} repeats on `{schedule.written}`, which does not fold "
            f"to a constant period, so it was not compared with the lease ({scan.opts.max_period_fraction:g} of "
            f"`{scan.opts.lease_constant}`). Check the period by hand."
        ),
        location=fx.loc(loop.path, loop.line, loop.end_line),
        related=[fx.loc(schedule.path, schedule.line, schedule.end_line, f"the schedule: `{schedule.written}`")],
        anchor=f"{loop.renew.normalized}:{schedule.normalized}:unresolved",
    )
