"""Inline suppressions and review scope, applied after the rules ran.

    // reviewer-ignore: lease-renewal/lost-suppressed -- Lost is re-raised by the caller

on the reported line or the line before silences that one finding. The
reason is mandatory; a suppression the patch itself adds is shown as such
(a maintainer must see that the author silenced the bot), and silences only
the severities the base's configuration lets a patch silence
([suppressions] patch_may_silence): beyond those the request is listed but
refused, and the finding keeps blocking. Unused ones are reported;
integrity findings can never be silenced.
"""

from __future__ import annotations

import enum
import string
from dataclasses import dataclass, replace
from typing import Collection

from reviewer.change.changeset import ChangeSet, ChangedFile
from reviewer.report.model import Finding, Impact, Location, Severity
from reviewer.engine.api import CheckGroup, CheckSpec

MARKER = "reviewer-ignore"
_OPENERS = ("//", "#", "/*", "<!--")
_CLOSERS = ("*/", "-->")
_ID_START = frozenset(string.ascii_lowercase + string.digits)
_ID_CHARS = _ID_START | {"-"}
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
    # False: the patch added the directive for a severity it may not silence;
    # the finding stays among the kept ones and still counts.
    honoured: bool = True


def directive_body(line: str) -> str | None:
    """What follows `reviewer-ignore:` on a comment line, or None if the line has no directive.

    The first marker that follows a comment opener (whitespace allowed in
    between, and before the colon) wins; a trailing `*/` or `-->` closes the
    comment and is not part of the body. Plain string scans only: each
    character is looked at a bounded number of times, so a patched line full
    of spaces cannot stall the review (a backtracking regex here was cubic).
    """
    start = line.find(MARKER)
    while start != -1:
        end = start + len(MARKER)
        if _after_opener(line, start):
            colon = _skip_space(line, end)
            if colon < len(line) and line[colon] == ":":
                return _strip_closer(line[colon + 1 :])
        start = line.find(MARKER, end)
    return None


def _after_opener(line: str, marker: int) -> bool:
    before = marker
    while before > 0 and line[before - 1].isspace():
        before -= 1
    return line.endswith(_OPENERS, 0, before)


def _skip_space(line: str, index: int) -> int:
    while index < len(line) and line[index].isspace():
        index += 1
    return index


def _strip_closer(body: str) -> str:
    body = body.strip()
    for closer in _CLOSERS:
        if body.endswith(closer):
            return body[: -len(closer)].rstrip()
    return body


def _is_rule_id(token: str) -> bool:
    """`family` or `family/check`: lowercase ASCII letters, digits and inner dashes."""
    parts = token.split("/")
    return len(parts) <= 2 and all(p and p[0] in _ID_START and set(p) <= _ID_CHARS for p in parts)


def parse_directive(line: str) -> tuple[tuple[str, ...], str] | None:
    """(rule ids, reason) of a `reviewer-ignore` comment; reason is "" when `--` is missing."""
    body = directive_body(line)
    if body is None:
        return None
    rules_part, sep, reason = body.partition("--")
    rules = tuple(r for r in rules_part.replace(",", " ").split() if _is_rule_id(r))
    return rules, reason.strip() if sep else ""


def _directives(f: ChangedFile) -> list[Directive]:
    text = f.patched_text
    if text is None:
        return []
    found: list[Directive] = []
    # Numbered by "\n" alone, as git, tree-sitter and every finding number
    # lines: str.splitlines would also break at a form feed the patch adds.
    for number, line in enumerate(text.split("\n"), start=1):
        if MARKER not in line:
            continue
        parsed = parse_directive(line)
        if parsed is not None:
            rules, reason = parsed
            found.append(Directive(f.path, number, rules, reason, number in f.added_lines))
    return found


def _matches(directive: Directive, finding: Finding) -> bool:
    loc = finding.location
    if loc is None or loc.path != directive.path or finding.family in UNSUPPRESSIBLE_FAMILIES:
        return False
    if directive.line not in (loc.line, loc.line - 1):
        return False
    return any(r == finding.rule or r == finding.family for r in directive.rules)


def _meta(spec: CheckSpec, message: str, d: Directive) -> Finding:
    return Finding(
        rule=spec.id,
        severity=spec.severity,
        title=spec.title,
        message=message,
        location=Location(d.path, d.line, d.line),
        anchor=f"{d.path}:{','.join(d.rules)}:{d.reason}",
    )


