"""The terminal-before-tools check: a terminal commit marking `safe` runs after tool settlement.

Finds the terminal-commit hooks that write the safe phase, the publishes (and
their callers) that run them, and the settle steps missing before each; the
finding points at where recovery trusts `safe`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from reviewer.engine import globs
from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Call, Callback, Function, Role, names_in

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.recovery import mentions_safe
from reviewer.rules.terminal_commit_order.scan import Scan, in_scope


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


def check_terminal_before_tools(scan: Scan) -> list[Call]:
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
            if not in_scope(scan, site) or not _tool_context(scan, site):
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
            if fx.matches(call.callee, scan.opts.release) and mentions_safe(scan, call):
                out.append(fx.call_loc(call, f"recovery clears claims in phase `{scan.opts.safe_phase}`"))
                break
    return out
