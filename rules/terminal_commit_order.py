"""terminal-commit-order: no success terminal after a failure, no terminal before tools settle.

DESIGN.md family 2. A step ends with exactly one terminal event. A failed step
must never also end successfully (Step.Ended after Step.Failed, or from a
failure handler). The terminal commit that marks the execution `safe` tells
startup recovery that every tool outcome is durable, so it must come after
tool settlement on the same path; and recovery must not drop a `safe` claim
without reconciling tools, since a crash can land between the two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Sequence

from reviewer.engine import globs
from reviewer.change.changeset import ChangedFile
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Kind, Option, Options, Outcome, parse_error_check
from reviewer.typescript import (
    Atom,
    Call,
    Callback,
    Function,
    Module,
    Program,
    Role,
    guard_path,
    jumps_past,
    mentions_string,
    names_in,
)

from reviewer.rules import _effect as fx

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

FAMILY_ID = "terminal-commit-order"

OPTIONS: tuple[Option, ...] = (
    Option(
        'success_events',
        ["SessionEvent.Step.Ended", "Step.Ended"],
        Kind.NAMES,
        'Events that end a step successfully (first argument of a publish).',
    ),
    Option(
        'failure_events',
        ["SessionEvent.Step.Failed", "Step.Failed"],
        Kind.NAMES,
        'Events that end a step with a failure (first argument of a publish).',
    ),
    Option(
        'failure_cases',
        ["provider-error", "error"],
        Kind.NAMES,
        '`case "<label>":` branches that handle a failure.',
    ),
    Option(
        'terminal_hooks',
        ["terminalCommit"],
        Kind.NAMES,
        'Commit-hook properties run when a terminal event commits.',
    ),
    Option(
        'phase_key',
        "phase",
        Kind.TEXT,
        "The property of a terminal commit's update that holds the execution's phase.",
    ),
    Option(
        'safe_phase',
        "safe",
        Kind.TEXT,
        'The phase value that marks the execution safe to drop (tools settled, step final).',
    ),
    Option(
        'settle_tools',
        ["failUnsettledTools", "awaitToolFibers"],
        Kind.NAMES,
        'Calls that settle tool outcomes; all must precede a terminal commit on its path.',
    ),
    Option(
        'hook_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'Where hook definitions may live when only their invoker changed (globs).',
    ),
    Option(
        'recovery_paths',
        ["packages/core/src/session/recovery.ts"],
        Kind.GLOBS,
        'Startup recovery files.',
    ),
    Option(
        'reconcile',
        ["reconcileTools", "failUnsettledTools", "SessionTools.reconcile"],
        Kind.NAMES,
        "Calls in startup recovery that reconcile a crashed run's tools.",
    ),
    Option(
        'release',
        ["SessionExecutionClaim.clear", "SessionExecutionClaim.release", "SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        'Calls that delete an execution claim.',
    ),
    Option(
        'ignore_paths',
        ["**/test/**", "**/*.test.ts", "**/*.spec.ts", "**/__tests__/**"],
        Kind.GLOBS,
        'Files never checked (tests drive the terminal API directly).',
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/success-after-failure",
        severity=Severity.MUST_FIX,
        title="Success terminal after a failure",
        summary="Step.Ended (or a helper publishing it) runs after Step.Failed on the same path, or inside a failure handler.",
        why=(
            "A step has exactly one terminal outcome. Publishing Step.Ended after Step.Failed (or from a catch "
            "handler / provider-error branch) records a failed step as finished, so the Session continues as if "
            "the model's answer were complete and the failure is lost from the durable history."
        ),
        bad=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* endAssistant(\"error\")   // publishes Step.Ended"
        ),
        good=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* failAssistant(event.message)   // publishes Step.Failed"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/terminal-before-tools",
        severity=Severity.MUST_FIX,
        title="Terminal commit marks safe before tools settle",
        summary="A terminal publish whose commit sets phase \"safe\" runs before awaitToolFibers/failUnsettledTools on its path.",
        why=(
            "`phase: \"safe\"` tells startup recovery that every tool outcome of the step is durable. If the "
            "process crashes after the terminal commit but before running tools finish or unsettled tools are "
            "failed, recovery trusts `safe`, drops the claim, and those tools stay `running` forever with their "
            "side effects unrecorded."
        ),
        bad=(
            "case \"provider-error\":\n"
            "  yield* failAssistant(event.message)   // Step.Failed commits phase: \"safe\"\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")"
        ),
        good=(
            "case \"provider-error\":\n"
            "  yield* awaitToolFibers()\n"
            "  yield* failUnsettledTools(\"Tool outcome unknown after provider error\")\n"
            "  yield* failAssistant(event.message)"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/recovery-clears-safe-unreconciled",
        severity=Severity.MUST_FIX,
        title="Recovery clears a safe claim without reconciling tools",
        summary="Startup recovery deletes a claim in phase \"safe\" with no reconcileTools call before it on the path.",
        why=(
            "A crash can land between the terminal commit and the tool outcomes (or a patch can commit safe too "
            "early). Recovery is the last chance to record those outcomes; clearing the claim first leaves the "
            "tools unknown and nothing ever revisits them."
        ),
        bad=(
            "if (row.phase === \"safe\") {\n"
            "  yield* SessionExecutionClaim.clear(db, claim)\n"
            "  return\n"
            "}"
        ),
        good=(
            "if (row.phase === \"safe\" || row.phase === \"interrupted\") {\n"
            "  yield* dependencies.reconcileTools(row.session_id, row.assistant_message_id)\n"
            "  yield* SessionExecutionClaim.clear(db, claim)\n"
            "  return\n"
            "}"
        ),
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a file with terminal commits",
        summary="The TypeScript parser left an ERROR region (untouched, or changed but without the family's idioms) in a file this family inspects.",
        why="Rules run on the partial tree; terminal publishes or tool settlement inside an ERROR region are invisible to them.",
    ),
)


# ------------------------------------------------------------------ options


@dataclass
class Scan:
    ctx: "ReviewContext"
    program: Program
    opts: Options
    changed: tuple[str, ...]
    scope: tuple[str, ...]  # changed files and the files they import
    findings: list[Finding]
    facts: list[str]
    # settle step short name -> every callee spelling seen for it (`publisher.failUnsettledTools`, ...)
    settle_callees: dict[str, set[str]]
    # names written in an outermost function, by its identity (read once, asked per site)
    names: dict[int, frozenset[str]] = field(default_factory=dict)
    # Per-run indexes and memos: asked per site, each was a scan over every file or call.
    files: dict[str, ChangedFile] = field(default_factory=dict)  # the change set by path
    callers: dict[int, list[Call]] = field(default_factory=dict)  # id(helper) -> its callers
    by_method: dict[str, list[Call]] | None = None  # calls in scope by method, in scope order
    recovery_sites: tuple[Location, ...] | None = None
    events: list[tuple[Call, str]] | None = None  # publishing calls in scope, in scope order
    # The safe-phase world (one per run, so guard paths judge each shared guard once)
    # and each function's reconcile calls (filtered once, asked per release).
    phase_world: Callable[[Atom], bool | None] | None = None
    reconcilers: dict[int, list[Call]] = field(default_factory=dict)


# ------------------------------------------------------------------ publishes and helpers


def _publishes(scan: Scan, events: Sequence[str]) -> list[Call]:
    out = [c for c, event in _events(scan) if fx.matches(event, events)]
    return fx.in_key_order(out)


def _events(scan: Scan) -> list[tuple[Call, str]]:
    """Every call in scope that publishes an event, with the event (read once per run,
    not once per kind of terminal)."""
    if scan.events is None:
        scan.events = []
        for call in fx.iter_calls(scan.program, scan.scope):
            event = fx.event_of(call)
            if event:
                scan.events.append((call, event))
    return scan.events


def _helpers(publishes: Iterable[Call], other: Iterable[Call]) -> dict[str, Function]:
    """Named functions that publish one kind of terminal (and never the other): `endAssistant`."""
    other_fns = {id(fx.outer_named(c.enclosing, ("commit",))) for c in other}
    out: dict[str, Function] = {}
    for call in publishes:
        fn = fx.outer_named(call.enclosing, ("commit",))
        if fn is not None and fn.name and id(fn) not in other_fns:
            out.setdefault(fn.name, fn)
    return out


def _sites(scan: Scan, publishes: Sequence[Call], helpers: Mapping[str, Function]) -> list[Call]:
    """Direct publishes plus calls of the helpers that make them (outside the helpers themselves)."""
    out = list(publishes)
    for call in fx.iter_calls(scan.program, scan.changed):
        if call.method in helpers and fx.outer_named(call.enclosing, ("commit",)) is not helpers[call.method]:
            out.append(call)
    return fx.unique_in_key_order(out)


def _in_scope(scan: Scan, call: Call) -> bool:
    """The patch touched this call or the named function around it."""
    if call.path not in scan.changed:
        return False
    if call.changed:
        return True
    fn = fx.outer_named(call.enclosing)
    touched = scan.files.get(call.path)
    return fn is not None and touched is not None and touched.touches(fn.line, fn.end_line)


# ------------------------------------------------------------------ check 1: success after failure


def _check_success_after_failure(scan: Scan) -> None:
    opts = scan.opts
    successes = _publishes(scan, opts.success_events)
    failures = _publishes(scan, opts.failure_events)
    success_helpers = _helpers(successes, failures)
    failure_helpers = _helpers(failures, successes)
    success_sites = _sites(scan, successes, success_helpers)
    failure_sites = _sites(scan, failures, failure_helpers)
    # `Call.precedes` only holds between calls of one enclosing function: asking it of
    # every failure for every success was quadratic in the size of the change.
    failures_by_fn: dict[tuple[str, int], list[Call]] = {}
    for failure in failure_sites:
        failures_by_fn.setdefault(_fn_key(failure), []).append(failure)
    checked = 0
    for site in success_sites:
        if not _in_scope(scan, site):
            continue
        checked += 1
        reason, related = _after_failure(scan, site, failures_by_fn.get(_fn_key(site), []))
        if reason is None:
            continue
        what = _what(site, success_helpers)
        scan.findings.append(
            scan.ctx.finding(
                "success-after-failure",
                title=f"{what} published {reason.split(':', 1)[0]}",
                message=(
                    f"{what} at {site.path}:{site.line} ends the step successfully {reason.split(':', 1)[1].strip()}. "
                    "A failed step must end with Step.Failed only; publish the failure terminal (or re-fail) here."
                ),
                location=fx.call_loc(site),
                related=fx.unique_sorted(related + _helper_locations(site, success_helpers, "publishes Step.Ended")),
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


def _fn_key(call: Call) -> tuple[str, int]:
    """Calls that `precedes` may relate share this key (same file, same enclosing function)."""
    return (call.path, id(call.enclosing))


def _after_failure(scan: Scan, site: Call, failure_sites: Sequence[Call]) -> tuple[str | None, list[Location]]:
    """Why `site` (a success terminal) runs after a failure; `failure_sites` holds at least
    every failure terminal of the site's own function, in key order."""
    opts = scan.opts
    if site.case_label is not None and site.case_label in opts.failure_cases:
        return f'in a failure branch: in the `case "{site.case_label}":` branch', []
    if Role.FAILURE_HANDLER in site.roles:
        handler = fx.outer_named(site.enclosing)
        return "inside a failure handler: inside a failure handler (catch/orElse callback)", (
            [fx.fn_loc(site.enclosing, "the failure handler")] if site.enclosing is not None and handler is None else []
        )
    for failure in failure_sites:
        if failure.precedes(site) and not jumps_past(failure, site):
            return (
                f"after Step.Failed: after `{failure.callee_text}` at line {failure.line} already failed it",
                [fx.call_loc(failure, "the failure terminal published first on the same path")],
            )
    return None, []


