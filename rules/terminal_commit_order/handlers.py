"""Failure-handler bodies: which handler a call runs in, what that handler handles, and what ran
before the call inside it.

A terminal committed inside a `catchAll`/`catchTag`/`tapError`/... handler is
ordered like one in straight-line code, with two differences:

* the handler is a function of its own (an arrow returning `Effect.gen`, an
  `Effect.fn` generator, a local function passed by name): settle steps run
  earlier in the handler count even when the terminal sits in a nested
  callback of it (`awaitToolFibers().pipe(Effect.andThen(() => fail()))`);
* the handler runs when the effect it handles fails. When that effect can
  start tools (it mentions or reaches the tool machinery: a settle step, the
  object that owns one), tools may be in flight whatever ran before it; when
  it cannot (`resolveModel().pipe(Effect.catchAll(..))`), the handler only
  sees what is in flight where the combinator runs, so it is judged there.

Handlers are found from the combinators of the model's role table and the
function each handler argument denotes (`Program.function_of`), so a handler
written inline and one passed by name are found alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from reviewer.typescript import Call, Expr, Function, Role, mentions_name

from reviewer.rules import _effect as fx
from reviewer.rules.terminal_commit_order.scan import Scan

# Regions whose code does not run in line with the calls written before it (a finalizer runs at the
# end of the scope, a forked fiber concurrently, a nested handler only on a failure): a settle step
# there settles nothing before a terminal.
_DEFERRED = frozenset({Role.FINALIZER, Role.FORKED, Role.FAILURE_HANDLER})
# Calls that turn the function handed to them into a function, not an effect run in place.
_DEFINERS = ("Effect.fn", "Effect.fnUntraced")
_PIPE_FUNCTIONS = frozenset({"pipe", "Function.pipe"})
# How many bindings `const run = stream.pipe(..)` are followed from a handled effect.
_BOUND_DEPTH = 3


@dataclass(frozen=True, eq=False)
class Handling:
    """One place a handler function is handed to a failure combinator (`Effect.catchAll(h)`)."""

    combinator: Call
    handler: Expr  # the argument as written (inline function, wrapper, or a name)


# ------------------------------------------------------------------ which handler


def handler_root(scan: Scan, call: Call) -> tuple[Function, list[Handling]] | None:
    """The innermost handler function `call` runs in, and every combinator it is handed to; None
    outside a failure handler or when the handler's function is not known. A function handed to a
    combinator by name (`Effect.catchAll(onFailure)`) is a handler as much as an inline one, whatever
    roles the model gives its calls."""
    index, roots = _handlers(scan), scan.handler_roots
    walked: list[Function] = []
    fn = call.enclosing
    found: tuple[Function, list[Handling]] | None = None
    while fn is not None:
        if id(fn) in roots:
            found = roots[id(fn)]
            break
        walked.append(fn)
        if id(fn) in index:
            found = index[id(fn)]
            break
        fn = fn.parent
    for inner in walked:  # remembered for every function walked: nested handlers cost their depth once
        roots[id(inner)] = found
    return found


def _handlers(scan: Scan) -> dict[int, tuple[Function, list[Handling]]]:
    """Handler functions in scope by identity, each with the combinators it is handed to."""
    if scan.handlers is None:
        scan.handlers = {}
        program = scan.program
        for call in fx.iter_calls(program, scan.scope):
            if call.callee not in program.roles.failure_handlers:
                continue
            for arg in program.role_arguments(call, Role.FAILURE_HANDLER):
                fn = program.function_of(arg)
                if fn is not None:
                    scan.handlers.setdefault(id(fn), (fn, []))[1].append(Handling(call, arg))
    return scan.handlers


# ------------------------------------------------------------------ what it handles


def handled(handling: Handling) -> list[Expr] | None:
    """The effect whose failure the handler handles: the pipe's subject and the stages before the
    combinator (`stream.pipe(Stream.runForEach(p), Effect.catchAll(h))`), or the first argument of a
    data-first call (`Effect.catchAll(work, h)`); None when it cannot be told from source."""
    combinator = handling.combinator
    host = combinator.host
    stages = host.pipe_stages if host is not None else ()
    at = next((i for i, stage in enumerate(stages) if stage.call is combinator), None)
    if host is not None and at is not None:
        if host.method == "pipe" and host.receiver is not None and host.callee not in _PIPE_FUNCTIONS:
            subject: Expr | None = host.receiver
        else:
            subject = host.args[0] if host.args else None
        return None if subject is None else [subject, *stages[:at]]
    args = combinator.args
    first = args[0] if args else None
    if len(args) < 2 or first is None or first == handling.handler:
        return None
    if first.string_value is not None or first.function is not None or first.kind == "object":
        return None  # `Effect.catchTag("Tag", h)` / `Effect.catchIf(pred, h)`: data-last, applied elsewhere
    return [first]


def starts_tools(scan: Scan, effect: list[Expr] | None) -> bool:
    """Can the handled effect start tools? It mentions the tool machinery (a settle step, or the
    object a settle step is called on: `publisher`), or calls reach one within two hops, or it
    is a name bound to such an effect. Fails closed: an effect that cannot be found, or a
    name that stands for nothing the model can read (a parameter), may start tools."""
    if effect is None:
        return True
    return any(_starts_tools(scan, part, _BOUND_DEPTH) for part in effect)


def _starts_tools(scan: Scan, expr: Expr, depth: int) -> bool:
    memo = scan.starts_tools
    if expr in memo:
        return memo[expr]
    memo[expr] = True  # a binding that refers back to itself is not followed twice
    memo[expr] = _judge(scan, expr, depth)
    return memo[expr]


def _judge(scan: Scan, expr: Expr, depth: int) -> bool:
    names, callees = _tool_vocabulary(scan)
    if any(mentions_name(expr, name) for name in names):
        return True
    if callees and scan.program.reaches(expr, sorted(callees), max_depth=2):
        return True
    for name in _names_used(expr):
        bound = scan.program.bound_value(name)
        if bound is None:
            if name == expr:
                return True  # the effect itself is a parameter or a `let`: unknown
            continue
        if depth > 0 and _starts_tools(scan, bound, depth - 1):
            return True
    return False


def _names_used(expr: Expr) -> Iterable[Expr]:
    """`expr` itself when it is a name, and the names its calls are made on or handed
    (`run.pipe(..)`, `Effect.all([run, other])`)."""
    if expr.identifier is not None or (expr.kind == "member_expression" and expr.member_path):
        yield expr
    for call in expr.calls:
        receiver = call.receiver
        if receiver is not None and receiver.identifier is not None:
            yield receiver
        for arg in call.args:
            for item in (arg, *arg.elements):
                if item.identifier is not None:
                    yield item


def _tool_vocabulary(scan: Scan) -> tuple[frozenset[str], frozenset[str]]:
    """(names, callees) of the tool machinery. Names: the settle steps' short names, the objects
    they are called on, and every name bound to a call that mentions one (`const publisher =
    createLLMEventPublisher(events, { awaitToolFibers })`, then `const run = stream.pipe(
    Stream.runForEach(publisher.publish))`). Callees: the settle steps as called, and every callee
    in scope called on one of those names."""
    if scan.tool_vocabulary is None:
        names = {fx.last(n) for n in scan.opts.settle_tools}
        names |= {fx.owner(c).split(".")[-1] for spellings in scan.settle_callees.values() for c in spellings}
        names.discard("")
        bound: list[tuple[str, Call]] = []
        for call in fx.iter_calls(scan.program, scan.scope):
            kind, name = call.binding
            if kind == "bound" and name and name.isidentifier() and not call.chain_from_here[1:]:
                bound.append((name, call))
        # Each binding is asked about each name once: a round asks the bindings not yet known about
        # the names the round before learned.
        learned = sorted(names)
        while learned and bound:
            later: list[tuple[str, Call]] = []
            found: list[str] = []
            for name, call in bound:
                if name in names:
                    continue
                if any(mentions_name(call.expr, known) for known in learned):
                    names.add(name)
                    found.append(name)
                else:
                    later.append((name, call))
            bound, learned = later, sorted(set(found))
        callees = {c for spellings in scan.settle_callees.values() for c in spellings}
        for call in fx.iter_calls(scan.program, scan.scope):
            if fx.owner(call.callee).split(".")[0] in names:
                callees.add(call.callee)
        scan.tool_vocabulary = (frozenset(names), frozenset(callees))
    return scan.tool_vocabulary


# ------------------------------------------------------------------ what ran before, inside the handler


def before_in_handler(scan: Scan, site: Call, root: Function | None) -> list[Call]:
    """Calls that run before `site` on its path: earlier calls of its own function, and, up to the
    handler function `root`, the calls made before the call each nested function is handed to
    (`awaitToolFibers().pipe(Effect.andThen(() => site))`), with the calls nested in them.
    Calls in a finalizer, forked fiber or handler the site is not in, or in a function bound to a
    name there, do not run before it."""
    roles = set(site.roles)
    out: list[Call] = []
    fn, anchor = site.enclosing, site
    if root is not None and not _within(fn, root):
        root = None
    while fn is not None:
        for call in fn.calls:
            if call.precedes(anchor):
                out.extend(
                    c for c in call.expr.calls if (set(c.roles) - roles).isdisjoint(_DEFERRED) and runs_in(scan, c, fn)
                )
        if root is None or fn is root:
            break
        anchor = _handed_to(scan, fn)
        if anchor is None:
            break
        fn = fn.parent
    return out


# ------------------------------------------------------------------ helpers that commit a terminal


def terminal_names(scan: Scan, sites: Sequence[Call]) -> frozenset[str]:
    """Names of the functions that make a terminal call, and of those calling them (two rounds):
    the only callees worth a reachability question."""
    names = {fn.name for c in sites if (fn := fx.outer_named(c.enclosing, ("commit",))) is not None and fn.name}
    for _ in range(2):
        more = set()
        for call in fx.iter_calls(scan.program, scan.scope):
            if call.method in names:
                fn = fx.outer_named(call.enclosing, ("commit",))
                if fn is not None and fn.name:
                    more.add(fn.name)
        if more <= names:
            break
        names |= more
    return frozenset(names)


def helper_paths(scan: Scan, call: Call, targets: Sequence[str]) -> list[tuple[Call, ...]]:
    """Call paths from the function `call` calls (a local or imported helper, two hops deep) to a
    call of `targets`, each step run by the one before it (not merely written in a closure it
    defines: a factory does not run the handlers it builds)."""
    callee = call.callee_expr
    fn = scan.program.function_of(callee) if callee is not None else None
    if fn is None or not targets:
        return []
    key = (id(fn), tuple(sorted(targets)))
    if key not in scan.reached:
        paths = scan.program.reaches(fn, key[1], max_depth=2)
        scan.reached[key] = [p for p in paths if all(runs_in(scan, c, e) for c, e in zip(p, entered_by(scan, call, p)))]
    return scan.reached[key]


def entered_by(scan: Scan, call: Call, path: Sequence[Call]) -> list[Function | None]:
    """The function each call of `path` runs in, as entered from the call before it (`call` first)."""
    out: list[Function | None] = []
    for step in (call, *path[:-1]):
        callee = step.callee_expr
        out.append(scan.program.function_of(callee) if callee is not None else None)
    return out


def runs_in(scan: Scan, call: Call, fn: Function | None) -> bool:
    """`call` runs when `fn` runs: it is in `fn`, or in functions handed to calls of it
    (`(m) => Effect.gen(function* () { call })`), never in one bound to a name there (a factory's
    `const publish = ..` runs when `publish` is called, not when the factory is)."""
    inner = call.enclosing
    while inner is not None and inner is not fn:
        host = _handed_to(scan, inner)
        if host is None or fx.matches(host.callee, _DEFINERS):
            return False
        inner = inner.parent
    return inner is not None


def _handed_to(scan: Scan, fn: Function) -> Call | None:
    """The innermost call of the enclosing function that `fn` is an argument of (`Effect.andThen(() =>
    ..)`, `Effect.gen(function* () ..)`; not the `.pipe(..)` around it), else None (a function bound
    to a name runs when it is called, not where it is written). Read once per enclosing function."""
    parent = fn.parent
    if parent is None:
        return None
    if id(parent) not in scan.handing_read:
        scan.handing_read.add(id(parent))
        for call in parent.calls:
            for arg in call.args:
                for value in (arg, *(v for _, v in arg.props)):
                    inner = value.function
                    if inner is not None and inner.parent is parent:
                        # calls come outermost first: the last one holding it is the innermost
                        scan.handed_to[id(inner)] = call
    return scan.handed_to.get(id(fn))


def _within(fn: Function | None, root: Function) -> bool:
    while fn is not None:
        if fn is root:
            return True
        fn = fn.parent
    return False
