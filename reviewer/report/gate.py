"""`reviewer verify`: the integrity gate's result, never a merge verdict.

The gate proves the inputs are what they claim (base exists, hashes, clean
apply, file count, safe paths, limits); it runs no rule, so it can say only
whether the gate passed. The Markdown ends with exactly `GATE PASSED` or
`GATE FAILED`, the JSON is a `reviewer-gate/1` object, `github` annotates
each failed check. SARIF and the pull-request comment carry a review's
findings and verdict: a gate-only run refuses them rather than pass off a
gate result as a review.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from reviewer.errors import ReviewerError
from reviewer.report.github import escape_data, escape_property
from reviewer.report.markdown import cell, code, text
from reviewer.report.model import CheckStatus, Report

SCHEMA = "reviewer-gate/1"
FORMATS = ("markdown", "json", "github")
REFUSED = {
    "sarif": "SARIF carries a review's rule results",
    "comment": "the pull-request comment carries a review's verdict",
}
PASSED, FAILED = "GATE PASSED", "GATE FAILED"
_ICON = {CheckStatus.PASS: "✅ pass", CheckStatus.FAIL: "❌ fail", CheckStatus.SKIP: "➖ skip"}


def passed(report: Report) -> bool:
    return not any(c.status is CheckStatus.FAIL for c in report.checks)


def _line(report: Report) -> str:
    return PASSED if passed(report) else FAILED


def to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": report.tool_name, "version": report.tool_version},
        "gate": "pass" if passed(report) else "fail",
        "base": report.base,
        "patch": {
            "name": report.patch.name,
            "sha256": report.patch.sha256,
            "files": report.patch.files,
            "added": report.patch.added,
            "removed": report.patch.removed,
        },
        "checks": [{"id": c.id, "status": c.status.value, "detail": c.detail} for c in report.checks],
        "files": [{"path": f.path, "old_path": f.old_path, "status": f.status} for f in report.files],
    }


def render_json(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"


def render_markdown(report: Report) -> str:
    failed = [c for c in report.checks if c.status is CheckStatus.FAIL]
    lines = [
        f"# Integrity gate of {code(report.patch.name)}",
        "",
        f"Base {code(report.base)}, patch sha256 {code(report.patch.sha256)}, "
        f"{report.patch.files} file{'' if report.patch.files == 1 else 's'} "
        f"(+{report.patch.added} −{report.patch.removed}). No rule ran: this is not a review.",
        "",
        "| check | status | detail |",
        "|---|---|---|",
    ]
    lines += [f"| {c.id} | {_ICON[c.status]} | {cell(c.detail)} |" for c in report.checks]
    lines.append("")
    if failed:
        noun = "check" if len(failed) == 1 else "checks"
        lines.append(f"{len(failed)} {noun} failed: " + ", ".join(text(c.id) for c in failed) + ".")
    else:
        lines.append(f"Every check passed or was skipped ({len(report.checks)} checks).")
    # Appended last, after everything interpolated, so no detail can be the final line.
    return "\n".join(lines) + "\n\n" + _line(report) + "\n"


def render_github(report: Report) -> str:
    out = [
        f"::error title={escape_property(c.id)}::{escape_data(c.detail)}"
        for c in report.checks if c.status is CheckStatus.FAIL
    ]
    summary = f"reviewer {report.tool_version}: {_line(report).lower()} ({len(report.checks)} checks; no rule ran)"
    out.append(("::notice::" if passed(report) else "::error::") + escape_data(summary))
    return "\n".join(out) + "\n"


def refuse(fmt: str) -> None:
    """Raise the one-line error for a format a gate-only run has no form in."""
    if fmt in REFUSED:
        raise ReviewerError(
            f"verify --format {fmt}: {REFUSED[fmt]}, and verify runs no rule; use {', '.join(FORMATS)} "
            "(or `reviewer review` for the full review)"
        )


def renderer(fmt: str) -> Callable[[Report], str]:
    refuse(fmt)
    return {"markdown": render_markdown, "json": render_json, "github": render_github}[fmt]
