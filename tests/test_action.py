"""The GitHub Action and its documented workflows keep their safety properties.

What can run without GitHub runs for real: the steps' bash scripts are executed
(as the runner does, `bash --noprofile --norc -eo pipefail`) against git
repositories built here; what only GitHub can run (checkout, cache, upload) is
checked in action.yml's structure.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitrepo import Repo, git

ROOT = Path(__file__).resolve().parent.parent
EXPR_IN_RUN = re.compile(r"\$\{\{\s*(inputs|github\.event|github\.head_ref)")
PINNED = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}")
CONSTRAINTS = ROOT / "action" / "constraints.txt"
REVIEWED = "(steps.review.outputs.exit-code == '0' || steps.review.outputs.exit-code == '1')"
A_PULL_REQUEST = "steps.event.outputs.review == 'true'"


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text())


def _steps() -> list[dict[str, Any]]:
    return _action()["runs"]["steps"]


def _step(name_part: str) -> dict[str, Any]:
    (step,) = [s for s in _steps() if name_part in s["name"]]
    return step


def _uses(prefix: str) -> list[dict[str, Any]]:
    return [s for s in _steps() if str(s.get("uses", "")).startswith(prefix)]


def _yaml_blocks(path: Path) -> list[str]:
    return [b for b in re.findall(r"```yaml\n(.*?)```", path.read_text(encoding="utf-8"), re.S) if "jobs:" in b]


def _documented_workflows() -> list[tuple[str, str]]:
    return [(page, block) for page in ("README.md", "docs/github-action.md") for block in _yaml_blocks(ROOT / page)]


def _triggers(workflow: dict) -> Any:
    return workflow.get("on") or workflow.get(True)  # YAML 1.1 reads a bare `on` as True


def _run_step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a `shell: bash` step's script the way the runner does."""
    assert step["shell"] == "bash"
    with tempfile.TemporaryDirectory(prefix="step-") as scratch:
        script = Path(scratch) / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        base_env = {"PATH": f"{ROOT / '.venv' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}", "HOME": scratch,
                    "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
                    "XDG_CACHE_HOME": str(Path(scratch) / "cache")}
        return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=cwd,
                              env={**base_env, **env}, capture_output=True, text=True, timeout=300)


def _outputs(path: Path) -> dict[str, str]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return dict(line.split("=", 1) for line in lines)


# ------------------------------------------------------------------ shape and safety


def test_action_is_composite_and_fetches_objects_into_its_own_directory_never_the_workspace() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    # actions/checkout can only write inside the workspace, where the pull request's links may wait.
    assert _uses("actions/checkout@") == []
    fetch = _step("Fetch the pull request's commits")
    assert 'git init --quiet --bare "$DIR/repo.git"' in fetch["run"]
    assert fetch["env"]["DIR"] == "${{ steps.prepare.outputs.dir }}"
    assert "--depth" not in fetch["run"] and "GIT_CONFIG_VALUE_0" in fetch["run"]  # full history; token not in argv
    steps = _steps()
    assert steps.index(_step("Install reviewer into a private directory")) < steps.index(fetch)


def test_action_runs_reviewer_pr_uploads_sarif_and_fails_on_do_not_merge() -> None:
    steps = _steps()
    runs = [s.get("run", "") for s in steps]
    assert any("reviewer" in r and " pr " in r.replace("(pr ", " pr ") for r in runs)
    (upload,) = _uses("github/codeql-action/upload-sarif@")
    assert upload["with"]["sarif_file"] == "${{ steps.prepare.outputs.dir }}/out/reviewer.sarif"
    # The repository the review ran on, never the workspace (the default), which may hold the PR's files.
    assert upload["with"]["checkout_path"] == "${{ steps.prepare.outputs.dir }}/repo.git"
    assert '--repo "$DIR/repo.git"' in _step("Review")["run"]
    last = steps[-1]
    # The verdict decides even after a failed optional step (on a pull request: nothing runs otherwise).
    assert last["if"] == f"${{{{ always() && {A_PULL_REQUEST} }}}}"
    enforced = re.split(r"exit 0\n\s*fi\n", last["run"])[1]  # after the advisory branch
    assert re.search(r"1\)[^;]*;\s*exit 1", enforced) and "exit 1" in enforced.split("*)")[1]


