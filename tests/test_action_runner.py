"""The Action on a runner's layout, with a pull request that plants a link (issue 24, item 1).

The attack: a workflow has already checked the pull request out at the
workspace root; the pull request commits `.reviewer-target ->
../../_actions/<owner>/<repo>/<ref>`. An action that checks out or writes
into `.reviewer-target` follows the link into its own directory, and the
next step installs "the reviewer" from there: the pull request's
`setup.py` runs, and the verdict and the token are the pull request's.

Here the runner's directories are laid out as a hosted runner lays them
(`_work/<repo>/<repo>` the workspace, `_work/_actions/...` the action,
`_work/_temp` RUNNER_TEMP), the pull request is served from a local "server",
and every `run:` step of action.yml runs for real, in order; what only GitHub
runs (setup-python, the cache, the SARIF upload, the comment's API call) is
skipped, and recorded with the inputs it would get when its condition holds.
Nothing of the pull request may run, be installed or be written to.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitrepo import git
from reviewer.engine.explain import heading_anchors

ROOT = Path(__file__).resolve().parent.parent
RAN = "ran-from-the-pull-request"

# Each plants a marker file when Python runs or imports it.
HOSTILE = {
    "setup.py": f"open({str(RAN)!r} + '-setup', 'w').write('setup.py ran')\n",
    "pyproject.toml": "[build-system]\nrequires = ['setuptools']\nbuild-backend = 'setuptools.build_meta'\n"
                      "[project]\nname = 'recovery-reviewer'\nversion = '9.9.9'\n",
    "reviewer/__init__.py": f"open({str(RAN)!r} + '-import', 'w').write('imported')\n",
    "sitecustomize.py": f"open({str(RAN)!r} + '-site', 'w').write('site')\n",
    "action/constraints.txt": "evil==1.0\n",
    "src/a.ts": "export const a = 2\n",
}


def _tree_digest(root: Path) -> str:
    """Every name, kind, link target and content under root (links are not followed)."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            h.update(f"L {rel} -> {os.readlink(path)}\n".encode())
        elif path.is_file():
            h.update(f"F {rel} {hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
        else:
            h.update(f"D {rel}\n".encode())
    return h.hexdigest()


def _copy_action(dest: Path) -> None:
    """The action's directory as the runner downloads it: the tracked files, as they are now."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"], capture_output=True, check=True).stdout
    for name in listed.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file() and not source.is_symlink():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())


def _expand(value: str, inputs: dict[str, str], context: dict[str, str], outputs: dict[str, dict[str, str]]) -> str:
    """The few `${{ }}` forms action.yml's env blocks use."""
    import re

    def one(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        if expr.startswith("inputs."):
            return inputs.get(expr[len("inputs."):], "")
        if expr.startswith("steps."):
            _, step_id, _, name = expr.split(".", 3)
            return outputs.get(step_id, {}).get(name, "")
        return context[expr]

    return re.sub(r"\$\{\{(.*?)\}\}", one, value)


def _condition(text: str, inputs: dict[str, str], outputs: dict[str, dict[str, str]]) -> bool:
    """A step's `if:`, in the subset action.yml uses (always(), ==, !=, &&, ||, inputs, steps)."""
    import re

    if not text:
        return True
    expr = text.strip().removeprefix("${{").removesuffix("}}")

    def value(m: re.Match[str]) -> str:
        parts = m.group(0).split(".")
        if parts[0] == "inputs":
            return repr(inputs.get(parts[1], ""))
        return repr(outputs.get(parts[1], {}).get(parts[3], "") if parts[2] == "outputs" else "")

    expr = re.sub(r"\b(inputs\.[\w-]+|steps\.[\w-]+\.(outputs\.[\w-]+|outcome))", value, expr)
    expr = expr.replace("always()", "True").replace("&&", " and ").replace("||", " or ")
    return bool(eval(expr, {"__builtins__": {}}))  # noqa: S307 - action.yml's own conditions, nothing else


def _read_outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines()) if path.exists() else {}


@pytest.fixture
def runner(tmp_path: Path):
    """A hosted runner's directories, a "server" holding the pull request, and its checkout in the workspace."""
    work = tmp_path / "runner" / "_work"
    workspace = work / "proj" / "proj"
    action = work / "_actions" / "acme" / "reviewer" / "0123456789abcdef0123456789abcdef01234567"
    temp = work / "_temp"
    for d in (workspace, action, temp):
        d.mkdir(parents=True)
    # An earlier step of the job left a link where the cache restores the review state.
    trap = tmp_path / "trap"
    trap.mkdir()
    (temp / "reviewer-state").symlink_to(trap)
    _copy_action(action)

    # The pull request, authored in a scratch clone and pushed to the "server".
    server = tmp_path / "server" / "acme" / "proj"
    subprocess.run(["git", "init", "-q", "--bare", "--initial-branch=main", str(server)], check=True)
    author = tmp_path / "author"
    subprocess.run(["git", "init", "-q", "-b", "main", str(author)], check=True)
    (author / "src").mkdir()
    (author / "src" / "a.ts").write_text("export const a = 1\n")
    git(author, "add", "-A")
    git(author, "commit", "-q", "-m", "base")
    base = git(author, "rev-parse", "HEAD")
    for name, text in HOSTILE.items():
        (author / name).parent.mkdir(parents=True, exist_ok=True)
        (author / name).write_text(text)
    (author / ".reviewer-target").symlink_to("../../_actions/acme/reviewer/0123456789abcdef0123456789abcdef01234567")
    (author / ".reviewer-action").symlink_to("../../_actions/acme/reviewer/0123456789abcdef0123456789abcdef01234567")
    git(author, "add", "-A")
    git(author, "commit", "-q", "-m", "the pull request")
    head = git(author, "rev-parse", "HEAD")
    git(author, "push", "-q", str(server), f"{base}:refs/heads/main", f"{head}:refs/pull/7/head")

    # The workflow's own earlier step: the pull request checked out at the workspace root.
    subprocess.run(["git", "clone", "-q", str(server), str(workspace)], check=True)
    git(workspace, "checkout", "-q", head)
    assert (workspace / ".reviewer-target").resolve() == action.resolve()
    return {"tmp": tmp_path, "trap": trap, "work": work, "workspace": workspace, "action": action, "temp": temp,
            "server": tmp_path / "server", "base": base, "head": head}


def _checkout_as_actions_checkout_does(r: dict[str, Any], step: dict[str, Any]) -> None:
    """actions/checkout with `path:`: the path resolved through any link, emptied, the head cloned into it."""
    import shutil

    target = (r["workspace"] / step.get("with", {}).get("path", ".")).resolve()
    if target.exists():
        for child in target.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    subprocess.run(["git", "clone", "-q", str(r["server"] / "acme" / "proj"), str(target)], check=True)
    git(target, "checkout", "-q", r["head"])


def _run_action(r: dict[str, Any], event: str = "pull_request",
                **given: str) -> tuple[dict[str, dict[str, str]], list[str], int]:
    """Every `run:` step of action.yml in order, as the runner runs a composite action's steps,
    for `event` with the inputs `given` (by default a pull request's, no comment, no upload).
    What only GitHub runs is recorded in r["github"] (step name -> its `with:` or `env:`) when
    its condition holds; the job summary is r["tmp"]/summary.md."""
    spec = yaml.safe_load((r["action"] / "action.yml").read_text())
    inputs = {name: str(v.get("default", "")) for name, v in spec["inputs"].items()}
    inputs.update(base=r["base"], head=r["head"], pr="7", token="", comment="false", **{"upload-sarif": "false"})
    inputs.update(given)
    context = {"github.action_path": str(r["action"]), "runner.temp": str(r["temp"]),
               "github.repository": "acme/proj", "github.run_id": "42", "github.run_attempt": "1"}
    home = r["tmp"] / "home"
    home.mkdir()
    test_site = sysconfig.get_paths()["purelib"]
    gitconfig = r["tmp"] / "gitconfig"
    gitconfig.write_text(f'[url "file://{r["server"]}/"]\n\tinsteadOf = https://github.example/\n')
    env_base = {
        "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "HOME": str(home),
        "GITHUB_WORKSPACE": str(r["workspace"]), "RUNNER_TEMP": str(r["temp"]),
        # The "server" is a local directory: git is told so the way a user would, by insteadOf.
        "GITHUB_SERVER_URL": "https://github.example", "GITHUB_REPOSITORY": "acme/proj",
        "GITHUB_EVENT_NAME": event, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GITHUB_STEP_SUMMARY": str(r["tmp"] / "summary.md"),
        # No package index here: pip installs the action's copy alone and builds it with the
        # setuptools and wheel of the test's environment; its dependencies come from there too.
        "PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "0", "PYTHONPATH": test_site,
    }
    outputs: dict[str, dict[str, str]] = {}
    ran: list[str] = []
    r["github"] = {}
    code = 0
    for step in spec["runs"]["steps"]:
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            _checkout_as_actions_checkout_does(r, step)  # so the test fails on an action that uses it
            continue
        if not _condition(step.get("if", ""), inputs, outputs):
            continue
        if "run" not in step or "reviewer.publish.sticky" in step["run"]:
            # setup-python, cache, upload-sarif: GitHub's own actions; the comment: GitHub's API.
            given_to = step.get("with", {}) if "run" not in step else step.get("env", {})
            r["github"][step["name"]] = {k: _expand(str(v), inputs, context, outputs) for k, v in given_to.items()}
            continue
        out = r["tmp"] / f"output-{len(ran)}"
        env = {**env_base, "GITHUB_OUTPUT": str(out)}
        env.update({k: _expand(str(v), inputs, context, outputs) for k, v in step.get("env", {}).items()})
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                              cwd=r["workspace"], env=env, capture_output=True, text=True, timeout=600)
        ran.append(step["name"])
        r.setdefault("logs", {})[step["name"]] = proc.stdout + proc.stderr
        if "id" in step:
            outputs[step["id"]] = _read_outputs(out)
        if step["name"].startswith("Install reviewer") and proc.returncode == 0:
            # Where pip would have put the dependencies from the index: the test's environment.
            private = Path(outputs["prepare"]["dir"])
            (site_dir,) = (private / "venv" / "lib").glob("python3*/site-packages")
            (site_dir / "test-dependencies.pth").write_text(test_site + "\n")
        code = proc.returncode
        if code:
            break
    return outputs, ran, code


