"""lease-renewal in plain async code: the same invariants, written with statements instead of Effect.

A lease kept with `async`/`await` has the same four ways to go wrong as one kept
with combinators, each spelt differently:

- a renewal awaited in a `try` whose `catch` neither throws nor rejects turns a
  lost lease into going on (lost-suppressed);
- the renewal itself stops failing when its write matches no row: in the base
  it threw (or failed), after the patch it only logs (lost-suppressed);
- a heartbeat is a renewal inside a loop that waits between turns
  (`while (await sleep(ms)) await renew(..)`) or inside a `setInterval`
  callback: its period is the wait (renewal-period, via loops.py);
- a heartbeat started as a promise that is never awaited, raced or handed on
  fails with nobody listening (renewal-not-joined).
"""

from __future__ import annotations

from typing import Iterable, Iterator

from reviewer.report.model import Finding
from reviewer.typescript import (
    Call,
    Function,
    awaited,
    catching,
    function_fails,
    later_uses,
    repeating_spans,
    sql_statement,
)

from reviewer.rules import _effect as fx
from reviewer.rules.lease_renewal.scan import Loop, Scan

_TIMERS = frozenset({"setInterval"})
_WRITES = frozenset({"insert", "update"})


# ------------------------------------------------------------------ heartbeats as loops and timers


def plain_loops(scan: Scan, paths: Iterable[str]) -> list[Loop]:
    """Renewals repeated by a waiting loop or an interval timer in `paths` (see the module docstring)."""
    out: list[Loop] = []
    for path in sorted(set(paths)):
        module = scan.program.module(path)
        if module is None:
            continue
        calls = module.calls()
        timers = [c for c in calls if fx.last(c.callee) in _TIMERS and len(c.args) >= 2]
        for renew in fx.in_key_order(c for c in calls if scan.is_renew(c)):
            loop = _waiting_loop(scan, renew, calls) or _timer(renew, timers)
            if loop is not None:
                out.append(loop)
    return out


def _waiting_loop(scan: Scan, renew: Call, calls: tuple[Call, ...]) -> Loop | None:
    fn = renew.enclosing
    if fn is None:
        return None
    for first, last in repeating_spans(fn):
        if not first <= renew.line <= last:
            continue
        # The wait between two renewals: an awaited call of the loop, not the renewal, given a duration.
        for wait in calls:
            if wait is renew or not first <= wait.line <= last or wait.enclosing is not fn or not awaited(wait):
                continue
            period = next((a for a in wait.args if scan.program.duration_ms(a) is not None), None)
            if period is not None:
                return Loop(renew, renew.path, first, last, period, None, fn, True, renew, plain=True)
    return None


def _timer(renew: Call, timers: list[Call]) -> Loop | None:
    for timer in timers:
        callback = timer.args[0]
        if fx.within(renew, callback.span):
            return Loop(renew, renew.path, timer.line, timer.end_line, timer.args[1], None, renew.enclosing, True,
                        renew, plain=True)
    return None


# ------------------------------------------------------------------ a lost lease caught and dropped


def check_plain_lost(scan: Scan) -> Iterator[Finding]:
    """Renewals awaited in a `try` whose `catch` lets no failure on; renewals that stopped failing."""
    tried = 0
    for call in fx.in_key_order(c for c in fx.iter_calls(scan.program, scan.changed) if scan.is_renew(c)):
        caught = catching(call)
        tried += caught is not None
        if caught is None or caught.passes_on:
            continue
        touched = scan.files.get(call.path)
        if not (scan.widened or call.changed or (touched is not None and touched.touches(caught.line, caught.end_line))):
            continue
        yield scan.ctx.finding(
            "lost-suppressed",
            title=f"Lost lease swallowed by a catch around `{fx.last(call.callee)}`",
            message=(
                f"`{call.callee}` at {call.path}:{call.line} is awaited in a `try` whose `catch` at "
                f"{caught.path}:{caught.line} neither throws nor rejects: every failure of the renewal, the lost "
                "lease included, becomes going on. A lost lease means another worker may own the work now; let "
                "that error through (rethrow it, or end the run) and catch only what is known to be transient."
            ),
            location=fx.loc(caught.path, caught.line, caught.line),
            related=[fx.call_loc(call, f"`{call.callee}` fails when the lease is no longer held")],
            failure_sequence=[
                "the lease runs out or is taken over while this worker still runs",
                "another worker takes the lease and starts the same work",
                f"`{fx.last(call.callee)}` fails because the lease is gone; the catch logs it and the loop goes on",
                "both workers run the same work, each believing it holds the lease",
            ],
            anchor=f"{call.normalized}:catch",
        )
    if tried:
        scan.facts.append(f"{tried} renewal(s) in a try/catch")
    yield from _renewals_that_stopped_failing(scan)


