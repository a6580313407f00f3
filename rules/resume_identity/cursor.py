"""cursor-not-invalidated: a persisted resume cursor outlives the session it points at.

A cursor is persisted where an object literal sets a configured field
(`resumeCursor: { sessionId }`) to something other than an empty value. A
handler destroys the session it names when it calls a configured destroy
call (`client.session.abort`) or is handed over together with a delete event
(`Bus.subscribe(Session.Event.Deleted, handler)`). Such a handler must
clear or invalidate the cursor: it, or a caller of it, writes the field
(`resumeCursor: undefined`, `binding.resumeCursor = null`, a helper named
for clearing it). Judged when the patch touches the handler or a cursor
write, over the changed files and the files they import.
"""

from __future__ import annotations

from typing import Iterator

from reviewer.report.model import Finding
from reviewer.typescript import Callback, Call, Function, callers_of

from reviewer.rules import _effect as fx
from reviewer.rules.resume_identity.words import Scan, is_empty


def check_cursor(scan: Scan) -> Iterator[Finding]:
    fields = scan.opts.cursor_fields
    writes = [cb for f in fields for cb in scan.program.callbacks(f, scan.scope) if not is_empty(cb.value)]
    if not writes:
        return
    changed_write = any(cb.value.changed for cb in writes)
    handlers: dict[int, tuple[Function, Call, str]] = {}
    for call in fx.iter_calls(scan.program, scan.scope):
        if fx.matches(call.callee, scan.opts.destroy_calls):
            fn = fx.outer_named(call.enclosing)
            if fn is not None:
                handlers.setdefault(id(fn), (fn, call, f"calls `{call.callee_written}`"))
        elif any(fx.matches(a.member_path, scan.opts.destroy_events) for a in call.args):
            for arg in call.args:
                fn = arg.function
                if fn is not None:
                    event = next(a.member_path for a in call.args if fx.matches(a.member_path, scan.opts.destroy_events))
                    handlers.setdefault(id(fn), (fn, call, f"handles `{event}`"))
    for fn, call, does in sorted(handlers.values(), key=lambda h: (h[1].path, h[1].line)):
        if not (scan.ctx.widened or changed_write or call.changed or fn.changed):
            continue
        scan.count("session destroy handlers")
        if _clears(scan, fn, fields):
            continue
        yield from _report(scan, fn, call, does, writes)


def _clears(scan: Scan, fn: Function, fields: tuple[str, ...]) -> bool:
    """The handler, or one of its callers in scope, writes or clears a cursor field."""
    if _mentions_cursor(fn, fields):
        return True
    return any(
        (outer := fx.outer_named(caller.enclosing)) is not None and _mentions_cursor(outer, fields)
        for caller in callers_of(scan.program, fn, scan.scope)
    )


def _mentions_cursor(fn: Function, fields: tuple[str, ...]) -> bool:
    expr = fn.expr
    for f in fields:
        if fx.mentions(expr, f):
            return True
        clearer = f[0].upper() + f[1:]
        if any(fx.last(c.callee).lower() in (f"clear{clearer}".lower(), f"invalidate{clearer}".lower()) for c in expr.calls):
            return True
    return False


def _report(scan: Scan, fn: Function, call: Call, does: str, writes: list[Callback]) -> Iterator[Finding]:
    field = writes[0].prop
    related = [fx.loc(cb.path, cb.line, cb.end_line, f"`{cb.prop}` is persisted here") for cb in writes[:2]]
    yield (
        scan.ctx.finding(
            "cursor-not-invalidated",
            title="Resume cursor is not cleared when its session is destroyed",
            message=(
                f"`{fn.name}` {does}, which destroys the upstream session, but never clears or invalidates the "
                f"persisted `{field}` that points at it. Clear the cursor (or mark it invalid) in `{fn.name}`, "
                "so the next start begins a fresh session instead of resuming a dead one."
            ),
            location=fx.loc(call.path, call.line, call.end_line),
            related=related,
            failure_sequence=(
                f"A session is stopped: `{fn.name}` destroys its upstream session.",
                f"The persisted `{field}` still names that session.",
                "The next start resumes from the cursor and asks for the destroyed session.",
                "The lookup fails, so the start fails with a process error instead of restoring or starting fresh.",
            ),
            anchor=f"cursor:{fn.name}:{call.normalized}",
        )
    )