def _what(site: Call, helpers: Mapping[str, Function]) -> str:
    if site.method in helpers and fx.event_of(site) is None:
        return f"`{site.callee_text}` (Step.Ended)"
    return f"`{fx.event_of(site) or site.callee_text}`"


def _helper_locations(site: Call, helpers: Mapping[str, Function], note: str) -> list[Location]:
    fn = helpers.get(site.method)
    if fn is None or fx.event_of(site) is not None:
        return []
    return [fx.fn_loc(fn, f"`{fn.name}` {note}")]


# ------------------------------------------------------------------ check 2: terminal before tools


@dataclass(frozen=True)
class SafeHook:
    callback: Callback
    line: int  # the `phase: "safe"` line


def _safe_hooks(scan: Scan) -> list[SafeHook]:
    """Terminal-commit hooks whose body writes `phase: "safe"` (directly or via a helper's argument)."""
    program, opts = scan.program, scan.opts
    paths = set(scan.scope) | set(fx.files_naming(scan.ctx, opts.hook_paths, opts.terminal_hooks))
    paths = {p for p in paths if not globs.matches(p, opts.ignore_paths)}
    out: list[SafeHook] = []
    for hook in opts.terminal_hooks:
        for cb in program.callbacks(hook, sorted(paths)):
            calls = list(cb.value.calls)
            if cb.function is not None:
                calls += list(cb.function.all_calls)
            line = next((ln for ln in (_safe_line(c, opts) for c in calls) if ln is not None), None)
            if line is not None:
                out.append(SafeHook(cb, line))
    return sorted(out, key=lambda h: (h.callback.path, h.callback.line))