def test_action_never_executes_pull_request_code_or_interpolates_untrusted_text() -> None:
    steps = _steps()
    install = next(s for s in steps if "pip install" in s.get("run", ""))
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"  # this action, not the checkout
    for step in steps:
        script = step.get("run", "")
        assert not EXPR_IN_RUN.search(script), f"expression interpolated into a script: {step['name']}"
        assert "${{" not in script, f"expression in a script: {step['name']}"
        # `python -m X` would import X from the workspace first (perhaps a checkout of the PR).
        for line in script.splitlines():
            if not line.strip().startswith("#"):
                for call in re.findall(r"(?:^|[\s;&|(])((?:\"\$dir/venv/bin/|\"\$DIR/venv/bin/)?python3?\"?\s.*)", line):
                    assert re.match(r'(python|"\$(dir|DIR)/venv/bin/python") -I ', call), f"{step['name']}: {call}"
                # Nothing is ever written to or read from a path relative to the workspace.
                assert not re.search(r"(?:^|[\s=\"])(\.reviewer|reviewer(\.sarif|\.json|-comment|-state))", line), line
    runs = [s.get("run", "") for s in steps]
    assert sum('"$DIR/venv/bin/python" -I -m reviewer' in r for r in runs) == 2  # the review and the comment
    # pull_request_target is named only where it is refused.
    refusal = steps[0]
    where = refusal["name"] + refusal["run"] + _action()["inputs"]["allow-pull-request-target"]["description"]
    assert (ROOT / "action.yml").read_text().count("pull_request_target") == where.count("pull_request_target")


def test_outputs_go_to_the_private_directory_and_only_a_finished_review_is_published() -> None:
    review = _step("Review")
    formats = re.findall(r'--format "(\w+)=([^"]+)"', review["run"])
    assert [f for f, _ in formats] == ["sarif", "json", "comment"]
    assert all(path.startswith("$DIR/out/") for _, path in formats), formats
    assert _action()["outputs"]["report-dir"]["value"] == "${{ steps.review.outputs.report-dir }}"
    for name in ("Save the review state", "Upload SARIF", "Post or update"):
        assert REVIEWED in _step(name)["if"], name


# ------------------------------------------------------------------ permissions and documented workflows


def test_documented_workflows_use_pull_request_with_least_permissions_each_explained() -> None:
    found = _documented_workflows()
    assert [page for page, _ in found] == ["README.md", "docs/github-action.md"]
    for page, block in found:
        workflow = yaml.safe_load(block)
        triggers = _triggers(workflow)
        assert "pull_request" in triggers and "pull_request_target" not in triggers, page
        assert workflow["permissions"] == {"contents": "read", "pull-requests": "write", "security-events": "write",
                                           "actions": "read"}, page
        # upload-sarif reads the workflow run (GET /repos/{owner}/{repo}/actions/runs/{id}) to key its analysis.
        (actions,) = [ln for ln in block.splitlines() if ln.strip().startswith("actions:")]
        assert "private" in actions and "SARIF" in actions, page
        for permission in workflow["permissions"]:
            (line,) = [ln for ln in block.splitlines() if ln.strip().startswith(f"{permission}:")]
            assert re.search(r"#\s*\S.{20,}", line), f"{page}: `{permission}` is not explained on its line"
        assert workflow["concurrency"] == {"group": "reviewer-${{ github.event.pull_request.number }}",
                                           "cancel-in-progress": True}, page
        (job,) = workflow["jobs"].values()
        assert isinstance(job["timeout-minutes"], int) and 0 < job["timeout-minutes"] <= 60, page
        assert any("reviewer" in str(s.get("uses", "")) for s in job["steps"]), page


def test_readme_example_workflow_uses_pull_request_with_read_only_contents() -> None:
    ((_, block),) = [(p, b) for p, b in _documented_workflows() if p == "README.md"]
    workflow = yaml.safe_load(block)
    assert "pull_request" in _triggers(workflow) and workflow["permissions"]["contents"] == "read"


