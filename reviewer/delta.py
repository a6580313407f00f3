"""Deltas between two reviews of the same change: resolved, new, still open.

Findings are matched by their stable id (rule + path + normalised syntax),
never by line number, so a defect that merely moved stays "still open".
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from reviewer.errors import ReviewerError
from reviewer.model import Delta, DeltaItem, Report
from reviewer.report.json_format import SCHEMA, to_dict


def load_report(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReviewerError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReviewerError(f"{path}: not a JSON report ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("findings"), list):
        raise ReviewerError(f"{path}: not a {SCHEMA} report (write one with --format json=PATH)")
    return data


def _items(report: Mapping[str, Any]) -> dict[str, DeltaItem]:
    items = {}
    for f in report["findings"]:
        items[f["id"]] = DeltaItem(f["id"], f["rule"], f["severity"], f["title"], f.get("path"), f.get("line"))
    return items


def describe(report: Mapping[str, Any]) -> str:
    patch = report.get("patch", {})
    return f"{patch.get('name', 'patch')} (sha256 {str(patch.get('sha256', ''))[:12]}) on base {str(report.get('base', ''))[:12]}"


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
    return replace(report, delta=compare(previous, to_dict(report)))
