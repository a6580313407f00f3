"""The GitHub Action and the README's example workflow keep their safety properties."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
EXPR_IN_RUN = re.compile(r"\$\{\{\s*(inputs|github\.event|github\.head_ref)")


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _readme_workflows() -> list[dict]:
    blocks = re.findall(r"```yaml\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    return [yaml.safe_load(b) for b in blocks if "jobs:" in b]


def test_action_is_composite_and_checks_out_full_history_without_credentials() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0 and checkout["with"]["persist-credentials"] is False


def test_action_runs_reviewer_pr_uploads_sarif_and_fails_on_do_not_merge() -> None:
    steps = _action()["runs"]["steps"]
    runs = [s.get("run", "") for s in steps]
    assert any("reviewer" in r and " pr " in r.replace("(pr ", " pr ") for r in runs)
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "reviewer.sarif"
    last = steps[-1]["run"]
    assert re.search(r"1\)[^;]*;\s*exit 1", last) and "exit 1" in last.split("*)")[1]


def test_action_never_executes_pull_request_code_or_interpolates_untrusted_text() -> None:
    steps = _action()["runs"]["steps"]
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"  # this action, not the checkout
    for step in steps:
        script = step.get("run", "")
        assert not EXPR_IN_RUN.search(script), f"expression interpolated into a script: {step['name']}"
        assert ".reviewer-target/" not in script.replace("--repo .reviewer-target", "")
    assert "pull_request_target" not in (ROOT / "action.yml").read_text()


def test_readme_example_workflow_uses_pull_request_with_read_only_contents() -> None:
    (workflow,) = _readme_workflows()
    triggers = workflow.get("on") or workflow.get(True)  # YAML 1.1 reads a bare `on` as True
    assert "pull_request" in triggers and "pull_request_target" not in triggers
    assert workflow["permissions"]["contents"] == "read"
    steps = [s for job in workflow["jobs"].values() for s in job["steps"]]
    assert any("reviewer" in str(s.get("uses", "")) for s in steps)
