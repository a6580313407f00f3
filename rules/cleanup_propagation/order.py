"""The fallible-before-finalization check: a cleanup finalizes before anything in it can fail.

Inside one cleanup's code, a *step* is an effect that runs in sequence: a call a `yield*` takes
(`yield* db.select()...get()`, `const x = yield* ...`), the subject of a pipe whose later stage
sequences the finalization (`publish(e).pipe(Effect.andThen(clear))`), or the first argument of a
data-first sequence (`Effect.andThen(publish(e), clear)`). A step is fallible unless its callee is
a known infallible effect or a stage captures its failure (`Effect.exit`, a swallowing catch; the
latter is the swallow check's business). A fallible step that runs before a finalizing call on
the same path (source order, not on an exclusive branch, no `return` in between) skips it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.report.model import Finding
from reviewer.engine.api import Options
from reviewer.typescript import Call, Program, catching, jumps_past, uses_of

from reviewer.rules import _effect as fx
from reviewer.rules.cleanup_propagation.regions import Cleanup, Targets

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


@dataclass
class OrderTally:
    steps: int = 0  # fallible steps looked at, before some finalization or not
    seen: fx.KeySet = field(default_factory=fx.KeySet)


@dataclass(frozen=True)
class Step:
    call: Call  # the head of the step's chain: what is called
    whole: Call  # the outermost call of the step (its chain and pipes): where it is
    how: str  # "yield*" or the sequencing combinator


class Steps:
    """Judges calls as steps of a cleanup (memoised per call: cleanups nest and share code)."""

    def __init__(self, program: Program, opts: Options) -> None:
        self.program = program
        self.opts = opts
        self.infallible = fx.Matcher(opts.infallible)
        self.sequence = fx.Matcher(opts.sequence)
        self.recover = fx.Matcher(tuple(opts.recover) + tuple(opts.ignore))
        self.catch_all = fx.Matcher(opts.catch_all)
        self._awaited: dict[tuple[str, int, int], bool] = {}

    def awaited(self, call: Call) -> Step | None:
        """`call` heads a chain that a `yield*` takes."""
        chain = call.chain
        if not chain or chain[0].span != call.span:
            return None
        whole = chain[-1]
        key = whole.span
        if key not in self._awaited:
            self._awaited[key] = any(u.kind == "awaited" for u in uses_of(self.program, whole.expr, depth=1))
        return Step(call, whole, "yield*") if self._awaited[key] else None

    def fallible(self, call: Call) -> bool:
        """The effect `call` heads can fail and nothing applied to it captures the failure."""
        head = call.chain[0] if call.chain else call
        if self.infallible(head.callee) or self.recover(head.callee):
            return False  # `Effect.exit(step)` and `Effect.ignore(step)` capture the failure themselves
        # A promise's failure captured as a value: `.catch(h)` or `.then(ok, h)` whose handler does not
        # fail again, or an awaited step in a `try` whose `catch` lets nothing on.
        for link in (call.chain or (call,))[1:]:
            handler = link.args[-1] if link.method == "catch" and link.args else (
                link.args[1] if link.method == "then" and len(link.args) >= 2 else None)
            if handler is not None and not fx.handler_fails(self.program, handler, self.opts.fail):
                return False
        caught = catching(head, within_finally=True)
        if caught is not None and not caught.passes_on:
            return False
        for stage in fx.stages_of(head, hops=0):
            if self.recover(stage.name):
                return False
            if self.catch_all(stage.name) and stage.call is not None and stage.call.args:
                if not fx.handler_fails(self.program, stage.call.args[-1], self.opts.fail):
                    return False
        return True

    def sequenced_before(self, target: Call) -> list[Step]:
        """Steps a pipe or a data-first sequence runs before `target`, which is inside one of its stages."""
        out: list[Step] = []
        host = target.host
        hops = 0
        while host is not None and hops < 6:
            hops += 1
            if self.sequence(host.callee):
                container = host.host
                # `x.pipe(.., Effect.andThen(target), ..)`: the subject and the earlier sequenced stages.
                if container is not None and container.pipe_stages:
                    out.extend(self._before_stage(container, host))
                # `Effect.andThen(x, target)`: data-first.
                elif len(host.args) >= 2 and (first := host.args[0].call) is not None and first.span != target.span:
                    out.append(Step(first.chain[0] if first.chain else first, first, fx.strip_call_marks(host.callee)))
            host = host.host
        return out

    def _before_stage(self, pipe: Call, stage_call: Call) -> list[Step]:
        stages = pipe.pipe_stages
        index = next((i for i, s in enumerate(stages) if s.call is not None and s.call.span == stage_call.span), None)
        if index is None:
            return []
        how = fx.strip_call_marks(stage_call.callee)
        out: list[Step] = []
        subject = pipe.receiver if pipe.method == "pipe" else (pipe.args[0] if pipe.args else None)
        if subject is not None and subject.call is not None:
            out.append(Step(subject.call.chain[0] if subject.call.chain else subject.call, subject.call, how))
        for stage in stages[:index]:
            name = fx.ref_name(stage) or ""
            if self.recover(name) or self.catch_all(name):
                out = []  # everything before a captured failure can no longer skip the target
                continue
            call = stage.call
            if call is not None and self.sequence(call.callee) and call.args and (inner := call.args[0].call) is not None:
                out.append(Step(inner.chain[0] if inner.chain else inner, inner, how))
        return out


def check_order(
    ctx: "ReviewContext", steps: Steps, targets: Targets, cleanup: Cleanup, tally: OrderTally
) -> Iterator[Finding]:
    """Report each fallible step of `cleanup` that runs before one of its finalizing calls."""
    for unit in cleanup.units:
        awaited = [s for c in unit.calls if (s := steps.awaited(c)) is not None]
        finals: list[tuple[Call, str]] = []
        for call in unit.calls:
            kind = targets.kind(call)
            if kind is not None:
                finals.append((call, kind))
        for step in awaited:
            if targets.kind(step.call) is None and (reached := targets.reached(step.whole.expr)) is not None:
                finals.append((step.call, targets.kind(reached) or "finalize"))
        by_step: dict[tuple[str, int, int], tuple[Step, list[tuple[Call, str]]]] = {}
        for target, kind in finals:
            for step in _before(steps, awaited, target):
                by_step.setdefault(step.call.span, (step, []))[1].append((target, kind))
        for key in sorted(by_step):
            step, skipped = by_step[key]
            tally.steps += 1
            if not (step.whole.changed or any(t.changed for t, _ in skipped) or ctx.widened):
                continue
            if step.call in tally.seen:
                continue
            tally.seen.add(step.call)
            yield _finding(ctx, cleanup, step, skipped)


def _before(steps: Steps, awaited: list[Step], target: Call) -> list[Step]:
    """The fallible steps that run before `target` on its path."""
    out: list[Step] = []
    for step in awaited:
        whole = step.whole
        if fx.within(target, whole.span) or fx.within(whole, target.span) or step.call.span == target.span:
            continue
        fn = whole.enclosing
        if fn is None or not fx.within(target, fn.expr.span):
            continue  # the step runs in a callback the target's code does not run through
        if not whole.precedes(target, fn) or jumps_past(whole, target):
            continue
        if steps.fallible(step.call):
            out.append(step)
    for step in steps.sequenced_before(target):
        if steps.fallible(step.call) and not fx.within(target, step.whole.span):
            out.append(step)
    return out


_WHAT = {"finalize": "finalizes the run's durable state", "successor": "starts the successor"}


def _finding(ctx: "ReviewContext", cleanup: Cleanup, step: Step, skipped: list[tuple[Call, str]]) -> Finding:
    whole = step.whole
    first, kind = skipped[0]
    names = ", ".join(f"`{t.callee_written}` ({t.path}:{t.line})" for t, _ in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    where = f"the cleanup handed to `{cleanup.how}`" + (
        f" at {cleanup.site.path}:{cleanup.site.line}" if cleanup.site is not None else f" at {cleanup.arg.path}:{cleanup.arg.line}"
    )
    related = [fx.call_loc(t, f"{_WHAT[k]}; skipped when the step before it fails") for t, k in skipped]
    site = cleanup.site
    related.append(
        fx.call_loc(site, f"`{cleanup.how}` runs this cleanup") if site is not None
        else fx.loc(cleanup.arg.path, cleanup.arg.line, cleanup.arg.end_line, f"`{cleanup.how}` runs this cleanup")
    )
    return ctx.finding(
        "fallible-before-finalization",
        title=f"`{fx.last(step.call.callee)}` can fail before the cleanup {_WHAT[kind]}",
        message=(
            f"`{whole.written}` at {whole.path}:{whole.line} runs ({step.how}) in {where} before {names}{more}, "
            f"which {_WHAT[kind]}. If it fails, the cleanup stops there and the failure propagates with the "
            "finalization never done. Finalize first (move the finalizing call before it, or into its own "
            "`Effect.ensuring`), or capture this step with `Effect.exit` and re-raise its failure afterwards."
        ),
        location=fx.call_loc(whole),
        related=fx.unique_sorted(related),
        failure_sequence=[
            f"the run ends and {where} starts",
            f"`{fx.last(step.call.callee)}` fails (a busy or closed database, a failed publish, a defect)",
            f"the cleanup stops: `{first.callee_written}` never runs, so the run's claim/phase is not finalized"
            if kind == "finalize" else f"the cleanup stops: `{first.callee_written}` never runs, so the pending successor is not started",
            "the failure propagates, but the Session is left stuck: a live claim with no run, or queued work nobody starts, "
            "until a lease expiry or a restart",
        ],
        anchor=f"{whole.normalized}->{first.callee}",
    )
