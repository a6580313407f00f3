"""The wake checks: inside the per-candidate loop of a recovery entry, each wake/resume runs after a
re-validation of that candidate whose result gates it (`stale-wake`, `validation-ignored`,
`validation-swallowed`).

A *recovery entry* is a function or property named by `recovery_entries`, or a top-level function
that iterates rows whose time has passed, whatever it is called (candidates.py). Its *candidates*
are a `const` bound to a multi-row read (any query of the model's query model, behind a thunk or a
helper, or a helper named by `candidate_reads`); its *per-candidate loop* is a call given that
`const` and a callback
(`Effect.forEach(rows, (row) => ..)`, `rows.forEach(..)`), or a `for (const row of rows)` statement
(its body is the path then). The callback or body is the path judged; a helper
it calls by name (`recoverExecution(db, row)`) is judged too, one level deep, with what the callback
did before calling it. A *wake* is a `wake_calls` name or a hand-off of the candidate to code that
does more than database statements; a *re-validation* a `revalidators` name, a compare-and-set or
a re-read of the one candidate, or a helper that does only those (candidates.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Sequence

from reviewer.report.model import Finding
from reviewer.engine.api import Options
from reviewer.typescript import Call, Expr, Function, Program, answers, collection_loops, exits, guard_path, mentions_name

from reviewer.rules import _effect as fx
from reviewer.rules.recovery_revalidation import candidates as cd
from reviewer.rules.recovery_revalidation import drizzle as dz

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

_LOOP_METHODS = ("forEach", "map", "flatMap")


@dataclass
class WakeTally:
    entries: int = 0
    loops: int = 0
    wakes: int = 0
    gated: int = 0


@dataclass(frozen=True)
class Loop:
    entry: Function
    read: Call  # the multi-row read whose rows are the candidates
    name: str  # the const they are bound to
    driver: Call | None  # the call iterating them (None for a `for .. of` statement)
    body: Function  # the per-candidate callback, or the function holding the `for .. of`
    region: tuple[str, int, int] | None = None  # the `for .. of` body: only its calls run per candidate
    lines: tuple[int, int] = (0, 0)  # the `for .. of` statement
    items: tuple[str, ...] = ()  # the names one candidate is bound to in the body

    def calls(self) -> tuple[Call, ...]:
        """The calls that run once per candidate."""
        calls = self.body.all_calls
        return calls if self.region is None else tuple(c for c in calls if fx.within(c, self.region))


@dataclass(frozen=True)
class Step:
    """One function on the path from the loop to a wake: the callback, or a helper it calls."""

    scope: Function
    gate: Call | None  # the call in the callback that enters this helper (None for the callback itself)
    before: tuple[Call, ...]  # calls of the callback that ran before the helper was entered
    loop: "Loop | None" = None  # set on the loop's own step: its calls are the loop's, not all of `scope`'s
    items: tuple[str, ...] = ()  # the names the candidate has in `scope` (a helper's parameters it fills)

    def calls(self) -> tuple[Call, ...]:
        return self.loop.calls() if self.loop is not None else self.scope.all_calls


def _is_entry(function: Function, opts: Options) -> bool:
    return bool(function.name) and bool(opts.recovery_entries.search(function.name or ""))


def _entries(program: Program, paths: Sequence[str], opts: Options) -> Iterator[Function]:
    for module in fx.modules(program, paths):
        for function in module.functions():
            # Nested functions are reached from the outermost entry; an inner named one is its own entry
            # only when nothing around it is.
            if _is_entry(function, opts):
                if not _inside_entry(function.parent, opts):
                    yield function
            elif function.parent is None and _reads_left_behind(program, function, opts):
                yield function  # recovery code by what it reads, whatever it is called


def _reads_left_behind(program: Program, function: Function, opts: Options) -> bool:
    """`function` iterates rows whose time has passed (candidates.is_recovery_read)."""
    return any(cd.is_recovery_read(cd.candidate_query(program, loop.read)) for loop in loops(program, function, opts))


def _inside_entry(function: Function | None, opts: Options) -> bool:
    while function is not None:
        if _is_entry(function, opts):
            return True
        function = function.parent
    return False


def _is_candidate_read(program: Program, call: Call, opts: Options) -> bool:
    chain = dz.whole(call)
    if dz.is_multi_read(program, chain) or cd.candidate_query(program, call) is not None:
        return True
    return any(opts.candidate_reads.search(fx.last(c.callee)) for c in chain if not c.method == "pipe")


def loops(program: Program, entry: Function, opts: Options) -> list[Loop]:
    out: list[Loop] = []
    calls = entry.all_calls
    walks = collection_loops(entry)  # the `for .. of` statements, read once for every candidate read
    for read in calls:
        if not dz.is_head(read):
            continue
        usage, name = read.binding
        if usage != "bound" or not name or not name.isidentifier() or not _is_candidate_read(program, read, opts):
            continue
        after = read.span[2]
        for driver in calls:
            if driver.span[1] < after or not _iterates(driver, name):
                continue
            for arg in driver.args:
                body = arg.function or program.function_of(arg)
                if body is not None and arg.identifier != name:
                    items = cd.pattern_names(body.params[0]) if body.params else ()
                    out.append(Loop(entry, read, name, driver, body, items=items))
        for walk in walks:
            if walk.iterated != name or walk.body[1] < after:
                continue
            inside = [c for c in calls if fx.within(c, walk.body)]
            if inside and inside[0].enclosing is not None:
                items = cd.pattern_names(walk.pattern)
                out.append(Loop(entry, read, name, None, inside[0].enclosing, walk.body, (walk.line, walk.end_line),
                                items))
    return out


_NARROWING = ("filter", "slice", "sort", "toSorted", "reverse", "toReversed", "concat", "values")


def _iterates(driver: Call, name: str) -> bool:
    receiver = driver.receiver
    if receiver is not None and driver.method in _LOOP_METHODS and _rows_of(receiver, name):
        return True
    return fx.last(driver.callee) in ("forEach", "all", "mapEffect") and any(a.identifier == name for a in driver.args)


def _rows_of(expr: Expr, name: str) -> bool:
    """`rows`, or `rows.filter(..)`, `rows.slice(0, 10)`: some of the candidates, still the scan's copies."""
    hops = 0
    while expr is not None and hops < 4:
        if expr.identifier == name:
            return True
        call = expr.call
        if call is None or call.method not in _NARROWING or call.receiver is None:
            return False
        expr, hops = call.receiver, hops + 1
    return False