def test_a_planted_link_to_the_action_runs_nothing_from_the_pull_request(runner) -> None:
    r = runner
    action_before = _tree_digest(r["action"])
    workspace_before = _tree_digest(r["workspace"])

    outputs, ran, code = _run_action(r)

    # Nothing of the pull request ran or was imported, anywhere.
    markers = [p for p in r["tmp"].rglob(f"{RAN}*")] + [p for p in Path("/").glob(f"{RAN}*")]
    assert markers == []
    assert ran[0].startswith("Check the event") and ran[-1].startswith("Fail the job")
    assert any(name.startswith("Fetch the pull request") for name in ran) and "Review" in ran
    assert code == 1  # the last step: the verdict
    assert outputs["review"]["verdict"] == "DO-NOT-MERGE", r["logs"]["Review"]  # the patch's link fails the gate
    # Its link was never followed: the action's directory and the workspace are as they were.
    assert _tree_digest(r["action"]) == action_before
    assert _tree_digest(r["workspace"]) == workspace_before
    # Everything the action wrote is in one directory it made under RUNNER_TEMP.
    private = Path(outputs["prepare"]["dir"])
    assert private.parent == r["temp"] and oct(private.stat().st_mode & 0o777) == "0o700"
    assert sorted(p.name for p in r["temp"].iterdir()) == sorted([private.name, "reviewer-state"])
    # The state path the cache restores to was emptied first: the planted link is gone, unfollowed.
    assert not (r["temp"] / "reviewer-state").is_symlink() and list(r["trap"].iterdir()) == []
    assert (private / "out" / "reviewer.json").is_file() and (private / "out" / "reviewer.sarif").is_file()
    assert outputs["review"]["report-dir"] == str(private / "out")
    # And what ran was the action's own copy, installed in the private environment.
    shown = subprocess.run([str(private / "venv" / "bin" / "python"), "-I", "-m", "pip", "show", "recovery-reviewer"],
                           capture_output=True, text=True, check=True).stdout
    assert "Version: 0.1.0" in shown
    origin = subprocess.run([str(private / "venv" / "bin" / "python"), "-I", "-c",
                             "import reviewer; print(reviewer.__file__)"], capture_output=True, text=True).stdout
    assert origin.startswith(str(private / "venv" / "lib"))


