"""Handlers that give the leased work up: a failed renewal answered by dropping what it renewed.

A lost claim must fail closed. Failing again (`Effect.orDie`, letting the error
through) is one way; the other is what a sharding runner does when its lock store
stops answering: it clears the set of things it holds, so no work runs on them
any more, and carries on polling. Such a handler returns success, yet nothing
keeps running without the lock. This module says when a handler does that, and
errs towards "not given up" (the finding stays) wherever it cannot be sure:

- the *held state* is what the renewal renews and routes work by: the `const`
  collections its arguments copy whole (`refresh(me, [...owned])`,
  `Array.from(owned)`, `owned`), and those its continuation stages before the
  catch test membership in (`MutableHashSet.has(assigned, id)`);
- a *give-up* is a call that empties one of them whole (`owned.clear()`,
  `MutableHashSet.clear(owned)`, also through `const mine = owned`), found in
  the handler, in the thunks it runs now (`Effect.sync(() => ..)`,
  `Effect.suspend`, `Effect.gen`, `andThen`, `tap`, `pipe`) and in the effects
  and helper functions it names (`Effect.andThen(dropOwned)`). Removing one key
  is no give-up (which key is not known), nor is a clear in a loop body or a
  `try` block, one after an `Effect.never`/`Effect.sleep`, in a callback handed
  to anything else (`setTimeout`, `Effect.forEach`), or one followed by adding
  to the same collection again;
- the handler gives up when every way it produces success passes a give-up
  first. One way out is excused: a path chosen by a latch the handler itself
  closes, already closed (`if (!healthy.closeUnsafe()) return Effect.void` with
  `healthy = Latch.makeUnsafe(true)`), or a flag it sets to one constant from
  the opposite one, tested so that the path is taken once it is set
  (`let gaveUp = false` .. `if (gaveUp) return ..; gaveUp = true`). A flag it
  only reads, counts (`failures++`) or sets from the error, and a path chosen
  by the error (`e._tag === "Lost" ? Effect.void : drop`), excuse nothing.

A renewal of nothing (`refresh(me, [])` where the same call elsewhere passes the
held list) is a probe: its failure holds nothing either. (What the store does
with an empty list is not read: a store that renews everything for `[]` is a
known limit.)

Not recognised (the finding stays): clearing by assignment (`owned = undefined`),
`Ref.set(owned, HashSet.empty())`, interrupting the guarded fiber, a give-up
yielded by name (`yield* dropOwned`) rather than called or returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.typescript import (
    Call,
    Expr,
    Function,
    Guard,
    GuardPath,
    Program,
    assignments_in,
    copied_from,
    exits,
    guard_path,
    names_in,
    runs_maybe,
    treatment,
)

from reviewer.rules import _effect as fx

# Methods that empty a collection whole (Set, Map, Effect's Mutable* and Hash* modules).
_CLEARING = frozenset({"clear"})
# Methods that put entries back: a clear followed by one of these on the same collection gives nothing up.
_REFILLS = frozenset({"add", "set", "push", "unshift", "union", "append", "insert", "addAll"})
# Methods a continuation stage routes work by: the collection asked is held state.
_MEMBERSHIP = frozenset({"has", "get", "contains", "includes"})
# Combinators that may never run an argument: a give-up inside them is no give-up on the path.
_CONDITIONAL = frozenset({"Effect.when", "Effect.whenEffect", "Effect.unless", "Effect.unlessEffect", "Effect.if"})
# Combinators that run the thunks and effects handed to them, now and once.
_RUNS_NOW = frozenset({
    "Effect.sync", "Effect.suspend", "Effect.gen", "Effect.andThen", "Effect.zipRight", "Effect.zipLeft", "Effect.tap",
    "Effect.flatMap", "Effect.asVoid", "Effect.as", "Effect.uninterruptible", "Effect.annotateLogs", "Effect.withSpan",
    "Effect.ensuring", "Effect.all", "pipe",
})
# Effects after which the rest of a sequence does not run (soon, or ever).
_STALLS = frozenset({"Effect.never", "Effect.sleep", "Effect.delay", "Effect.forever", "Effect.awaitAllChildren"})
# A latch that starts open, and the calls that close it (returning whether it was open).
_LATCHES = frozenset({"Latch.make", "Latch.makeUnsafe", "Effect.makeLatch", "Effect.unsafeMakeLatch"})
_CLOSING = frozenset({"close", "closeUnsafe", "unsafeClose"})
_DEPTH = 4  # hops through thunks, named effects and helper functions


@dataclass(frozen=True)
class GiveUp:
    """Why a handler is taken as fail-closed: the call that drops held state."""

    at: Call
    held: str  # the binding it clears, as written

    def describe(self) -> str:
        return f"`{self.at.callee_written}` at {self.at.path}:{self.at.line} drops `{self.held}`, which the renewal reads"


def gives_up(program: Program, handler: Expr, subject: Call, catch: Call | None, fail: tuple[str, ...]) -> GiveUp | None:
    """The give-up every success of `handler` passes, for the renewal `subject` it catches; None if any
    success can skip it (or the renewal reads no held state)."""
    held = _held(program, subject, catch)
    if not held:
        return None
    code = fx.written(program, handler)
    return _Judge(program, held, fail, code).expr(code, _DEPTH)


def renews_nothing(program: Program, subject: Call) -> bool:
    """`subject` passes an empty list where another call of the same renewal in its file passes a non-empty one."""
    empty = [i for i, arg in enumerate(subject.args) if _is_empty_list(arg)]
    if not empty:
        return False
    for other in program.calls(subject.callee, subject.path):
        if other is subject:
            continue
        for i in empty:
            if i < len(other.args) and other.args[i].text.startswith("[") and not _is_empty_list(other.args[i]):
                return True
    return False


def _is_empty_list(arg: Expr) -> bool:
    return arg.text.replace(" ", "") == "[]"


def _held(program: Program, subject: Call, catch: Call | None) -> dict[Expr, str]:
    """Initializer -> name of each `const` collection the renewal copies whole, then of each its stages
    (up to the catch) test membership in. Read-only: the same table answers every catch at that cut."""
    copies, members, cuts = _named(program, subject)
    cut = cuts.get(catch, len(members)) if catch is not None else len(members)
    memo = program.memo("lease-renewal.held")
    key = (subject, cut)
    if key not in memo:
        out: dict[Expr, str] = {}
        for at, name in (*copies, *members[:cut]):
            value = program.bound_at(at, name)
            # A function or a service is not state the work runs on.
            if value is not None and value.function is None and value.call is not subject:
                out.setdefault(value, name)
        memo[key] = out
    return memo[key]


def _named(program: Program, subject: Call) -> tuple[list[tuple[Call, str]], list[tuple[Call, str]], dict[Call, int]]:
    """What `_held` reads of `subject`, once per renewal: (the names its arguments copy whole, the names
    its stages test membership in, in stage order, and per stage call how many of those come before it).

    A renewal with n catches down its chain is asked once per catch; walking its n stages each time
    was quadratic (the lost-chain shape of tests/test_pathological.py).
    """
    memo = program.memo("lease-renewal.named")
    if subject not in memo:
        copies = [(subject, n) for arg in subject.args for c in copied_from(arg) if (n := c.identifier) is not None]
        members: list[tuple[Call, str]] = []
        cuts: dict[Call, int] = {}
        for stage in fx.stages_of(subject):
            if stage.call is None:
                continue
            cuts.setdefault(stage.call, len(members))  # a catch stops the walk before its own stage
            for call in stage.call.expr.calls:
                if call.method in _MEMBERSHIP:
                    members.extend((call, name) for name in _target_names(call))
        memo[subject] = (copies, members, cuts)
    return memo[subject]


class _Judge:
    """Walks a handler's ways out, asking of each whether a give-up comes first."""

    def __init__(self, program: Program, held: dict[Expr, str], fail: tuple[str, ...], handler: Expr) -> None:
        self.program, self.held, self.fail = program, held, fail
        self.code, self.span = handler, fx.span(handler)
        self.params: set[str] = set()  # parameters of every function entered: the error, the cause
        self.memo: dict[tuple[int, int, tuple], GiveUp | None] = {}
        self.passed: dict[str, Expr] = {}  # a helper's parameter -> the held value its caller passed

    def clears(self, call: Call) -> GiveUp | None:
        """`call` empties a held collection whole, and nothing in the handler fills it again after."""
        if call.method not in _CLEARING:
            return None
        for name in _target_names(call):
            value = self.passed.get(name) or self.program.bound_at(call, name)
            if value is not None and value not in self.held and value.identifier is not None:
                value = self.program.bound_value(value)  # `const mine = owned`
            if value is not None and value in self.held and not self._refilled(call, value):
                return GiveUp(call, self.held[value] if name in self.passed else name)
        return None

    def _value_of(self, call: Call, arg: Expr) -> Expr | None:
        name = arg.identifier
        if name is None:
            return None
        return self.passed.get(name) or self.program.bound_at(call, name)

    def _refilled(self, clear: Call, value: Expr) -> bool:
        for later in self.code.calls:
            if later.method not in _REFILLS or later.span[1] <= clear.span[1]:
                continue
            if any(self.program.bound_at(later, name) == value for name in _target_names(later)):
                return True
        return False

    def expr(self, value: Expr, depth: int) -> GiveUp | None:
        """`value`, once run, has given up on every path that succeeds. `depth` counts the hops into
        functions and through names; the walk down one expression is bounded by its size."""
        if depth < 0:
            return None
        fn = value.function if value.kind in fx.FUNCTION_KINDS else None  # not the callback of a call (`forEach(.., f)`)
        if fn is not None:
            return self.function(fn, depth - 1)
        call = value.call
        if call is not None:
            return self.call(call, depth)
        if value.member_path is not None:
            bound = self.program.bound_value(value)
            if bound is not None:
                return self.expr(bound, depth - 1)
            target = self.program.function_of(value)
            if target is not None:
                return self.function(target, depth - 1)
        return None

    def call(self, call: Call, depth: int) -> GiveUp | None:
        key = (id(call), depth, tuple(sorted((k, v.span) for k, v in self.passed.items())))
        if key not in self.memo:
            self.memo[key] = self._call(call, depth)
        return self.memo[key]

    def _call(self, call: Call, depth: int) -> GiveUp | None:
        found = self.clears(call)
        if found is not None:
            return found
        name = fx.strip_call_marks(call.callee)
        if name in _CONDITIONAL or treatment(name) is not None:
            return None  # runs its argument on one outcome only
        if call.callee_expr is not None and call.receiver is None:
            target = self.program.function_of(call.callee_expr)  # `giveUp()`, a helper of this code base
            if target is not None:
                # `forget(owned)`: inside the helper, its parameter stands for what the caller passed.
                saved = self.passed
                self.passed = {**saved, **{p: v for p, a in zip(target.params, call.args)
                                           if (v := self._value_of(call, a)) is not None}}
                try:
                    found = self.function(target, depth - 1)
                finally:
                    self.passed = saved
                if found is not None:
                    return found
        if name not in _RUNS_NOW and call.method != "pipe":
            return None  # `setTimeout(..)`, `Effect.forEach(..)`: may run it later, or never
        parts = ([call.receiver] if call.receiver is not None else []) + list(call.args)
        for part in parts:
            if _stalls(part):
                return None  # what follows does not run (soon, or ever)
            inner = part.function if part.kind in fx.FUNCTION_KINDS else None
            if inner is not None and inner.params:
                continue  # a callback per element or per value may run zero times
            found = self.expr(part, depth)
            if found is not None:
                return found
        return None

    def function(self, fn: Function, depth: int) -> GiveUp | None:
        """Every exit of `fn` that succeeds is preceded by a give-up on its own path (or is excused)."""
        if depth < 0:
            return None
        self.params.update(fn.params)
        sites: list[tuple[Call, GiveUp]] = []
        stalled_at: int | None = None
        for call in fn.calls:
            if call.binding[0] not in ("bound", "discarded"):
                continue  # a part of a larger call (an argument, a stage): judged with it, as it runs
            if stalled_at is None and fx.strip_call_marks(call.callee) in _STALLS:
                stalled_at = call.span[1]
            if stalled_at is not None or runs_maybe(call, fn):
                continue  # after a stall; in a loop or a `try`: may not run
            found = self.call(call, depth)
            if found is not None:
                sites.append((call, found))
        first: GiveUp | None = None
        for end in exits(fn):
            if end.kind == "throw" or (end.value is not None and fx.refers_to_any(end.value, self.fail)):
                continue  # fails again: closed
            found = next((g for c, g in sites if c.line <= end.line and _prefix(guard_path(c, fn), end.guards)), None)
            if found is None and end.value is not None:
                found = self.expr(end.value, depth)
            if found is None:
                if self._outer_choice(end.guards):
                    continue
                return None
            first = first or found
        return first

    def _outer_choice(self, guards: GuardPath) -> bool:
        """The path was chosen by a latch the handler keeps: no guard folds to a constant or names the
        handler's parameters or locals, and one names a binding from outside that the handler itself
        writes (`healthy.closeUnsafe()`, `gaveUp = true`): a record that the work was given up already.
        An outer flag the handler only reads (`if (tolerant) return Effect.void`) excuses nothing."""
        if not guards:
            return False
        kept = False
        for guard in guards:
            if self.program.fold(guard.test) is not None:
                return False
            names = names_in(guard.test)
            if names & self.params:
                return False
            for name in sorted(names):
                declared = self.program.declared_at(guard.test, name)
                if declared is None:
                    continue
                if fx.within(declared, self.span):
                    return False  # derived inside the handler, perhaps from the error
                kept = kept or self._keeps(name, guard)
        return kept

    def _keeps(self, name: str, guard: Guard) -> bool:
        """`name` is a latch the handler keeps: an open latch it closes, or a flag it sets."""
        return self._closes_latch(name, guard) or self._sets_flag(name, guard)

    def _closes_latch(self, name: str, guard: Guard) -> bool:
        """`name` is bound to a latch made open (`Latch.makeUnsafe(true)`) and the guard or the handler
        closes it (`name.closeUnsafe()`)."""
        for call in (*guard.test.calls, *self.code.calls):
            if call.method not in _CLOSING or call.receiver is None or call.receiver.identifier != name:
                continue
            made = self.program.bound_at(call, name)
            maker = next(iter(made.calls), None) if made is not None else None
            if (maker is not None and fx.strip_call_marks(maker.callee) in _LATCHES and maker.args
                    and maker.args[0].text == "true"):
                return True
        return False

    def _sets_flag(self, name: str, guard: Guard) -> bool:
        """The handler sets `name` to one constant, from an initializer of the opposite truth, and the
        path is taken once it is set (`if (gaveUp) return ..; gaveUp = true`), not before
        (`if (!gaveUp) return ..; gaveUp = true` swallows the first failure)."""
        values = (*assignments_in(self.code).get(name, ()), *assignments_in(guard.test).get(name, ()))
        stored = {_truth(self.program.fold(v)) if v is not None else None for v in values}
        if len(stored) != 1 or None in stored:
            return False  # counted (`++`), set from the error, or to more than one value: no latch
        (constant,) = stored
        initial = self.program.initializer_at(guard.test, name)
        if initial is None or _truth(self.program.fold(initial)) is not (not constant):
            return False  # set already at the start: the path is taken before any give-up
        decide = lambda atom: constant if atom.operator == "" and atom.left.identifier == name else None  # noqa: E731
        return guard.value(decide) is guard.holds


def _target_names(call: Call) -> list[str]:
    """The names a method call may act on: its receiver (`owned.clear()`) and its first argument
    (`MutableHashSet.clear(owned)`, where the receiver is the module)."""
    parts = ([call.receiver] if call.receiver is not None else []) + list(call.args[:1])
    return [name for part in parts if (name := part.identifier) is not None]


def _truth(value: object) -> bool | None:
    """The truth of a folded constant (None when it did not fold)."""
    return None if value is None else bool(value)


def _stalls(part: Expr) -> bool:
    """`part` is an effect after which nothing runs soon: `Effect.never`, `Effect.sleep(..)`."""
    name = part.member_path if part.call is None else fx.strip_call_marks(part.call.callee)
    return name is not None and name in _STALLS


def _prefix(site: GuardPath, end: GuardPath) -> bool:
    site_guards, end_guards = tuple(site), tuple(end)
    return len(site_guards) <= len(end_guards) and end_guards[: len(site_guards)] == site_guards