def test_every_uses_is_pinned_to_a_full_commit_id_with_its_tag() -> None:
    sources = [("action.yml", (ROOT / "action.yml").read_text())] + _documented_workflows()
    pins: dict[str, str] = {}
    count = 0
    for where, text in sources:
        for line in text.splitlines():
            m = re.match(r"\s*(?:-\s*)?uses:\s*(\S+)(.*)$", line)
            if not m:
                continue
            count += 1
            ref, rest = m.groups()
            assert PINNED.fullmatch(ref), f"{where}: not pinned to a 40-hex commit: {line.strip()}"
            assert re.fullmatch(r"\s+#\s+v\d+(\.\d+)*", rest), f"{where}: no tag comment: {line.strip()}"
            name, sha = ref.split("@")
            assert pins.setdefault(name, sha) == sha, f"{name} pinned to two commits"
    assert count >= 4 + len(sources) - 1  # action.yml's four, at least one per documented workflow
    assert {"actions/setup-python", "actions/cache/restore", "actions/cache/save",
            "github/codeql-action/upload-sarif"} <= set(pins)


# ------------------------------------------------------------------ state between runs


def test_state_is_cached_per_repository_and_pull_request_and_restored_on_every_push() -> None:
    inputs = _action()["inputs"]
    assert inputs["pr"]["default"] == "${{ github.event.pull_request.number }}"
    (restore,) = _uses("actions/cache/restore@")
    (save,) = _uses("actions/cache/save@")
    key = restore["with"]["key"]
    assert key == save["with"]["key"] and restore["with"]["path"] == save["with"]["path"]
    # A fixed path: actions/cache keys its entries on the path as written.
    assert restore["with"]["path"] == "${{ runner.temp }}/reviewer-state"
    prefix = "reviewer-state-${{ github.repository }}-pr-${{ inputs.pr }}-run-"
    assert key == prefix + "${{ github.run_id }}-${{ github.run_attempt }}"
    assert restore["with"]["restore-keys"].strip().splitlines() == [prefix]
    steps = _steps()
    review = _step("Review")
    assert steps.index(restore) < steps.index(review) < steps.index(save)
    assert save["if"].startswith(f"${{{{ always() && {A_PULL_REQUEST} && inputs.pr != ''")
    # What a cache restores may have been saved by a workflow of the pull request: never replayed.
    assert '--state-dir "$RUNNER_TEMP/reviewer-state" --state-untrusted --repo-id "$GITHUB_REPOSITORY"' in review["run"]
    # Emptied before the restore: nothing an earlier step left there is used or written through.
    assert 'rm -rf "$RUNNER_TEMP/reviewer-state"' in _step("Install reviewer into a private directory")["run"]
    assert 'args+=(--pr "$PR_NUMBER")' in review["run"] and review["env"]["PR_NUMBER"] == "${{ inputs.pr }}"


def _private_dir(tmp_path: Path) -> Path:
    """The action's private directory as the install step leaves it: `venv/bin/python` (here the
    test's own interpreter, whose environment has reviewer) and `out/`."""
    private = tmp_path / "private"
    (private / "venv" / "bin").mkdir(parents=True)
    (private / "out").mkdir()
    python = private / "venv" / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    return private


def _pull_request(private: Path, edit_config: bool = True) -> tuple[Repo, str, str]:
    """The fetched repository at DIR/repo.git (a clone here): main with reviewer.toml, a topic branch
    whose head (by default) edits it."""
    repo = Repo(private / "repo.git")
    base = repo.commit({"src/a.ts": "export const a = 1\n", "reviewer.toml": "[limits]\nmax_files = 5000\n"}, "base")
    git(repo.path, "checkout", "-q", "-b", "topic")
    changes: dict[str, str | bytes | None] = {"src/a.ts": "export const a = 2\n"}
    if edit_config:
        changes.update({"reviewer.toml": "[disable]\nrules = ['*']\n", "extra.toml": "x = 1\n"})
    head = repo.commit(changes, "the change")
    return repo, base, head