def _safe_line(call: Call, opts: Options) -> int | None:
    for arg in call.args:
        value = arg.prop(opts.phase_key)
        if value is not None and value.string_value == opts.safe_phase:
            return value.line
    return None


def _check_terminal_before_tools(scan: Scan) -> list[Call]:
    """Returns the early terminal sites (recovery findings point at them)."""
    program, opts = scan.program, scan.opts
    hooks = _safe_hooks(scan)
    if not hooks:
        scan.facts.append(f"no {'/'.join(opts.terminal_hooks)} hook marks the execution {opts.safe_phase}")
        return []
    terminal_publishes: list[Call] = []
    for hook in opts.terminal_hooks:
        for inv in program.invocations(hook, scan.scope):
            host = fx.publish_around(program, inv.path, inv.line)
            if host is not None:
                terminal_publishes.append(host)
    terminal_publishes = fx.unique_in_key_order(terminal_publishes)
    early: list[Call] = []
    checked = 0
    for publish in terminal_publishes:
        helper = fx.outer_named(publish.enclosing, ("commit",))
        callers = _callers(scan, helper) if helper is not None and _unsettled(scan, publish) else []
        sites = callers if callers else [publish]
        for site in sites:
            if not _in_scope(scan, site) or not _tool_context(scan, site):
                continue
            if not (_failure_context(scan, site) or _settles_somewhere(scan, site)):
                continue  # e.g. an early "no model" failure before any tool could start
            checked += 1
            missing = _unsettled(scan, site)
            if not missing:
                continue
            early.append(site)
            scan.findings.append(_before_tools_finding(scan, site, publish, helper if callers else None, missing, hooks))
    scan.facts.append(
        f"{checked} changed terminal commit(s) marking `{opts.phase_key}: \"{opts.safe_phase}\"`, each after "
        f"{' + '.join(f'`{fx.last(n)}`' for n in opts.settle_tools)}"
    )
    return early


