"""What must be exercised: the other families' must-fix findings, and the guards the patch changed.

A guard is a construct the families judge whose change alters what survives a
crash or a cancellation, read here with the families' own vocabulary:

- `hook`: a changed body of a commit-hook property (`interruptedCommit`,
  `terminalCommit`): the write committed with an interruption or a terminal step
  (lease-renewal, terminal-commit-order);
- `cas`: a changed `where` predicate of `update(T)` on a recovery table
  (`SessionInputTable`, `SessionExecutionTable`): the compare-and-set that must
  exclude settled rows (bounded-scan);
- `renewal`: a changed schedule of a repeated lease renewal
  (`renew(...).pipe(Effect.repeat(...))`): the heartbeat (lease-renewal).

Changed means the patch added lines inside it and the base file holds no guard
of the same shape: one only reformatted or moved within its file is the same guard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable

from reviewer.engine.api import Options
from reviewer.report.model import Finding, InvariantResult, Severity
from reviewer.typescript import Call, Program, statement_of

from reviewer.rules import _effect as fx


@dataclass(frozen=True)
class Target:
    """One piece of production code a regression test should run."""

    path: str
    line: int
    end_line: int
    what: str  # how the message names it ("the must-fix `rule` (title)", "the changed `interruptedCommit` hook")
    anchor: str  # normalised: the finding's rule and anchor, or the guard's syntax
    finding: Finding | None = None  # the must-fix finding, None for a guard


def finding_targets(
    prior: Iterable[InvariantResult], own: str, is_code: Callable[[str], bool], in_change: Callable[[Finding], bool]
) -> list[Target]:
    """Must-fix findings of the other families located in production TypeScript and within the change
    (at or related to a changed line, as `--scope changed` counts them): a defect the patch did not
    touch asks for no new test of it."""
    out = []
    for result in prior:
        for finding in result.findings:
            loc = finding.location
            if finding.severity is not Severity.MUST_FIX or finding.family == own or loc is None:
                continue
            if finding.rule.endswith("/internal-error") or not is_code(loc.path) or not in_change(finding):
                continue
            out.append(
                Target(
                    loc.path,
                    loc.line,
                    loc.end_line,
                    f"the must-fix `{finding.rule}` ({finding.title.rstrip('.')})",
                    f"{finding.rule}:{finding.anchor or finding.title}",
                    finding,
                )
            )
    return out


def guard_targets(program: Program, base: Program, paths: Iterable[str], opts: Options) -> list[Target]:
    """The guards the patch changed in `paths` (production TypeScript files)."""
    paths = tuple(paths)
    out: list[Target] = []
    tables = frozenset(fx.last(t) for t in opts.cas_tables)
    repeat = fx.Matcher(opts.repeat)
    renew = fx.Matcher(opts.renew)
    for hook in opts.guard_hooks:
        for callback in program.callbacks(hook, paths):
            if not program.changed(callback.path, callback.line, callback.end_line):
                continue
            if shape(callback.value.normalized) in {shape(c.value.normalized) for c in base.callbacks(hook, callback.path)}:
                continue
            out.append(
                Target(
                    callback.path,
                    callback.line,
                    callback.end_line,
                    f"the changed `{hook}` hook (`{callback.value.written}`)",
                    f"hook:{hook}:{shape(callback.value.normalized)}",
                )
            )
    for module in fx.modules(program, paths):
        before = _base_guards(base, module.path, tables, repeat, renew)
        for call in module.calls():
            if call.method == "where" and call.args and _updates(call, tables):
                key = _where_key(call)
                if any(a.changed for a in call.args) and key not in before:
                    first, last = call.args[0], call.args[-1]
                    shown = ", ".join(a.written for a in call.args)
                    out.append(
                        Target(
                            call.path,
                            first.line,
                            last.end_line,
                            f"the changed compare-and-set predicate `.where({shown})`",
                            f"cas:{key}",
                        )
                    )
            elif repeat(call.callee) and any(a.changed for a in call.args) and _renews(call, renew):
                key = shape(call.normalized)
                if key not in before:
                    out.append(
                        Target(
                            call.path,
                            call.line,
                            call.end_line,
                            f"the changed lease renewal schedule `{call.written}`",
                            f"renewal:{key}",
                        )
                    )
    return out


def _base_guards(base: Program, path: str, tables: frozenset[str], repeat: fx.Matcher, renew: fx.Matcher) -> set[str]:
    """The guards of the base file at `path`, by shape (empty for a file the patch adds)."""
    module = base.module(path)
    if module is None:
        return set()
    out = set()
    for call in module.calls():
        if call.method == "where" and call.args and _updates(call, tables):
            out.add(_where_key(call))
        elif repeat(call.callee) and _renews(call, renew):
            out.add(shape(call.normalized))
    return out


def _updates(where: Call, tables: frozenset[str]) -> bool:
    """`where` continues a chain that starts with `update(T)` on one of `tables`."""
    for link in where.chain:
        if link.method == "update" and link.args:
            name = link.args[0].qualified or link.args[0].member_path or ""
            if fx.last(name) in tables:
                return True
    return False


def _renews(repeat: Call, renew: fx.Matcher) -> bool:
    """The repeated effect is a lease renewal: `renew(..).pipe(Effect.repeat(..))`, `Effect.repeat(renew(..), ..)`,
    or a renewal elsewhere in the statement around the repeat."""
    if any(a.call is not None and renew(a.call.callee) for a in repeat.args):
        return True
    host = repeat.host
    for _ in range(8):  # pipes nest a few deep at most; a deeper nest is read through its statement
        if host is None:
            break
        receiver = host.receiver
        if renew(host.callee) or (receiver is not None and receiver.call is not None and renew(receiver.call.callee)):
            return True
        host = host.host
    statement = statement_of(repeat.expr)
    return any(renew(c.callee) for c in statement.calls) if statement is not None else False


def _where_key(call: Call) -> str:
    return shape(", ".join(a.normalized for a in call.args))


_SPACE = re.compile(r"\s+")
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def shape(normalized: str) -> str:
    """Normalised syntax without the formatter's choices (spaces, trailing commas), for comparing
    a guard with the base's: `and(a, b,)` over three lines is the base's `and(a, b)`."""
    return _TRAILING_COMMA.sub("", _SPACE.sub("", normalized))
