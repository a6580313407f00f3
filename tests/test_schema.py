"""The JSON Schema of `reviewer-report/1` ships in the package, describes real reports and rejects broken ones.

Every report the rest of the suite produces is validated too, by the autouse
fixture `_reports_follow_the_schema` in conftest.py; the last tests here
prove that fixture is live, so a green suite means something.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tomllib
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import pytest

from conftest import schema_errors
from gitrepo import sample_repo
from reviewer import review
from reviewer.state.delta import with_delta
from reviewer.report.model import PullRequest
from reviewer.report import json_format
from reviewer.report.formats import renderer
from reviewer.schemas import REPORT_SCHEMA, report_schema

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_FILE = ROOT / "reviewer" / "schemas" / REPORT_SCHEMA


@pytest.fixture(scope="module")
def sample_reports(tmp_path_factory):
    """The shipped sample's v5 (DO-NOT-MERGE) and v6 (MERGE) reports, reviewed once."""
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    return {
        name: review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches[name]))).report
        for name in ("v5", "v6")
    }


def as_json(report) -> dict[str, Any]:
    """The report exactly as `--format json` writes it."""
    return json.loads(renderer("json")(report))


def test_schema_is_draft_2020_12_and_loads_from_the_package(report_validator) -> None:
    schema = report_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == json_format.SCHEMA == "reviewer-report/1"
    assert schema == json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    # Closed where the contract is closed: every object lists its keys and refuses others.
    objects = [schema, *(d for d in schema["$defs"].values() if d.get("type") == "object")]
    objects += [schema["properties"]["tool"], schema["properties"]["patch"]]
    for obj in objects:
        assert obj["additionalProperties"] is False, obj.get("title") or sorted(obj["properties"])
        assert set(obj["required"]) == set(obj["properties"]), sorted(obj["properties"])


@pytest.mark.parametrize("name, verdict", [("v5", "DO-NOT-MERGE"), ("v6", "MERGE")])
def test_sample_reports_validate(sample_reports, report_validator, name, verdict) -> None:
    data = as_json(sample_reports[name])
    assert data["verdict"] == verdict
    assert schema_errors(report_validator, data) == []


def test_v5_report_exercises_every_part_of_a_finding(sample_reports) -> None:
    """So the negative cases below break a real, fully populated report."""
    data = as_json(sample_reports["v5"])
    assert {f["severity"] for f in data["findings"]} >= {"must-fix"}
    assert any(f["related"] for f in data["findings"]) and any(f["failure_sequence"] for f in data["findings"])
    assert {i["status"] for i in data["invariants"]} == {"violated"}


def test_report_with_delta_and_pull_request_validates(sample_reports, report_validator) -> None:
    v5, v6 = sample_reports["v5"], sample_reports["v6"]
    with_both = replace(
        with_delta(v6, as_json(v5)),
        pull_request=PullRequest("origin/main", "feature", v6.base, "f" * 40, v6.base),
    )
    data = as_json(with_both)
    assert data["delta"]["resolved"] and data["pull_request"]["merge_base"] == data["base"]
    assert schema_errors(report_validator, data) == []


def test_cli_json_output_validates(report_validator) -> None:
    """Out of process too: what `reviewer demo --format json` prints is a valid report."""
    proc = subprocess.run([sys.executable, "-m", "reviewer", "demo", "--format", "json"], capture_output=True, text=True)
    assert proc.returncode == 1, proc.stderr
    assert schema_errors(report_validator, json.loads(proc.stdout)) == []


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return mutate


def _delete(path: str) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        *parents, last = path.split(".")
        target: Any = data
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        del target[last]
    return mutate


def _drop_check(check_id: str) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        data["checks"] = [c for c in data["checks"] if c["id"] != check_id]
    return mutate


def _duplicate_check(check_id: str) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        data["checks"].append(next(c for c in data["checks"] if c["id"] == check_id))
    return mutate


