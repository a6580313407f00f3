"""resume-unconfirmed: a resume entry point that never checks the user's confirmation.

Only where the code base has the contract (`confirmation_field` set; the
opencode default is off). A resume entry point is a changed named function
whose name says resume and that takes a parameter (the request). It is fine
when it, or every caller of it in scope, reads the confirmation field.
"""

from __future__ import annotations

from typing import Iterator

from reviewer.report.model import Finding
from reviewer.typescript import Function, callers_of

from reviewer.rules import _effect as fx
from reviewer.rules.resume_identity.words import Scan, says_resume, stems


def check_confirm(scan: Scan) -> Iterator[Finding]:
    flag = scan.opts.confirmation_field
    if not flag:
        return
    resume = stems(scan.opts.resume_words)
    for module in fx.modules(scan.program, scan.paths):
        for fn in module.functions():
            if not fn.name or not fn.params or not says_resume(fn.name, resume):
                continue
            if not (fn.changed or scan.ctx.widened):
                continue
            scan.count("resume entry points")
            if fx.mentions(fn.expr, flag):
                continue
            callers = callers_of(scan.program, fn, scan.scope)
            if callers and all(_confirmed(c.enclosing, flag) for c in callers):
                continue
            yield from _report(scan, fn, flag)


def _confirmed(fn: Function | None, flag: str) -> bool:
    outer = fx.outer_named(fn)
    return outer is not None and fx.mentions(outer.expr, flag)


def _report(scan: Scan, fn: Function, flag: str) -> Iterator[Finding]:
    yield (
        scan.ctx.finding(
            "resume-unconfirmed",
            title="Resume does not require explicit confirmation",
            message=(
                f"`{fn.name}` resumes persisted work but neither it nor its callers read `{flag}`, so a task is "
                f"continued without the user's explicit confirmation. Refuse unless `{flag}` is true."
            ),
            location=fx.loc(fn.path, fn.line, fn.line),
            failure_sequence=(
                "A new session inspects the unfinished tasks it could resume.",
                f"The caller invokes `{fn.name}` without `{flag}: true`.",
                "The task's identity moves to the new session, and old evidence is presented as current.",
            ),
            anchor=f"unconfirmed:{fn.name}:{fn.body_text_normalized[:200]}",
        )
    )