def _callers(scan: Scan, helper: Function) -> list[Call]:
    """Calls of the helper by name in the changed files and the files around them."""
    if id(helper) not in scan.callers:
        scan.callers[id(helper)] = _find_callers(scan, helper)
    return scan.callers[id(helper)]


def _calls_by_method(scan: Scan) -> dict[str, list[Call]]:
    """Every call in scope by its method name (in scope order), indexed once per run."""
    if scan.by_method is None:
        scan.by_method = {}
        for call in fx.iter_calls(scan.program, scan.scope):
            scan.by_method.setdefault(call.method, []).append(call)
    return scan.by_method


def _find_callers(scan: Scan, helper: Function) -> list[Call]:
    out = []
    for call in _calls_by_method(scan).get(helper.name or "", []):
        if fx.outer_named(call.enclosing, ("commit",)) is not helper:
            if call.callee == helper.name or "." in call.callee:
                out.append(call)
    return fx.in_key_order(out)


def _unsettled(scan: Scan, site: Call) -> list[str]:
    """Settle steps (of those this code can reach) that do not run before `site` on its path."""
    fn = site.enclosing
    calls = fn.calls if fn is not None else ()
    before = [c for c in calls if c.precedes(site)]
    missing = []
    for name in _available_settles(scan, site):
        short = fx.last(name)
        if any(c.method == short or fx.matches(c.callee, (name,)) for c in before):
            continue
        if any(_settles_via_helper(scan, c, short) for c in before):
            continue
        missing.append(short)
    return missing


