"""Where cleanup code is, and which of its calls finalize the run.

A *cleanup* is an argument the role table runs as a finalizer (`Effect.onExit(h)`,
`Effect.ensuring(e)`, the release of `Effect.acquireRelease`, `Effect.addFinalizer(h)`), an
object-literal property the coordinator runs after every exit (`settled: (key, exit) => ..`), or a
`finally` block.
Its *code* is the argument itself when written inline, else what the name or helper call stands for.
A cleanup matters to this family when it finalizes: one of its calls (or a helper it calls) clears
the claim, records the terminal phase or starts the successor (`targets`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Program, Role, finally_blocks, returned_functions

from reviewer.rules import _effect as fx


@dataclass(frozen=True)
class Cleanup:
    """One finalizer region: where it is handed over, and the code that runs."""

    site: Call | None  # the combinator call (`Effect.onExit(..)`); None for a cleanup hook property
    how: str  # how it is handed over, for messages: `Effect.onExit`, `settled`
    arg: Expr  # the argument as written
    units: tuple[Expr, ...]  # the code that runs: the argument, or what it names / the helper it calls


class Targets:
    """Which calls finalize the run (by name, or a publish of a terminal event), remembered per call."""

    def __init__(self, program: Program, opts: Options) -> None:
        self.program = program
        self.finalize = fx.Matcher(opts.finalize)
        self.successor = fx.Matcher(opts.successor)
        self.events = fx.Matcher(opts.finalize_events)
        self.names = tuple(opts.finalize) + tuple(opts.successor)
        self._reach: dict[tuple[str, int, int], Call | None] = {}

    def kind(self, call: Call) -> str | None:
        """"successor" or "finalize" when the call itself is one, else None."""
        if self.successor(call.callee):
            return "successor"
        if self.finalize(call.callee):
            return "finalize"
        event = fx.event_of(call)
        if event is not None and self.events(event):
            return "finalize"
        return None

    def reached(self, expr: Expr) -> Call | None:
        """A finalizing call a helper called at `expr` reaches (two hops), else None."""
        key = expr.span
        if key not in self._reach:
            paths = self.program.reaches(expr, list(self.names), max_depth=2)
            self._reach[key] = paths[0][-1] if paths else None
        return self._reach[key]


def code_of(program: Program, arg: Expr) -> tuple[Expr, ...]:
    """The code an argument stands for: itself when inline; the function or `const` a name denotes;
    the function a curried call returns; plus the body of a repository helper it calls."""
    if arg.function is not None:
        return (arg,)
    call = arg.call
    if call is not None:
        out = [arg]
        if call.callee_expr is not None:
            maker = program.function_of(call.callee_expr)
            if maker is not None:
                inner = next(iter(returned_functions(maker)), None)
                out.append(inner.expr if inner is not None else maker.expr)
        return tuple(out)
    fn = program.function_of(arg)
    if fn is not None:
        return (fn.expr,)
    value = program.bound_value(arg)
    return (value,) if value is not None else (arg,)


def cleanups(program: Program, paths: Iterable[str], hooks: Iterable[str]) -> list[Cleanup]:
    """Every finalizer argument and cleanup-hook property in `paths`, in document order."""
    out: list[Cleanup] = []
    for call in fx.iter_calls(program, paths):
        for arg in program.role_arguments(call, Role.FINALIZER):
            out.append(Cleanup(call, fx.strip_call_marks(call.callee), arg, code_of(program, arg)))
    for hook in hooks:
        for cb in program.callbacks(hook, list(paths)):
            out.append(Cleanup(None, hook, cb.value, code_of(program, cb.value)))
    for module in fx.modules(program, paths):
        for block in finally_blocks(module):  # plain code's finalizer: `try { .. } finally { .. }`
            out.append(Cleanup(None, "finally", block, (block,)))
    return out


def targets_in(targets: Targets, cleanup: Cleanup) -> list[Call]:
    """The finalizing calls written in the cleanup's code (its units), in document order."""
    found: dict[tuple[str, int, int], Call] = {}
    for unit in cleanup.units:
        for call in unit.calls:
            if targets.kind(call) is not None:
                found.setdefault(call.span, call)
    return [found[k] for k in sorted(found)]


def finalizes(targets: Targets, cleanup: Cleanup) -> bool:
    """The cleanup finalizes the run: a finalizing call in its code, or reached from it."""
    if targets_in(targets, cleanup):
        return True
    return any(targets.reached(unit) is not None for unit in cleanup.units)
