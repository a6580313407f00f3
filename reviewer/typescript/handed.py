"""What a call may run besides its callee: the branches of a conditional callee, and the
functions it is handed as values.

`(hard ? X.clear : X.release)(db, claim)` runs either branch;
`Effect.forEach(claims, X.clear)` and `claims.map(X.clear.bind(null, db))` run
`X.clear` once per element. `Call.runs` (expressions.py) is every such name, and
the question a rule asks when it asks "does this call release?".
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.calls import arguments, callee_name, invoker, qualified_name
from reviewer.typescript.literals import picked
from reviewer.typescript.roles import Role
from reviewer.typescript.source import Indexed, Names

def callee_branches(call: ts.Node) -> list[ts.Node]:
    """The branches of a conditional callee (`(c ? f : g)(..)`, `(f || g)(..)`, `(f ?? g)(..)`), nested
    ones flattened; [] when the callee is not conditional."""
    callee = sx.strip(sx.field(call, "function"))
    if callee is None or callee.type not in ("ternary_expression", "binary_expression"):
        return []
    out: list[ts.Node] = []
    stack = [callee]
    while stack and len(out) < 16:
        node = sx.strip(stack.pop())
        if node is None:
            continue
        if node.type == "ternary_expression":
            stack += [n for n in (sx.field(node, "alternative"), sx.field(node, "consequence")) if n is not None]
        elif node.type == "binary_expression" and sx.text(sx.field(node, "operator")) in ("||", "&&", "??"):
            stack += [n for n in (sx.field(node, "right"), sx.field(node, "left")) if n is not None]
        else:
            out.append(node)
    return out if len(out) > 1 or callee.type == "ternary_expression" else []


# Methods that run the function values handed to them: Effect's combinators (data-first or
# data-last), arrays' and iterables', promises', Option/Either/Stream mappers, and `pipe`. A function
# handed to anything else (`Effect.succeed(f)`, `Layer.succeed(T, f)`, `queue.offer(f)`, `set.add(f)`)
# is kept, not run, unless the callee is a function of the program whose parameter it calls.
RUNNERS = frozenset({
    "forEach", "map", "flatMap", "andThen", "tap", "tapBoth", "tapError", "tapErrorCause", "tapDefect",
    "zipWith", "filter", "filterMap", "filterOrElse", "filterOrFail", "reduce", "reduceRight", "reduceEffect",
    "some", "every", "find", "findIndex", "findLast", "findLastIndex", "sort", "toSorted", "flatMapError",
    "then", "catch", "finally", "suspend", "sync", "promise", "try", "tryPromise", "gen", "fn", "pipe",
    "mapEffect", "mapError", "mapBoth", "runForEach", "iterate", "loop", "ensuring", "onExit", "onError",
    "onInterrupt", "addFinalizer", "addFinalizerExit", "acquireRelease", "acquireUseRelease", "catchAll",
    "catchAllCause", "catchAllDefect", "catchTag", "catchTags", "catchIf", "catchSome", "catchCause",
    "orElse", "match", "matchEffect", "matchCause", "matchCauseEffect", "from",
})
_MAX_BINDS = 8  # `f.bind(a).bind(b)…` deeper than this is not followed


class _Helper(Protocol):
    """A function of the program, as `definition` gives it (expressions.Function)."""

    @property
    def params(self) -> tuple[str, ...]: ...

    @property
    def all_calls(self) -> Sequence[Any]: ...


def alternatives(module: Names, call: ts.Node) -> list[str]:
    """Each branch's name of a conditional callee (`(c ? X.clear : X.release)(..)`); else []."""
    return [name for n in callee_branches(call) if (name := qualified_name(module, n))]


def function_value_names(module: Names, node: ts.Node | None) -> list[str]:
    """The names of the function an expression is as a value: `X.clear`, `X.clear.bind(null, db)`
    (and binds of binds), `[X.clear][0]`, either branch of `c ? X.clear : X.read`; [] for a call's
    result, an inline function, or anything without a name."""
    node = picked(node)
    if node is not None and node.type == "ternary_expression":
        return [name for branch in (sx.field(node, "consequence"), sx.field(node, "alternative"))
                for name in function_value_names(module, branch)]
    for _ in range(_MAX_BINDS):
        if node is None or node.type != "call_expression":
            break
        node = bind_target(module, node)
        if node is None:
            return []  # a call's result, not a function value the reviewer can name
    if node is None or node.type not in ("identifier", "member_expression", "subscript_expression"):
        return []
    name = qualified_name(module, node)
    return [name] if name and "(" not in name else []


