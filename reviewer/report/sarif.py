"""`--format sarif`: SARIF 2.1.0 for code scanning (GitHub and others).

Findings without a file location (failed integrity checks, rule errors)
cannot be results, so they travel as tool execution notifications, as does
every other cause of a DO-NOT-MERGE (a family that errored without a finding);
the verdict, its causes and the inputs are in the run's properties. A
suppression the patch added but was not allowed to apply never suppresses
the result: the result says it was requested and refused.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from reviewer.display import printable
from reviewer.engine.api import INTERNAL_ERROR
from reviewer.report.model import (
    CheckStatus,
    Finding,
    InvariantStatus,
    Location,
    Report,
    Severity,
    SuppressedFinding,
)

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
LEVEL = {Severity.MUST_FIX: "error", Severity.SHOULD_FIX: "warning", Severity.CONSIDER: "note"}


# Where docs/rules/ of the version that rendered the report is published. The Action
# sets it to its own repository at its own commit; nothing else is ever guessed.
RULE_DOCS_ENV = "REVIEWER_RULE_DOCS_URL"


def rule_docs_base() -> str | None:
    """The base URL of the rules reference from REVIEWER_RULE_DOCS_URL, ending in `/`;
    None when it is unset or empty, and then no rule carries a `helpUri`: a link is
    made only to a place someone said holds these very pages. A value that is not an
    http(s) URL is an error (exit 2, one line), never a broken link in the report."""
    import os

    from reviewer.inputs.pullrequest import web_url

    value = os.environ.get(RULE_DOCS_ENV, "")
    return web_url(value, RULE_DOCS_ENV) + "/" if value else None


def _rule_docs() -> dict[str, dict[str, Any]]:
    """SARIF rule metadata of every check the registry knows: each family's checks
    and internal-error, the integrity gate and the suppression checks, each with
    the `--explain` text as plain text and Markdown and, when the reference's
    published location is known (`rule_docs_base`), a link to its section."""
    from reviewer.engine.explain import help_markdown, help_paths
    from reviewer.engine.registry import catalog, discover

    families = discover()
    base = rule_docs_base()
    uris = help_paths(families)
    docs: dict[str, dict[str, Any]] = {}
    for group in catalog(families):
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
                "help": {"text": help_text, "markdown": help_markdown(group, spec)},
                **({"helpUri": base + uris[spec.id]} if base is not None else {}),
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


def _refused_note(s: SuppressedFinding) -> str:
    return (
        f"This patch adds a suppression at {s.path}:{s.line} for this {s.finding.severity.value} finding "
        f"({printable(s.reason)}); the base's configuration does not let a patch silence it, so it was refused "
        "and the finding still counts."
    )


def _notifications(report: Report, index: dict[str, int]) -> list[dict[str, Any]]:
    """One notification per finding without a location and per cause of the verdict
    no such finding names already: a failed check, a family that errored (a parse
    error over changed lines errs without any finding)."""
    out: list[dict[str, Any]] = []
    named: set[str] = set()

    def add(level: str, rule_id: str, text: str) -> None:
        note: dict[str, Any] = {"level": level, "message": {"text": text}, "descriptor": {"id": rule_id}}
        if rule_id in index:
            note["associatedRule"] = {"id": rule_id, "index": index[rule_id]}
        out.append(note)
        named.add(rule_id)

    for f in report.findings:
        if f.location is None:
            add(LEVEL[f.severity], f.rule, f"{f.rule}: {f.title}. {f.message}")
    for c in report.checks:
        if c.status is CheckStatus.FAIL and c.id not in named:
            add("error", c.id, f"integrity check {c.id} failed: {c.detail}")
    for i in report.invariants:
        rule_id = f"{i.id}/{INTERNAL_ERROR}"
        if i.status is InvariantStatus.ERROR and rule_id not in named:
            add("error", rule_id, f"rule family {i.id} could not be checked: {i.summary}")
    return out


def to_dict(report: Report) -> dict[str, Any]:
    docs = _rule_docs()
    located = [f for f in report.findings if f.location is not None]
    silenced = [s for s in report.suppressed if s.honoured and s.finding.location is not None]
    # A refused suppression's finding is in report.findings too: it is one
    # result, unsuppressed, that says a suppression was requested.
    refused = {s.finding.id: s for s in report.suppressed if not s.honoured and s.finding.location is not None}
    listed = {f.id for f in located}
    # Never lose a blocking finding: a refused one missing from the findings is shown as a result anyway.
    located += [s.finding for fid, s in sorted(refused.items()) if fid not in listed]
    earlier = [f for f in report.pre_existing if f.location is not None]
    owned = [a for a in report.accepted if a.finding.location is not None]
    used = sorted({f.rule for f in located} | {s.finding.rule for s in silenced} | {f.rule for f in earlier}
                  | {a.finding.rule for a in owned})
    everything = {f.rule: f for f in [*located, *(s.finding for s in silenced), *earlier, *(a.finding for a in owned)]}
    rules = [docs.get(rid) or _generic_rule(everything[rid]) for rid in sorted(set(docs) | set(used))]
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for f in located:
        result = _result(f, index[f.rule])
        request = refused.get(f.id)
        if request is not None:
            note = _refused_note(request)
            result["message"]["text"] += " " + note
            result["properties"]["suppressionRequest"] = {
                "addedByPatch": True,
                "honoured": False,
                "path": request.path,
                "line": request.line,
                "justification": printable(request.reason),
                "note": note,
            }
        results.append(result)
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
        justification = printable(s.reason) + (" (suppression added by this patch)" if s.added_by_patch else "")
        result = _result(s.finding, index[s.finding.rule],
                         {"kind": "inSource", "status": "accepted", "justification": justification})
        if s.added_by_patch:
            result["properties"]["suppressionAddedByPatch"] = True
        results.append(result)
    # Accepted by the base's [[accept]]: an external suppression (configuration, not the code under review).
    for a in owned:
        until = f" (until {a.until})" if a.until else ""
        results.append(_result(a.finding, index[a.finding.rule], {
            "kind": "external", "status": "accepted",
            "justification": printable(a.reason) + f" (accepted by the base's reviewer.toml{until})"}))
    errored = any(i.status is InvariantStatus.ERROR for i in report.invariants)
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
                    {"executionSuccessful": not errored, "toolExecutionNotifications": _notifications(report, index)}
                ],
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "repository root"}}},
                "results": results,
                "properties": {
                    "verdict": report.verdict.value,
                    "causes": list(report.causes()),
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