def _settles_via_helper(scan: Scan, call: Call, short: str) -> bool:
    """`yield* settleAll()` where the helper (followed up to 2 calls deep) awaits/fails the tools."""
    targets = scan.settle_callees.get(short)
    if not targets:
        return False
    return bool(scan.program.reaches(call.expr, sorted(targets), max_depth=2))


def _failure_context(scan: Scan, site: Call) -> bool:
    """A failure branch or handler: where a provider error meets tools still in flight."""
    return (site.case_label is not None and site.case_label in scan.opts.failure_cases) or Role.FAILURE_HANDLER in site.roles


def _settles_somewhere(scan: Scan, site: Call) -> bool:
    """The site's own body settles tools somewhere (so settlement belongs to this path, just not first)."""
    fn = site.enclosing
    shorts = {fx.last(n) for n in scan.opts.settle_tools}
    return fn is not None and any(c.method in shorts for c in fn.calls)


def _tool_context(scan: Scan, site: Call) -> bool:
    """Tools can be running here: some enclosing function knows a settle step.

    Keeps a UI helper that happens to be called `failAssistant` out of the check.
    """
    return bool(_available_settles(scan, site))


def _available_settles(scan: Scan, site: Call) -> list[str]:
    """The settle steps the code around `site` can call (named in its outermost function).

    A compaction stream with local tools but no hosted ones only has
    `awaitToolFibers`; requiring `failUnsettledTools` there would be noise.
    """
    outer = site.enclosing
    while outer is not None and outer.parent is not None:
        outer = outer.parent
    if outer is None:
        return []
    if id(outer) not in scan.names:
        scan.names[id(outer)] = names_in(outer.expr)
    named = scan.names[id(outer)]
    return [name for name in scan.opts.settle_tools if fx.last(name) in named]


def _before_tools_finding(
    scan: Scan, site: Call, publish: Call, helper: Function | None, missing: Sequence[str], hooks: Sequence[SafeHook]
) -> Finding:
    opts = scan.opts
    event = fx.event_of(publish) or "the terminal event"
    where = f' in the `case "{site.case_label}":` branch' if site.case_label else ""
    if Role.FAILURE_HANDLER in site.roles and not site.case_label:
        where = " in a failure handler"
    later = [
        c
        for c in (site.enclosing.calls if site.enclosing is not None else ())
        if c.method in {fx.last(n) for n in opts.settle_tools} and site.precedes(c)
    ]
    related: list[Location] = []
    if helper is not None:
        related.append(fx.fn_loc(helper, f"`{helper.name}` publishes `{event}` with the terminal commit (:{publish.line})"))
    for hook in hooks:
        cb = hook.callback
        related.append(fx.loc(cb.path, cb.line, cb.end_line, f"`{cb.prop}` writes `{opts.phase_key}: \"{opts.safe_phase}\"`"))
    for call in later:
        related.append(fx.call_loc(call, f"`{call.callee_text}` runs only after the terminal commit"))
    related.extend(_recovery_sites(scan))
    after = f" ({', '.join(f'`{c.callee_text}` at :{c.line}' for c in later)} only after it)" if later else ""
    return scan.ctx.finding(
        "terminal-before-tools",
        title=f"`{event}` commits {opts.phase_key} \"{opts.safe_phase}\" before tools settle",
        message=(
            f"`{site.callee_text}` at {site.path}:{site.line}{where} publishes `{event}`, whose terminal commit marks "
            f"the execution `{opts.phase_key}: \"{opts.safe_phase}\"`, before {', '.join(f'`{m}`' for m in missing)} on "
            f"the same path{after}. Startup recovery trusts `{opts.safe_phase}` to mean every tool outcome is durable. "
            "Await the tool fibers and fail unsettled tools first, then publish the terminal."
        ),
        location=fx.call_loc(site),
        related=fx.unique_sorted(related),
        failure_sequence=[
            "the provider starts a local tool or records a hosted tool call, then reports an error",
            f"`{event}` commits `{opts.phase_key}: \"{opts.safe_phase}\"` while the tool is still running or unsettled",
            "the process crashes before the tool fibers finish or the unsettled tools are failed",
            f"recovery sees `{opts.safe_phase}` and clears the claim; the tool stays `running` forever and its side "
            "effects are never recorded",
        ],
        anchor=f"{site.normalized}:{event}",
    )