def test_review_step_keeps_state_so_the_next_push_shows_a_delta(tmp_path: Path) -> None:
    """Two pushes of one pull request; the state directory travels between runs as the cache carries it."""
    work = tmp_path / "ws"
    work.mkdir()
    review = _step("Review")
    runs = {run: _private_dir(tmp_path / f"run-{run}") for run in (1, 2, 3)}
    repo, base, head = _pull_request(runs[1], edit_config=False)
    for run in (2, 3):
        subprocess.run(["git", "clone", "-q", str(repo.path), str(runs[run] / "repo.git")], check=True)

    def push(head_sha: str, run: int) -> str:
        private, out, temp = runs[run], tmp_path / f"output-{run}", tmp_path / f"run-{run}" / "temp"
        temp.mkdir(exist_ok=True)
        proc = _run_step(review, work, {"DIR": str(private), "BASE": base, "HEAD": head_sha, "PR_NUMBER": "7",
                                        "GITHUB_REPOSITORY": "acme/proj", "RUNNER_TEMP": str(temp),
                                        "CONFIG_FILE": "", "GITHUB_OUTPUT": str(out)})
        assert proc.returncode == 0, proc.stderr
        assert _outputs(out) == {"exit-code": "0", "verdict": "MERGE", "report-dir": str(private / "out")}, proc.stderr
        state = temp / "reviewer-state"
        assert state.is_dir() and any(state.rglob("*.json"))
        assert list(work.iterdir()) == []  # nothing written into the workspace
        return (private / "out" / "reviewer-comment.md").read_text(encoding="utf-8")

    first = push(head, 1)
    assert "Since the previous review" not in first
    # The cache carries the state directory to the next push's run, at the same path.
    (tmp_path / "run-2" / "temp").mkdir()
    subprocess.run(["cp", "-a", str(tmp_path / "run-1" / "temp" / "reviewer-state"),
                    str(tmp_path / "run-2" / "temp" / "reviewer-state")], check=True)
    second_head = repo.commit({"src/a.ts": "export const a = 3\n"}, "second push")
    for run in (2, 3):
        git(runs[run] / "repo.git", "fetch", "-q", str(repo.path), second_head)
    second = push(second_head, 2)
    assert "Since the previous review" in second
    # Without the restored state the same push has nothing to compare with.
    assert "Since the previous review" not in push(second_head, 3)


def _review_sarif(tmp_path: Path, docs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str], Path]:
    """The Review step on a one-file pull request, with REVIEWER_RULE_DOCS_URL as the install step left it."""
    private = _private_dir(tmp_path)
    _, base, head = _pull_request(private, edit_config=False)
    (tmp_path / "temp").mkdir()
    out = tmp_path / "output"
    proc = _run_step(_step("Review"), tmp_path, {
        "DIR": str(private), "BASE": base, "HEAD": head, "PR_NUMBER": "7", "GITHUB_REPOSITORY": "acme/proj",
        "RUNNER_TEMP": str(tmp_path / "temp"), "CONFIG_FILE": "", "GITHUB_OUTPUT": str(out),
        "REVIEWER_RULE_DOCS_URL": docs})
    assert proc.returncode == 0, proc.stderr
    return proc, _outputs(out), private / "out" / "reviewer.sarif"


