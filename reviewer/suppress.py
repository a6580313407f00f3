"""Inline suppressions and review scope, applied after the rules ran.

    // reviewer-ignore: lease-renewal/lost-suppressed -- Lost is re-raised by the caller

on the reported line or the line before silences that one finding. The
reason is mandatory; a suppression the patch itself adds is shown as such
(a maintainer must see that the author silenced the bot); unused ones are
reported; integrity findings can never be silenced.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from reviewer.changeset import ChangeSet, ChangedFile
from reviewer.model import Finding, Location, Severity

_DIRECTIVE = re.compile(r"(?://|#|/\*|<!--)\s*reviewer-ignore\s*:\s*(?P<body>.*?)\s*(?:\*/|-->)?\s*$")
_RULE_ID = re.compile(r"[a-z0-9][a-z0-9-]*(?:/[a-z0-9][a-z0-9-]*)?")
UNSUPPRESSIBLE_FAMILIES = frozenset({"integrity"})


class Scope(str, enum.Enum):
    CHANGED = "changed"  # where the patch changed code, or a changed line makes this one wrong
    FILE = "file"  # anywhere in a changed file
    ALL = "all"  # everything the rules report


@dataclass(frozen=True)
class Directive:
    path: str
    line: int
    rules: tuple[str, ...]
    reason: str
    added_by_patch: bool


@dataclass(frozen=True)
class Suppressed:
    finding: Finding
    directive: Directive


def _directives(f: ChangedFile) -> list[Directive]:
    text = f.patched_text
    if text is None:
        return []
    found: list[Directive] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if "reviewer-ignore" not in line:
            continue
        match = _DIRECTIVE.search(line)
        if not match:
            continue
        body = match["body"]
        rules_part, sep, reason = body.partition("--")
        rules = tuple(r for r in (p.strip() for p in rules_part.replace(",", " ").split()) if _RULE_ID.fullmatch(r))
        found.append(Directive(f.path, number, rules, reason.strip() if sep else "", number in f.added_lines))
    return found


def _matches(directive: Directive, finding: Finding) -> bool:
    loc = finding.location
    if loc is None or loc.path != directive.path or finding.family in UNSUPPRESSIBLE_FAMILIES:
        return False
    if directive.line not in (loc.line, loc.line - 1):
        return False
    return any(r == finding.rule or r == finding.family for r in directive.rules)


def _meta(rule: str, severity: Severity, title: str, message: str, d: Directive) -> Finding:
    return Finding(
        rule=f"suppression/{rule}",
        severity=severity,
        title=title,
        message=message,
        location=Location(d.path, d.line, d.line),
        anchor=f"{d.path}:{','.join(d.rules)}:{d.reason}",
    )


def apply_suppressions(findings: list[Finding], changeset: ChangeSet | None) -> tuple[list[Finding], list[Suppressed]]:
    if changeset is None:
        return findings, []
    directives = [d for f in changeset.files for d in _directives(f)]
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[Directive] = set()
    for finding in findings:
        hit = next((d for d in directives if d.reason and _matches(d, finding)), None)
        if hit is None:
            kept.append(finding)
        else:
            used.add(hit)
            suppressed.append(Suppressed(finding, hit))
    for d in directives:
        if not d.rules:
            kept.append(_meta("malformed", Severity.SHOULD_FIX, "Suppression names no rule",
                              "A reviewer-ignore comment must name the rule it silences: "
                              "`reviewer-ignore: <family>/<check> -- <reason>`.", d))
        elif not d.reason:
            kept.append(_meta("missing-reason", Severity.SHOULD_FIX, "Suppression without a reason",
                              f"`reviewer-ignore: {', '.join(d.rules)}` gives no reason after `--`, so it silences "
                              "nothing: say why the finding does not apply.", d))
        elif d not in used:
            kept.append(_meta("unused", Severity.CONSIDER, "Unused suppression",
                              f"`reviewer-ignore: {', '.join(d.rules)}` matches no finding on this line or the next; "
                              "remove it so it cannot hide a future defect.", d))
    return kept, suppressed


def _touches(changeset: ChangeSet, loc: Location) -> bool:
    f = changeset.file(loc.path)
    return f is not None and f.touches(loc.line, loc.end_line)


def in_scope(finding: Finding, changeset: ChangeSet | None, scope: Scope) -> bool:
    loc = finding.location
    if scope is Scope.ALL or loc is None or changeset is None:
        return True
    if scope is Scope.FILE:
        return changeset.file(loc.path) is not None or any(changeset.file(r.path) for r in finding.related)
    # Cross-file invariants: an unchanged line is in scope when a related
    # location the patch changed is what makes it wrong.
    return _touches(changeset, loc) or any(_touches(changeset, r) for r in finding.related)
