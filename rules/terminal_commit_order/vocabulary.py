"""terminal-commit-order's vocabulary, inferred from the base tree (`reviewer init`, and reviews
whose defaults name nothing there).

Terminal events are the members of one event group that end it both ways: a
namespace or object declaring a success terminal (`Ended`, `Succeeded`,
`Completed`, `Finished`, `Done`, `Settled`, `Accepted`, `Delivered`) and a failure terminal
(`Failed`, `Faulted`, `Crashed`, `Errored`, `Rejected`, `Aborted`, `Declined`) whose values are event definitions (calls) or the string
constants a code base without event classes writes its outcomes as
(`RunEvent = { Completed: "run.completed", Failed: "run.failed" } as const`).
A group with only one of them has no "success after failure" to get wrong. Settle functions are named
for failing, settling or awaiting tools or tasks; commit hooks are object
properties named `…Commit` whose value is a function, passed to a call.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from reviewer.engine.api import Evidence, Proposal
from reviewer.rules import _vocabulary as vocab

if TYPE_CHECKING:
    from reviewer.engine.context import Corpus

SUCCESS = ("Ended", "Succeeded", "Completed", "Finished", "Done", "Settled", "Accepted", "Delivered")
FAILURE = ("Failed", "Faulted", "Crashed", "Errored", "Rejected", "Aborted", "Declined")
_EVENT_GREP = r"\b(" + "|".join(SUCCESS + FAILURE) + r")\b\s*[=:]"
_SETTLE = re.compile(r"(?i)^(fail|settle|await|cancel|finish|drain|abort)\w*(tool|task)")
_SETTLE_GREP = r"(fail|settle|await|cancel|finish|drain|abort)[A-Za-z0-9_]*(Tool|Task|tool|task)"
# Named for the terminal they commit (`terminalCommit`, `failedCommit`): a `beforeCommit` of a
# text buffer is a hook too, but not of a step's end.
_HOOK = re.compile(r"^(terminal|final|step|end|ended|fail|failed|failure|success|complete|completed|finish|finished)\w*Commit$", re.I)
_HOOK_GREP = r"\b(terminal|final|step|end|ended|fail|failed|failure|success|complete|completed|finish|finished)[A-Za-z0-9_]*Commit\b\s*[:(]"
# What `infer` greps for (reviewer/engine/vocabulary.py reads them in one pass).
HINTS = (
    ("success_events", _EVENT_GREP, SUCCESS + FAILURE),
    ("failure_events", _EVENT_GREP, SUCCESS + FAILURE),
    ("settle_tools", _SETTLE_GREP, ("Tool", "Task", "tool", "task")),
    ("terminal_hooks", _HOOK_GREP, ("Commit",)),
)
_FUNCTION_KINDS = ("arrow_function", "function_expression", "function", "method_definition")


def infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    out: list[Proposal] = []
    if corpus.wants("success_events") or corpus.wants("failure_events"):
        success, failure = _events(corpus)
        looked = ("event groups declaring both a success terminal (" + "/".join(SUCCESS) + ") and a failure terminal ("
                  + "/".join(FAILURE) + ")")
        out.append(vocab.proposal("success_events", success, looked))
        out.append(vocab.proposal("failure_events", failure, looked))
    if corpus.wants("settle_tools"):
        out.append(_settles(corpus))
    if corpus.wants("terminal_hooks"):
        out.append(_hooks(corpus))
    return tuple(out)


def _events(corpus: "Corpus") -> tuple[dict[str, Evidence], dict[str, Evidence]]:
    success: dict[str, Evidence] = {}
    failure: dict[str, Evidence] = {}
    for module in vocab.modules(corpus, [_EVENT_GREP]):
        path = module.path
        groups: dict[str, dict[str, int]] = {}
        for name in module.declarations:
            group, _, member = name.rpartition(".")
            value = module.constant(name)
            if group and member in SUCCESS + FAILURE and value is not None and (
                    value.call is not None or value.string_value is not None):
                groups.setdefault(group, {})[member] = value.line
        for group, members in sorted(groups.items()):
            ends = [m for m in SUCCESS if m in members]
            fails = [m for m in FAILURE if m in members]
            if not ends or not fails:
                continue
            for member in ends:
                success.setdefault(f"{group}.{member}", Evidence(path, members[member], f"`{group}.{member}` ends the group"))
            for member in fails:
                failure.setdefault(f"{group}.{member}", Evidence(path, members[member], f"`{group}.{member}` fails the group"))
    return success, failure


def _settles(corpus: "Corpus") -> Proposal:
    found: dict[str, Evidence] = {}
    for module in vocab.modules(corpus, [_SETTLE_GREP]):
        for fn in module.functions():
            if fn.name and _SETTLE.search(fn.name):
                for name in vocab.spellings(corpus, fn):
                    found.setdefault(name, Evidence(fn.path, fn.line, f"`{vocab.shown(fn.name)}` settles tools"))
    return vocab.proposal("settle_tools", found, "functions named like failUnsettledTools/awaitToolFibers/settleTasks")


def _hooks(corpus: "Corpus") -> Proposal:
    found: dict[str, Evidence] = {}
    for module in vocab.modules(corpus, [_HOOK_GREP]):
        for call in module.calls():
            for arg in call.args:
                for key, value in arg.props:
                    if _HOOK.match(key) and value.kind in _FUNCTION_KINDS and key not in found:
                        found[key] = Evidence(module.path, value.line, f"`{key}` is a commit hook passed to `{vocab.shown(call.callee)}`")
    return vocab.proposal("terminal_hooks", found,
                          "object properties named like `…Commit` whose value is a function, passed to a call")