def test_an_action_directory_inside_the_workspace_is_refused(runner) -> None:
    """`uses: ./` runs the pull request's own copy of the action: the install step says so and stops."""
    r = runner
    inside = r["workspace"] / "vendored-action"
    _copy_action(inside)
    r = {**r, "action": inside}
    outputs, ran, code = _run_action(r)
    assert code == 1 and ran[-1].startswith("Install reviewer") and outputs["prepare"] == {}
    assert "is inside the workspace" in r["logs"][ran[-1]]
    assert [p for p in r["tmp"].rglob(f"{RAN}*")] == []


def test_an_action_directory_holding_a_link_is_refused(runner) -> None:
    r = runner
    (r["action"] / "reviewer" / "linked.py").symlink_to(r["workspace"] / "setup.py")
    outputs, ran, code = _run_action(r)
    assert code == 1 and ran[-1].startswith("Install reviewer") and outputs["prepare"] == {}
    assert "holds a symbolic link" in r["logs"][ran[-1]]
    assert [p for p in r["tmp"].rglob(f"{RAN}*")] == []


# ------------------------------------------------------------------ advisory mode (issue 28)


def test_advisory_mode_reports_as_usual_and_the_job_succeeds_on_do_not_merge(runner) -> None:
    r = runner
    outputs, ran, code = _run_action(r, advisory="true", comment="true", **{"upload-sarif": "true"})

    assert code == 0 and ran[-1].startswith("Fail the job"), r["logs"]
    assert outputs["review"]["verdict"] == "DO-NOT-MERGE" and outputs["review"]["exit-code"] == "1"
    # The verdict is still said, once, as a warning a reader of the run sees.
    assert r["logs"][ran[-1]].splitlines() == [
        "::warning title=reviewer::DO-NOT-MERGE (advisory mode: the job succeeds anyway; "
        "the findings are in the annotations and the job summary)"]
    # Everything else as usual: the annotations, the job summary, the reports, the upload, the comment.
    assert any(line.startswith("::error ") for line in r["logs"]["Review"].splitlines())
    summary = (r["tmp"] / "summary.md").read_text(encoding="utf-8")
    assert summary.rstrip("\n").splitlines()[-1] == "DO-NOT-MERGE"
    out = Path(outputs["review"]["report-dir"])
    assert json.loads((out / "reviewer.json").read_text())["verdict"] == "DO-NOT-MERGE"
    assert (out / "reviewer.sarif").is_file() and (out / "reviewer-comment.md").is_file()
    github = r["github"]
    assert {"Upload SARIF (optional, never decides the job)", "Post or update the pull request comment",
            "Save the review state of this pull request"} <= set(github)
    assert github["Post or update the pull request comment"]["PR_NUMBER"] == "7"