BROKEN: dict[str, Callable[[dict], None]] = {
    # wrong values
    "severity not in the enum": _set("findings.0.severity", "critical"),
    "severity in another case": _set("findings.0.severity", "MUST-FIX"),
    "verdict not in the enum": _set("verdict", "APPROVE"),
    "MERGE despite a must-fix finding": _set("verdict", "MERGE"),
    "check status not in the enum": _set("checks.0.status", "ok"),
    "unknown integrity check": _set("checks.0.id", "integrity/signature"),
    "invariant status not in the enum": _set("invariants.0.status", "passed"),
    "file status not in the enum": _set("files.0.status", "changed"),
    "scope not in the enum": _set("scope", "everything"),
    "schema of another version": _set("schema", "reviewer-report/2"),
    "short base": _set("base", "abc1234"),
    "upper-case base": _set("base", "A" * 40),
    "63-hex sha256": _set("patch.sha256", "a" * 63),
    "finding id not 16 hex": _set("findings.0.id", "not-an-id"),
    "rule without a family": _set("findings.0.rule", "prev-id-mismatch"),
    "line 0": _set("findings.0.line", 0),
    "line as a string": _set("findings.0.line", "5"),
    "path without a line": _set("findings.0.line", None),
    "line without a path": _set("findings.0.path", None),
    "related line 0": _set("findings.0.related.0.line", 0),
    "negative file count": _set("patch.files", -1),
    "bool as a count": _set("patch.files", True),
    "delta of the wrong type": _set("delta", []),
    "pull request with a short head": _set("pull_request", {
        "base_ref": "main", "head_ref": "x", "base": "a" * 40, "head": "b" * 7, "merge_base": "a" * 40}),
    "violated invariant without findings": _set("invariants.0.findings", []),
    "negative suppressed count": _set("invariants.0.suppressed", -1),
    "suppressed count as a bool": _set("invariants.0.suppressed", True),
    # missing keys
    "no findings key": _delete("findings"),
    "no scope": _delete("scope"),
    "finding without failure_sequence": _delete("findings.0.failure_sequence"),
    "finding without end_line": _delete("findings.0.end_line"),
    "related location without note": _delete("findings.0.related.0.note"),
    "tool without rules version": _delete("tool.rules"),
    "invariant without suppressed count": _delete("invariants.0.suppressed"),
    "no integrity/clean-apply check": _drop_check("integrity/clean-apply"),
    "integrity/paths twice": _duplicate_check("integrity/paths"),
    # extra keys
    "extra top-level key": _set("generated_at", "2026-01-01T00:00:00Z"),
    "extra finding key": _set("findings.0.confidence", 0.9),
    "extra check key": _set("checks.0.url", "https://example.invalid"),
    "extra patch key": _set("patch.author", "someone"),
    "extra related key": _set("findings.0.related.0.column", 3),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_report_is_rejected(sample_reports, report_validator, case) -> None:
    data = copy.deepcopy(as_json(sample_reports["v5"]))
    assert schema_errors(report_validator, data) == []
    BROKEN[case](data)
    assert schema_errors(report_validator, data), f"the schema accepts a report with {case}"


def _with_suppression(data: dict, **entry: Any) -> dict:
    finding = data["findings"][0]
    data["suppressed"] = [{"finding": finding["id"], "rule": finding["rule"], "path": finding["path"],
                           "line": finding["line"], "reason": "checked by hand", **entry}]
    return data


def test_suppressed_entries_carry_honoured(sample_reports, report_validator) -> None:
    """`honoured` is required; only a suppression the patch adds can be refused."""
    base = as_json(sample_reports["v5"])
    for added, honoured in ((True, True), (True, False), (False, True)):
        data = _with_suppression(copy.deepcopy(base), added_by_patch=added, honoured=honoured)
        assert schema_errors(report_validator, data) == [], (added, honoured)
    assert schema_errors(report_validator, _with_suppression(copy.deepcopy(base), added_by_patch=True))
    refused_base = _with_suppression(copy.deepcopy(base), added_by_patch=False, honoured=False)
    assert schema_errors(report_validator, refused_base), "a suppression the base already had is never refused"
    wrong_type = _with_suppression(copy.deepcopy(base), added_by_patch=True, honoured="no")
    assert schema_errors(report_validator, wrong_type)


def test_merge_report_with_a_failed_check_is_rejected(sample_reports, report_validator) -> None:
    data = copy.deepcopy(as_json(sample_reports["v6"]))
    assert data["verdict"] == "MERGE"
    data["checks"][0]["status"] = "fail"
    assert schema_errors(report_validator, data)
    data["checks"][0]["status"] = "pass"
    data["invariants"][0]["status"] = "error"
    assert schema_errors(report_validator, data)


def test_do_not_merge_needs_a_reason(sample_reports, report_validator) -> None:
    data = copy.deepcopy(as_json(sample_reports["v6"]))
    data["verdict"] = "DO-NOT-MERGE"
    assert schema_errors(report_validator, data), "DO-NOT-MERGE with no failed check, error or must-fix finding"


def test_every_review_in_the_suite_is_checked(tmp_path, monkeypatch) -> None:
    """The conftest hook is live: a review whose report breaks the contract fails the test that made it."""
    git_dir, base, patches = sample_repo(tmp_path)
    assert hasattr(review.assemble, "__wrapped__") and hasattr(json_format.to_dict, "__wrapped__")
    monkeypatch.setattr(json_format, "SCHEMA", "reviewer-report/0")
    with pytest.raises(AssertionError, match=r"review\.assemble: the report breaks reviewer-report/1"):
        review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches["v6"])))


def test_every_json_rendering_in_the_suite_is_checked(sample_reports, monkeypatch) -> None:
    monkeypatch.setattr(json_format, "SCHEMA", "reviewer-report/0")
    with pytest.raises(AssertionError, match=r"json_format\.to_dict: the report breaks reviewer-report/1"):
        renderer("json")(sample_reports["v6"])


def test_pyproject_ships_the_schema() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "reviewer.schemas" in config["packages"]
    assert "*.json" in config["package-data"]["reviewer.schemas"]


def test_wheel_carries_the_schema(tmp_path: Path) -> None:
    src = tmp_path / "src"
    # Not hypothesis's files, which another worker creates and deletes while this copies (tests/test_packaging.py).
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", "__pycache__", ".pytest_cache",
                                                            "bench", ".hypothesis"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(tmp_path / "dist"), str(src)],
        check=True, capture_output=True,
    )
    # Whatever the distribution is called on the index, the one wheel built carries the `reviewer` package.
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as zf:
        shipped = zf.read(f"reviewer/schemas/{REPORT_SCHEMA}")
    assert json.loads(shipped) == report_schema()
