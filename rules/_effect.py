"""Shared helpers of the lease-renewal and terminal-commit-order families.

Both families reason about Effect-TS idioms over the TypeScript model: names
matched however they were imported, finalizer/handler regions, the named
function a callback belongs to, parse errors of the files they inspect. The
helpers are small and pure; nothing here knows a default idiom — callers pass
the configured names in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from reviewer.changeset import FileStatus
from reviewer.model import Location
from reviewer.typescript import Call, Expr, Function, Module, Program

if TYPE_CHECKING:
    from reviewer.context import ReviewContext

TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


# ------------------------------------------------------------------ options


def strings(value: Any) -> tuple[str, ...]:
    """A configured list of names as a tuple (a lone string is a one-item list)."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple)):
        return tuple(str(v) for v in value)
    return ()


def number(value: Any, fallback: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return fallback
    return float(value)


def glob(pattern: str) -> re.Pattern[str]:
    """`**` crosses directories (`**/` may match none); `*` and `?` stay inside one."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def path_matches(path: str, patterns: Iterable[str]) -> bool:
    return any(glob(p).match(path) for p in patterns)


def glob_prefix(pattern: str) -> str:
    """The literal directory part of a glob, for listing candidate files."""
    cut = min((i for i, ch in enumerate(pattern) if ch in "*?["), default=len(pattern))
    head = pattern[:cut]
    return head if cut == len(pattern) else head.rsplit("/", 1)[0] + "/" if "/" in head else ""


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
    return any(name == p or name.endswith("." + p) for p in patterns if p)


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
    try:
        return expr.qualified or expr.member_path
    except Exception:  # noqa: BLE001 - an odd node is simply unnamed
        return expr.member_path


def word_in(word: str, text: str) -> bool:
    return re.search(r"(?<![\w$])" + re.escape(word) + r"(?![\w$])", text) is not None


# ------------------------------------------------------------------ files


def changed_ts_paths(ctx: "ReviewContext") -> tuple[str, ...]:
    """Changed TypeScript files that exist in the patched tree, sorted."""
    out = []
    for f in ctx.changeset.files:
        if f.status is FileStatus.DELETED or f.binary or f.patched_text is None:
            continue
        if f.path.endswith(TS_SUFFIXES) and not f.path.endswith(".d.ts"):
            out.append(f.path)
    return tuple(sorted(set(out)))


def tree_paths(ctx: "ReviewContext", patterns: Sequence[str]) -> tuple[str, ...]:
    """TypeScript files of the patched tree under the given globs."""
    found: set[str] = set()
    for pattern in patterns:
        for path in ctx.patched.paths(glob_prefix(pattern)):
            if path.endswith(TS_SUFFIXES) and not path.endswith(".d.ts") and glob(pattern).match(path):
                found.add(path)
    paths = tuple(sorted(found))
    # One git process for the lot instead of one per file the rules go on to read.
    if paths:
        safe(lambda: ctx.patched.prefetch(list(paths)), None)
    return paths


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


def named_function(fn: Function | None) -> Function | None:
    """The nearest enclosing function that has a name of its own (not a hook arrow)."""
    while fn is not None:
        if fn.name:
            return fn
        fn = fn.parent
    return None


def outer_named(fn: Function | None, skip: Iterable[str] = ()) -> Function | None:
    """Nearest named ancestor whose name is not in `skip` (e.g. `commit` arrows)."""
    skipped = set(skip)
    while fn is not None:
        if fn.name and fn.name not in skipped:
            return fn
        fn = fn.parent
    return None


def describe(fn: Function | None) -> str:
    return f"`{fn.name}`" if fn is not None and fn.name else "an anonymous function"


def loc(path: str, line: int, end_line: int, note: str = "") -> Location:
    return Location(path, line, max(line, end_line), note)


def call_loc(call: Call, note: str = "") -> Location:
    return loc(call.path, call.line, call.end_line, note)


def fn_loc(fn: Function, note: str = "") -> Location:
    return loc(fn.path, fn.line, fn.end_line, note)


def key(call: Call) -> tuple[str, int, str]:
    return (call.path, call.line, call.normalized)


def unique_sorted(items: Iterable[Location]) -> list[Location]:
    seen: dict[tuple[str, int, int], Location] = {}
    for item in items:
        seen.setdefault((item.path, item.line, item.end_line), item)
    return [seen[k] for k in sorted(seen)]


def safe(fn: Callable[[], Any], default: Any) -> Any:
    """Evaluate a model query that may not understand odd syntax; never crash the rule."""
    try:
        return fn()
    except (RecursionError, ValueError, KeyError, IndexError, AttributeError, TypeError):
        return default


# ------------------------------------------------------------------ effect idioms


def handler_fails(program: Program, handler: Expr, fail_names: Sequence[str]) -> bool:
    """Does this handler (may) re-fail: a fail/die call, `throw`, or a helper reaching one?"""
    text = handler.normalized
    if word_in("throw", text):
        return True
    for call in handler.calls:
        if matches(call.callee, fail_names):
            return True
        for arg in call.args:  # `Effect.andThen(Effect.die)` passes the failure by reference
            if matches(arg.member_path, fail_names):
                return True
    if matches(handler.member_path, fail_names):
        return True
    reached = safe(lambda: program.reaches(handler, list(fail_names), max_depth=3), [])
    return bool(reached)


def yields_success(handler: Expr, success_names: Sequence[str]) -> bool:
    """Does the handler produce a success value (`Effect.void`, `Effect.succeed(..)`, a bare return)?"""
    text = handler.normalized
    for name in success_names:
        short = name.split(".", 1)[-1] if "." in name else name
        if name in text or re.search(r"\.\s*" + re.escape(short) + r"(?![\w$])", text):
            return True
    return False


@dataclass(frozen=True)
class Stage:
    """One step applied to an effect: a pipe stage or a data-first wrapper call."""

    expr: Expr
    name: str  # import-resolved callee or reference (`Effect.forkScoped`)
    call: Call | None
    wraps: bool = False  # a data-first call taking the effect as its first argument


def stages_of(program: Program, call: Call) -> list[Stage]:
    """What is applied to `call`'s value, in order: pipe stages, then data-first wrappers.

    `renew(..).pipe(Effect.repeat(s), Effect.forkScoped)` gives repeat, forkScoped;
    `Effect.forkScoped(Effect.repeat(renew(..), s))` gives repeat, forkScoped too.
    """
    out: list[Stage] = []
    for expr in safe(lambda: call.piped_into, ()):
        name = ref_name(expr)
        if name:
            out.append(Stage(expr, name, expr.call))
    out.extend(_wrappers(program, call, 0))
    return out


def _wrappers(program: Program, call: Call, depth: int) -> list[Stage]:
    """Data-first wrappers: calls whose first argument is this call (and theirs)."""
    if depth > 4:
        return []
    host = host_of_first_arg(program, call)
    if host is None:
        return []
    out = [Stage(host.expr, host.callee, host, wraps=True)]
    for expr in safe(lambda: host.piped_into, ()):
        name = ref_name(expr)
        if name:
            out.append(Stage(expr, name, expr.call))
    out.extend(_wrappers(program, host, depth + 1))
    return out


def host_of_first_arg(program: Program, call: Call) -> Call | None:
    """The call `H(call, ...)` taking `call` as its first argument, if any."""
    if call.enclosing is not None:
        candidates: Iterable[Call] = call.enclosing.calls
    else:
        module = program.module(call.path)
        candidates = [c for c in module.calls() if c.enclosing is None] if module is not None else []
    for other in candidates:
        if other is call or other.line > call.line:
            continue
        args = safe(lambda: other.args, ())
        if args and args[0].call is call:
            return other
    return None


def outermost(call: Call, stages: Sequence[Stage]) -> tuple[int, int]:
    """Line range of the whole expression: `call` plus every stage applied to it."""
    line, end = call.line, call.end_line
    for stage in stages:
        line = min(line, stage.expr.line)
        end = max(end, stage.expr.end_line)
        if stage.call is not None:
            line = min(line, stage.call.line)
    for member in safe(lambda: call.chain, ()):
        line = min(line, member.line)
        end = max(end, member.end_line)
    return line, end


_BINDING = re.compile(r"(?:^\s*|[;{(,]\s*)(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=]*)?=\s*(?:yield\s*\*|await)?\s*$")
_ASSIGN = re.compile(r"(?:^\s*|[;{]\s*)([A-Za-z_$][\w$.]*)\s*=\s*(?:yield\s*\*|await)?\s*$")
_STATEMENT = re.compile(r"^\s*(?:yield\s*\*|await)?\s*$")


def binding_of(module: Module, line: int, first_text: str) -> tuple[str, str | None]:
    """How the expression starting on `line` with `first_text` is used.

    Returns ("bound", name), ("discarded", None) for an expression statement,
    or ("other", None) (returned, passed on, ...: someone else owns it). Reads
    the source lines because the model exposes expressions, not statements.
    """
    lines = module.text.splitlines()
    if not (1 <= line <= len(lines)):
        return ("other", None)
    current = lines[line - 1]
    head = first_text.strip().splitlines()[0].strip() if first_text.strip() else ""
    at = current.find(head[:40]) if head else -1
    prefix = current[:at] if at >= 0 else ""
    # A binding split over lines: `const beat =\n  yield* ...`
    if _STATEMENT.match(prefix) and line >= 2:
        previous = lines[line - 2].rstrip()
        if previous.endswith("="):
            combined = previous + " " + prefix.strip()
            found = _BINDING.search(combined) or _ASSIGN.search(combined)
            if found:
                return ("bound", found.group(1))
    found = _BINDING.search(prefix)
    if found:
        return ("bound", found.group(1))
    found = _ASSIGN.search(prefix)
    if found and "." not in found.group(1):
        return ("bound", found.group(1))
    if _STATEMENT.match(prefix):
        return ("discarded", None)
    return ("other", None)


def changed_hunks(ctx: "ReviewContext", path: str, note: str) -> list[Location]:
    """The patched line ranges the patch added in `path` (evidence that ties a note to the change)."""
    changed = ctx.changeset.file(path)
    if changed is None:
        return []
    out = []
    for hunk in changed.hunks:
        if hunk.added:
            out.append(loc(path, min(hunk.added), max(hunk.added), note))
    return out[:3]


@dataclass(frozen=True)
class ErrorRegion:
    path: str
    start: int
    end: int
    touched: bool  # overlaps lines the patch changed
    inspected: bool  # its source mentions an idiom the family inspects


def error_regions(
    program: Program, ctx: "ReviewContext", paths: Iterable[str], tokens: Iterable[str]
) -> list[ErrorRegion]:
    """tree-sitter ERROR regions of `paths`, classified for the fail-closed rule.

    A region over changed lines that mentions one of the family's idioms could
    hide a violation: the invariant is `error`. Any other region (untouched code,
    or a changed `interface X<in K>` with no idiom in it) is only a note.
    """
    words = sorted({t for t in tokens if t})
    out: list[ErrorRegion] = []
    for path in sorted(set(paths)):
        regions = safe(lambda: program.parse_errors(path), ())
        changed = ctx.changeset.file(path)
        module = program.module(path)
        lines = module.text.splitlines() if module is not None else []
        for start, end in regions:
            text = "\n".join(lines[max(start - 1, 0) : end])
            inspected = any(word_in(w, text) for w in words)
            touched = changed is not None and changed.touches(start, end)
            out.append(ErrorRegion(path, start, end, touched, inspected))
    return out


def iter_calls(program: Program, paths: Iterable[str]) -> Iterator[Call]:
    for module in modules(program, paths):
        yield from safe(module.calls, ())
