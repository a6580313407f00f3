"""`--format comment`: a short pull-request comment a workflow keeps updating.

The hidden marker lets a workflow find and edit its one sticky comment
instead of posting a new one per push. GitHub refuses a comment body over
65,536 characters, so the lists are cut to fit, with a note saying how much
was left out and where the full report is; the marker stays the first line
and the verdict the last.
"""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.report.markdown import banner, code, safe_url, text, where
from reviewer.text import plural
from reviewer.report.model import Links, Location, Report, Severity, SuppressedFinding

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
    """A header and its list; `kind` names what an item is, singular and plural, for the note."""

    header: tuple[str, ...]
    items: tuple[str, ...]
    kind: tuple[str, str]


def size(body: str) -> int:
    """Length as the most demanding counter sees it (UTF-16 code units)."""
    return len(body.encode("utf-16-le")) // 2


def _clip(value: object) -> str:
    s = str(value)
    return s if len(s) <= FIELD_LIMIT else s[:FIELD_LIMIT] + "…"


def _at(path: str, line: int, end_line: int, links: Links | None) -> str:
    """A location, clipped: a path the patch chose cannot fill the comment."""
    return where(Location(path, line, end_line), links, clip=FIELD_LIMIT)


def _why(report: Report) -> _Section | None:
    reasons = report.causes()
    if not reasons:
        return None
    items = tuple(f"- {text(_clip(reason))}" for reason in reasons)
    return _Section(("**Why DO-NOT-MERGE:**",), items, ("reason", "reasons"))


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
    return _Section(header, tuple(items), ("change since the previous review", "changes since the previous review"))


def _must_fix(report: Report) -> _Section | None:
    located = [f for f in report.by_severity(Severity.MUST_FIX) if f.location is not None]
    if not located:
        return None
    # A finding that follows from a root cause is nested under it (they are listed together).
    items = tuple(
        f"{'  - ↳ ' if f.id in report.roots else '- '}{text(_clip(f.title))} — {code(f.rule)} at "
        f"{_at(f.location.path, f.location.line, f.location.end_line, report.links)}"
        for f in located if f.location is not None
    )
    return _Section(("**Must fix:**",), items, ("must-fix finding", "must-fix findings"))


def _added_suppressions(report: Report) -> _Section | None:
    """Every suppression the patch adds, honoured or refused: the author silencing
    a finding is what a maintainer must see first."""
    by_patch = [s for s in report.suppressed if s.added_by_patch]
    if not by_patch:
        return None
    refused = sum(1 for s in by_patch if not s.honoured)
    still = "its finding still blocks" if refused == 1 else "their findings still block"
    header = f"**{plural(len(by_patch), 'suppression')} this patch adds" + (
        f" ({refused} not honoured: {still}):**" if refused else ":**")
    # The reason is the patch author's own words: a code span keeps it inert.
    items = tuple(f"- {code(s.finding.rule)} at {_at(s.path, s.line, s.line, report.links)}{_refusal(s)}: "
                  f"{code(_clip(s.reason))}" for s in by_patch)
    return _Section((header,), items, ("suppression this patch adds", "suppressions this patch adds"))


def _refusal(s: SuppressedFinding) -> str:
    if s.honoured:
        return ""
    return (f" — not honoured: {s.finding.severity.value} findings cannot be silenced by the patch that adds "
            "the suppression")


def _accepted(report: Report) -> _Section | None:
    if not report.accepted:
        return None
    items = tuple(
        f"- {text(_clip(a.finding.title))} — {code(a.finding.rule)}"
        + (f" at {_at(a.finding.location.path, a.finding.location.line, a.finding.location.end_line, report.links)}"
           if a.finding.location is not None else "")
        + (f" (until {a.until})" if a.until else "") + f": {text(_clip(a.reason))}"
        for a in report.accepted
    )
    return _Section(("**Accepted by the base's `reviewer.toml`** (not counted):",), items,
                    ("accepted finding", "accepted findings"))


def _summary(report: Report) -> str:
    """Where the full report is: the CI run's job summary, or, run by hand, the Markdown report."""
    run = report.links.run if report.links is not None else None
    if run is None:
        return "in the Markdown report (`--format markdown`)"
    url = safe_url(run)
    return f"in the [job summary]({url})" if url else "in the job summary"


def _note(report: Report, left_out: dict[tuple[str, str], int]) -> str:
    if not left_out:
        return f"The full report is {_summary(report)}."
    listed = ", ".join(f"{n} {kind[0] if n == 1 else kind[1]}" for kind, n in left_out.items())
    return (f"**Not listed here**, to stay under GitHub's {GITHUB_LIMIT:,}-character comment limit: {listed}. "
            f"The full report is {_summary(report)}, and all findings are in the SARIF and JSON outputs.")


def _fit(sections: list[_Section], room: int) -> tuple[dict[tuple[str, str], tuple[str, ...]], dict[tuple[str, str], int]]:
    """Items each section keeps and how many it left out, by section kind.

    Sections are given most important first; each keeps the longest prefix
    of its items that still fits, so what is shown keeps its order.
    """
    kept: dict[tuple[str, str], tuple[str, ...]] = {}
    left_out: dict[tuple[str, str], int] = {}
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


def _shown(section: _Section | None, kept: dict[tuple[str, str], tuple[str, ...]]) -> list[str]:
    return [] if section is None else [*section.header, *kept[section.kind], ""]


def render(report: Report) -> str:
    head = [MARKER, banner(report), ""]
    why, delta, must, silenced = _why(report), _delta(report), _must_fix(report), _added_suppressions(report)
    accepted = _accepted(report)
    # What a maintainer must not miss gets the room first: why the merge is
    # blocked, then what the author silenced, then must-fix findings; the
    # delta (shown early, since it is what changed since the last push) last.
    by_priority = [s for s in (why, silenced, must, delta, accepted) if s is not None]
    verdict = "\n\n" + report.verdict.value + "\n"
    worst_note = _note(report, {s.kind: len(s.items) for s in by_priority})
    fixed = size("\n".join(head) + "\n" + worst_note + verdict)
    kept, left_out = _fit(by_priority, LIMIT - fixed)
    lines = [*head, *_shown(why, kept), *_shown(delta, kept), *_shown(must, kept), *_shown(silenced, kept),
             *_shown(accepted, kept)]
    lines.append(_note(report, left_out))
    return "\n".join(lines) + verdict
