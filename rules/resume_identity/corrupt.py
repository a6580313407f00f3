"""corrupt-state-as-empty: a decode of persisted state whose failure becomes "no state".

Two shapes. A fallback combinator (`Effect.orElseSucceed`, `catchAll`, a
promise's `.catch`, `Option.getOrElse`) whose handler yields an empty value,
applied to an effect that decodes (`JSON.parse`, `Schema.decode*`,
`readJson`). And a function whose `try` decodes and whose `catch` returns an
empty value: read from the function's exits, since the model has no
try/catch query, as an empty return after the decode that runs under the
decode's own conditions (two unconditional returns in a row are the two
sides of a `try`). A fallback that first tests for a missing file or a
not-found tag (`if (isNotFound(e)) return []`, `catchTag("NotFound", ..)`)
runs under that test and is fine: only corruption must not read as empty.

What is decoded must be persisted state: a configured read (`readFile`,
`Storage.read`) feeds the decode or sits in the protected effect, or the
decoder reads by itself (`readJson`). And it must be recovery state: the
file is under `state_paths`, or the function around it says resume.
"""

from __future__ import annotations

from typing import Iterator

from reviewer.report.model import Finding
from reviewer.typescript import Call, Expr, Function, GuardPath, exits, guard_path

from reviewer.engine import globs
from reviewer.rules import _effect as fx
from reviewer.rules.resume_identity.words import Scan, is_empty, says_resume, stems

_MISSING = ("notfound", "enoent", "nosuchfile", "missing", "noentry")


def check_corrupt(scan: Scan) -> Iterator[Finding]:
    opts = scan.opts
    decoders, reads = opts.decoders, opts.state_reads
    resume = stems(opts.resume_words)
    seen: set[tuple[str, int]] = set()
    for call in fx.iter_calls(scan.program, scan.paths):
        if _is_fallback(scan, call):
            yield from _fallback(scan, call, decoders, reads, resume, seen)
        elif fx.matches(call.callee, decoders):
            yield from _try_catch(scan, call, reads, resume, seen)


# ------------------------------------------------------------------ combinators


def _is_fallback(scan: Scan, call: Call) -> bool:
    if fx.matches(call.callee, scan.opts.fallbacks):
        return True
    # a promise's `.catch(handler)`: a chained method, never Effect's own `Effect.catch`
    return call.method == "catch" and call.receiver is not None and len(call.args) == 1


def _fallback(
    scan: Scan, call: Call, decoders: tuple[str, ...], reads: tuple[str, ...], resume: tuple[str, ...],
    seen: set[tuple[str, int]],
) -> Iterator[Finding]:
    args = call.args
    if not args or not _recovery_state(scan, call, resume):
        return
    if any(_names_missing(a.string_value) for a in args[:-1]):
        return  # catchTag("NotFound", ..): a missing file is no state
    handler = args[-1]
    empty = _empty_result(handler)
    if empty is None:
        return
    protected = _protected(scan, call)
    decode = next((e for e in protected if fx.refers_to_any(e, decoders)), None)
    if decode is None:
        return
    if not scan.judged(call, *protected):
        return
    scan.count("decode fallbacks in recovery code")
    if not _persisted(scan, protected, decoders, reads):
        return
    yield from _report(scan, call, decode, empty, f"`{call.written}`", seen)


def _empty_result(handler: Expr) -> Expr | None:
    """The empty value a handler yields without testing for a missing file first, else None."""
    if is_empty(handler):
        return handler  # Option.getOrElse(() => []) is a function; Effect.orElseSucceed(() => []) too
    fn = handler.function
    if fn is None:
        return None
    for end in exits(fn):
        if end.kind == "throw":
            continue
        if not _unconditional(end.guards):
            continue
        if end.kind in ("return", "expression") and is_empty(end.value):
            return end.value if end.value is not None else fn.expr
    return None


def _unconditional(path) -> bool:
    """Only early exits (`if (x) return ..` above) stand before it: it is what the handler does by default."""
    if isinstance(path, GuardPath):
        return path.kinds() <= _EARLY_EXIT  # each exit of a deep ternary would walk its whole path
    return all(g.kind == "early-exit" for g in path)


_EARLY_EXIT = frozenset({"early-exit"})


def _names_missing(text: str | None) -> bool:
    return text is not None and any(word in text.lower().replace("_", "") for word in _MISSING)


