"""The terminal-before-tools check: a terminal commit marking `safe` runs after tool settlement.

Finds the terminal-commit hooks that write the safe phase, the publishes (and
their callers) that run them, and the settle steps missing before each; the
finding points at where recovery trusts `safe`. A call whose own helper commits
the terminal (`yield* reportFailure(e)`) is a terminal commit too, at that call.
Inside a failure handler the path is the handler's own (handlers.py), and a
handler of an effect that starts no tools is judged where its combinator runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence

from reviewer.engine import globs
from reviewer.report.model import Finding, Location
from reviewer.engine.api import Options
from reviewer.typescript import Call, Callback, Function, Role, names_in

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.handlers import (
    before_in_handler,
    entered_by,
    handled,
    handler_root,
    helper_paths,
    runs_in,
    starts_tools,
    terminal_names,
)
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


@dataclass(frozen=True)
class Terminal:
    """A call that commits a terminal: `site` (the publish, or a call of the `helper` making it, or a
    call whose callee reaches one: `via`, the calls down to it)."""

    site: Call
    publish: Call
    helper: Function | None
    via: tuple[Call, ...] = ()


def check_terminal_before_tools(scan: Scan) -> Iterator[Finding]:
    """Also records the early terminal sites in `scan.early` (recovery findings point at them)."""
    program, opts = scan.program, scan.opts
    hooks = _safe_hooks(scan)
    if not hooks:
        scan.facts.append(f"no {'/'.join(opts.terminal_hooks)} hook marks the execution {opts.safe_phase}")
        return
    terminal_publishes: list[Call] = []
    for hook in opts.terminal_hooks:
        for inv in program.invocations(hook, scan.scope):
            host = fx.publish_around(program, inv.path, inv.line)
            if host is not None:
                terminal_publishes.append(host)
    terminal_publishes = fx.unique_in_key_order(terminal_publishes)
    # Every call that commits a terminal itself: a publish, or a call of the named helper making it.
    sites: list[Terminal] = []
    for publish in terminal_publishes:
        helper = fx.outer_named(publish.enclosing, ("commit",))
        if helper is not None and not runs_in(scan, publish, helper):
            helper = None  # it builds the function that publishes; calling it commits nothing
        callers = _callers(scan, helper) if helper is not None and _unsettled(scan, publish) else []
        sites.extend(Terminal(site, publish, helper if callers else None) for site in (callers or [publish]))
    early = scan.early
    checked = 0
    for terminal in sites:
        site = terminal.site
        if not in_scope(scan, site) or not _tool_context(scan, site):
            continue
        missing = _missing(scan, site)
        if missing is None:
            continue  # e.g. an early "no model" failure before any tool could start
        checked += 1
        if not missing:
            continue
        early.append(site)
        yield _before_tools_finding(scan, terminal, [fx.last(m) for m in missing], hooks)
    # Calls that commit one through a helper of their own (`yield* reportFailure(e)` in a handler).
    for terminal, missing in _reached_terminals(scan, sites, early):
        checked += 1
        if missing:
            early.append(terminal.site)
            yield _before_tools_finding(scan, terminal, [fx.last(m) for m in missing], hooks)
    scan.facts.append(
        f"{checked} changed terminal commit(s) marking `{opts.phase_key}: \"{opts.safe_phase}\"`, each after "
        f"{' + '.join(f'`{fx.last(n)}`' for n in opts.settle_tools)}"
    )


def _missing(scan: Scan, site: Call, via: tuple[Call, ...] = (), depth: int = 0) -> list[str] | None:
    """The settle steps (option names) that do not run before `site` on its path (after `via`,
    the calls down to the terminal inside a helper), or None where no tool can be in flight: a
    terminal in straight-line code that settles nothing, or in a handler of an effect that starts
    no tools, where the code around the combinator settles nothing.

    Inside a failure handler the path is the handler's: when the handled effect can start tools,
    what ran before the combinator does not count; when it cannot, the handler sees what is in
    flight where the combinator runs (judged the same way, one handler further out)."""
    available = _available_settles(scan, site)
    root = handler_root(scan, site)
    ran = _ran_before(scan, site, root[0] if root is not None else None, via)
    inner = [name for name in available if name not in ran]
    if root is None:
        if not (_failure_context(scan, site) or _settles_somewhere(scan, site)):
            return None
        return inner
    missing: set[str] = set()
    gated = False
    for handling in root[1]:
        if depth >= _MAX_HANDLER_DEPTH or starts_tools(scan, handled(handling)):
            gated = True
            missing.update(inner)
            continue
        outer = _missing(scan, handling.combinator, depth=depth + 1)  # judged where it runs
        if outer is not None:
            gated = True
            missing.update(name for name in inner if name in outer)
    return [name for name in available if name in missing] if gated else None


# Handlers of handlers judged where their combinator runs, at most this deep (then: tools may be in flight).
_MAX_HANDLER_DEPTH = 8


def _ran_before(scan: Scan, site: Call, root: Function | None, via: tuple[Call, ...]) -> set[str]:
    """The settle steps (by option name) run before `site` on its path, and before each call of
    `via` inside the helper it runs in."""
    before = before_in_handler(scan, site, root)
    for call, entered in zip(via, entered_by(scan, site, via)):
        before.extend(before_in_handler(scan, call, entered))
    ran: set[str] = set()
    for name in scan.opts.settle_tools:
        short = fx.last(name)
        if any(c.method == short or fx.matches(c.callee, (name,)) for c in before):
            ran.add(name)
        elif any(_settles_via_helper(scan, c, short) for c in before):
            ran.add(name)
    return ran


def _reached_terminals(
    scan: Scan, sites: Sequence[Terminal], early: Sequence[Call]
) -> list[tuple[Terminal, list[str]]]:
    """Changed calls, where tools can be in flight, whose callee (a helper of the code around them,
    followed two hops) commits a terminal; each with the settle steps missing before it on its
    first unsettled path (none when every path settles first). A path through a terminal already
    reported is left to that finding."""
    by_id = {id(t.site): t for t in sites}
    targets = sorted({t.site.callee for t in sites})
    if not targets:
        return []
    named = terminal_names(scan, [t.site for t in sites])
    reported = {id(c) for c in early}
    out: list[tuple[Terminal, list[str]]] = []
    for call in fx.iter_calls(scan.program, scan.changed):
        if call.method not in named or id(call) in by_id:
            continue
        if not _may_reach(scan, call) or not in_scope(scan, call):
            continue
        if not _tool_context(scan, call):
            continue
        found: tuple[Terminal, list[str]] | None = None
        for path in helper_paths(scan, call, targets):
            end = by_id.get(id(path[-1]))
            if end is None or any(id(c) in reported for c in path):
                continue
            missing = _missing(scan, call, path)
            if missing is None:
                break  # no tool can be in flight here, whatever the path
            if found is None or (missing and not found[1]):
                found = (Terminal(call, end.publish, end.helper, path), missing)
            if missing:
                break
        if found is not None:
            out.append(found)
    return out


def _may_reach(scan: Scan, call: Call) -> bool:
    """Worth a reachability question: in a failure handler or branch, or in a body that settles tools."""
    return _failure_context(scan, call) or _settles_somewhere(scan, call)


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
    """Settle steps (of those this code can reach) that do not run before `site` in its own function."""
    ran = _ran_before(scan, site, None, ())
    return [fx.last(name) for name in _available_settles(scan, site) if name not in ran]


def _settles_via_helper(scan: Scan, call: Call, short: str) -> bool:
    """`yield* settleAll()` where the helper (followed up to 2 calls deep) awaits/fails the tools.

    Only paths through the call itself: the calls nested in its arguments are asked on their own
    (and one in a forked fiber or finalizer there settles nothing first)."""
    targets = scan.settle_callees.get(short)
    if not targets:
        return False
    key = (id(call), short)
    if key not in scan.settles_via:
        paths = scan.program.reaches(call.expr, sorted(targets), max_depth=2)
        scan.settles_via[key] = any(path[0] is call for path in paths)
    return scan.settles_via[key]


def _failure_context(scan: Scan, site: Call) -> bool:
    """A failure branch or handler: where a provider error meets tools still in flight."""
    if site.case_label is not None and site.case_label in scan.opts.failure_cases:
        return True
    return Role.FAILURE_HANDLER in site.roles or handler_root(scan, site) is not None


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


def _before_tools_finding(scan: Scan, terminal: Terminal, missing: Sequence[str], hooks: Sequence[SafeHook]) -> Finding:
    opts = scan.opts
    site, publish, helper, via = terminal.site, terminal.publish, terminal.helper, terminal.via
    event = fx.event_of(publish) or "the terminal event"
    where = f' in the `case "{site.case_label}":` branch' if site.case_label else ""
    if (Role.FAILURE_HANDLER in site.roles or handler_root(scan, site) is not None) and not site.case_label:
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
        related.append(fx.call_loc(call, f"`{call.callee_written}` runs only after the terminal commit"))
    for call in via:
        related.append(fx.call_loc(call, f"`{site.callee_written}` commits the terminal through `{call.callee_written}` here"))
    related.extend(_recovery_sites(scan))
    after = f" ({', '.join(f'`{c.callee_written}` at :{c.line}' for c in later)} only after it)" if later else ""
    return scan.ctx.finding(
        "terminal-before-tools",
        title=f"`{event}` commits {opts.phase_key} \"{opts.safe_phase}\" before tools settle",
        message=(
            f"`{site.callee_written}` at {site.path}:{site.line}{where} publishes `{event}`{_through(via)}, whose "
            "terminal commit marks "
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


def _through(via: Sequence[Call]) -> str:
    """How a call reaching the terminal through its helpers commits it (empty for a direct one)."""
    if not via:
        return ""
    return " (through " + " -> ".join(f"`{c.callee_written}` at :{c.line}" for c in via) + ")"


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