def _steps(program: Program, loop: Loop, paths: frozenset[str], opts: Options) -> list[Step]:
    steps = [Step(loop.body, None, (), loop, loop.items)]
    body_calls = loop.calls()
    for call in body_calls:
        expr = call.callee_expr
        if fx.matches(call.callee, opts.wake_calls) or revalidation(program, call, opts):
            continue  # the wake itself (its inside is the coordinator's business), or a check
        helper = program.function_of(expr) if expr is not None else None
        if helper is None or helper.path not in paths or fx.within(helper.expr, loop.body.expr.span):
            continue
        before = tuple(c for c in body_calls if c.precedes(call, within=loop.body) or _in_tests(c, call, loop.body))
        steps.append(Step(helper, call, before, items=_filled(helper, call, loop.items)))
    return steps


def _filled(helper: Function, call: Call, items: tuple[str, ...]) -> tuple[str, ...]:
    """The parameters of `helper` that `call` hands the candidate to."""
    out: list[str] = []
    for param, arg in zip(helper.params, call.args):
        if any(name in cd.pattern_names(arg.text) for name in items):
            out.extend(cd.pattern_names(param.split(":", 1)[0].split("=", 1)[0]))
    return tuple(out)


def _derived(step: Step) -> tuple[str, ...]:
    """The candidate's names in a step, with the `const`s bound from calls given it (`const run = await
    reload(sql, candidate.id)`): the copy a re-read answers is the candidate too."""
    names = list(step.items)
    for call in step.calls():
        usage, bound = call.binding
        if usage == "bound" and bound and any(cd.mentions(arg, tuple(names)) for arg in call.args):
            names.extend(n for n in cd.pattern_names(bound) if n not in names)
    return tuple(names)


