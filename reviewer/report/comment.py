"""`--format comment`: a short pull-request comment a workflow keeps updating.

The hidden marker lets a workflow find and edit its one sticky comment
instead of posting a new one per push. GitHub refuses a comment body over
65,536 characters, so the lists are cut to fit, with a note saying how much
was left out and where the full report is; the marker stays the first line
and the verdict the last.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.report.model import Report, Severity
from reviewer.report.markdown import code, span, text

MARKER = "<!-- reviewer:sticky-comment -->"
GITHUB_LIMIT = 65_536
# Room for whatever a workflow wraps around the body, and for counting
# differences (we count UTF-16 code units, never fewer than GitHub's characters).
LIMIT = GITHUB_LIMIT - 4_096
# One patch-controlled value (a reason, a title) is clipped before escaping,
# so escaping never has to be cut and one value cannot fill the comment.
FIELD_LIMIT = 300


@dataclass(frozen=True)
class _Section:
    """A header and its list; `kind` names what an item is, for the note."""

    header: tuple[str, ...]
    items: tuple[str, ...]
    kind: str


def size(body: str) -> int:
    """Length as the most demanding counter sees it (UTF-16 code units)."""
    return len(body.encode("utf-16-le")) // 2


def _clip(value: object) -> str:
    s = str(value)
    return s if len(s) <= FIELD_LIMIT else s[:FIELD_LIMIT] + "…"


def _delta(report: Report) -> _Section | None:
    d = report.delta
    if d is None:
        return None
    header = (
        f"**Since the previous review** ({text(_clip(d.previous))}): {len(d.resolved)} resolved, {len(d.new)} new, "
        f"{len(d.still_open)} still open.",
    )
    items = [f"- ✅ resolved: {text(_clip(i.title))} — {code(_clip(i.rule))}" for i in d.resolved]
    items += [f"- 🆕 new: {text(_clip(i.title))} — {code(_clip(i.rule))}" for i in d.new]
    return _Section(header, tuple(items), "change(s) since the previous review")


def _failed_checks(report: Report) -> _Section | None:
    failed = [c for c in report.checks if c.status.value == "fail"]
    if not failed:
        return None
    items = tuple(f"- {code(c.id)}: {text(_clip(c.detail))}" for c in failed)
    return _Section(("**Integrity checks failed:**",), items, "failed check(s)")


def _must_fix(report: Report) -> _Section | None:
    located = [f for f in report.by_severity(Severity.MUST_FIX) if f.location is not None]
    if not located:
        return None
    items = tuple(f"- {text(_clip(f.title))} — {code(f.rule)} at {code(_clip(span(f.location)))}" for f in located)
    return _Section(("**Must fix:**",), items, "must-fix finding(s)")


def _added_suppressions(report: Report) -> _Section | None:
    by_patch = [s for s in report.suppressed if s.added_by_patch]
    if not by_patch:
        return None
    # The reason is the patch author's own words: a code span keeps it inert.
    items = tuple(
        f"- {code(s.finding.rule)} at {code(_clip(f'{s.path}:{s.line}'))}: {code(_clip(s.reason))}" for s in by_patch
    )
    return _Section((f"**{len(by_patch)} finding(s) silenced by suppressions this patch adds:**",), items,
                    "suppression(s) this patch adds")


def _note(left_out: dict[str, int]) -> str:
    if not left_out:
        return "The full report is in the job summary."
    listed = ", ".join(f"{n} {kind}" for kind, n in left_out.items())
    return (f"**Not listed here**, to stay under GitHub's {GITHUB_LIMIT:,}-character comment limit: {listed}. "
            "The full report is in the job summary and in the SARIF and JSON outputs.")


def _fit(sections: list[_Section], room: int) -> tuple[dict[str, tuple[str, ...]], dict[str, int]]:
    """Items each section keeps and how many it left out, by section kind.

    Sections are given most important first; each keeps the longest prefix
    of its items that still fits, so what is shown keeps its order.
    """
    kept: dict[str, tuple[str, ...]] = {}
    left_out: dict[str, int] = {}
    for section in sections:
        room -= sum(size(line) + 1 for line in section.header) + 1  # header lines and the blank line after
        count = 0
        for item in section.items:
            cost = size(item) + 1
            if cost > room:
                break
            room -= cost
            count += 1
        kept[section.kind] = section.items[:count]
        if count < len(section.items):
            left_out[section.kind] = len(section.items) - count
    return kept, left_out


def _shown(section: _Section | None, kept: dict[str, tuple[str, ...]]) -> list[str]:
    return [] if section is None else [*section.header, *kept[section.kind], ""]


def render(report: Report) -> str:
    icon = "✅" if report.verdict.value == "MERGE" else "⛔"
    counts = " · ".join(f"{report.count(s)} {s.value}" for s in Severity)
    if report.pre_existing:
        counts += f" · {len(report.pre_existing)} pre-existing (outside the change, not counted)"
    head = [MARKER, f"### {icon} reviewer: {report.verdict.value}", ""]
    tail = [f"{counts} · base {code(report.base[:12])} · patch {code(report.patch.sha256[:12])} · {report.patch.files} files", ""]
    delta, checks, must, silenced = _delta(report), _failed_checks(report), _must_fix(report), _added_suppressions(report)
    # What a maintainer must not miss gets the room first: failed integrity
    # checks, then what the author silenced, then must-fix findings; the delta
    # (shown first, since it is what changed since the last push) comes last.
    by_priority = [s for s in (checks, silenced, must, delta) if s is not None]
    verdict = "\n\n" + report.verdict.value + "\n"
    worst_note = _note({s.kind: len(s.items) for s in by_priority})
    fixed = size("\n".join(head + tail) + "\n" + worst_note + verdict)
    kept, left_out = _fit(by_priority, LIMIT - fixed)
    lines = [*head, *_shown(delta, kept), *tail, *_shown(checks, kept), *_shown(must, kept), *_shown(silenced, kept)]
    lines.append(_note(left_out))
    return "\n".join(lines) + verdict
