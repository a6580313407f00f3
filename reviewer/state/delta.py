"""Deltas between two reviews of the same change: resolved, new, still open.

Findings are matched by their stable id (rule + path + normalised syntax),
never by line number, so a defect that merely moved stays "still open".
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Mapping

from reviewer.errors import ReviewerError
from reviewer.report.model import Delta, DeltaItem, Report, Severity
from reviewer.report.json_format import SCHEMA, to_dict

DELTA_SCHEMA = "reviewer-delta/1"
_HEX = frozenset("0123456789abcdef")
SEVERITIES = tuple(s.value for s in Severity)

# (field, test, what the value must be). Only the fields a delta reads are
# checked, each as the `reviewer-report/1` contract (DESIGN.md) defines it:
# a previous report is input from outside, and anything else in it is
# never read.
Rule = tuple[str, Callable[[Any], bool], str]


def _hex(length: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and len(v) == length and set(v) <= _HEX


def _text(v: Any) -> bool:
    return isinstance(v, str)


def _name(v: Any) -> bool:
    return isinstance(v, str) and v != ""


def _line(v: Any) -> bool:
    # bool is an int in Python, never in the contract.
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


_TOP: tuple[Rule, ...] = (("base", _hex(40), "a 40-hex commit id"),)
_PATCH: tuple[Rule, ...] = (("name", _text, "a string"), ("sha256", _hex(64), "64 lowercase hex digits"))
_FINDING: tuple[Rule, ...] = (
    ("id", _name, "a non-empty string"),
    ("rule", _name, "a non-empty string"),
    ("severity", lambda v: v in SEVERITIES, f"one of {', '.join(SEVERITIES)}"),
    ("title", _text, "a string"),
    ("path", lambda v: v is None or isinstance(v, str), "a string or null"),
    ("line", _line, "an integer or null"),
)


def _check(obj: Mapping[str, Any], rules: tuple[Rule, ...], where: str) -> None:
    for field, test, must in rules:
        if field not in obj:
            raise ValueError(f"{where}{field} is missing")
        if not test(obj[field]):
            raise ValueError(f"{where}{field} must be {must}")


def validate_report(data: Any) -> None:
    """Raise ValueError naming the first field that breaks the contract."""
    if not isinstance(data, dict):
        raise ValueError(f"not a {SCHEMA} report: a JSON object is expected (write one with --format json=PATH)")
    if data.get("schema") != SCHEMA:
        raise ValueError(f"not a {SCHEMA} report: schema must be {SCHEMA!r} (write one with --format json=PATH)")
    _check(data, _TOP, "")
    if not isinstance(data.get("patch"), dict):
        raise ValueError("patch must be an object")
    _check(data["patch"], _PATCH, "patch.")
    findings = data.get("findings")
    if not isinstance(findings, list):
        raise ValueError("findings must be a list")
    for index, finding in enumerate(findings):
        if not isinstance(finding, dict):
            raise ValueError(f"findings[{index}] must be an object")
        _check(finding, _FINDING, f"findings[{index}].")


def load_report(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReviewerError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        # ValueError: malformed JSON, bad UTF-8, or an integer past Python's digit limit.
        raise ReviewerError(f"{path}: not a JSON report ({exc})") from None
    except RecursionError:
        raise ReviewerError(f"{path}: not a JSON report (nested too deeply)") from None
    try:
        validate_report(data)
    except ValueError as exc:
        raise ReviewerError(f"{path}: {exc}") from None
    return data


def _items(report: Mapping[str, Any]) -> dict[str, DeltaItem]:
    items = {}
    for f in report["findings"]:
        items[f["id"]] = DeltaItem(f["id"], f["rule"], f["severity"], f["title"], f["path"], f["line"])
    return items


def describe(report: Mapping[str, Any]) -> str:
    """How a validated report is named in a delta: patch, sha256, base."""
    patch = report["patch"]
    return f"{patch['name']} (sha256 {patch['sha256'][:12]}) on base {report['base'][:12]}"


def compare(old: Mapping[str, Any], new: Mapping[str, Any]) -> Delta:
    before, after = _items(old), _items(new)
    key = lambda item: (item.path or "", item.line or 0, item.rule, item.id)  # noqa: E731
    return Delta(
        previous=describe(old),
        resolved=tuple(sorted((before[i] for i in before.keys() - after.keys()), key=key)),
        new=tuple(sorted((after[i] for i in after.keys() - before.keys()), key=key)),
        still_open=tuple(sorted((after[i] for i in after.keys() & before.keys()), key=key)),
    )


def with_delta(report: Report, previous: Mapping[str, Any]) -> Report:
    # A previous report may also come from the state store, not load_report.
    try:
        validate_report(previous)
    except ValueError as exc:
        raise ReviewerError(f"previous report: {exc}") from None
    return replace(report, delta=compare(previous, to_dict(report)))


def _item(i: DeltaItem) -> dict[str, Any]:
    return {"id": i.id, "rule": i.rule, "severity": i.severity, "title": i.title, "path": i.path, "line": i.line}


def delta_to_dict(delta: Delta, current: str) -> dict[str, Any]:
    """`reviewer diff --format json`: the delta, items shaped as in a report's `delta`."""
    return {
        "schema": DELTA_SCHEMA,
        "previous": delta.previous,
        "current": current,
        "resolved": [_item(i) for i in delta.resolved],
        "new": [_item(i) for i in delta.new],
        "still_open": [_item(i) for i in delta.still_open],
    }


def render_json(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    data = delta_to_dict(compare(old, new), describe(new))
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # A report read from outside may hold a lone surrogate (`"\\udc80"`): escaped, it stays printable.
        text = json.dumps(data, indent=2) + "\n"
    return text