def _delegates(program: Program, call: Call, items: tuple[str, ...], opts: Options) -> bool:
    """`call` hands the candidate to a helper whose first use of it is a re-validation (`if (!(await
    acquireLease(sql, run.id, owner))) return false` before it starts the run)."""
    helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
    if helper is None:
        return False
    own = _filled(helper, call, items)
    first = next((c for c in helper.all_calls if c.chain_position == 0 and own and cd.mentions(c.chain[-1].expr, own)),
                 None)
    return first is not None and revalidation(program, first, opts, 1) is not None


def _about(check: Call, items: tuple[str, ...]) -> bool:
    """The check is given the candidate (or what was read from it): a check of another row, or of
    nothing in particular, re-validates nothing about this one."""
    if not items:
        return True  # a loop whose candidate has no name the model reads: not judged on this
    # The whole chain as written: a tagged template's substitutions are no arguments of the call.
    return cd.mentions(check.chain[-1].expr, items)


def _in_tests(candidate: Call, call: Call, within: Function) -> bool:
    """`candidate` is evaluated in a condition guarding `call` (`if (!(yield* takeWake(..))) return`)."""
    return any(fx.within(candidate, guard.test.span) for guard in guard_path(call, within))


# ------------------------------------------------------------------ re-validation


def revalidation(program: Program, call: Call, opts: Options, depth: int = 2) -> str | None:
    """What kind of re-validation `call` is: "revalidator", "cas", "re-read", "helper", or None.
    Asked of each call by the steps, the wake test and the judge: answered once per call and depth."""
    if not dz.is_head(call):
        return None
    memo = program.memo("recovery.revalidation")
    key = (fx.key(call), call.span, depth)
    if key not in memo:
        memo[key] = _revalidation(program, call, opts, depth)
    return memo[key]


def _revalidation(program: Program, call: Call, opts: Options, depth: int) -> str | None:
    if fx.matches(call.callee, opts.revalidators):
        return "revalidator"
    chain = dz.whole(call)
    if dz.is_cas(program, chain):
        return "cas"
    if dz.is_reread(program, chain):
        return "re-read"
    found = cd.query_of(program, call, depth=1)
    if found is not None and cd.conditional(found, opts):
        return "cas"
    if found is not None and cd.re_read(found, opts):
        return "re-read"
    if depth > 0 and call.callee_expr is not None:
        helper = program.function_of(call.callee_expr)
        # A helper that checks and does nothing else: one that also hands work on (delivers, then
        # settles with a conditional write) is the wake, not its check.
        if helper is not None and any(revalidation(program, c, opts, depth - 1) for c in helper.all_calls) \
                and cd.only_statements(program, helper, opts, depth=2):
            return "helper"
    return None


def _fails_closed(program: Program, call: Call, opts: Options) -> bool:
    """A helper whose refusal is a failure: discarding its value still stops the path on refusal."""
    helper = program.function_of(call.callee_expr) if call.callee_expr is not None else None
    return helper is not None and fx.handler_fails(program, helper.expr, opts.fail_calls)


def _gates(program: Program, check: Call, kind: str, target: Call, within: Function, opts: Options) -> bool:
    """Does the result of `check` decide whether `target` runs?"""
    if _in_tests(check, target, within):
        return True
    usage, name = check.binding
    if usage == "bound" and name and name.isidentifier():
        if any(mentions_name(guard.test, name) for guard in guard_path(target, within)):
            return True
        return any(mentions_name(arg, name) for arg in target.args)
    if kind in ("revalidator", "helper") and usage == "discarded":
        return _fails_closed(program, check, opts)
    return False


def _answer_dropped(program: Program, check: Call, kind: str, opts: Options) -> bool:
    """A check that answers whether the candidate is still ours (`acquireLease(..)` -> false when
    someone holds it) called for nothing: another check passing does not make this one's "no" a yes."""
    if kind not in ("revalidator", "helper") or check.binding[0] != "discarded":
        return False
    helper = program.function_of(check.callee_expr) if check.callee_expr is not None else None
    return helper is not None and answers(helper) and not _fails_closed(program, check, opts)