def function_value_name(module: Names, node: ts.Node | None) -> str | None:
    names = function_value_names(module, node)
    return names[0] if len(names) == 1 else None


def bind_target(module: Names, call: ts.Node) -> ts.Node | None:
    """The function `f.bind(t, ..)` or `Function.prototype.bind.call(f, t, ..)` binds; None for any other call."""
    way = invoker(sx.field(call, "function"))
    if way is not None and way[1] == "bind":
        return picked(way[0])
    if qualified_name(module, sx.field(call, "function")) == "Function.prototype.bind.call":
        given = arguments(call)
        return picked(given[0]) if given else None
    return None


def _spread_out(args: list[ts.Node]) -> list[ts.Node | None]:
    """The arguments with spreads of array literals laid out (`f(...[a, b])` is `f(a, b)`); past a
    spread of anything else the positions are unknown (None)."""
    out: list[ts.Node | None] = []
    for arg in args:
        node = sx.strip(arg)
        if node is not None and node.type == "spread_element":
            inner = picked(sx.named(node)[0]) if sx.named(node) else None
            if inner is not None and inner.type == "array" and not any(e.type == "spread_element" for e in sx.named(inner)):
                out.extend(e for e in sx.named(inner) if e.type != "comment")
                continue
            out.append(None)
            break
        out.append(arg)
    return out


def handed_functions(module: Indexed, call: ts.Node) -> list[str]:
    """Names of the functions a call is handed as values and runs: by a combinator that runs what it
    is handed (`Effect.forEach(xs, X.clear)`, `xs.map(X.clear.bind(null, db))`, `pipe(x, f)`), or by a
    function of the program that calls the parameter it is handed to (`run(X.clear, db, c)` with
    `const run = (g, db, c) => g(db, c)`). Inline functions are not here: their calls are the file's."""
    args = _spread_out(arguments(call))
    found = [(i, names) for i, arg in enumerate(args) if arg is not None and (names := function_value_names(module, arg))]
    if not found:
        return []
    name = callee_name(module, call)
    if name is None:
        return []
    if _runner(name):
        return [n for _, names in found for n in names]
    helper = _helper(module, name)
    if helper is None:
        return []
    params = helper.params
    return [n for i, names in found if i < len(params) and _param_calls(helper, params[i]) for n in names]


def handed_to_finalize(module: Indexed, call: ts.Node) -> list[str]:
    """The functions a program's helper is handed and runs only as a finalizer (`withCleanup(run,
    X.clear.bind(null, db))` with `Effect.ensuring(run, cleanup())` inside it)."""
    name = callee_name(module, call)
    helper = _helper(module, name) if name is not None and not _runner(name) else None
    if helper is None:
        return []
    params = helper.params
    out: list[str] = []
    for i, arg in enumerate(arguments(call)):
        runs = _param_calls(helper, params[i]) if i < len(params) else []
        if runs and all(Role.FINALIZER in c.confined_roles for c in runs):
            out += function_value_names(module, arg)
    return out


def _runner(name: str) -> bool:
    """A combinator that runs what it is handed; `Array.prototype.map.call(xs, f)` is `map`'s."""
    bare = name.replace("()", "")
    for suffix in (".call", ".apply"):
        bare = bare.removesuffix(suffix)
    # `Option.some(f)` wraps `f` in a value; `xs.some(f)` runs it
    return bare.rsplit(".", 1)[-1] in RUNNERS and not bare.endswith("Option.some")


def _param_calls(helper: _Helper, param: str) -> list[Any]:
    return [c for c in helper.all_calls if c.callee == param]


def _helper(module: Names, name: str) -> _Helper | None:
    found = module.program.definition(module.path, name) if "(" not in name else None
    return found if found is not None and hasattr(found, "params") and hasattr(found, "all_calls") else None  # type: ignore[return-value]