def test_sarif_links_each_rule_only_to_a_reference_it_was_given(tmp_path: Path) -> None:
    review = _step("Review")
    # Set on the step itself, from the install step: a job-wide variable cannot reach the renderer.
    assert review["env"]["REVIEWER_RULE_DOCS_URL"] == "${{ steps.prepare.outputs.rule-docs-url }}"

    _, outputs, sarif = _review_sarif(tmp_path / "none", "")
    assert outputs["verdict"] == "MERGE"
    rules = json.loads(sarif.read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert len(rules) > 20 and [r["id"] for r in rules if "helpUri" in r] == []
    assert "reviewer-bot" not in sarif.read_text()  # the repository that does not exist

    given = "https://github.example/acme/reviewer/blob/" + "c" * 40 + "/docs/rules"  # with or without the slash
    for docs in (given, given + "/"):
        _, outputs, sarif = _review_sarif(tmp_path / str(len(docs)), docs)
        rules = json.loads(sarif.read_text())["runs"][0]["tool"]["driver"]["rules"]
        assert outputs["verdict"] == "MERGE" and rules
        for rule in rules:
            family = rule["properties"]["tags"][0]
            assert rule["helpUri"].startswith(f"{given}/{family}.md#"), rule


@pytest.mark.parametrize("docs", ["javascript:alert(1)", "docs/rules/", "https://user:pw@github.example/x/"])
def test_a_rule_reference_that_is_not_a_web_url_is_refused_in_one_line(tmp_path: Path, docs: str) -> None:
    proc, outputs, sarif = _review_sarif(tmp_path, docs)
    assert outputs["exit-code"] == "2" and outputs["verdict"] == "ERROR"
    assert proc.stderr.startswith(f"reviewer: REVIEWER_RULE_DOCS_URL {docs!r}: ")
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
    assert not sarif.exists()


# ------------------------------------------------------------------ pull_request_target


def _event_step(tmp_path: Path, event: str, **env: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The first step, for `event`, with a pull request's inputs unless `env` says otherwise."""
    step = _steps()[0]
    assert step["name"].startswith("Check the event") and step["id"] == "event"
    # The event name comes from the runner's environment, never from the step's env or an expression.
    assert step["env"] == {"ALLOW_PULL_REQUEST_TARGET": "${{ inputs.allow-pull-request-target }}",
                           "ADVISORY": "${{ inputs.advisory }}", "BASE": "${{ inputs.base }}",
                           "HEAD": "${{ inputs.head }}"}
    out = tmp_path / "event-output"
    proc = _run_step(step, tmp_path, {"GITHUB_EVENT_NAME": event, "GITHUB_OUTPUT": str(out),
                                      "ALLOW_PULL_REQUEST_TARGET": "false", "ADVISORY": "false",
                                      "BASE": "a" * 40, "HEAD": "b" * 40, **env})
    return proc, _outputs(out)


@pytest.mark.parametrize(("event", "allow", "code"), [
    ("pull_request_target", "false", 1),
    ("pull_request_target", "", 1),
    ("pull_request_target", "yes", 1),
    ("pull_request_target", "true", 0),
    ("pull_request", "false", 0),
])
def test_pull_request_target_is_refused_unless_allowed(tmp_path: Path, event: str, allow: str, code: int) -> None:
    assert _action()["inputs"]["allow-pull-request-target"]["default"] == "false"
    proc, outputs = _event_step(tmp_path, event, ALLOW_PULL_REQUEST_TARGET=allow)
    assert proc.returncode == code, proc.stdout + proc.stderr
    if code:
        assert proc.stdout.startswith("::error title=reviewer::refusing to run on pull_request_target")
        assert "allow-pull-request-target" in proc.stdout and outputs == {}
    elif event == "pull_request_target":
        assert proc.stdout.startswith("::warning title=reviewer::running on pull_request_target")
        assert outputs == {"review": "true"}
    else:
        assert proc.stdout == "" and outputs == {"review": "true"}


@pytest.mark.parametrize(("event", "base", "head", "review"), [
    ("push", "", "", "false"),
    ("workflow_dispatch", "", "", "false"),
    ("schedule", "", "", "false"),
    ("merge_group", "", "b" * 40, "false"),
    ("", "", "", "false"),
    # Commits given explicitly are reviewed on any event, as before.
    ("workflow_dispatch", "a" * 40, "b" * 40, "true"),
    # Events that carry a pull request fill base and head by default.
    ("pull_request_review", "a" * 40, "b" * 40, "true"),
    # A pull request is never skipped: an empty base then fails loudly in the review.
    ("pull_request", "", "", "true"),
])
def test_an_event_without_a_pull_request_is_skipped_with_one_notice(
        tmp_path: Path, event: str, base: str, head: str, review: str) -> None:
    proc, outputs = _event_step(tmp_path, event, BASE=base, HEAD=head)
    assert proc.returncode == 0 and outputs == {"review": review}, proc.stdout + proc.stderr
    if review == "false":
        assert proc.stdout.splitlines() == [
            f"::notice title=reviewer::reviewer reviews pull requests only; this {event or 'unnamed'} event has none, "
            "so it was skipped (set the inputs base and head to review two commits on another event)"]
    else:
        assert proc.stdout == ""


def test_every_later_step_runs_only_for_a_pull_request() -> None:
    """The skip is real: no step after the first can run, whatever its own condition, even always()."""
    steps = _steps()
    for step in steps[1:]:
        condition = step.get("if", "")
        assert condition.startswith("${{ ") and A_PULL_REQUEST in condition, step["name"]
        # Joined by && at the top level: always() || ... would run it anyway.
        assert " || " not in condition.replace(REVIEWED, ""), step["name"]


@pytest.mark.parametrize("value", ["yes", "True", "", " true", "false\n::error::forged"])
def test_the_advisory_input_must_be_true_or_false(tmp_path: Path, value: str) -> None:
    assert _action()["inputs"]["advisory"]["default"] == "false"
    proc, outputs = _event_step(tmp_path, "pull_request", ADVISORY=value)
    assert proc.returncode == 1 and outputs == {}
    shown = value.replace("\n", "%0A")
    assert proc.stdout.splitlines() == [
        f'::error title=reviewer::the input advisory is "{shown}"; it must be "true" or "false"']
    for value in ("true", "false"):
        assert _event_step(tmp_path, "pull_request", ADVISORY=value)[0].returncode == 0


# ------------------------------------------------------------------ configuration from the base commit


def test_config_input_is_read_from_the_base_commit_never_the_pull_request(tmp_path: Path) -> None:
    private = _private_dir(tmp_path)
    repo, base, head = _pull_request(private)
    assert (repo.path / "reviewer.toml").read_text() == "[disable]\nrules = ['*']\n"  # the head's version
    step = _step("Read the configuration from the base commit")
    assert step["if"] == f"${{{{ {A_PULL_REQUEST} && inputs.config != '' }}}}"
    out = tmp_path / "output"
    proc = _run_step(step, tmp_path, {"DIR": str(private), "BASE": base, "CONFIG": "reviewer.toml",
                                      "GITHUB_OUTPUT": str(out)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _outputs(out) == {"file": str(private / "reviewer.toml")}
    assert (private / "reviewer.toml").read_text() == "[limits]\nmax_files = 5000\n"
    review = _step("Review")
    assert review["env"]["CONFIG_FILE"] == "${{ steps.config.outputs.file }}"
    assert 'args+=(--config "$CONFIG_FILE")' in review["run"]


@pytest.mark.parametrize(("config", "base_kind", "says"), [
    ("extra.toml", "base", "extra.toml does not exist at the base commit"),  # only the PR adds it
    ("src", "base", "src does not exist at the base commit"),  # a tree, not a file
    ("reviewer.toml", "missing", "is not in the fetched repository"),
])
def test_config_absent_at_base_fails_clearly(tmp_path: Path, config: str, base_kind: str, says: str) -> None:
    private = _private_dir(tmp_path)
    _, base, head = _pull_request(private)
    base_sha = base if base_kind == "base" else "0" * 40
    out = tmp_path / "output"
    proc = _run_step(_step("Read the configuration"), tmp_path, {"DIR": str(private), "BASE": base_sha,
                                                                 "CONFIG": config, "GITHUB_OUTPUT": str(out)})
    assert proc.returncode == 1
    assert proc.stdout.startswith("::error title=reviewer::config: ") and says in proc.stdout
    assert _outputs(out) == {}


# ------------------------------------------------------------------ SARIF upload is optional


def test_sarif_upload_is_optional_and_never_fails_the_job(tmp_path: Path) -> None:
    steps = _steps()
    (upload,) = _uses("github/codeql-action/upload-sarif@")
    assert upload["continue-on-error"] is True and upload["id"] == "sarif"
    assert "inputs.upload-sarif == 'true'" in upload["if"]
    warn = steps[steps.index(upload) + 1]
    assert warn["if"] == f"${{{{ always() && {A_PULL_REQUEST} && steps.sarif.outcome == 'failure' }}}}"
    proc = _run_step(warn, tmp_path, {})
    assert proc.returncode == 0 and proc.stdout.startswith("::warning title=reviewer::the SARIF upload")
    assert "security-events: write" in proc.stdout and "fork" in proc.stdout
    # The job's result is the verdict's alone: the last step reads only the review's exit status
    # (and whether it is advisory).
    last = steps[-1]
    assert last["env"] == {"CODE": "${{ steps.review.outputs.exit-code }}", "ADVISORY": "${{ inputs.advisory }}"}
    for code, expected in (("0", 0), ("1", 1), ("2", 1), ("", 1)):
        assert _run_step(last, tmp_path, {"CODE": code, "ADVISORY": "false"}).returncode == expected, code
    assert _run_step(last, tmp_path, {"CODE": "0", "ADVISORY": "false"}).stdout == "reviewer: MERGE\n"
    assert _run_step(last, tmp_path, {"CODE": "1", "ADVISORY": "false"}).stdout == "reviewer: DO-NOT-MERGE\n"


@pytest.mark.parametrize(("code", "advisory", "status", "said"), [
    ("2", "false", 1, "reviewer: no review could be produced (exit 2)"),
    ("", "false", 1, "reviewer: no review could be produced (the review did not run)"),
    ("0", "true", 0, "reviewer: MERGE (advisory mode)"),
    ("1", "true", 0, "::warning title=reviewer::DO-NOT-MERGE (advisory mode: the job succeeds anyway; "
                     "the findings are in the annotations and the job summary)"),
    ("2", "true", 0, "::warning title=reviewer::no review was produced (exit 2), so nothing was checked "
                     "(advisory mode: the job succeeds anyway; the reason is in the log above)"),
])
def test_the_last_step_says_the_verdict_and_enforces_it_unless_advisory(
        tmp_path: Path, code: str, advisory: str, status: int, said: str) -> None:
    summary = tmp_path / "summary.md"
    proc = _run_step(_steps()[-1], tmp_path, {"CODE": code, "ADVISORY": advisory, "GITHUB_STEP_SUMMARY": str(summary)})
    assert proc.returncode == status and proc.stdout.splitlines() == [said], proc.stdout + proc.stderr
    # A review writes its own report to the job summary; when there is none, the summary says why.
    if code in ("0", "1"):
        assert not summary.exists()
    else:
        how = f"exit {code}" if code else "the review did not run"
        assert summary.read_text() == (f"**reviewer: no review was produced** ({how}): nothing was checked; "
                                       "the reason is in the job's log.\n")


# ------------------------------------------------------------------ the comment


def test_comment_is_posted_with_the_sticky_script_and_can_be_turned_off() -> None:
    inputs = _action()["inputs"]
    assert inputs["comment"]["default"] == "true" and inputs["token"]["default"] == "${{ github.token }}"
    step = _step("Post or update the pull request comment")
    assert "inputs.comment == 'true'" in step["if"] and "inputs.pr != ''" in step["if"]
    assert step["env"]["GITHUB_TOKEN"] == "${{ inputs.token }}"
    assert '"$DIR/venv/bin/python" -I -m reviewer.publish.sticky "${args[@]}"' in step["run"]
    assert 'args=(--body "$DIR/out/reviewer-comment.md" --optional --pr "$PR_NUMBER")' in step["run"]
    steps = _steps()
    assert steps.index(_step("Review")) < steps.index(step) < len(steps) - 1


# ------------------------------------------------------------------ pinned dependencies


def _constraints() -> dict[str, str]:
    pins = {}
    for line in CONSTRAINTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version and re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", version), f"not an exact pin: {line}"
            pins[_canonical(name)] = version
    return pins


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_constraints_pin_every_runtime_dependency_within_its_range() -> None:
    from importlib.metadata import requires
    from packaging.requirements import Requirement
    from packaging.version import Version

    pins = _constraints()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = [Requirement(r) for r in project["dependencies"]]
    assert len(needed) >= 4
    for req in needed:
        name = _canonical(req.name)
        assert name in pins, f"{req.name} is not pinned in action/constraints.txt"
        assert req.specifier.contains(Version(pins[name])), f"{req.name}=={pins[name]} is outside {req.specifier}"
    # What the pinned versions need in turn is pinned too, so nothing is resolved afresh at install time.
    for name in list(pins):
        for dep in requires(name) or []:
            sub = Requirement(dep)
            if sub.marker is None or sub.marker.evaluate({"extra": ""}):
                assert _canonical(sub.name) in pins, f"{name} needs {sub.name}, not pinned"
                assert sub.specifier.contains(Version(pins[_canonical(sub.name)]))


def test_install_uses_the_constraints_from_its_own_copy_and_no_cache_the_pull_request_could_write() -> None:
    install = _step("Install reviewer into a private directory")
    assert '--constraint "$dir/src/action/constraints.txt" "$dir/src"' in install["run"]
    assert 'dir="$(mktemp -d "$RUNNER_TEMP/reviewer.XXXXXXXXXX")"' in install["run"]
    (setup,) = _uses("actions/setup-python@")
    # A pip cache is restored from a cache any workflow of the pull request can save to.
    assert "cache" not in setup["with"] and "cache-dependency-path" not in setup["with"]
    steps = _steps()
    assert steps.index(setup) < steps.index(install) < steps.index(_step("Fetch the pull request's commits"))


def test_the_module_the_action_runs_is_importable_in_isolated_mode(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-I", "-m", "reviewer.publish.sticky", "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "--optional" in proc.stdout


def test_the_token_reaches_git_as_environment_configuration_never_as_an_argument(tmp_path: Path) -> None:
    """The fetch step, with a stand-in `git` that records what it was given."""
    import base64

    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "git.log"
    (fake / "git").write_text(f'#!/bin/sh\nprintf "ARGV %s\\n" "$*" >> {log}\n'
                              f'env | grep "^GIT_CONFIG_" | sort >> {log}\nexit 0\n')
    (fake / "git").chmod(0o755)
    step = _step("Fetch the pull request's commits")
    assert step["env"]["TOKEN"] == "${{ inputs.token }}"
    token = "ghs_secretsecretsecret"
    proc = _run_step(step, tmp_path, {"PATH": f"{fake}:/usr/bin:/bin", "DIR": str(tmp_path / "private"),
                                      "BASE": "a" * 40, "HEAD": "b" * 40, "TOKEN": token,
                                      "GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "acme/proj"})
    assert proc.returncode == 0, proc.stderr
    recorded = log.read_text()
    argv = [line for line in recorded.splitlines() if line.startswith("ARGV ")]
    assert argv and not any(token in line for line in argv)
    assert argv[-1].endswith(f"-- https://github.example/acme/proj {'a' * 40} {'b' * 40}")
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    assert f"GIT_CONFIG_VALUE_0=AUTHORIZATION: basic {basic}" in recorded
    assert "GIT_CONFIG_KEY_0=http.https://github.example/.extraheader" in recorded
    assert f"::add-mask::{basic}" in proc.stdout and token not in proc.stdout


# ------------------------------------------------------------------ what the docs promise about the workflow file


def test_the_docs_say_the_workflow_comes_from_the_pull_request_and_how_to_protect_it() -> None:
    """Under pull_request the workflow file is the pull request's: no page may imply the action alone
    keeps a pull request from choosing its reviewer, and each says how to protect .github/workflows/."""
    doc = (ROOT / "docs" / "github-action.md").read_text(encoding="utf-8")
    section = " ".join(doc.split("\n## Protect the workflow file\n", 1)[1].split("\n## ", 1)[0].split())
    assert "merge commit" in section and "`advisory: \"true\"`" in section
    assert "CODEOWNERS" in section and "Require review from Code Owners" in section
    assert "ruleset" in section and "Require workflows to pass before merging" in section
    for page in ("README.md", "SECURITY.md"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert ".github/workflows/**" in text and "CODEOWNERS" in text, page
        assert "github-action.md#protect-the-workflow-file" in text, page
    for page in ("README.md", "SECURITY.md", "docs/github-action.md", "action.yml"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").lower().split())
        assert "cannot change the reviewer" not in text, page