@pytest.mark.parametrize("value", ["yes", "True", "", "true\n::warning::forged"])
def test_an_invalid_advisory_value_stops_the_job_before_anything_runs(runner, value: str) -> None:
    r = runner
    outputs, ran, code = _run_action(r, advisory=value)
    assert code == 1 and ran == [ran[0]] and ran[0].startswith("Check the event")
    shown = value.replace("\n", "%0A")
    assert r["logs"][ran[0]].splitlines() == [
        f'::error title=reviewer::the input advisory is "{shown}"; it must be "true" or "false"']
    assert r["github"] == {} and outputs["event"] == {}


# ------------------------------------------------------------------ events without a pull request (issue 28)


@pytest.mark.parametrize("event", ["push", "workflow_dispatch"])
def test_an_event_without_a_pull_request_is_skipped_with_one_notice(runner, event: str) -> None:
    """On these events github.event.pull_request is absent: base, head and pr default to empty."""
    r = runner
    outputs, ran, code = _run_action(r, event=event, base="", head="", pr="")
    assert code == 0
    assert ran == [ran[0]] and ran[0].startswith("Check the event")  # no later step, not even the last
    assert r["logs"][ran[0]].splitlines() == [
        f"::notice title=reviewer::reviewer reviews pull requests only; this {event} event has none, so it was "
        "skipped (set the inputs base and head to review two commits on another event)"]
    assert outputs["event"] == {"review": "false"} and r["github"] == {}
    # Nothing was installed, fetched or written.
    assert sorted(p.name for p in r["temp"].iterdir()) == ["reviewer-state"]
    assert [p for p in r["tmp"].rglob(f"{RAN}*")] == []


