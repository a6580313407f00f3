"""`--format sarif`: SARIF 2.1.0 for code scanning (GitHub and others).

Findings without a file location (failed integrity checks, rule errors)
cannot be results, so they travel as tool execution notifications; the
verdict and inputs are in the run's properties.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from reviewer.report.model import Finding, Location, Report, Severity

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {Severity.MUST_FIX: "error", Severity.SHOULD_FIX: "warning", Severity.CONSIDER: "note"}


def _rule_docs() -> dict[str, dict[str, Any]]:
    """SARIF rule metadata of every check the registry knows: each family's checks
    and internal-error, the integrity gate and the suppression checks."""
    from reviewer.engine.registry import catalog, discover

    docs: dict[str, dict[str, Any]] = {}
    for group in catalog(discover()):
        for spec in group.checks:
            help_text = "\n\n".join(
                part for part in (
                    spec.summary,
                    f"Why: {spec.why}" if spec.why else "",
                    f"Bad:\n{spec.bad.strip()}" if spec.bad else "",
                    f"Good:\n{spec.good.strip()}" if spec.good else "",
                    f"Configuration: {group.locked_for(spec.id)}." if group.locked_for(spec.id) else "",
                ) if part
            )
            docs[spec.id] = {
                "id": spec.id,
                "name": spec.id.replace("/", "."),
                "shortDescription": {"text": spec.title},
                "fullDescription": {"text": spec.summary},
                "help": {"text": help_text},
                "defaultConfiguration": {"level": LEVEL[spec.severity]},
                "properties": {"tags": [group.id], "severity": spec.severity.value},
            }
    return docs


def _generic_rule(f: Finding) -> dict[str, Any]:
    """A rule the registry does not document (a family passed in by a caller, not discovered)."""
    return {
        "id": f.rule,
        "name": f.rule.replace("/", "."),
        "shortDescription": {"text": f.title},
        "fullDescription": {"text": f.title},
        "help": {"text": f.title},
        "defaultConfiguration": {"level": LEVEL[f.severity]},
        "properties": {"tags": [f.family], "severity": f.severity.value},
    }


def artifact_uri(path: str) -> str:
    """`path` as a relative reference (RFC 3986) that resolves against %SRCROOT%.

    Everything but `/` and unreserved characters is percent-encoded, so a
    space, `#`, `?` or `%` stays part of the path, and a first segment like
    `https:x.ts` cannot read as a scheme (its `:` becomes `%3A`). Leading
    slashes are encoded too: `//host/x` or `/etc/x` would leave the root.
    """
    stripped = path.lstrip("/")
    return "%2F" * (len(path) - len(stripped)) + quote(stripped, safe="/")


def _physical(loc: Location) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": artifact_uri(loc.path), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": max(1, loc.line), "endLine": max(1, loc.end_line, loc.line)},
    }


def _message(f: Finding) -> str:
    text = f"{f.title}. {f.message}"
    if f.failure_sequence:
        text += " Failure sequence: " + " → ".join(f.failure_sequence) + "."
    return text


def _result(f: Finding, index: int, suppression: dict[str, Any] | None = None) -> dict[str, Any]:
    assert f.location is not None
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVEL[f.severity],
        "message": {"text": _message(f)},
        "locations": [{"physicalLocation": _physical(f.location)}],
        "partialFingerprints": {"primaryLocationLineHash": f"{f.id}:1"},
        "properties": {"severity": f.severity.value, "findingId": f.id},
    }
    if f.related:
        result["relatedLocations"] = [
            {"id": i, "physicalLocation": _physical(r), "message": {"text": r.note or "related"}}
            for i, r in enumerate(f.related, start=1)
        ]
    if suppression:
        result["suppressions"] = [suppression]
    return result


def to_dict(report: Report) -> dict[str, Any]:
    docs = _rule_docs()
    located = [f for f in report.findings if f.location is not None]
    silenced = [s for s in report.suppressed if s.finding.location is not None]
    earlier = [f for f in report.pre_existing if f.location is not None]
    used = sorted({f.rule for f in located} | {s.finding.rule for s in silenced} | {f.rule for f in earlier})
    everything = {f.rule: f for f in [*located, *(s.finding for s in silenced), *earlier]}
    rules = [docs.get(rid) or _generic_rule(everything[rid]) for rid in sorted(set(docs) | set(used))]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = [_result(f, index[f.rule]) for f in located]
    if report.delta is not None:
        fresh = {d.id for d in report.delta.new}
        for result in results:
            result["baselineState"] = "new" if result["properties"]["findingId"] in fresh else "unchanged"
    # Outside the change: shown as notes the patch did not introduce, never as its alerts.
    for f in earlier:
        result = _result(f, index[f.rule])
        result["level"] = "note"
        result["baselineState"] = "unchanged"
        result["properties"]["preExisting"] = True
        results.append(result)
    for s in silenced:
        justification = s.reason + (" (suppression added by this patch)" if s.added_by_patch else "")
        results.append(_result(s.finding, index[s.finding.rule], {"kind": "inSource", "justification": justification}))
    notifications = [
        {
            "level": LEVEL[f.severity],
            "message": {"text": f"{f.rule}: {f.title}. {f.message}"},
            "descriptor": {"id": f.rule},
        }
        for f in report.findings
        if f.location is None
    ]
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": report.tool_name,
                        "version": report.tool_version,
                        "semanticVersion": report.tool_version,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {"executionSuccessful": True, "toolExecutionNotifications": notifications}
                ],
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "repository root"}}},
                "results": results,
                "properties": {
                    "verdict": report.verdict.value,
                    "base": report.base,
                    "patchSha256": report.patch.sha256,
                    "rules": report.ruleset_version,
                    **({"delta": {
                        "previous": report.delta.previous,
                        "resolved": [d.id for d in report.delta.resolved],
                        "new": [d.id for d in report.delta.new],
                        "stillOpen": [d.id for d in report.delta.still_open],
                    }} if report.delta is not None else {}),
                },
            }
        ],
    }


def render(report: Report) -> str:
    return json.dumps(to_dict(report), indent=2, ensure_ascii=False) + "\n"
