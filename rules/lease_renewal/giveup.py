"""Handlers that give the leased work up: a failed renewal answered by dropping what it renewed.

A lost claim must fail closed. Failing again (`Effect.orDie`, letting the error
through) is one way; the other is what a sharding runner does when its lock store
stops answering: it clears the set of things it holds, so no work runs on them
any more, and carries on polling. Such a handler returns success, yet nothing
keeps running without the lock. This module says when a handler does that:

- the *held state* is what the renewal reads: the `const` bindings named in the
  renew call's arguments and in the continuation stages before the catch
  (`refresh(me, [...owned])`, then `Effect.flatMap((kept) => .. owned ..)`);
- a *give-up* is a call that empties or removes from held state
  (`owned.clear()`, `MutableHashSet.clear(owned)`, `held.delete(id)`), found
  in the handler, in the thunks it runs (`Effect.sync(() => ..)`,
  `Effect.suspend`, `Effect.gen`) and in the effects and functions it names
  (`Effect.andThen(dropOwned)`);
- the handler gives up when every way it produces success passes a give-up
  first. One way out is excused: a path chosen by a latch the handler keeps,
  never by the error (`if (!healthy.closeUnsafe()) return Effect.void`: already
  given up). A flag the handler only reads (`if (tolerant) return Effect.void`)
  is no latch, and a path chosen by the error
  (`e._tag === "Lost" ? Effect.void : drop`) is not excused either.

A renewal of nothing (`refresh(me, [])` where the same call elsewhere passes the
held list) is a probe: its failure holds nothing either.

Not recognised (the finding stays): clearing by assignment (`owned = undefined`),
`Ref.set(owned, HashSet.empty())`, interrupting the guarded fiber, a give-up
yielded by name (`yield* dropOwned`) rather than called or returned.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.typescript import assignments_in, Call, Expr, Function, Guard, GuardPath, Program, exits, guard_path, names_in, returned_functions, treatment

from reviewer.rules import _effect as fx

# Methods that empty a collection or take an entry out of it (Set, Map, Effect's Mutable*/Hash*).
_CLEARING = frozenset({"clear", "delete", "remove", "removeAll", "reset"})
# Combinators that may never run an argument: a give-up inside them is no give-up on the path.
_CONDITIONAL = frozenset({"Effect.when", "Effect.whenEffect", "Effect.unless", "Effect.unlessEffect", "Effect.if"})
# Method prefixes that only read what they are called on: calling one keeps no record in it.
_READS = ("is", "has", "get", "size", "contains", "includes", "peek", "read", "values", "keys", "entries", "to")
_DEPTH = 4  # hops through thunks, named effects and helper functions


@dataclass(frozen=True)
class GiveUp:
    """Why a handler is taken as fail-closed: the call that drops held state."""

    at: Call
    held: str  # the binding it clears, as written

    def describe(self) -> str:
        return f"`{self.at.callee_written}` at {self.at.path}:{self.at.line} drops `{self.held}`, which the renewal reads"


def written(program: Program, handler: Expr) -> Expr:
    """The code a handler argument stands for: itself when written inline; the function or `const` a
    name denotes (`Effect.catchAll(swallow)`); the function a curried call returns (`quietly()`)."""
    if handler.function is not None:
        return handler
    call = handler.call
    if call is not None and call.callee_expr is not None:
        maker = program.function_of(call.callee_expr)
        inner = next(iter(returned_functions(maker)), None) if maker is not None else None
        return inner.expr if inner is not None else handler
    fn = program.function_of(handler)
    if fn is not None:
        return fn.expr
    value = program.bound_value(handler)
    return value if value is not None else handler


def gives_up(program: Program, handler: Expr, subject: Call, catch: Call | None, fail: tuple[str, ...]) -> GiveUp | None:
    """The give-up every success of `handler` passes, for the renewal `subject` it catches; None if any
    success can skip it (or the renewal reads no held state)."""
    held = _held(program, subject, catch)
    if not held:
        return None
    code = written(program, handler)
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
    """Initializer -> name of each `const` the renewal reads (its arguments, then its stages up to the catch)."""
    readers: list[tuple[Call, frozenset[str]]] = [(subject, frozenset().union(*(names_in(a) for a in subject.args)))]
    for stage in fx.stages_of(subject):
        if stage.call is not None and catch is not None and stage.call is catch:
            break
        if stage.call is not None:
            readers.append((stage.call, frozenset().union(*(names_in(a) for a in stage.call.args))))
    out: dict[Expr, str] = {}
    for at, names in readers:
        for name in sorted(names):
            value = program.bound_at(at, name)
            # A function or a service is not state the work runs on.
            if value is not None and value.function is None and value.call is not subject:
                out.setdefault(value, name)
    return out


class _Judge:
    """Walks a handler's ways out, asking of each whether a give-up comes first."""

    def __init__(self, program: Program, held: dict[Expr, str], fail: tuple[str, ...], handler: Expr) -> None:
        self.program, self.held, self.fail = program, held, fail
        self.code, self.span = handler, fx.span(handler)
        self.params: set[str] = set()  # parameters of every function entered: the error, the cause
        self.memo: dict[tuple[int, int], GiveUp | None] = {}

    def clears(self, call: Call) -> GiveUp | None:
        if call.method not in _CLEARING:
            return None
        targets = [call.receiver] if call.receiver is not None else []
        targets += list(call.args[:1])
        for target in targets:
            name = target.identifier
            if name is None:
                continue
            value = self.program.bound_at(call, name)
            if value is not None and value in self.held:
                return GiveUp(call, name)
        return None

    def expr(self, value: Expr, depth: int) -> GiveUp | None:
        """`value`, once run, has given up on every path that succeeds. `depth` counts the hops into
        functions and through names; the walk down one expression is bounded by its size."""
        if depth < 0:
            return None
        fn = value.function
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
        key = (id(call), depth)
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
                found = self.function(target, depth - 1)
                if found is not None:
                    return found
        parts = ([call.receiver] if call.receiver is not None else []) + list(call.args)
        for part in parts:
            inner = part.function
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
        for call in fn.calls:
            if call.binding[0] not in ("bound", "discarded"):
                continue  # a part of a larger call (an argument, a stage): judged with it, as it runs
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
        """The handler (or the guard, in a helper it runs) writes `name`: calls a method on it that is
        not a plain read, or assigns it. A flag assigned a constant must send the path past the give-up
        once it holds that constant (`if (gaveUp) return ..; gaveUp = true`), not before
        (`if (!gaveUp) return ..; gaveUp = true` swallows the first failure)."""
        for call in (*guard.test.calls, *self.code.calls):
            target = call.receiver if call.receiver is not None else next(iter(call.args), None)
            if target is not None and target.identifier == name and not call.method.startswith(_READS):
                return True
        values = (*assignments_in(self.code).get(name, ()), *assignments_in(guard.test).get(name, ()))
        if not values:
            return False
        stored = {self.program.fold(v) if v is not None else None for v in values}
        if len(stored) != 1 or None in stored:
            return True  # written, with no single constant to check the direction against
        (constant,) = stored
        decide = lambda atom: bool(constant) if atom.operator == "" and atom.left.identifier == name else None  # noqa: E731
        return guard.value(decide) in (None, guard.holds)


def _prefix(site: GuardPath, end: GuardPath) -> bool:
    site_guards, end_guards = tuple(site), tuple(end)
    return len(site_guards) <= len(end_guards) and end_guards[: len(site_guards)] == site_guards