def _recovery_sites(scan: Scan) -> list[Location]:
    """Where recovery acts on `safe` (evidence that an early safe is trusted)."""
    if scan.recovery_sites is None:
        scan.recovery_sites = tuple(_find_recovery_sites(scan))
    return list(scan.recovery_sites)


def _find_recovery_sites(scan: Scan) -> list[Location]:
    out = []
    for path in fx.tree_paths(scan.ctx, scan.opts.recovery_paths):
        module = scan.program.module(path)
        if module is None:
            continue
        for call in module.calls():
            if fx.matches(call.callee, scan.opts.release) and _mentions_safe(scan, call):
                out.append(fx.call_loc(call, f"recovery clears claims in phase `{scan.opts.safe_phase}`"))
                break
    return out


# ------------------------------------------------------------------ check 3: recovery clears safe


def _check_recovery(scan: Scan, early: Sequence[Call]) -> None:
    opts = scan.opts
    paths = [p for p in scan.changed if globs.matches(p, opts.recovery_paths)]
    checked = 0
    releases = [c for c in fx.iter_calls(scan.program, paths) if fx.matches(c.callee, opts.release)]
    for call in fx.in_key_order(releases):
        if not _in_scope(scan, call):
            continue
        if not _mentions_safe(scan, call):
            continue
        checked += 1
        if _reconciled_before(scan, call):
            continue
        fn = fx.outer_named(call.enclosing)
        related = [fx.fn_loc(fn, f"`{fn.name}` handles phase `{opts.safe_phase}` without reconciling first")] if fn else []
        related += [fx.call_loc(site, f"`{opts.safe_phase}` can be committed with tools unsettled") for site in early]
        scan.findings.append(
            scan.ctx.finding(
                "recovery-clears-safe-unreconciled",
                title=f"Recovery drops a `{opts.safe_phase}` claim without reconciling tools",
                message=(
                    f"`{call.callee}` at {call.path}:{call.line} deletes a claim recovered in phase "
                    f"`{opts.safe_phase}` with no {' / '.join(f'`{fx.last(r)}`' for r in opts.reconcile)} before it on "
                    "the same path. A crash between the terminal commit and the tool outcomes leaves tools unsettled "
                    "under a safe claim; reconcile them before the claim is dropped."
                ),
                location=fx.call_loc(call),
                related=fx.unique_sorted(related),
                failure_sequence=[
                    f"a step commits `{opts.safe_phase}` and the process crashes before every tool outcome is durable",
                    f"startup recovery takes the expired claim over and sees phase `{opts.safe_phase}`",
                    f"it calls `{fx.last(call.callee)}` without reconciling tools",
                    "the tool calls stay `running`/unknown for good and nothing revisits them",
                ],
                anchor=call.normalized,
            )
        )
    if paths:
        scan.facts.append(f"{checked} recovery release(s) of `{opts.safe_phase}` claims, each after tool reconciliation")


def _mentions_safe(scan: Scan, call: Call) -> bool:
    """Can a claim in the safe phase reach this release?

    The function around the call must name the safe phase at all (as a string);
    then every condition the call runs under (enclosing `if`/`else`, `case`
    labels, early exits like `if (row.phase !== "safe") continue`) must admit a
    row whose phase is safe. A test of anything else admits every row.
    """
    fn = fx.outer_named(call.enclosing) or call.enclosing
    if fn is None:
        return False
    if not mentions_string(fn.expr, scan.opts.safe_phase):  # a lookup, not a walk of the function per release
        return False
    if scan.phase_world is None:
        scan.phase_world = _phase_world(scan.opts)
    # Releases down one `if / else if` chain share their guards: each is judged once.
    return guard_path(call, within=fn).all_admit(scan.phase_world)


