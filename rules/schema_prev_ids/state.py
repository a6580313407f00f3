"""schema-prev-ids: the state one review shares between the family's checks.

The changed files, the findings and notes gathered so far, and the flags
(a snapshot changed, a migration changed, anything touched) that later
checks and the summary read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from reviewer.change.changeset import ChangedFile
from reviewer.engine.context import ReviewContext
from reviewer.report.model import Finding


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

    def opt(self, key: str) -> Any:
        return self.ctx.opts[key]

    def name_pattern(self, key: str) -> re.Pattern[str]:
        """A pattern option; these match file and folder names, never file contents."""
        return self.ctx.opts[key]

    def add(self, check: str, **kwargs: Any) -> None:
        self.findings.append(self.ctx.finding(check, **kwargs))