# ------------------------------------------------------------------ SARIF: where it was reviewed, what it links to


@pytest.mark.parametrize("layout", ["runner", "elsewhere"])
def test_the_sarif_upload_gets_the_reviewed_repository_and_only_real_rule_links(runner, layout: str) -> None:
    """Downloaded by the runner (_actions/<owner>/<repo>/<ref>), the action links each rule to its
    section in its own repository at its own commit; anywhere else it links nothing."""
    r = runner
    if layout == "elsewhere":
        elsewhere = r["work"] / "tools" / "reviewer-action"
        _copy_action(elsewhere)
        r = {**r, "action": elsewhere}
    outputs, ran, code = _run_action(r, **{"upload-sarif": "true"})
    assert code == 1 and outputs["review"]["verdict"] == "DO-NOT-MERGE", r["logs"]

    # The upload is told where the review ran: the bare repository holding the reviewed commits.
    private = Path(outputs["prepare"]["dir"])
    upload = r["github"]["Upload SARIF (optional, never decides the job)"]
    assert upload["checkout_path"] == str(private / "repo.git")
    assert git(private / "repo.git", "rev-parse", "--is-bare-repository") == "true"
    assert git(private / "repo.git", "rev-parse", f"{r['head']}^{{commit}}") == r["head"]
    assert upload["sarif_file"] == str(private / "out" / "reviewer.sarif")

    rules = json.loads((private / "out" / "reviewer.sarif").read_text())["runs"][0]["tool"]["driver"]["rules"]
    assert rules
    if layout == "elsewhere":
        assert outputs["prepare"]["rule-docs-url"] == ""
        assert [rule["id"] for rule in rules if "helpUri" in rule] == []
        return
    base = "https://github.example/acme/reviewer/blob/0123456789abcdef0123456789abcdef01234567/docs/rules/"
    assert outputs["prepare"]["rule-docs-url"] == base
    for rule in rules:
        assert rule.get("helpUri", "").startswith(base), rule["id"]
        page, _, fragment = rule["helpUri"].removeprefix(base).partition("#")
        # The page and its heading exist in the action's own copy: the link names what is there.
        doc = r["action"] / "docs" / "rules" / page
        assert doc.is_file() and fragment in [a for _, a in heading_anchors(doc.read_text())], rule["helpUri"]
