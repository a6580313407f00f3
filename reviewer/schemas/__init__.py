"""JSON Schemas of reviewer's machine-readable outputs, shipped as package data.

`report.schema.json` is the JSON Schema (draft 2020-12) of the
`reviewer-report/1` contract that `--format json` writes; docs/report-format.md
describes it field by field. Every report the test suite produces is
validated against it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

REPORT_SCHEMA = "report.schema.json"


def report_schema() -> dict[str, Any]:
    """The `reviewer-report/1` JSON Schema, read from the installed package."""
    return json.loads(resources.files(__name__).joinpath(REPORT_SCHEMA).read_text(encoding="utf-8"))
