"""Shared helpers of the families that read Effect-TS code.

They reason about Effect idioms over the TypeScript model: names matched
however they were imported, finalizer/handler regions, the named function a
callback belongs to, locations. The helpers are small and pure; nothing here
knows a default idiom: callers pass the configured names in. What every
family runs the same way (reviewed files, parse errors, notes, the basis) is
the engine's template (reviewer/engine/template.py), not here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator, Sequence

from reviewer.engine import globs
from reviewer.change.changeset import is_source
from reviewer.report.model import Location
from reviewer.rules._tails import tail_in
from reviewer.typescript import (
    Call,
    Expr,
    Function,
    Module,
    Program,
    consumer,
    exits,
    later_uses,
    mentions_name,
    returned_functions,
    succeeds,
    throws,
)

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


# ------------------------------------------------------------------ names


def matches(name: str | None, patterns: Iterable[str]) -> bool:
    """`name` is one of `patterns`, or ends with one on a segment boundary.

    Callees come import-resolved (`SessionExecutionClaim.clear` however the
    namespace was imported), so a configured `Step.Interrupted` also matches
    `SessionEvent.Step.Interrupted` and `Events.Step.Interrupted`.
    """
    if not name:
        return False
    name = strip_call_marks(name)
    if type(patterns) is tuple:
        return tail_in(name, patterns)  # options are tuples, asked of every call: see _tails.py
    return any(name == p or name.endswith("." + p) for p in patterns if p)


class Matcher:
    """`matches(name, patterns)` for fixed patterns, remembered per name (one per run, never shared)."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(patterns)
        self.seen: dict[str | None, bool] = {}

    def __call__(self, name: str | None) -> bool:
        hit = self.seen.get(name)
        if hit is None:
            hit = self.seen[name] = matches(name, self.patterns)
        return hit


def strip_call_marks(name: str) -> str:
    return name.replace("()", "")


def last(name: str) -> str:
    return strip_call_marks(name).rsplit(".", 1)[-1]


def owner(name: str) -> str:
    return strip_call_marks(name).rsplit(".", 1)[0] if "." in name else ""


def ref_name(expr: Expr | None) -> str | None:
    """The import-resolved name of a reference or of a call's callee."""
    if expr is None:
        return None
    call = expr.call
    if call is not None:
        return call.callee
    return expr.qualified or expr.member_path


# ------------------------------------------------------------------ files


def tree_paths(ctx: "ReviewContext", patterns: Sequence[str]) -> tuple[str, ...]:
    """TypeScript files of the patched tree under the given globs."""
    found: set[str] = set()
    for pattern in patterns:
        for path in ctx.patched.paths(globs.literal_prefix(pattern)):
            if is_source(path) and globs.matches(path, (pattern,)):
                found.add(path)
    paths = tuple(sorted(found))
    # One git process for the lot instead of one per file the rules go on to read.
    if paths:
        ctx.patched.prefetch(list(paths))
    return paths


def files_naming(
    ctx: "ReviewContext", patterns: Sequence[str], words: Iterable[str], ignore: Sequence[str] = ()
) -> tuple[str, ...]:
    """TypeScript files under the globs whose source contains one of `words`.

    Only a cheap filter before parsing: a file without the bytes cannot define
    or invoke the hook; whether it does is then decided on the syntax tree
    (`Program.callbacks`), so a word in a comment never yields a finding.
    """
    wanted = tuple(w for w in words if w)
    out = []
    for path in tree_paths(ctx, patterns):
        if globs.matches(path, ignore):
            continue
        source = ctx.patched.text(path) or ""
        if any(word in source for word in wanted):
            out.append(path)
    return tuple(out)


def modules(program: Program, paths: Iterable[str]) -> list[Module]:
    out = []
    for path in sorted(set(paths)):
        module = program.module(path)
        if module is not None:
            out.append(module)
    return out


def imported_paths(program: Program, paths: Iterable[str]) -> tuple[str, ...]:
    """Repository files directly imported by `paths` (for invokers and definitions)."""
    found: set[str] = set()
    for module in modules(program, paths):
        for imp in module.imports.values():
            if imp.module:
                found.add(imp.module)
    return tuple(sorted(found))


# ------------------------------------------------------------------ functions


