"""schema-prev-ids: the state one review shares between the family's checks.

The changed files, the findings and notes gathered so far, and the flags
(a snapshot changed, a migration changed, anything touched) that later
checks and the summary read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reviewer.change.changeset import ChangedFile
from reviewer.engine.context import ReviewContext
from reviewer.report.model import Finding

if TYPE_CHECKING:
    from reviewer.rules.schema_prev_ids.snapshots import SingleResult


@dataclass
class State:
    ctx: ReviewContext
    files: dict[str, ChangedFile]
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    snapshot_changed: bool = False
    migration_changed: bool = False
    touched: bool = False
    changed: tuple[str, ...] = ()  # set by the template (unused: snapshots are found by path)
    parts: list[str] = field(default_factory=list)  # what each check proved, for the basis
    singles: list["SingleResult"] = field(default_factory=list)  # the single-file snapshots judged
    _given: int = 0  # findings already handed to the template

    def taken(self) -> list[Finding]:
        """The findings recorded since the last call: what the check that just ran found."""
        new = self.findings[self._given:]
        self._given = len(self.findings)
        return new

    def opt(self, key: str) -> Any:
        return self.ctx.opts[key]

    def name_pattern(self, key: str) -> re.Pattern[str]:
        """A pattern option; these match file and folder names, never file contents."""
        return self.ctx.opts[key]

    def add(self, check: str, **kwargs: Any) -> None:
        self.findings.append(self.ctx.finding(check, **kwargs))