def _protected(scan: Scan, call: Call) -> list[Expr]:
    """The code whose failure `call` handles: the pipe's subject and earlier stages, the chain before
    `.catch`, or a data-first first argument; a subject bound to a `const` adds its initializer."""
    out: list[Expr] = []
    host = call.host
    if host is not None and host.pipe_stages:
        stages = host.pipe_stages
        subject = host.receiver if host.method == "pipe" else (host.args[0] if host.args else None)
        if subject is not None:
            out.append(subject)
        for stage in stages:
            if fx.within(call, stage.span):
                break
            out.append(stage)
    elif call.method == "catch" and not fx.matches(call.callee, scan.opts.fallbacks):
        out.extend(link.expr for link in call.chain[: call.chain_position])
    elif len(call.args) >= 2:
        out.append(call.args[0])
    # `Effect.flatMap(decodeTasks)` with `const decodeTasks = Schema.decodeUnknown(..)`: one hop through
    # each name, whether it is the subject or an argument of a stage.
    for expr in list(out):
        names = [expr] if expr.identifier else [a for a in (expr.call.args if expr.call is not None else ()) if a.identifier]
        for name in names:
            bound = scan.program.bound_value(name)
            if bound is not None:
                out.append(bound)
    return out


def _persisted(scan: Scan, protected: list[Expr], decoders: tuple[str, ...], reads: tuple[str, ...]) -> bool:
    for expr in protected:
        if fx.refers_to_any(expr, reads):
            return True
        for inner in expr.calls:
            if fx.matches(inner.callee, decoders) and _reads_argument(scan, inner, reads):
                return True
    return False


def _reads_argument(scan: Scan, decode: Call, reads: tuple[str, ...]) -> bool:
    """The decoder reads by itself (`readJson`), or its argument is, or is bound to, a read."""
    if fx.matches(decode.callee, reads):
        return True
    for arg in decode.args:
        if fx.refers_to_any(arg, reads):
            return True
        bound = scan.program.bound_value(arg) if arg.identifier else None
        if bound is not None and fx.refers_to_any(bound, reads):
            return True
    return False


def _recovery_state(scan: Scan, at: Call, resume: tuple[str, ...]) -> bool:
    if globs.matches(at.path, scan.opts.state_paths):
        return True
    fn = fx.outer_named(at.enclosing)
    while fn is not None:
        if says_resume(fn.name, resume):
            return True
        fn = fx.outer_named(fn.parent)
    kind, name = at.binding
    return kind == "bound" and says_resume(name, resume)


# ------------------------------------------------------------------ try / catch


def _try_catch(
    scan: Scan, decode: Call, reads: tuple[str, ...], resume: tuple[str, ...], seen: set[tuple[str, int]]
) -> Iterator[Finding]:
    fn = decode.enclosing
    if fn is None or not (scan.ctx.widened or fn.changed):
        return
    if not _recovery_state(scan, decode, resume) or not _reads_argument(scan, decode, reads):
        return
    scan.count("decodes of recovery state")
    own = guard_path(decode, fn)
    mine = [g.test.normalized for g in own]
    success_seen = False
    for end in exits(fn):
        if end.line < decode.line or end.kind == "end":
            continue
        tests = [g.test.normalized for g in end.guards]
        if tests[: len(mine)] != mine or not _unconditional(end.guards[len(mine):]):
            continue
        if end.kind == "throw":
            return  # the decode's failure path ends in a throw: corruption is reported
        if not success_seen:
            success_seen = True  # the `try` side: the decoded value
            continue
        if not is_empty(end.value):
            return
        if not scan.judged(decode, *(e for e in (end.value,) if e is not None)) and not _line_changed(scan, fn, end.line):
            return
        value = end.value.written if end.value is not None else "nothing"
        where = fx.loc(decode.path, end.line, end.line, "the catch returns an empty value here")
        yield from _report(scan, decode, decode.expr, end.value, f"the `catch` returning `{value}` at line {end.line}", seen, where)
        return


def _line_changed(scan: Scan, fn: Function, line: int) -> bool:
    return scan.program.changed(fn.path, line, line)


# ------------------------------------------------------------------ findings


def _report(
    scan: Scan, at: Call, decode: Expr, empty: Expr | None, how: str, seen: set[tuple[str, int]],
    related_catch=None,
) -> Iterator[Finding]:
    key = (at.path, at.line)
    if key in seen:
        return
    seen.add(key)
    shown = empty.written if empty is not None else "nothing"
    related = [related_catch] if related_catch is not None else []
    if decode.line != at.line:
        related.append(fx.loc(decode.path, decode.line, decode.end_line, "the decode whose failure is swallowed"))
    yield (
        scan.ctx.finding(
            "corrupt-state-as-empty",
            title="Corrupt persisted state is read as empty",
            message=(
                f"{how} turns a failed decode of persisted recovery state into `{shown}`, so a corrupt or "
                "truncated state file reads as \"nothing to resume\". Fail with a persistence error naming the "
                "file; return an empty value only for a missing file (test for not-found first)."
            ),
            location=fx.loc(at.path, at.line, at.end_line),
            related=related,
            failure_sequence=(
                "The process crashes while writing the state file, or the disk fills: the file is truncated.",
                "On restart the decode fails, and the fallback returns an empty value instead of an error.",
                "Recovery sees no unfinished work, so the interrupted task is never resumed or reported.",
                "The next save writes the empty state over the corrupt file, and what could be repaired is gone.",
            ),
            anchor=f"corrupt:{at.normalized}",
        )
    )