def outer_named(fn: Function | None, skip: Iterable[str] = ()) -> Function | None:
    """`fn` or its nearest ancestor with a name of its own that is not in `skip` (e.g. `commit` arrows)."""
    skipped = set(skip)
    while fn is not None:
        if fn.name and fn.name not in skipped:
            return fn
        fn = fn.parent
    return None


def describe(fn: Function | None) -> str:
    return f"`{fn.name}`" if fn is not None and fn.name else "an anonymous function"


def span(item: Call | Expr) -> tuple[str, int, int]:
    """Where a call or expression is, to the byte: two calls on one line are not inside each other."""
    return item.span


def within(item: Call | Expr, outer: tuple[str, int, int]) -> bool:
    path, start, end = span(item)
    return path == outer[0] and outer[1] <= start and end <= outer[2]


def loc(path: str, line: int, end_line: int, note: str = "") -> Location:
    return Location(path, line, max(line, end_line), note)


def call_loc(call: Call, note: str = "") -> Location:
    return loc(call.path, call.line, call.end_line, note)


def fn_loc(fn: Function, note: str = "") -> Location:
    return loc(fn.path, fn.line, fn.end_line, note)


def key(call: Call) -> tuple[str, int, str]:
    return (call.path, call.line, call.normalized)


class KeySet:
    """A set of `key(...)` triples (path, line, normal form) of calls and expressions that
    normalises one only when something on its line is already in the set.

    Membership is exactly that of the triples: the normal form only tells apart
    things on one line. Building every triple made nested catches quadratic
    (each one's normal form holds all the catches inside it).
    """

    def __init__(self) -> None:
        self._lines: dict[tuple[str, int], list[Call | Expr]] = {}

    def __contains__(self, item: Call | Expr) -> bool:
        same = self._lines.get((item.path, item.line))
        if not same:
            return False
        text = item.normalized
        return any(other.normalized == text for other in same)

    def add(self, item: Call | Expr) -> None:
        self._lines.setdefault((item.path, item.line), []).append(item)


def in_key_order(calls: Iterable[Call]) -> list[Call]:
    """`sorted(calls, key=key)`, normalising only calls that share a line.

    The normal form only breaks ties between calls on one line, yet computing
    it for every call of every changed file dominated large reviews. Sorting
    by (path, line) and then, stably, each run of equal (path, line) by its
    normal form yields exactly the order of the full key.
    """
    ordered = sorted(calls, key=_line_key)
    out: list[Call] = []
    start = 0
    while start < len(ordered):
        end = start + 1
        first = _line_key(ordered[start])
        while end < len(ordered) and _line_key(ordered[end]) == first:
            end += 1
        run = ordered[start:end]
        out.extend(run if len(run) == 1 else sorted(run, key=lambda c: c.normalized))
        start = end
    return out


def unique_in_key_order(calls: Iterable[Call]) -> list[Call]:
    """`sorted({key(c): c for c in calls}.values(), key=key)` (the last call of a key wins),
    normalising only calls that share a line."""
    by_line: dict[tuple[str, int], list[Call]] = {}
    for call in calls:
        by_line.setdefault(_line_key(call), []).append(call)
    out: list[Call] = []
    for line in sorted(by_line):
        same = by_line[line]
        if len(same) == 1:
            out.extend(same)
            continue
        by_text = {c.normalized: c for c in same}
        out.extend(by_text[text] for text in sorted(by_text))
    return out


def _line_key(call: Call) -> tuple[str, int]:
    return (call.path, call.line)


def unique_sorted(items: Iterable[Location]) -> list[Location]:
    seen: dict[tuple[str, int, int], Location] = {}
    for item in items:
        seen.setdefault((item.path, item.line, item.end_line), item)
    return [seen[k] for k in sorted(seen)]


# ------------------------------------------------------------------ effect idioms

# How a configured success list names a bare `return` in a handler.
BARE_RETURN = "return;"


def handler_fails(program: Program, handler: Expr, fail_names: Sequence[str]) -> bool:
    """Does this handler (may) re-fail: a fail/die call, `throw`, or a helper reaching one?"""
    if throws(handler):
        return True
    if refers_to_any(handler, fail_names):
        return True
    reached = program.reaches(handler, list(fail_names), max_depth=3)
    return bool(reached)


