"""`--format json`: the `reviewer-report/1` contract of DESIGN.md."""

from __future__ import annotations

import json
from typing import Any

from reviewer.report.model import AcceptedFinding, Finding, Location, Report

SCHEMA = "reviewer-report/1"


def _location(loc: Location) -> dict[str, Any]:
    return {"path": loc.path, "line": loc.line, "end_line": loc.end_line, "note": loc.note}


def _finding(f: Finding, report: Report) -> dict[str, Any]:
    loc = f.location
    out = {
        "id": f.id,
        "rule": f.rule,
        "severity": f.severity.value,
        "title": f.title,
        "message": f.message,
        "path": loc.path if loc else None,
        "line": loc.line if loc else None,
        "end_line": loc.end_line if loc else None,
        "related": [_location(r) for r in f.related],
        "failure_sequence": list(f.failure_sequence),
    }
    out.update(impact=report.impact(f).value, root=report.roots.get(f.id), accepted=None, acceptance_expired=None)
    return out


def _acceptance(a: AcceptedFinding) -> dict[str, Any]:
    return {"reason": a.reason, "until": a.until}


def _findings(report: Report) -> list[dict[str, Any]]:
    expired = {a.finding.id: a for a in report.expired}
    out = []
    for f in report.findings:
        item = _finding(f, report)
        if f.id in expired:
            item["acceptance_expired"] = _acceptance(expired[f.id])
        out.append(item)
    for a in report.accepted:
        out.append({**_finding(a.finding, report), "accepted": _acceptance(a)})
    return out


def _delta(report: Report) -> dict[str, Any] | None:
    if report.delta is None:
        return None
    item = lambda i: {"id": i.id, "rule": i.rule, "severity": i.severity, "title": i.title, "path": i.path, "line": i.line}  # noqa: E731
    return {
        "previous": report.delta.previous,
        "resolved": [item(i) for i in report.delta.resolved],
        "new": [item(i) for i in report.delta.new],
        "still_open": [item(i) for i in report.delta.still_open],
    }


def to_dict(report: Report) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": report.tool_name, "version": report.tool_version, "rules": report.ruleset_version},
        "verdict": report.verdict.value,
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
        "invariants": [
            {"id": i.id, "status": i.status.value, "findings": [f.id for f in i.findings],
             "pre_existing": [f.id for f in i.pre_existing], "suppressed": i.suppressed, "accepted": i.accepted,
             "summary": i.summary,
             "vocabulary": i.vocabulary}
            for i in report.invariants
        ],
        "findings": _findings(report),
        "pre_existing": [_finding(f, report) for f in report.pre_existing],
        "suppressed": [
            {"finding": f"{s.finding.id}", "rule": s.finding.rule, "path": s.path, "line": s.line,
             "reason": s.reason, "added_by_patch": s.added_by_patch, "honoured": s.honoured}
            for s in report.suppressed
        ],
        "scope": report.scope,
        "judged_on": report.judged_on,
        "coverage": _coverage(report),
        "delta": _delta(report),
        "pull_request": None if report.pull_request is None else {
            "base_ref": report.pull_request.base_ref, "head_ref": report.pull_request.head_ref,
            "base": report.pull_request.base, "head": report.pull_request.head,
            "merge_base": report.pull_request.merge_base,
            "number": report.pull_request.number, "head_branch": report.pull_request.head_branch,
        },
        "links": None if report.links is None else {
            "repository": report.links.repository, "commit": report.links.commit, "run": report.links.run,
        },
    }


def render(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False, sort_keys=False) + "\n"


def _coverage(report: Report) -> dict[str, Any]:
    cov = report.coverage
    return {
        "families": cov.families,
        "examined": list(cov.examined),
        "not_examined": [{"id": i, "status": status, "why": why} for i, status, why in cov.not_examined],
    }
