"""Scans by role: a multi-row read reached from a recovery entry point, or from code that runs
again and again, is a scan, whatever its table.

Configured tables name the scans a maintainer knows about; a restart path
that lists every suspended row of some other table, or a poller that reads
every pending row each tick, is the same defect. The origins, in a changed
scan-path file or in a scan-path file that imports one:

- a *recovery entry point*: a function (or an object property holding one)
  whose name matches the `recovery_entries` pattern;
- *repeated code*: what a `repeat_drivers` combinator or timer is applied to
  (`poll().pipe(Effect.repeat(s))`, `setInterval(sweep, ms)`, or a name bound to
  it: `Effect.repeat(tick, s)`, `tick.pipe(Effect.repeat(s))`), and the body of
  a polling loop: a `while`/`do` loop or a `for (;;)` that waits (`poll_waits`)
  between rounds. A loop that does not wait is a work loop (a step loop, a
  retry count), not a poller.

Their calls are followed `max_helper_depth` deep: to the definition the
model resolves, else, for `x.m()` on a value the model cannot follow (a
service taken from a context), to functions named `m` in the modules the
caller imports. Every select chain in a reached function is judged like a
configured scan: only whether it is bounded (a limit, one row, one entity);
fairness needs an attempts column such a table may not have.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from reviewer.change.changeset import is_source
from reviewer.engine import globs
from reviewer.engine.api import Options
from reviewer.report.model import Finding, Location
from reviewer.rules import _effect as fx
from reviewer.rules.bounded_scan.chains import Query, queries
from reviewer.rules.bounded_scan.raw import check_raw, raw_scans
from reviewer.rules.bounded_scan.select import check_select

from reviewer.typescript import repeating_spans, run_calls

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Call, Expr, Function, Module, Program

# What a timer's first argument may be for its body to be the repeated code.
_NAMES = frozenset({"identifier", "member_expression"})
_CALLABLE = frozenset({"arrow_function", "function_expression", "function"}) | _NAMES

# Only these say whether a read is bounded; order and attempts are for configured tables.
_BOUND_CHECKS = ("bounded-scan/unbounded", "bounded-scan/bound-too-large", "bounded-scan/unresolved-bound")


@dataclass(frozen=True)
class Origin:
    """Where repeated or restart code starts: a recovery entry point, a repeating combinator or timer,
    or a loop that runs until stopped. `span` is the code it runs (in `path`), `calls` the calls in it."""

    path: str
    span: tuple[int, int]
    label: str  # "recovery entry point `resumeAll`", "`Effect.repeat` in `pump`"
    why: str  # "runs at start-up or restart", "runs on every tick"
    calls: tuple["Call", ...]

    def location(self) -> Location:
        return Location(self.path, self.span[0], self.span[1], f"{self.label} ({self.why})")


def _of_function(fn: "Function", label: str, why: str) -> Origin:
    # What runs when the entry point runs: not the callbacks it only defines and stores (a tool's
    # `execute`, an object's methods), which run later, when something else calls them.
    return Origin(fn.path, (fn.line, fn.end_line), label, why, run_calls(fn))


def _within(fn: "Function", span: tuple[int, int], label: str, why: str) -> Origin:
    return Origin(fn.path, span, label, why, tuple(c for c in fn.all_calls if span[0] <= c.line and c.end_line <= span[1]))


@dataclass(frozen=True)
class Reach:
    """How an origin reaches a function: the origin, then each call taken."""

    origin: Origin
    calls: tuple["Call", ...]

    def related(self) -> tuple[Location, ...]:
        hops = tuple(Location(c.path, c.line, c.end_line, f"`{c.callee_written}` leads to the scan") for c in self.calls)
        return (self.origin.location(), *hops)


def importers(ctx: "ReviewContext", modules: list["Module"], opts: Options) -> list["Module"]:
    """Unchanged scan-path modules that import a changed one: their entry points may reach
    a helper the patch changed (the restart code untouched, its scan loosened). Remembered per
    Program for the same modules and options (two checks ask)."""
    memo = ctx.program.memo("bounded-scan.importers")
    key = (tuple(m.path for m in modules), id(opts))
    known = memo.get(key)
    if known is None or known[0] is not opts:
        known = memo[key] = (opts, _importers(ctx, modules, opts))
    return list(known[1])


# Import hops followed from a changed file to the scan-path files that depend on it
# (`recovery.ts` imports a barrel that re-exports `limits.ts`, whose `PAGE` reads `constants.ts`).
_IMPORT_HOPS = 4
# Up to how many stems a file's text is searched for each before its words are read.
_FEW_STEMS = 16


def _importers(ctx: "ReviewContext", modules: list["Module"], opts: Options) -> list["Module"]:
    changed = {m.path for m in modules}
    found: set[str] = set()
    for pattern in opts.scan_paths:
        for path in ctx.patched.paths(globs.literal_prefix(pattern)):
            if path not in changed and is_source(path) and globs.matches(path, (pattern,)):
                found.add(path)
    texts = {path: ctx.patched.text(path) or "" for path in sorted(found)}
    words: dict[str, set[str]] = {}
    reached: dict[str, "Module"] = {}
    frontier = set(changed)
    for _ in range(_IMPORT_HOPS):
        stems = {posixpath.splitext(posixpath.basename(p))[0] for p in frontier}
        following: set[str] = set()
        # A few stems are looked for in the text first (a stem that is one of a file's words is in its
        # text, so the words of a file holding none are never read); many are one set operation each.
        few = len(stems) <= _FEW_STEMS
        for path in sorted(found):
            # Cheap first: a file that never spells a file's name cannot import it.
            if path in reached or (few and not any(stem in texts[path] for stem in stems)):
                continue
            if path not in words:
                words[path] = _path_words(texts[path])
            if stems.isdisjoint(words[path]):
                continue
            module = ctx.program.module(path)
            if module is not None and not module.dependencies.isdisjoint(frontier):
                reached[path] = module
                following.add(path)
        if not following:
            break
        frontier = following
    return [reached[path] for path in sorted(reached)]


_PATH_PART = re.compile(r"[^\s\"'`/\\;,(){}\[\]]+")


def _path_words(text: str) -> set[str]:
    """Every word a module specifier could end in (`./store/runs.js` gives `runs.js` and `runs`)."""
    words = set(_PATH_PART.findall(text))
    return words | {posixpath.splitext(w)[0] for w in words}


def entry_points(modules: list["Module"], opts: Options) -> list[Origin]:
    """Functions of the given modules whose name says they recover or resume work."""
    pattern = opts.recovery_entries
    found = [fn for m in modules for fn in m.functions() if fn.name and pattern.search(fn.name)]
    return [_of_function(fn, f"recovery entry point `{fn.name}`", "runs at start-up or restart")
            for fn in sorted(found, key=lambda f: (f.path, f.line))]


def repeaters(modules: list["Module"], opts: Options) -> list[Origin]:
    """Code the given modules run again and again: what a repeat combinator or timer
    (`repeat_drivers`) is applied to (written inline, or a name bound to it), and the body
    of a loop that waits between rounds."""
    found: dict[tuple[str, int, int], Origin] = {}
    for module in modules:
        program = module.program
        for fn in module.functions():
            name = _name(fn)
            for span in repeating_spans(fn):
                origin = _within(fn, span, f"a polling loop in {name}", "waits and repeats until stopped")
                if any(_waits(program, c, opts) for c in origin.calls):
                    found.setdefault((fn.path, *span), origin)
        for call in module.calls():
            for origin in _driven(program, call, opts):
                found.setdefault((origin.path, *origin.span), origin)
    return [found[k] for k in sorted(found)]


_EVERY_TICK = "runs on every tick"


def _driven(program: "Program", call: "Call", opts: Options) -> list[Origin]:
    """The code `call` hands to a repeat driver, in one of three shapes; [] when it hands none."""
    where = _name(call.enclosing) if call.enclosing is not None else f"`{call.path}`"
    if call.method == "pipe" and call.receiver is not None and call.receiver.kind in _NAMES:
        # `tick.pipe(Effect.repeat(s))`, at a module's top level too: what the name is bound to repeats,
        # with what the stages before the repeat sequence after it (`Effect.zipRight(adoptOrphans)`)
        piped = _piped_names(program, call, where, opts)
        if piped:
            return piped
    if call.enclosing is None:
        return []
    found = _driven_inline(program, call, where, opts)
    return [found] if found is not None else []


def _driven_inline(program: "Program", call: "Call", where: str, opts: Options) -> Origin | None:
    driver = next((st.name for st in fx.stages_of(call) if fx.matches(st.name, opts.repeat_drivers)), None)
    if driver is not None:  # `poll().pipe(Effect.repeat(s))`, `Effect.repeat(poll(), s)`: the call itself
        return _within(call.enclosing, (call.line, call.end_line), f"`{fx.strip_call_marks(driver)}` in {where}", _EVERY_TICK)
    first = call.args[0] if call.args else None
    if fx.matches(call.callee, opts.repeat_drivers) and first is not None and first.kind in _CALLABLE:
        # `setInterval(() => sweep(db), ms)`, `setInterval(sweep, ms)`, `Effect.repeat(tick, s)`
        label = f"`{fx.strip_call_marks(call.callee)}` in {where}"
        return _named(program, first, label, _EVERY_TICK) or _within(
            call.enclosing, (first.line, first.end_line), label, _EVERY_TICK)
    return None


# Stages that run their argument after the piped effect, every time it runs (`a.pipe(Effect.zipRight(b))`).
_SEQUENCERS = frozenset({"zipRight", "zipLeft", "zip", "andThen", "tap", "flatMap"})


def _piped_names(program: "Program", call: "Call", where: str, opts: Options) -> list[Origin]:
    """`claimFree.pipe(Effect.zipRight(adoptOrphans), Effect.repeat(s))`: the piped name and the names
    its stages sequence before the repeat, each what it is bound to; [] without a repeat stage."""
    stages = [arg.call.callee if arg.call else arg.member_path for arg in call.args]
    driver = next((name for name in stages if fx.matches(name, opts.repeat_drivers)), None)
    if driver is None:
        return []
    label = f"`{fx.strip_call_marks(driver or '')}` in {where}"
    named = _named(program, call.receiver, label, _EVERY_TICK)
    if named is None:
        return []
    out = [named]
    for arg in call.args:
        stage = arg.call
        if stage is not None and fx.matches(stage.callee, opts.repeat_drivers):
            break
        if stage is not None and fx.last(stage.callee) in _SEQUENCERS:
            out.extend(o for o in (_named(program, inner, label, _EVERY_TICK) for inner in stage.args) if o is not None)
    return out


def _name(fn: "Function") -> str:
    return f"`{fn.name}`" if fn.name else "an anonymous function"


def _named(program: "Program", expr: "Expr", label: str, why: str) -> Origin | None:
    """The code a name passed to a driver stands for: a function it names, or the value of a `const`."""
    if expr.kind not in _NAMES:
        return None
    shown = expr.member_path or expr.written
    fn = program.function_of(expr)
    if fn is not None:
        return _of_function(fn, f"{label}, repeating `{shown}`", why)
    value = program.bound_value(expr)
    if value is None:
        return None
    inline = value.function
    if inline is not None:
        return _of_function(inline, f"{label}, repeating `{shown}`", why)
    return Origin(value.path, (value.line, value.end_line), f"{label}, repeating `{shown}`", why, tuple(value.calls))


def _waits(program: "Program", call: "Call", opts: Options) -> bool:
    """A wait (`poll_waits`), or a helper whose own body waits (`const nap = (ms) => new Promise(r => setTimeout(r, ms))`)."""
    if fx.matches(call.callee, opts.poll_waits):
        return True
    helper = program.definition(call.path, call.callee_text) if call.callee_text else None
    return helper is not None and any(fx.matches(c.callee, opts.poll_waits) for c in helper.all_calls)


def _candidates(program: "Program", call: "Call") -> list["Function"]:
    """What a call may run: the function the model resolves its callee to (definitions, methods of objects,
    factories' results and instances), else same-named functions of the caller's imports."""
    callee = call.callee_expr
    resolved = program.function_of(callee) if callee is not None else None
    if resolved is not None:
        return [resolved]
    if call.callee_text:
        definition = program.definition(call.path, call.callee_text)
        if definition is not None:
            return [definition]
    method = call.method
    module = program.module(call.path)
    if not method or module is None or call.receiver is None:
        return []
    out: list["Function"] = []
    for path in sorted({imp.module for imp in module.imports.values() if imp.module}):
        target = program.module(path)
        if target is not None:
            out += [fn for fn in target.functions() if fn.name == method]
    return out


def reached(
    program: "Program", origin: Origin, depth: int
) -> Iterator[tuple[str, tuple[int, int], Reach, frozenset[int] | None]]:
    """Every function `origin` reaches within `depth` calls, each once, breadth first, as the path, the
    lines, how, and the ids of the calls that run when it is called (the origin's own: its `calls`).
    A factory's methods are not run by calling the factory (`run_calls`)."""
    seen: set[int] = set()
    start = Reach(origin, ())
    yield origin.path, origin.span, start, frozenset(id(c) for c in origin.calls)
    frontier: list[tuple[list["Call"], Reach]] = [(list(origin.calls), start)]
    for _ in range(depth):
        following: list[tuple[list["Call"], Reach]] = []
        for calls, how in frontier:
            for call in calls:
                for target in _candidates(program, call):
                    if id(target) in seen:
                        continue
                    seen.add(id(target))
                    step = Reach(how.origin, (*how.calls, call))
                    runs = run_calls(target)
                    following.append((list(runs), step))
                    yield target.path, (target.line, target.end_line), step, frozenset(id(c) for c in runs)
        frontier = following


def _inside(query: Query, path: str, span: tuple[int, int]) -> bool:
    return query.path == path and span[0] <= query.line and query.end_line <= span[1]


def _with_table(ctx: "ReviewContext", opts: Options, table: str) -> Options:
    """The options with `table` added to the scanned tables, so columns of it resolve."""
    values = {**ctx.options, "tables": [*opts.tables, table]}
    return Options(ctx.family.options, values)


def role_scans(ctx: "ReviewContext", modules: list["Module"], opts: Options) -> tuple[list[Finding], int, int]:
    """(findings, origins, scans they reach) for the changed scan-path modules: recovery entry points
    first, then repeated code.

    Reads over configured tables are left to the main run, which judges them whole.
    """
    program = ctx.program
    examined = [*modules, *importers(ctx, modules, opts)]
    origins = [*entry_points(examined, opts), *repeaters(examined, opts)]
    findings: list[Finding] = []
    judged: set[tuple[str, int]] = set()
    for origin in origins:
        for path, span, how, runs in reached(program, origin, opts.max_helper_depth):
            module = program.module(path)
            if module is None:
                continue
            for query in queries(module, opts, any_table=True):
                key = (query.path, query.line)
                if query.kind != "select" or not _inside(query, path, span) or key in judged or query.table in opts.tables:
                    continue
                if runs is not None and query.steps and id(query.steps[-1]) not in runs:
                    continue  # only defined in the function reached (a factory's method), not run by it
                judged.add(key)
                result = check_select(ctx, module, query, _with_table(ctx, opts, query.table))
                findings += [_reached(f, how) for f in result.findings if f.rule in _BOUND_CHECKS]
            for raw in raw_scans(program, module, opts):
                key = (raw.template.path, raw.template.line)
                if raw.template.path != path or not span[0] <= raw.template.line <= span[1] or key in judged:
                    continue
                if runs is not None and id(raw.at) not in runs and (raw.at.host is None or id(raw.at.host) not in runs):
                    continue
                judged.add(key)
                findings += [_reached(f, how) for f in check_raw(ctx, raw, opts)]
    return findings, len(origins), len(judged)


def _reached(finding: Finding, how: Reach) -> Finding:
    origin = how.origin
    when = "at restart" if origin.why.endswith("restart") else "on every tick"
    message = (
        f"{finding.message} It is a scan by its role: {origin.label} "
        f"({origin.path}:{origin.span[0]}) {'reaches' if how.calls else 'runs'} it, so it reads every matching row {when}."
    )
    return dataclasses.replace(finding, message=message, related=(*how.related(), *finding.related))