def yields_success(handler: Expr, success_names: Sequence[str]) -> bool:
    """Can the handler produce a success value: a success constructor or stage anywhere in it
    (`Effect.void`, `Effect.succeed(..)`, `Effect.asVoid`), a bare `return` when configured, or
    a way out returning any `Effect.*` value that is not a failure (`Effect.logInfo(..)`,
    `Effect.sleep(..)`, `Effect.succeedNone`: Effect's channel table)?"""
    if refers_to_any(handler, success_names):
        return True
    function = handler.function
    for end in exits(function) if function is not None else ():
        if end.value is None and end.kind == "return" and BARE_RETURN in success_names:
            return True
        if end.value is not None and (matches(ref_name(end.value), success_names) or succeeds(ref_name(end.value))):
            return True
    return False


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


_HELPER_HOPS = 3
# Node kinds of a function written inline: the expression is the function, not a call wrapping one.
FUNCTION_KINDS = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def may_succeed(program: Program, handler: Expr, success_names: Sequence[str], hops: int = _HELPER_HOPS) -> bool:
    """The handler (not shown to fail again) can produce a success: a success written in it, or in a
    helper of this code base one of its ways out calls (`() => note(held)`), or in a callback one of
    them hands on (`Match.tag("Lost", () => Effect.void)`). A way out nothing shows to succeed is no
    proof that it fails: helpers are followed rather than taken on trust."""
    if yields_success(handler, success_names):
        return True
    code = written(program, handler)
    function = code.function if code.kind in FUNCTION_KINDS else None
    if function is None or hops <= 0:
        return False
    for end in exits(function):
        if end.value is None or end.kind == "throw":
            continue
        call = end.value.call
        if call is not None and call.callee_expr is not None and call.receiver is None:
            helper = program.function_of(call.callee_expr)
            if helper is not None and may_succeed(program, helper.expr, success_names, hops - 1):
                return True
        for arg in _callbacks(call):
            if may_succeed(program, arg, success_names, hops - 1):
                return True
    return False


def _callbacks(call: Call | None) -> Iterator[Expr]:
    """The functions a way out hands on, one level down: its own arguments and those of the calls it is
    given (`x.pipe(Match.tag("Lost", () => ..), Match.orElse(() => ..))`). Not every call nested inside:
    a handler wrapping handlers would be read once per level."""
    if call is None:
        return
    for arg in call.args:
        if arg.kind in FUNCTION_KINDS:
            yield arg
        elif arg.call is not None:
            yield from (inner for inner in arg.call.args if inner.kind in FUNCTION_KINDS)


def refers_to_any(expr: Expr, names: Sequence[str]) -> bool:
    """`expr` is, calls, or passes by reference one of `names` (import-resolved):
    `Effect.fail(e)`, `Effect.andThen(Effect.die)`, `Effect.void`."""
    if matches(ref_name(expr), names):
        return True
    wanted = tuple(names)
    return expr.any_call(("refers-to", wanted), lambda call: _call_refers(call, wanted))


def _call_refers(call: Call, names: Sequence[str]) -> bool:
    """The call is one of `names`, or passes one by reference."""
    if matches(call.callee, names):
        return True
    return any(matches(ref_name(arg), names) for arg in call.args)


def mentions(expr: Expr, word: str) -> bool:
    """`word` is written in `expr` as a name, or as a dotted path when it has dots.

    Strings and comments never count: `Effect.log("heartbeat")` does not mention `heartbeat`.
    """
    if "." in word:
        if expr.member_path == word:
            return True
        calls = expr.calls
        return any(arg.member_path == word for call in calls for arg in call.args)
    return mentions_name(expr, word)


@dataclass(frozen=True)
class Stage:
    """One step applied to an effect: a pipe stage or a data-first wrapper call."""

    expr: Expr
    name: str  # import-resolved callee or reference (`Effect.forkScoped`)
    call: Call | None
    wraps: bool = False  # a data-first call taking the effect as its first argument