def apply_suppressions(
    findings: list[Finding], changeset: ChangeSet | None, patch_may_silence: Collection[Severity]
) -> tuple[list[Finding], list[Suppressed]]:
    """(findings still reported, suppressions that matched a finding).

    A directive the patch adds silences a finding only if its severity is in
    `patch_may_silence` (from the base's configuration, never the patch's);
    otherwise the finding stays in the first list and the request is returned
    with `honoured=False`, so it is shown and still counts. Either way the
    directive was used: a refused request is not a stale one.
    """
    if changeset is None:
        return findings, []
    directives = [d for f in changeset.files for d in _directives(f)]
    # By (path, line): a finding is matched only from its own line and the one
    # before, so thousands of findings and directives stay a lookup each.
    at: dict[tuple[str, int], list[Directive]] = {}
    for d in directives:
        if d.reason:
            at.setdefault((d.path, d.line), []).append(d)
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    used: set[Directive] = set()
    for finding in findings:
        loc = finding.location
        near = [] if loc is None else [*at.get((loc.path, loc.line - 1), ()), *at.get((loc.path, loc.line), ())]
        matching = [d for d in near if _matches(d, finding)]
        if not matching:
            kept.append(finding)
            continue
        # A directive the base already had covers the finding even when the
        # patch adds another one beside it, but only for a finding the patch
        # has no hand in: when the patch wrote the silenced lines, or changed
        # a line the finding depends on (a related location: the constant a
        # bound folds from, the helper a handler calls), keeping the old
        # directive is the patch asking for silence, so it is judged as one
        # the patch added. Else moving new code under an old directive, or
        # raising a suppressed bound elsewhere, would silence anything.
        rewrote = loc is not None and (_touches(changeset, loc) or any(_touches(changeset, r) for r in finding.related))
        allowed = [d for d in matching
                   if not (d.added_by_patch or rewrote) or finding.severity in patch_may_silence]
        hit = (allowed or matching)[0]
        honoured = bool(allowed)
        if rewrote and not hit.added_by_patch:
            hit = replace(hit, added_by_patch=True)
        # Each of them matches a finding, so none is stale.
        used.update(matching)
        suppressed.append(Suppressed(finding, hit, honoured))
        if not honoured:
            kept.append(finding)
    for d in directives:
        if not d.rules:
            kept.append(_meta(MALFORMED, "A reviewer-ignore comment must name the rule it silences: "
                              "`reviewer-ignore: <family>/<check> -- <reason>`.", d))
        elif not d.reason:
            kept.append(_meta(MISSING_REASON,
                              f"`reviewer-ignore: {', '.join(d.rules)}` gives no reason after `--`, so it silences "
                              "nothing: say why the finding does not apply.", d))
        elif d not in used:
            kept.append(_meta(UNUSED,
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


# ------------------------------------------------------------------ what each check means
#
# `reviewer rules --explain suppression/<name>` and the SARIF rule metadata read
# these; `_meta` takes each finding's title and severity from them.

MALFORMED = CheckSpec(
    id="suppression/malformed",
    severity=Severity.SHOULD_FIX,
    impact=Impact.HYGIENE,
    title="Suppression names no rule",
    summary="A `reviewer-ignore:` comment names no rule id (`<family>` or `<family>/<check>`: lowercase letters, "
    "digits and dashes); it silences nothing.",
    why=(
        "A suppression is an audit record: which finding was silenced, where, and why. One that names no rule "
        "silences nothing but reads as if it did, and is usually a typo that leaves the finding it was meant "
        "for standing (or an attempt at a blanket ignore, which does not exist)."
    ),
    bad=(
        "// reviewer-ignore: -- Lost is re-raised by the caller\n"
        "// reviewer-ignore: Lease_Renewal -- Lost is re-raised by the caller"
    ),
    good="// reviewer-ignore: lease-renewal/lost-suppressed -- Lost is re-raised by the caller (runLoop)",
)

MISSING_REASON = CheckSpec(
    id="suppression/missing-reason",
    severity=Severity.SHOULD_FIX,
    impact=Impact.HYGIENE,
    title="Suppression without a reason",
    summary="A `reviewer-ignore:` comment names rules but gives no reason after `--`; it silences nothing.",
    why=(
        "The reason is the audit trail of silencing: a maintainer reading the report must see why a finding "
        "was judged not to apply, above all when the patch itself adds the suppression. Without one the "
        "finding stays reported, and this finding says why."
    ),
    bad=(
        "// reviewer-ignore: lease-renewal/lost-suppressed\n"
        "yield* cleanup.pipe(Effect.catchTag(\"Lost\", () => Effect.void))"
    ),
    good=(
        "// reviewer-ignore: lease-renewal/lost-suppressed -- Lost is re-raised by the caller (runLoop)\n"
        "yield* cleanup.pipe(Effect.catchTag(\"Lost\", () => Effect.void))"
    ),
)

UNUSED = CheckSpec(
    id="suppression/unused",
    severity=Severity.CONSIDER,
    impact=Impact.HYGIENE,
    title="Unused suppression",
    summary="A `reviewer-ignore:` comment with a reason matches no finding on its own line or the next one.",
    why=(
        "A stale suppression waits for the code around it to change: the next real defect reported on that "
        "line would be silenced by a reason written for something else, and nobody would re-judge it. Remove "
        "it once the finding it was written for is gone."
    ),
    bad=(
        "// reviewer-ignore: bounded-scan/unbounded -- recovery reads one session\n"
        "const rows = yield* db.select().from(SessionInputTable).where(eq(SessionInputTable.session_id, id))\n"
        "// a query pinned to one session is not a scan: nothing here is reported, nothing is silenced"
    ),
    good="const rows = yield* db.select().from(SessionInputTable).where(eq(SessionInputTable.session_id, id))",
)

SUPPRESSION = CheckGroup(
    id="suppression",
    summary=(
        "Checks on the `reviewer-ignore` comments themselves: each must name the rule it silences and say "
        "why after `--`, and one that matches no finding is reported. A suppression the patch itself adds "
        "silences only the severities the base's `[suppressions] patch_may_silence` allows (should-fix and "
        "consider by default): a must-fix finding it names stays blocking and is listed as a suppression "
        "requested by the patch. Integrity findings can never be silenced."
    ),
    checks=(MALFORMED, MISSING_REASON, UNUSED),
    locked=(
        "suppression checks can never be re-rated or disabled: they are the audit trail of silencing, "
        "and a silenced finding must stay visible and justified"
    ),
)
