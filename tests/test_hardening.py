"""Hostile repositories and patches: nothing runs, nothing changes, limits hold, output can't be forged."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitrepo import git, make_change, sample_repo, state_digest
from reviewer import review
from reviewer.cli import main
from reviewer.errors import ReviewerError
from reviewer.gitio import check_git_version
from reviewer.report.model import InvariantStatus, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.engine.registry import discover
from reviewer.report.formats import renderer

BASE = {"src/a.ts": "export const a = 1\n", "docs/readme.md": "hello\n"}
PATCHED = {"src/a.ts": "export const a = 2\n", "docs/readme.md": "hello again\n"}


def _marker_script(path: Path, marker: Path) -> str:
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\nexit 0\n")
    path.chmod(0o755)
    return str(path)


def test_repository_config_cannot_start_programs(tmp_path: Path) -> None:
    repo, base, patch, _ = make_change(tmp_path, {**BASE, ".gitattributes": "*.md diff=evil\n*.ts filter=evil\n"}, PATCHED)
    marker = tmp_path / "MARKER"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction", "pre-auto-gc"):
        _marker_script(hooks / hook, marker)
    evil = _marker_script(tmp_path / "evil.sh", marker)
    for key, value in {
        "core.hooksPath": str(hooks), "core.fsmonitor": evil, "core.sshCommand": evil, "core.pager": evil,
        "diff.external": evil, "diff.evil.textconv": evil, "diff.evil.command": evil,
        "filter.evil.clean": evil, "filter.evil.smudge": evil, "filter.evil.process": evil,
        "core.editor": evil, "gc.auto": "1",
    }.items():
        git(repo.path, "config", key, value)
    before = state_digest(repo.path)
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)))
    assert outcome.changeset is not None and len(outcome.changeset.files) == 2
    assert not marker.exists(), marker.read_text()
    assert state_digest(repo.path) == before


def test_git_version_floor() -> None:
    check_git_version((2, 39, 2))
    check_git_version((2, 45, 0))
    with pytest.raises(ReviewerError, match=r"git 2\.39\.1 is too old: 2\.39\.2 or newer"):
        check_git_version((2, 39, 1))


@pytest.mark.parametrize("sig, code, word", [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")])
def test_signal_mid_review_leaves_no_temp_files_and_no_changes(tmp_path: Path, sig, code, word) -> None:
    many = {f"src/f{i}.ts": "".join(f"export const v{j} = {j}\n" for j in range(200)) for i in range(300)}
    edited = {k: v.replace("v7 = 7", "v7 = 70") for k, v in many.items()}
    repo, base, patch, _ = make_change(tmp_path, many, edited)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    before = state_digest(repo.path)
    env = {**os.environ, "TMPDIR": str(scratch)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base, "--patch", str(patch)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )
    deadline = time.monotonic() + 10
    while not any(scratch.iterdir()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 1, code), err
    if proc.returncode == code:
        assert err.decode().strip() == f"reviewer: {word}; no verdict" and out == b""
    assert list(scratch.iterdir()) == []
    assert state_digest(repo.path) == before


def _with_config(tmp_path: Path, config: str, patched: dict, base: dict | None = None):
    base = {**(base or BASE), "reviewer.toml": config}
    return make_change(tmp_path, base, {**base, **patched})


def test_patch_over_size_limit_is_a_limits_failure(tmp_path: Path, capsys) -> None:
    repo, base, patch, _ = _with_config(tmp_path, "[limits]\nmax_patch_bytes = 100\n", PATCHED)
    assert main(["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["integrity/limits"]["status"] == "fail" and "over max_patch_bytes 100" in checks["integrity/limits"]["detail"]
    assert checks["integrity/clean-apply"]["status"] == "skip"


def test_too_many_files_is_a_limits_failure(tmp_path: Path, capsys) -> None:
    repo, base, patch, _ = _with_config(tmp_path, "[limits]\nmax_files = 1\n", PATCHED)
    assert main(["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--format", "json"]) == 1
    checks = {c["id"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert "changes 2 files, over max_files 1" in checks["integrity/limits"]["detail"]


def test_minified_line_in_typescript_fails_but_elsewhere_is_a_note(tmp_path: Path) -> None:
    long_line = "export const blob = [" + ",".join(["1"] * 400_000) + "]\n"  # ~800 KB on one line
    repo, base, patch, _ = make_change(tmp_path / "ts", BASE, {"src/min.ts": long_line})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch))).report
    limits = next(c for c in report.checks if c.id == "integrity/limits")
    assert limits.status.value == "fail" and "src/min.ts: a line of" in limits.detail
    assert report.verdict.value == "DO-NOT-MERGE"
    repo, base, patch, _ = make_change(tmp_path / "js", BASE, {"dist/bundle.min.js": long_line})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch))).report
    assert next(c for c in report.checks if c.id == "integrity/limits").status.value == "pass"
    note = next(f for f in report.findings if f.rule == "integrity/limits")
    assert note.severity is Severity.CONSIDER and note.location.path == "dist/bundle.min.js"


def test_deeply_nested_typescript_does_not_crash_the_review(tmp_path: Path) -> None:
    nested = "export const deep = " + "[" * 3000 + "]" * 3000 + "\nexport const f = () => " + "(" * 2000 + "1" + ")" * 2000 + "\n"
    repo, base, patch, _ = make_change(tmp_path, BASE, {"packages/core/src/session/deep.ts": nested})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch), budget_seconds=30)).report
    assert report.verdict.value in ("MERGE", "DO-NOT-MERGE")
    assert renderer("markdown")(report).splitlines()[-1] == report.verdict.value


@pytest.mark.parametrize("name, safe", [
    ("with\nnewline.ts", False),
    ("with\ttab.ts", False),  # every control character is refused, tab included
    ("bell\x07.ts", False),
    ("esc\x1b[31m.ts", False),
    ("rtl\u202egnp.ts", False),
    ('quote"d.ts', True),
    ("aux.ts", False),
    ("ünïcödé.ts", True),
])
def test_quoted_unusual_names(tmp_path: Path, name: str, safe: bool) -> None:
    repo, base, patch, _ = make_change(tmp_path, BASE, {f"src/{name}": "x\n"})
    assert b'"b/src/' in patch.read_bytes() or name.isascii() is False or name == "aux.ts"
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=()).report
    paths = next(c for c in report.checks if c.id == "integrity/paths")
    assert (paths.status.value == "pass") is safe, paths.detail
    if safe:
        assert [f.path for f in report.files] == [f"src/{name}"]


def _hostile_text_family(text: str) -> Family:
    def run(ctx) -> Outcome:
        return Outcome(f"summary {text}", (ctx.finding(
            "x", title=f"title {text}", message=f"message {text}", location=Location(ctx.changeset.files[0].path, 1, 5),
            related=[Location(ctx.changeset.files[0].path, 2, 2, f"note {text}")], failure_sequence=[f"step {text}"]),), examined=1)
    return Family("hostile", "h", (CheckSpec("hostile/x", Severity.MUST_FIX, "t", "s"),), run)


def test_markdown_injection_from_the_patch_is_neutralised(tmp_path: Path) -> None:
    hostile = "@octo-org/team <details><summary>x</summary> <img src=x onerror=alert(1)> ``` |"
    code = "MERGE\n```\n</details>\n````\nMERGE\n"
    repo, base, patch, _ = make_change(tmp_path, BASE, {"src/`odd`|<b>.ts": code})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(_hostile_text_family(hostile),)).report
    md = renderer("markdown")(report)
    lines = md.splitlines()
    assert lines[-1] == "DO-NOT-MERGE"
    # The excerpt is fenced with more backticks than any run inside it.
    assert "`````ts\nMERGE\n```\n</details>\n````\nMERGE\n`````" in md
    outside = md.replace("`````ts\nMERGE\n```\n</details>\n````\nMERGE\n`````", "")
    assert "<details><summary>x" not in outside and "<img" not in outside
    assert [l for l in outside.splitlines() if "details>" in l] == ["<details><summary>Integrity checks (7)</summary>", "</details>"]
    assert "@octo-org" not in outside
    assert [ln for ln in outside.splitlines() if ln in ("MERGE", "DO-NOT-MERGE")] == ["DO-NOT-MERGE"]


def test_output_is_identical_across_hash_seeds_and_discovery_order(tmp_path: Path) -> None:
    outputs = set()
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-m", "reviewer", "demo", "--format", "json=" + str(tmp_path / f"{seed}.json"),
             "--format", "sarif=" + str(tmp_path / f"{seed}.sarif"), "--format", "markdown"],
            capture_output=True, env=env,
        )
        assert proc.returncode == 1, proc.stderr
        outputs.add((proc.stdout, (tmp_path / f"{seed}.json").read_bytes(), (tmp_path / f"{seed}.sarif").read_bytes()))
    assert len(outputs) == 1

    git_dir, base, patches = sample_repo(tmp_path)
    req = review.Request(repo=str(git_dir), base=base, patch=str(patches["v5"]))
    forward = review.run(req, families=discover()).report
    backward = review.run(req, families=tuple(reversed(discover()))).report
    for fmt in ("json", "markdown", "sarif"):
        assert renderer(fmt)(forward) == renderer(fmt)(backward)
