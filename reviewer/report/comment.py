"""`--format comment`: a short pull-request comment a workflow keeps updating.

The hidden marker lets a workflow find and edit its one sticky comment
instead of posting a new one per push.
"""

from __future__ import annotations

from reviewer.model import Report, Severity
from reviewer.report.markdown import code, span, text

MARKER = "<!-- reviewer:sticky-comment -->"


def render(report: Report) -> str:
    icon = "✅" if report.verdict.value == "MERGE" else "⛔"
    counts = " · ".join(f"{report.count(s)} {s.value}" for s in Severity)
    lines = [MARKER, f"### {icon} reviewer: {report.verdict.value}", ""]
    # The delta leads: what changed since the last push is what a maintainer reads first.
    tail = [f"{counts} · base {code(report.base[:12])} · patch {code(report.patch.sha256[:12])} · {report.patch.files} files", ""]
    if report.delta is not None:
        d = report.delta
        lines += [
            f"**Since the previous review** ({text(d.previous)}): {len(d.resolved)} resolved, {len(d.new)} new, "
            f"{len(d.still_open)} still open.",
        ]
        lines += [f"- ✅ resolved: {text(i.title)} — {code(i.rule)}" for i in d.resolved]
        lines += [f"- 🆕 new: {text(i.title)} — {code(i.rule)}" for i in d.new]
        lines.append("")
    lines += tail
    failed = [c for c in report.checks if c.status.value == "fail"]
    if failed:
        lines += ["**Integrity checks failed:**", *(f"- {code(c.id)}: {text(c.detail)}" for c in failed), ""]
    must = report.by_severity(Severity.MUST_FIX)
    located = [f for f in must if f.location is not None]
    if located:
        lines.append("**Must fix:**")
        lines += [f"- {text(f.title)} — {code(f.rule)} at {code(span(f.location))}" for f in located]
        lines.append("")
    by_patch = [s for s in report.suppressed if s.added_by_patch]
    if by_patch:
        lines.append(f"**{len(by_patch)} finding(s) silenced by suppressions this patch adds:**")
        lines += [f"- {code(s.finding.rule)} at {code(f'{s.path}:{s.line}')}: {text(s.reason)}" for s in by_patch]
        lines.append("")
    lines.append("The full report is in the job summary.")
    return "\n".join(lines) + "\n\n" + report.verdict.value + "\n"