def stages_of(call: Call, hops: int = 3) -> list[Stage]:
    """What is applied to `call`'s value, in order: pipe stages, then data-first wrappers,
    then what is applied where the value, bound to a `const`, is read again.

    `renew(..).pipe(Effect.repeat(s), Effect.forkScoped)` gives repeat, forkScoped;
    `Effect.forkScoped(Effect.repeat(renew(..), s))` gives repeat, forkScoped too; so does
    `const once = renew(..)` followed by `once.pipe(Effect.repeat(s))` bound to `loop` and
    `Effect.forkScoped(loop)` (the later `.pipe` call is a wrapping stage of its own, so the
    value's final binding is found from the last wrapper).
    """
    out = _piped(call)
    # A data-first wrapper takes the whole chain: `Effect.ignore(renew(..).pipe(Effect.withSpan(..)))`.
    chain = call.chain
    current = chain[-1] if chain else call
    for _ in range(5):
        host = first_arg_host(current)
        if host is None:
            break
        out.append(Stage(host.expr, host.callee, host, wraps=True))
        out.extend(_piped(host))
        current = host
    if hops > 0:
        out.extend(_continued(current, hops - 1))
    return out


def _continued(call: Call, hops: int) -> list[Stage]:
    """The stages applied at every later read of the `const` `call`'s value is bound to, read by read
    (a harmless first use must not hide a later `.pipe(Effect.ignore)`)."""
    out: list[Stage] = []
    for use in later_uses(call):
        taker = consumer(use)
        if taker is None:
            continue
        out.append(Stage(taker.expr, taker.callee, taker, wraps=True))
        out.extend(Stage(expr, name, expr.call) for expr in taker.pipe_stages if (name := ref_name(expr)))
        out.extend(stages_of(taker, hops))
    return out


def _piped(call: Call) -> list[Stage]:
    out = []
    for expr in call.piped_into:
        name = ref_name(expr)
        if name:
            out.append(Stage(expr, name, expr.call))
    return out


# Combinators taking a function that returns an effect and running that effect in its place.
THUNKS = frozenset({"Effect.suspend", "Micro.suspend", "Stream.suspend", "Layer.suspend", "STM.suspend"})


def first_arg_host(call: Call) -> Call | None:
    """The call `H(call, ...)` taking `call` as its first argument, if any; a thunk's result is its
    host's value (`Effect.suspend(() => call)` is `call` run later)."""
    host = call.host
    if host is None:
        thunk = call.thunk_host
        return thunk if thunk is not None and thunk.callee in THUNKS and thunk.args else None
    args = host.args
    return host if args and args[0].call is call else None


def outermost(call: Call, stages: Sequence[Stage]) -> tuple[int, int]:
    """Line range of the whole expression: `call` plus every stage applied to it."""
    line, end = call.line, call.end_line
    for stage in stages:
        line = min(line, stage.expr.line)
        end = max(end, stage.expr.end_line)
        if stage.call is not None:
            line = min(line, stage.call.line)
    for member in call.chain:
        line = min(line, member.line)
        end = max(end, member.end_line)
    return line, end


def event_of(call: Call) -> str | None:
    """The event a publish call commits: its first argument as a dotted name (`SessionEvent.Step.Failed`)."""
    args = call.args
    if len(args) < 2:
        return None
    return args[0].member_path


def terminal_event(call: Call, terminals: Sequence[str]) -> str | None:
    """The one terminal event a call publishes: the event of `events.publish(Ev, data)`, or the one
    terminal among the dotted arguments of a helper that records it (`record(sql, run.id,
    RunEvent.Failed)`). A call naming several (`Event.inventory(Step.Ended, Step.Failed, ..)`) lists
    events, it publishes none."""
    named = [path for a in call.args if (path := a.member_path) and "." in path and matches(path, terminals)]
    return named[0] if len(named) == 1 else None


def publish_around(program: Program, path: str, line: int) -> Call | None:
    """The innermost publish call spanning `line` (e.g. the one whose options carry the commit
    that invokes a hook there)."""
    module = program.module(path)
    best: Call | None = None
    for call in module.calls() if module is not None else ():
        if call.line <= line <= call.end_line and event_of(call) is not None:
            if best is None or (call.line, -call.end_line) > (best.line, -best.end_line):
                best = call
    return best


def iter_calls(program: Program, paths: Iterable[str]) -> Iterator[Call]:
    for module in modules(program, paths):
        yield from module.calls()
