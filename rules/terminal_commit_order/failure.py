"""The success-after-failure check, and the publishes and helpers it reads.

A success terminal (Step.Ended, or a named helper that publishes it) must not
run in a failure branch or handler, nor after a failure terminal on its path.
A call whose own helper (followed two hops) runs one kind of terminal and never
the other counts as that terminal, at the call.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping, Sequence

from reviewer.report.model import Finding, Location
from reviewer.typescript import Call, Flag, Function, Program, Role, flags_set, guards, jumps_past, switched_off, throws

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.handlers import helper_paths, runs_in, terminal_names
from reviewer.rules.terminal_commit_order.scan import Scan, in_scope


# ------------------------------------------------------------------ publishes and helpers


def _publishes(scan: Scan, events: Sequence[str]) -> list[Call]:
    out = [c for c, event in _events(scan) if fx.matches(event, events)]
    return fx.in_key_order(out)


def _events(scan: Scan) -> list[tuple[Call, str]]:
    """Every call in scope that publishes an event, with the event (read once per run,
    not once per kind of terminal)."""
    if scan.events is None:
        scan.events = []
        terminals = scan.opts.success_events + scan.opts.failure_events
        for call in fx.iter_calls(scan.program, scan.scope):
            event = fx.terminal_event(call, terminals)
            if event:
                scan.events.append((call, event))
    return scan.events


def _helpers(scan: Scan, publishes: Iterable[Call], other: Iterable[Call]) -> dict[str, Function]:
    """Named functions that publish one kind of terminal (and never the other) when called:
    `endAssistant`; not `endWith = (finish) => (cause) => publish(..)`, which only builds the
    function that publishes."""
    other_fns = {id(fx.outer_named(c.enclosing, ("commit",))) for c in other}
    out: dict[str, Function] = {}
    for call in publishes:
        fn = fx.outer_named(call.enclosing, ("commit",))
        if fn is not None and fn.name and id(fn) not in other_fns and runs_in(scan, call, fn):
            out.setdefault(fn.name, fn)
    return out


def _sites(scan: Scan, publishes: Sequence[Call], helpers: Mapping[str, Function]) -> list[Call]:
    """Direct publishes plus calls of the helpers that make them (outside the helpers themselves)."""
    out = list(publishes)
    for call in fx.iter_calls(scan.program, scan.changed):
        helper = helpers.get(call.method)
        if helper is None or fx.outer_named(call.enclosing, ("commit",)) is helper:
            continue
        if fx.event_of(call):
            continue  # `events.publish(Tool.Failed, ..)` is judged by its own event, not as a helper named `publish`
        target = scan.program.function_of(call.callee_expr) if call.callee_expr is not None else None
        if target is not None and (target.path, target.line) != (helper.path, helper.line):
            continue  # resolves to another function of the same name
        out.append(call)
    return fx.unique_in_key_order(out)


# ------------------------------------------------------------------ check 1: success after failure


def check_success_after_failure(scan: Scan) -> Iterator[Finding]:
    opts = scan.opts
    successes = _publishes(scan, opts.success_events)
    failures = _publishes(scan, opts.failure_events)
    success_helpers = _helpers(scan, successes, failures)
    failure_helpers = _helpers(scan, failures, successes)
    success_sites = _sites(scan, successes, success_helpers)
    failure_sites = _sites(scan, failures, failure_helpers)
    # Calls whose own helper runs one terminal and never the other (`yield* wrapUp()` -> endAssistant).
    via: dict[int, tuple[Call, ...]] = {}
    named = terminal_names(scan, [*success_sites, *failure_sites])
    reached_failures = _reached(scan, failure_sites, success_sites, named, via)
    reached_successes = _reached(scan, success_sites, failure_sites, named, via)
    failure_sites = fx.in_key_order([*failure_sites, *reached_failures])
    # `Call.precedes` only holds between calls of one enclosing function: asking it of
    # every failure for every success was quadratic in the size of the change.
    failures_by_fn: dict[tuple[str, int], list[Call]] = {}
    for failure in failure_sites:
        failures_by_fn.setdefault(_fn_key(failure), []).append(failure)
        # Also where a failure handler it is published in is written: the handler may recover there.
        handler = failure.enclosing
        while handler is not None and handler.parent is not None:
            if handler.role is Role.FAILURE_HANDLER:
                failures_by_fn.setdefault((failure.path, id(handler.parent)), []).append(failure)
            handler = handler.parent
    # A success through a helper is looked at only on a failure path: elsewhere it is the helper's
    # own success terminal that is checked.
    success_sites = fx.in_key_order([
        *success_sites,
        *(c for c in reached_successes if _failure_path(scan, c) or _fn_key(c) in failures_by_fn),
    ])
    inside = _publishes_inside(failures, failure_helpers)
    checked = 0
    for site in success_sites:
        if not in_scope(scan, site):
            continue
        checked += 1
        reason, related = _after_failure(scan, site, failures_by_fn.get(_fn_key(site), []), inside, failure_helpers)
        if reason is None:
            continue
        what = (f"`{site.callee_written}` ({_short(opts.success_events)})" if id(site) in via
                else _what(scan, site, success_helpers))
        # The success's own guards are evidence too: a patch that only flips the condition
        # the success runs under makes the violation there. (The failure's guards are not:
        # renaming a variable in them would pull every old violation of the path into scope.)
        related = related + _guard_locations([site]) + _via_locations(site, via.get(id(site), ()))
        yield (
            scan.ctx.finding(
                "success-after-failure",
                title=f"{what} published {reason.split(':', 1)[0].replace('Step.Failed', _short(opts.failure_events))}",
                message=(
                    f"{what} at {site.path}:{site.line} ends the step successfully {reason.split(':', 1)[1].strip()}. "
                    f"A failed run must end with its failure terminal ({_short(opts.failure_events)}) only; publish "
                    "the failure terminal (or re-fail) here."
                ),
                location=fx.call_loc(site),
                related=fx.unique_sorted(related + _helper_locations(
                    scan, site, success_helpers, f"publishes {_short(opts.success_events)}")),
                failure_sequence=[
                    "the provider or a tool fails during the step",
                    f"the failure path publishes {what}, a success terminal",
                    "the step is recorded as finished and the Session continues on a failed answer",
                    "the failure is missing (or contradicted) in the durable history that replays after a restart",
                ],
                anchor=f"{site.normalized}:{reason.split(':', 1)[0]}",
            )
        )
    scan.facts.append(f"{checked} changed success terminal(s), none after a failure")


def _reached(
    scan: Scan, sites: Sequence[Call], others: Sequence[Call], named: frozenset[str], via: dict[int, tuple[Call, ...]]
) -> list[Call]:
    """Changed calls of `named` functions whose callee, a helper followed two hops, runs one of
    `sites` and none of `others`: a helper that may end the step either way is not one terminal.
    Each path to the terminal it runs goes to `via`."""
    ids = {id(c) for c in sites}
    other_ids = {id(c) for c in others}
    targets = sorted({c.callee for c in sites})
    other_targets = sorted({c.callee for c in others})
    out: list[Call] = []
    for call in fx.iter_calls(scan.program, scan.changed):
        if call.method not in named or id(call) in ids or id(call) in other_ids:
            continue
        path = next((p for p in helper_paths(scan, call, targets) if id(p[-1]) in ids), None)
        if path is None:
            continue
        if any(id(p[-1]) in other_ids for p in helper_paths(scan, call, other_targets)):
            continue
        via[id(call)] = path
        out.append(call)
    return out


def _failure_path(scan: Scan, call: Call) -> bool:
    """In a failure branch or handler, as the model names its regions."""
    if call.case_label is not None and call.case_label in scan.opts.failure_cases:
        return True
    return Role.FAILURE_HANDLER in call.roles


def _via_locations(site: Call, path: Sequence[Call]) -> list[Location]:
    return [fx.call_loc(c, f"`{site.callee_written}` reaches the terminal through `{c.callee_written}` here") for c in path]


def _fn_key(call: Call) -> tuple[str, int]:
    """Calls that `precedes` may relate share this key (same file, same enclosing function)."""
    return (call.path, id(call.enclosing))


def _after_failure(
    scan: Scan,
    site: Call,
    failure_sites: Sequence[Call],
    inside: Mapping[str, list[Call]],
    failure_helpers: Mapping[str, Function],
) -> tuple[str | None, list[Location]]:
    """Why `site` (a success terminal) runs after a failure; `failure_sites` holds at least
    every failure terminal of the site's own function, in key order; `inside` the failure
    publishes of each failure helper. A failure that sets a flag the site's guard tests
    (`failed = true` ... `if (!failed)`) does not reach the site."""
    opts = scan.opts
    if site.case_label is not None and site.case_label in opts.failure_cases:
        return f'in a failure branch: in the `case "{site.case_label}":` branch', []
    if Role.FAILURE_HANDLER in site.roles:
        handler = fx.outer_named(site.enclosing)
        return "inside a failure handler: inside a failure handler (catch/orElse callback)", (
            [fx.fn_loc(site.enclosing, "the failure handler")] if site.enclosing is not None and handler is None else []
        )
    earlier: list[Call] = []
    for failure in failure_sites:
        host = _recovered_before(scan, failure, site)
        if host is not None:
            related = [fx.call_loc(failure, "the failure terminal published in a handler that does not fail again")]
            if host.end_line + 1 <= site.line - 1:
                # The way from the recovered call to the success is where a guard on its result belongs: a
                # patch that deletes that guard changed this stretch.
                related.append(fx.loc(site.path, host.end_line + 1, site.line - 1,
                                      "the way from the recovered call to the success: nothing here tests its result"))
            return (
                f"after Step.Failed: after `{failure.callee_written}` at line {failure.line} failed it in a handler "
                "that recovers, so the run goes on to the success",
                related,
            )
        if failure.precedes(site) and not jumps_past(failure, site):
            if not switched_off(site, _flags(scan.program, failure, inside, failure_helpers), failure, scan.scope):
                earlier.append(failure)
    if not earlier:
        return None, []
    # The failure named is the one most plainly on the success's path: the one sharing most of the
    # conditions the success runs under (`!publisher.hasProviderError()` on both), then the first.
    own = _conditions(scan.program, site)
    failure = max(earlier, key=lambda f: len(own & _conditions(scan.program, f)))
    # "after Step.Failed" names the case in titles and finding ids (kept from the first release).
    failed = _named_event(scan, failure) or _short(opts.failure_events)
    return (
        f"after Step.Failed: after `{failure.callee_written}` ({failed}) at line {failure.line} already failed it",
        [fx.call_loc(failure, "the failure terminal published first on the same path")],
    )


def _conditions(program: Program, call: Call) -> frozenset[str]:
    """The conjuncts of the conditions `call` runs under (`a && !b` holds `a` and `!b`), each also read
    through the `const` it names (`stepEndedCleanly`, `!providerFailed` -> `!publisher.hasProviderError()`)."""
    out: set[str] = set()
    for guard in guards(call):
        if guard.holds and guard.kind in ("if", "logical", "ternary"):
            for part in _conjuncts(guard.test.normalized):
                out.update(_expanded(program, call, part, 2))
    return frozenset(out)


def _expanded(program: Program, call: Call, part: str, depth: int) -> set[str]:
    negated = part.startswith("!") and not part.startswith("!=")
    name = part[1:].strip() if negated else part
    if depth <= 0 or not name.isidentifier():
        return {part}
    value = program.bound_at(call, name)
    if value is None:
        return {part}
    inner = _conjuncts(value.normalized)
    if negated and len(inner) != 1:
        return {part}
    out = {part}
    for piece in inner:
        out.update(_expanded(program, call, f"!{piece}" if negated else piece, depth - 1))
    return out


def _conjuncts(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0 and text.startswith("&&", i):
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


# What makes a handler fail again (then the run does not go on past it).
_REFAIL = ("Effect.fail", "Effect.die", "Effect.failCause", "Effect.dieMessage", "Effect.failSync", "Effect.dieSync",
           "Effect.interrupt")


def _recovered_before(scan: Scan, failure: Call, site: Call) -> Call | None:
    """`failure` is published in a failure handler nested in a call of the site's own function that runs
    before the site (`work.pipe(Effect.catchAll(() => publish(Failed)))` then `publish(Completed)`), and
    the handler does not fail again itself: the failed run continues to its success terminal. The call
    holding the handler, or None."""
    handler = failure.enclosing
    while handler is not None and handler.parent is not site.enclosing and handler is not site.enclosing:
        handler = handler.parent
    if handler is None or handler is site.enclosing or handler.role is not Role.FAILURE_HANDLER:
        return None
    host = next((c for c in site.enclosing.calls if fx.within(handler.expr, c.span)), None) if site.enclosing else None
    if host is None or not host.precedes(site) or jumps_past(host, site):
        return None
    usage, name = host.binding
    if usage == "bound" and name and any(fx.mentions(g.test, name) for g in guards(site)):
        return None  # `const failed = yield* work.pipe(catchAll(.. as(true)))`, `if (failed) return`: told apart
    # Its own code, not what its helpers may fail with: a handler that settles a row (which can fail on a
    # database error) and publishes the failure still recovers on its normal path.
    return None if throws(handler.expr) or fx.refers_to_any(handler.expr, _REFAIL) else host


def _publishes_inside(failures: Sequence[Call], helpers: Mapping[str, Function]) -> dict[str, list[Call]]:
    """The failure publishes each failure helper makes (`failAssistant` -> its Step.Failed publish)."""
    out: dict[str, list[Call]] = {}
    for name, helper in helpers.items():
        out[name] = [c for c in failures if fx.outer_named(c.enclosing, ("commit",)) is helper]
    return out


def _flags(
    program: Program, failure: Call, inside: Mapping[str, list[Call]], helpers: Mapping[str, Function]
) -> frozenset[Flag]:
    """Flags set to `true` before `failure` fails the step: before the call itself, in its
    function, and, for a call of a failure helper (the model's own resolution of the callee,
    not its name), before every failure publish inside that helper."""
    flags = flags_set(failure)
    if fx.event_of(failure) is not None:
        return flags
    helper = helpers.get(failure.method)
    publishes = inside.get(failure.method, [])
    if helper is None or not publishes or not _calls_helper(program, failure, helper):
        return flags
    return flags | frozenset.intersection(*(flags_set(p) for p in publishes))


def _calls_helper(program: Program, call: Call, helper: Function) -> bool:
    """`call` calls `helper` itself, as the model resolves its callee."""
    callee = call.callee_expr
    found = program.function_of(callee) if callee is not None else None
    return found is not None and (found.path, found.line, found.end_line) == (helper.path, helper.line, helper.end_line)


def _named_event(scan: Scan, call: Call) -> str | None:
    """The terminal event the call names itself (`publish(Step.Failed, ..)`, `record(sql, id, RunEvent.Failed)`)."""
    return fx.terminal_event(call, scan.opts.success_events + scan.opts.failure_events)


def _short(events: Sequence[str]) -> str:
    """The events as a reader knows them (`Step.Ended`), for messages."""
    return "/".join(dict.fromkeys(".".join(e.split(".")[-2:]) for e in events)) or "the terminal event"


def _what(scan: Scan, site: Call, helpers: Mapping[str, Function]) -> str:
    named = _named_event(scan, site)
    if site.method in helpers and named is None:
        return f"`{site.callee_written}` ({_short(scan.opts.success_events)})"
    if named is not None and fx.event_of(site) != named:
        return f"`{site.callee_written}` ({named})"  # a helper given the event: `recordOutcome(.., RunEvent.Completed)`
    return f"`{named or site.callee_written}`"


def _helper_locations(scan: Scan, site: Call, helpers: Mapping[str, Function], note: str) -> list[Location]:
    fn = helpers.get(site.method)
    if fn is None or _named_event(scan, site) is not None:
        return []
    return [fx.fn_loc(fn, f"`{fn.name}` {note}")]


def _guard_locations(calls: list[Call]) -> list[Location]:
    out: list[Location] = []
    for call in calls:
        for guard in guards(call):
            test = guard.test
            out.append(fx.loc(test.path, test.line, test.end_line, f"condition `{test.written}` on this path"))
    return out
