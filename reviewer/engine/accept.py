"""`[[accept]]`: an owner's way to accept one finding of the base, by its stable id, with a reason.

A suppression comment is the patch author's word in the code under review;
an acceptance is the maintainers' word in the base's configuration, so a
patch can never accept its own findings (configuration is never read from
the patch). An accepted finding is still reported, under its own heading and
with the reason, and never blocks. It stops being accepted by itself when its
id changes (the rule, the path or the normalised code it points at changed)
or when its `until` day has passed; an expired acceptance is listed beside
the finding, which blocks again. What configuration may never re-rate or
disable (integrity, suppression audits, a family's internal error) cannot be
accepted either: an entry naming one is ignored and the finding still blocks.
"""

from __future__ import annotations

import datetime
import os
from typing import Iterable

from reviewer.engine.api import INTERNAL_ERROR
from reviewer.engine.registry import locked_reason
from reviewer.inputs.config import Acceptance
from reviewer.report.model import AcceptedFinding, Finding


def today() -> datetime.date:
    """The day acceptances are judged against: UTC today, or the day of
    SOURCE_DATE_EPOCH when set (the reproducible-builds convention), so a
    report can be reproduced later byte for byte."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        return datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc).date()
    return datetime.datetime.now(datetime.timezone.utc).date()


def apply_accepts(
    findings: Iterable[Finding], accepts: tuple[Acceptance, ...], day: datetime.date
) -> tuple[list[Finding], list[AcceptedFinding], list[AcceptedFinding]]:
    """(findings that still count, accepted ones, ones whose acceptance expired: these also still count)."""
    by_id = {a.id: a for a in accepts}
    kept: list[Finding] = []
    accepted: list[AcceptedFinding] = []
    expired: list[AcceptedFinding] = []
    for f in findings:
        entry = by_id.get(f.id)
        if entry is None or _locked(f.rule):
            kept.append(f)
            continue
        shown = AcceptedFinding(f, entry.reason, entry.until.isoformat() if entry.until else None)
        if entry.expired(day):
            kept.append(f)
            expired.append(shown)
        else:
            accepted.append(shown)
    return kept, accepted, expired


def _locked(rule_id: str) -> bool:
    return bool(locked_reason((), rule_id)) or rule_id.endswith(f"/{INTERNAL_ERROR}")