def swallowed_by(program: Program, check: Call, opts: Options) -> Expr | None:
    """The stage that turns the re-validation's failure into a success: an ignore stage, or a catch whose
    handler only logs or succeeds."""
    caught = promise_caught(check, opts)
    if caught is not None:
        return caught
    for stage in fx.stages_of(check, hops=1):
        if fx.matches(stage.name, opts.ignore_stages):
            return stage.expr
        if not fx.matches(stage.name, opts.catch_stages) or stage.call is None or not stage.call.args:
            continue
        handler = stage.call.args[-1]
        if fx.handler_fails(program, handler, opts.fail_calls):
            continue
        quiet = opts.log_calls + opts.success_values
        if fx.matches(fx.ref_name(handler), quiet) or all(fx.matches(c.callee, quiet) for c in handler.calls):
            return stage.expr
    return None


def promise_caught(check: Call, opts: Options) -> Expr | None:
    """A promise's `.catch(() => true)` on the check: its refusal, when it throws, reads as a pass
    (gating on the answer does not help)."""
    for link in check.chain[check.chain_position + 1:]:
        handler = link.args[-1] if link.method == "catch" and link.args else None
        if handler is not None and handler.function is not None and _answers_yes(handler.function, opts):
            return link.expr
    return None


def _answers_yes(handler: Function, opts: Options) -> bool:
    """A catch handler that only logs and answers a truthy value (`true`, the row it was given)."""
    quiet = opts.log_calls + ("console.warn", "console.error", "console.log", "console.info")
    if any(not fx.matches(c.callee, quiet) for c in handler.all_calls):
        return False
    values = [e.value for e in exits(handler) if e.kind in ("return", "expression")]
    return bool(values) and all(v is not None and v.normalized in ("true", "!0", "1") for v in values)


# ------------------------------------------------------------------ the check


def check_wakes(ctx: "ReviewContext", program: Program, paths: Sequence[str], tally: WakeTally) -> Iterator[Finding]:
    opts = ctx.opts
    allowed = frozenset(paths) | frozenset(ctx.changeset.by_path)
    seen: set[tuple] = set()
    for entry in _entries(program, paths, opts):
        tally.entries += 1
        for loop in loops(program, entry, opts):
            tally.loops += 1
            steps = _steps(program, loop, allowed, opts)
            entered = {fx.key(step.gate) for step in steps if step.gate is not None}
            for step in steps:
                items = _derived(step)
                for wake in step.calls():
                    if fx.key(wake) in seen or fx.key(wake) in entered:
                        continue
                    named = fx.matches(wake.callee, opts.wake_calls)  # a wake by name, whatever it does inside
                    if not named and (revalidation(program, wake, opts) or not cd.hands_off(program, wake, items, opts)):
                        continue
                    if not named and _delegates(program, wake, items, opts):
                        continue  # a helper outside the change that re-checks the candidate before it acts
                    seen.add(fx.key(wake))
                    tally.wakes += 1
                    finding = _judge(ctx, program, loop, step, wake, items)
                    if finding is None:
                        tally.gated += 1
                    else:
                        yield finding


