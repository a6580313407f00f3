"""Can the failure of this call still escape? Asked of the stages applied to it, through Effect's error channel table.

A family hands a call (a renewal, a release) and gets the first stage where
its failure stops escaping, with a sentence saying how, or None. Handlers
(`catchAll`, `catchTag`, `matchEffect`'s `onFailure`) are not judged here:
whether a handler fails again is the family's question, asked of its code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from reviewer.typescript import REFAIL, Call, Expr, Program, Treatment, collect_mode, retry_ends, treatment

from reviewer.rules import _effect as fx


@dataclass(frozen=True)
class Swallow:
    """Where a failure stops escaping: the stage, the call written there, and how (a clause)."""

    stage: Expr
    at: Call
    why: str


def swallowed(program: Program, call: Call, fail: Sequence[str], also_value: Sequence[str] = ()) -> Swallow | None:
    """The first stage applied to `call` after which its failure cannot escape, or None.

    `fail` names what fails again (a later `Effect.flatten` or `Effect.fail(exit.cause)`
    turns a value back into the failure); `also_value` adds configured names that turn
    every failure into success (a family's `ignore` option).
    """
    alternatives = _alternatives(call)
    if alternatives is not None:
        return alternatives
    stages = fx.stages_of(call)
    refail = tuple(fail) + REFAIL
    for position, stage in enumerate(stages):
        name = fx.strip_call_marks(stage.name)
        why = _why(program, stage, name, also_value)
        if why is None:
            continue
        later = stages[position + 1 :]
        if any(fx.refers_to_any(s.expr, refail) for s in later) or _refailed_later(call, refail):
            return None
        return Swallow(stage.expr, stage.call or call, why)
    return None


def _why(program: Program, stage: fx.Stage, name: str, also_value: Sequence[str]) -> str | None:
    kind = treatment(name)
    if kind is Treatment.VALUE or (kind is None and fx.matches(name, also_value)):
        return f"`{name}` turns every failure into a value, a lost claim included,"
    if kind is Treatment.RACE and stage.call is not None:
        return f"`{name}` returns the first success, so a lost claim is masked while another alternative succeeds,"
    if kind is Treatment.RETRY and stage.call is not None and _retries_forever(program, stage):
        return f"`{name}` with a schedule that never ends retries a lost claim forever, so its failure never escapes,"
    return None


def _alternatives(call: Call) -> Swallow | None:
    """`call` is an element of `Effect.firstSuccessOf([..])`/`Effect.raceAll([..])`, a side of
    `Effect.race(a, b)`, or an element of `Effect.all([..], { mode: "either" })`."""
    host = call.element_host
    if host is not None:
        name = fx.strip_call_marks(host.callee)
        kind = treatment(name)
        if kind is Treatment.RACE:
            return Swallow(host.expr, host, f"`{name}` returns the first success, so a lost claim is masked while another alternative succeeds,")
        if kind is Treatment.COLLECT and len(host.args) > 1:
            mode = host.args[-1].prop("mode")
            if collect_mode(mode.string_value if mode is not None else None) is Treatment.VALUE:
                return Swallow(host.expr, host, f"`{name}(.., {{ mode: \"either\" }})` turns each failure into a value, a lost claim included,")
        return None
    host = call.host
    if host is not None and treatment(fx.strip_call_marks(host.callee)) is Treatment.RACE and host.args[:1] != (call.expr,):
        # `Effect.race(other, call)`; the first argument is a wrapping stage `stages_of` reads
        name = fx.strip_call_marks(host.callee)
        return Swallow(host.expr, host, f"`{name}` returns the first success, so a lost claim is masked while another alternative succeeds,")
    return None


def _retries_forever(program: Program, stage: fx.Stage) -> bool:
    """The retry's schedule and options are all known and none of them ends it."""
    call = stage.call
    assert call is not None
    args = call.args[1:] if stage.wraps else call.args
    if not args:
        return False
    names: list[str] = []
    keys: list[str] = []
    for arg in args:
        value = program.bound_value(arg) if arg.identifier is not None else arg
        if value is None or (value.call is None and not value.props and value.member_path is None):
            return False  # a schedule we cannot read: not judged here
        keys.extend(key for key, _ in value.props)
        if value.member_path:
            names.append(value.member_path)
        names.extend(inner.callee for inner in value.calls)
        names.extend(path for _, prop in value.props if (path := prop.member_path))
    return not retry_ends(names, keys)


def _refailed_later(call: Call, refail: Sequence[str]) -> bool:
    """The value the chain is bound to is failed again later in the same function
    (`const exit = yield* x.pipe(Effect.exit); .. Effect.failCause(exit.cause)`)."""
    kind, name = call.binding
    if kind != "bound" or not name or call.enclosing is None:
        return False
    for other in call.enclosing.all_calls:
        if other.line >= call.line and fx.matches(other.callee, refail) and any(fx.mentions(arg, name) for arg in other.args):
            return True
    return False