def _phase_world(opts: Options) -> Callable[[Atom], bool | None]:
    """Decides comparisons of the phase in a world where it is the safe phase.

    `x === "safe"` holds; `x === "ready"` does not when `x` is the phase
    (`row.phase`, `phase`); any other test is unknown.
    """

    def decide(atom: Atom) -> bool | None:
        if atom.operator not in ("===", "==", "!==", "!=") or atom.right is None:
            return None
        for subject, literal in ((atom.left, atom.right), (atom.right, atom.left)):
            value = literal.string_value
            if value is None:
                continue
            if value == opts.safe_phase:
                equal = True
            elif fx.last(subject.member_path or "") == opts.phase_key:
                equal = False
            else:
                return None
            return equal if atom.operator in ("===", "==") else not equal
        return None

    return decide


def _reconciled_before(scan: Scan, call: Call) -> bool:
    fn = call.enclosing
    if fn is None:
        return False
    if id(fn) not in scan.reconcilers:
        shorts = {fx.last(r) for r in scan.opts.reconcile}
        scan.reconcilers[id(fn)] = [
            other for other in fn.all_calls if other.method in shorts or fx.matches(other.callee, scan.opts.reconcile)
        ]
    return any(other.precedes(call) for other in scan.reconcilers[id(fn)])


# ------------------------------------------------------------------ run


def _relevant(scan: Scan, module: Module) -> bool:
    opts = scan.opts
    if globs.matches(module.path, opts.recovery_paths):
        return True
    terminals = opts.success_events + opts.failure_events
    settles = {fx.last(s) for s in opts.settle_tools}
    for call in module.calls():
        if fx.matches(fx.event_of(call), terminals):
            return True
        if call.method in settles:
            return True
    for hook in opts.terminal_hooks:
        if scan.program.callbacks(hook, module.path):
            return True
        if scan.program.invocations(hook, module.path):
            return True
    return False


_VIOLATION_PHRASES = {
    "success-after-failure": "success terminal after a failure",
    "terminal-before-tools": "`safe` terminal committed before tools settle",
    "recovery-clears-safe-unreconciled": "recovery clears `safe` claims without reconciling tools",
}


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a terminal-order violation."""
    names = opts.terminal_hooks + opts.settle_tools + opts.reconcile + opts.release
    events = {".".join(e.split(".")[-2:]) for e in opts.success_events + opts.failure_events}
    return sorted(set(names) | events)


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    changed = tuple(p for p in ctx.changeset.typescript_paths() if not globs.matches(p, opts.ignore_paths))
    if not changed:
        return Outcome("no changed TypeScript file")
    program = ctx.program
    scan = Scan(ctx, program, opts, (), (), [], [], {})
    # Regions first, over every changed file: calls inside an ERROR region are
    # invisible to the model, so a broken file could otherwise look irrelevant.
    regions = fx.error_regions(program, ctx, changed, _idiom_tokens(opts))
    first = fx.blocking_region(regions)
    if first is not None:
        unreadable = fx.unparsed_summary(first, "terminal/tool idioms", "terminal publishes and tool settlement")
        return Outcome(unreadable, unreadable=unreadable)
    relevant = tuple(p for p in changed if (m := program.module(p)) is not None and _relevant(scan, m))
    if not relevant:
        return Outcome(
            "no changed file publishes a step terminal, defines/invokes a terminal commit, settles tools or is recovery",
        )
    regions = [r for r in regions if r.path in relevant]
    scan.changed = relevant
    scan.scope = tuple(sorted(set(relevant) | set(fx.imported_paths(program, relevant))))
    scan.files = ctx.changeset.by_path
    shorts = {fx.last(n) for n in opts.settle_tools}
    for call in fx.iter_calls(program, scan.scope):
        if call.method in shorts:
            scan.settle_callees.setdefault(call.method, set()).add(call.callee)
    _check_success_after_failure(scan)
    early = _check_terminal_before_tools(scan)
    _check_recovery(scan, early)
    scan.findings.extend(
        fx.parse_error_findings(
            ctx,
            regions,
            title="Unparsed region in a file with terminal commits",
            idioms="terminal/tool",
            unchecked="terminal publishes or tool settlement",
        )
    )
    findings = tuple(sorted(scan.findings, key=lambda f: f.sort_key()))
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    summary = fx.violation_summary(blocking, _VIOLATION_PHRASES) if blocking else "; ".join(scan.facts)
    return Outcome(summary, findings, examined=len(relevant))


FAMILY = Family(
    id=FAMILY_ID,
    summary="No success terminal after a failure, and no terminal commit marking safe before tools settle.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
