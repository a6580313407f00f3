"""Can the failure of this call still escape? Asked of the stages applied to it, through Effect's error channel table.

A family hands a call (a renewal, a release) and gets the first stage where
its failure stops escaping, with a sentence saying how, or None. Handlers
(`catchAll`, `catchTag`, `matchEffect`'s `onFailure`) are not judged here:
whether a handler fails again is the family's question, asked of its code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from reviewer.typescript import (
    REFAIL, Call, Expr, Program, Treatment, collect_mode, delegated, exits, later_uses, treatment,
)

from reviewer.rules import _effect as fx


@dataclass(frozen=True)
class Swallow:
    """Where a failure stops escaping: the stage, the call written there, and how (a clause)."""

    stage: Expr
    at: Call
    why: str
    name: str  # the combinator's name, as a failure sequence quotes it


def swallowed(
    program: Program, call: Call, fail: Sequence[str], also_value: Sequence[str] = (), what: str = "a lost claim"
) -> Swallow | None:
    """The first stage applied to `call` after which its failure cannot escape, or None.

    `fail` names what fails again (a later `Effect.flatten` or `Effect.fail(exit.cause)`
    turns a value back into the failure); `also_value` adds configured names that turn
    every failure into success (a family's `ignore` option); `what` is the failure in the
    family's words ("a lost claim", "the cleanup's failure").
    """
    alternatives = _alternatives(program, call, what)
    if alternatives is not None:
        return alternatives
    stages = fx.stages_of(call)
    refail = tuple(fail) + REFAIL
    for position, stage in enumerate(stages):
        name = fx.strip_call_marks(stage.name)
        why = _why(program, stage, name, also_value, what)
        if why is None:
            continue
        later = stages[position + 1 :]
        host = stage.call if stage.call is not None and stage.call.span != call.span else None
        if any(_fails_again(s, refail) for s in later) or _refailed_later(call, refail) \
                or (host is not None and _refailed_later(host, refail)):
            return None
        return Swallow(stage.expr, stage.call or call, why, name)
    return None


def _why(program: Program, stage: fx.Stage, name: str, also_value: Sequence[str], what: str) -> str | None:
    kind = treatment(name)
    if kind is None:
        wrapped = _wraps_value(program, stage.expr)
        if wrapped is not None:
            return f"`{name}` applies `{wrapped}`, which turns every failure into a value, {what} included,"
    if kind is Treatment.VALUE or (kind is None and fx.matches(name, also_value)):
        return f"`{name}` turns every failure into a value, {what} included,"
    if kind is Treatment.RACE and stage.call is not None:
        return _masked(name, what)
    if kind is Treatment.RETRY and stage.call is not None and _retries_forever(program, stage):
        return f"`{name}` with a schedule that never ends retries {what} forever, so its failure never escapes,"
    return None


def _masked(name: str, what: str) -> str:
    return f"`{name}` returns the first success, so {what} is masked while another alternative succeeds,"


def _wraps_value(program: Program, stage: Expr) -> str | None:
    """The `VALUE` combinator a helper applies to the effect it is given
    (`const quietly = (self) => Effect.ignore(self)`, `(self) => self.pipe(Effect.either)`), if any."""
    function = program.function_of(stage)
    if function is None or len(function.params) != 1:
        return None
    param = function.params[0]
    for end in exits(function):
        call = end.value.call if end.value is not None else None
        if call is None:
            continue
        if treatment(fx.strip_call_marks(call.callee)) is Treatment.VALUE and call.args and call.args[0].identifier == param:
            return fx.strip_call_marks(call.callee)
        if call.method == "pipe" and call.receiver is not None and call.receiver.identifier == param:
            value = next((fx.ref_name(s) for s in call.pipe_stages if treatment(fx.ref_name(s)) is Treatment.VALUE), None)
            if value is not None:
                return value
    return None


def _alternatives(program: Program, call: Call, what: str) -> Swallow | None:
    """`call` is an element of `Effect.firstSuccessOf([..])`/`Effect.raceAll([..])`, a side of
    `Effect.race(a, b)`, or an element of `Effect.all([..], { mode: "either" })`; the collection
    and the options may be `const`s of the same function (`const alts = [renew, Effect.void]`)."""
    host = call.element_host or _host_of_collection(call)
    if host is not None:
        name = fx.strip_call_marks(host.callee)
        kind = treatment(name)
        if kind is Treatment.RACE:
            return Swallow(host.expr, host, _masked(name, what), name)
        if kind is Treatment.COLLECT and len(host.args) > 1:
            options = host.args[-1]
            if options.identifier is not None:
                options = program.bound_value(options) or options
            mode = options.prop("mode")
            if collect_mode(mode.string_value if mode is not None else None) is Treatment.VALUE:
                return Swallow(host.expr, host, f"`{name}(.., {{ mode: \"either\" }})` turns each failure into a value, {what} included,", name)
        return None
    host = call.host
    if host is not None and treatment(fx.strip_call_marks(host.callee)) is Treatment.RACE and host.args[:1] != (call.expr,):
        # `Effect.race(other, call)`; the first argument is a wrapping stage `stages_of` reads
        name = fx.strip_call_marks(host.callee)
        return Swallow(host.expr, host, _masked(name, what), name)
    return None


def _host_of_collection(call: Call) -> Call | None:
    """The race/collect call handed the `const` collection `call` is an element of, in the same function."""
    name = call.collection_name
    if name is None or call.enclosing is None:
        return None
    for other in call.enclosing.calls:
        if treatment(fx.strip_call_marks(other.callee)) in (Treatment.RACE, Treatment.COLLECT) \
                and any(arg.identifier == name for arg in other.args):
            return other
    return None


def _retries_forever(program: Program, stage: fx.Stage) -> bool:
    """The retry's schedule and options are known, and nothing in them ever ends it: the schedule's
    pace never stops (`Schedule.forever`, `spaced(..)`, a union with `recurs(3)`: a union recurs while
    either does), and no option stops it (`times` finite, `until`, a `while` that is not constantly true).
    A schedule or option the reviewer cannot read is not judged here."""
    call = stage.call
    assert call is not None
    args = call.args[1:] if stage.wraps else call.args
    if len(args) != 1:
        return False
    arg = args[0]
    value = program.bound_value(arg) if arg.identifier is not None else arg
    if value is None:
        return False
    if not value.props:
        pace = program.pace(value)
        return pace is not None and not pace.stops
    keys = {key for key, _ in value.props}
    if keys - {"times", "while", "until", "schedule"}:
        return False  # an option we do not read
    times = value.prop("times")
    if times is not None:
        count = program.fold(times)
        if not (isinstance(count, (int, float)) and not isinstance(count, bool) and count == float("inf")):
            return False
    if value.prop("until") is not None:
        return False
    condition = value.prop("while")
    if condition is not None and not _always_true(condition):
        return False
    schedule = value.prop("schedule")
    if schedule is not None:
        pace = program.pace(schedule)
        return pace is not None and not pace.stops
    return times is not None or condition is not None


def _always_true(condition: Expr) -> bool:
    """`() => true`: a predicate that never stops a retry."""
    function = condition.function
    ends = exits(function) if function is not None else ()
    return bool(ends) and all(end.value is not None and end.value.normalized == "true" for end in ends)


def _refailed_later(call: Call, refail: Sequence[str]) -> bool:
    """The value the chain is bound to is failed again later in the same function
    (`const exit = yield* x.pipe(Effect.exit); .. Effect.failCause(exit.cause)`, or `yield* exit`)."""
    if any(delegated(use) for use in later_uses(call)):
        return True
    kind, name = call.binding
    if kind != "bound" or not name or call.enclosing is None:
        return False
    # Only in the same function: a nested one may bind the name to something else
    # (`Effect.catchAll((result) => Effect.fail(result))` fails another `result`).
    for other in call.enclosing.calls:
        if other.line >= call.line and fx.matches(other.callee, refail) and any(fx.mentions(arg, name) for arg in other.args):
            return True
    return False


def _fails_again(stage: fx.Stage, refail: Sequence[str]) -> bool:
    """A later stage turns the value back into the failure: it calls or passes a failing
    constructor (`Effect.flatten`, `Effect.flatMap(Either.match({ onLeft: Effect.fail, .. }))`)."""
    if fx.refers_to_any(stage.expr, refail):
        return True
    for inner in stage.expr.calls:
        for arg in inner.args:
            if any(fx.matches(fx.ref_name(value), refail) for _, value in arg.props):
                return True
    return False