def _judge(
    ctx: "ReviewContext", program: Program, loop: Loop, step: Step, wake: Call, own: tuple[str, ...]
) -> Finding | None:
    """`own`: the candidate's names in the step (`_derived`)."""
    opts = ctx.opts
    checks: list[tuple[Call, str, Call, Function]] = []  # (re-validation, kind, what it must gate, within)
    for call in step.calls():
        kind = revalidation(program, call, opts)
        if kind and call is not wake and (call.precedes(wake, within=step.scope) or _in_tests(call, wake, step.scope)) \
                and _about(call, own):
            checks.append((call, kind, wake, step.scope))
    if step.gate is not None:
        for call in step.before:
            kind = revalidation(program, call, opts)
            if kind and _about(call, loop.items):
                checks.append((call, kind, step.gate, loop.body))
    caught = [c for c, _k, _t, _w in checks if promise_caught(c, opts) is not None]
    dropped = [c for c, kind, _t, _w in checks if _answer_dropped(program, c, kind, opts)]
    if not caught and not dropped and any(_gates(program, c, kind, target, within, opts) for c, kind, target, within in checks):
        return None
    read = fx.call_loc(loop.read, f"candidates read here into `{loop.name}`")
    where = (fx.call_loc(loop.driver, "per-candidate loop") if loop.driver is not None
             else fx.loc(loop.body.path, loop.lines[0], loop.lines[1], "per-candidate loop"))
    if not checks:
        return ctx.finding(
            "stale-wake",
            title=f"`{wake.callee_written}` wakes a candidate of `{loop.name}` without re-validating it",
            message=(
                f"`{wake.callee_written}` at {wake.path}:{wake.line} wakes a recovery candidate that "
                f"{fx.describe(loop.entry)} read earlier into `{loop.name}`, with no re-read or compare-and-set "
                "of that candidate on the way. Re-validate it against the current durable state right before "
                "the wake (a CAS such as `takeWake`, or a validation read) and skip it when it no longer holds."
            ),
            location=fx.call_loc(wake),
            related=fx.unique_sorted([read, where] + ([fx.call_loc(step.gate, "enters the helper that wakes")] if step.gate else [])),
            failure_sequence=(
                f"{fx.describe(loop.entry)} reads the candidates into `{loop.name}`",
                "before this candidate's turn, another process promotes its input, takes its claim over, or a "
                "newer turn supersedes it",
                f"`{wake.callee_written}` wakes the Session from the stale copy",
                "the Session runs a turn for work already done, twice, or over newer history",
            ),
            anchor=f"stale-wake|{wake.normalized}|{loop.name}",
        )
    check, kind, _target, _within = next((c for c in checks if c[0] in dropped), checks[-1])
    for candidate, _kind, _t, _w in checks:
        stage = swallowed_by(program, candidate, opts)
        if stage is not None:
            return ctx.finding(
                "validation-swallowed",
                title=f"`{candidate.callee_written}` failure is caught by `{stage.written}` before a wake",
                message=(
                    f"The re-validation `{candidate.callee_written}` at {candidate.path}:{candidate.line} has its "
                    f"failure turned into a success by `{stage.written}`, and `{wake.callee_written}` at "
                    f"{wake.path}:{wake.line} still runs afterwards. Let the failure stop this candidate "
                    "(propagate it, or quarantine the row and return) instead of logging it."
                ),
                location=fx.call_loc(candidate),
                related=fx.unique_sorted([fx.call_loc(wake, "still runs after the failure"), read]),
                failure_sequence=(
                    "the candidate no longer holds (promoted, taken over, or superseded)",
                    f"`{candidate.callee_written}` fails and the handler only logs it",
                    f"`{wake.callee_written}` wakes the Session anyway",
                    "the stale recovery runs and its input is promoted over newer state",
                ),
                anchor=f"validation-swallowed|{candidate.normalized}|{wake.normalized}",
            )
    usage = check.binding[0]
    how = "its result is discarded" if usage == "discarded" else "no condition on the way to the wake tests its result"
    return ctx.finding(
        "validation-ignored",
        title=f"`{check.callee_written}` runs before `{wake.callee_written}` but does not gate it",
        message=(
            f"The re-validation `{check.callee_written}` at {check.path}:{check.line} checks the candidate, but "
            f"{how}, so `{wake.callee_written}` at {wake.path}:{wake.line} runs whether it held or not. "
            "Test its result and skip the candidate when it failed: `if (!(yield* takeWake(db, row.id))) return`."
        ),
        location=fx.call_loc(check),
        related=fx.unique_sorted([fx.call_loc(wake, "runs regardless"), read]),
        failure_sequence=(
            "the candidate was promoted, taken over, or superseded after the scan",
            f"`{check.callee_written}` finds that out (no row matched, or a conflict)",
            f"the answer is not consulted and `{wake.callee_written}` wakes the Session",
            "a turn runs for work already done, or a stale recovery runs over newer history",
        ),
        anchor=f"validation-ignored|{check.normalized}|{wake.normalized}",
    )