def _renewals_that_stopped_failing(scan: Scan) -> Iterator[Finding]:
    base = scan.ctx.base_program
    renew_names = {fx.last(n) for n in scan.opts.renew}
    fail = frozenset(scan.opts.fail)
    for path in scan.changed:
        module, was = scan.program.module(path), base.module(path)
        touched = scan.files.get(path)
        if module is None or was is None or touched is None:
            continue
        before = {(f.name, f.kind): f for f in was.functions() if f.name in renew_names}
        for fn in module.functions():
            old = before.get((fn.name, fn.kind))
            if old is None or not touched.touches(fn.line, fn.end_line):
                continue
            if not function_fails(old, fail) or function_fails(fn, fail):
                continue
            at = _no_match_branch(fn)
            yield scan.ctx.finding(
                "lost-suppressed",
                title=f"`{fn.name}` no longer fails when the lease is gone",
                message=(
                    f"Before the patch `{fn.name}` ({old.path}:{old.line}) failed when its write matched no row; now "
                    f"nothing in it throws or fails ({fn.path}:{at}). Its callers (the heartbeat, fenced writes) only "
                    "learn that the lease is lost from that failure: without it the work goes on under a lease "
                    "another worker may hold."
                ),
                location=fx.loc(fn.path, at, at),
                related=[fx.fn_loc(old, f"`{fn.name}` in the base: it fails when the lease is not held")],
                failure_sequence=[
                    "the lease runs out or is taken over while this worker still runs",
                    f"`{fn.name}` matches no row and returns as if it renewed",
                    "the heartbeat goes on, and so does the work it guards",
                    "two workers run the same work, each believing it holds the lease",
                ],
                anchor=f"{fn.name}:stopped-failing",
            )


def _no_match_branch(fn: Function) -> int:
    """The line that reads the renewal's write result (`if (rows.length === 0) ..`), else the write, else the function."""
    for call in fn.all_calls:
        statement = sql_statement(call)
        if statement is None or statement.operation not in _WRITES:
            continue
        uses = later_uses(call)
        return uses[0].line if uses else call.line
    return fn.line


# ------------------------------------------------------------------ a heartbeat promise nobody waits for


def helper_calls(scan: Scan, paths: Iterable[str], helpers: dict[tuple[str, int], tuple[str, Loop]]) -> Iterator[tuple[Call, Loop]]:
    """Calls in `paths` of a heartbeat helper (keyed by the helper function's path and line, with its
    name), as the model resolves their callee: a same-named function elsewhere is not the helper."""
    names = {name for name, _ in helpers.values()}
    for call in fx.in_key_order(c for c in fx.iter_calls(scan.program, paths) if fx.last(c.callee) in names):
        target = scan.program.definition(call.path, call.callee_text) if call.callee_text else None
        found = helpers.get((target.path, target.line)) if target is not None else None
        if found is not None:
            yield call, found[1]


def check_plain_joined(scan: Scan, loops: list[Loop]) -> Iterator[Finding]:
    """Calls of a heartbeat function (one holding a plain loop) whose promise is dropped or never read."""
    beats: dict[tuple[str, int], tuple[str, Loop]] = {}
    for loop in loops:
        fn = fx.outer_named(loop.fn)
        if loop.plain and fn is not None and fn.name:
            beats.setdefault((fn.path, fn.line), (fn.name, loop))
    for call, loop in helper_calls(scan, scan.changed, beats):
        if awaited(call):
            continue
        usage, name = call.binding
        if usage not in ("bound", "discarded") or (usage == "bound" and (name is None or later_uses(call))):
            continue  # returned, handed on, or read again (raced, awaited, stored): someone waits for it
        fn = fx.outer_named(call.enclosing)
        touched = scan.files.get(call.path)
        if not (scan.widened or call.changed or (fn is not None and touched is not None and touched.touches(fn.line, fn.end_line))):
            continue
        what = f"bound to `{name}` and never read again" if usage == "bound" else "started and dropped"
        yield scan.ctx.finding(
            "renewal-not-joined",
            title=f"Heartbeat `{fx.last(call.callee)}` is never awaited or raced",
            message=(
                f"The heartbeat `{call.callee}` at {call.path}:{call.line} is {what} in {fx.describe(fn)}: nobody "
                f"awaits, races or hands on its promise. When a renewal finds the lease gone it rejects with nobody "
                "listening and the work goes on without the lease. Race it with the work (`Promise.race([work, "
                "heartbeat])`) so a lost lease ends the run."
            ),
            location=fx.call_loc(call),
            related=[fx.loc(loop.path, loop.line, loop.end_line, f"the renewal loop around `{loop.renew.callee}`")]
            + ([fx.fn_loc(fn, f"`{fn.name}` never awaits, races or hands on the heartbeat")] if fn is not None else []),
            failure_sequence=[
                "the heartbeat renews the lease beside the work",
                "the lease is lost (expired and taken over)",
                "the renewal rejects; nobody awaits the heartbeat's promise",
                "the work runs on without the lease while another worker runs it too",
            ],
            anchor=f"{call.normalized}:unjoined",
        )
