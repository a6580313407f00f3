"""The shipped sample end to end: v5 finds every seeded defect at its exact patched
lines (written by hand in samples/session-recovery/expected.json), v6 is clean,
and the full Markdown reports match their reviewed snapshots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from reviewer import review
from reviewer.cli import main
from gitrepo import git, sample_repo
from reviewer.demo import load_sample
from reviewer.report.formats import renderer

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = json.loads((ROOT / "samples" / "session-recovery" / "expected.json").read_text())
SNAPSHOTS = Path(__file__).parent / "snapshots"


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    sample = load_sample("session-recovery")
    return {
        p.name: review.run(review.Request(
            repo=str(git_dir), base=base, patch=str(patches[p.name]), patch_sha256=p.sha256, expect_files=p.files,
        )).report
        for p in sample.patches
    }


@pytest.mark.parametrize("version", ["v5", "v6"])
def test_verdict_and_must_fix_findings_match_the_hand_written_expectation(reports, version) -> None:
    """Every blocking and should-fix finding, at its hand-checked lines (an entry without
    `severity` is must-fix); consider notes are not listed."""
    report = reports[version]
    assert report.verdict.value == EXPECTED[version]["verdict"]
    assert all(c.status.value != "fail" for c in report.checks)
    got = sorted(
        (f.severity.value, f.rule, f.location.path, f.location.line, f.location.end_line)
        for f in report.findings if f.severity.value != "consider"
    )
    want = sorted((f.get("severity", "must-fix"), f["rule"], f["path"], f["line"], f["end_line"])
                  for f in EXPECTED[version]["findings"])
    assert got == want


def test_every_v5_finding_explains_itself(reports) -> None:
    for f in reports["v5"].findings:
        if f.severity.value != "must-fix":
            continue
        assert f.title and len(f.message) > 60, f.rule
        assert len(f.failure_sequence) >= 2, f.rule
        assert reports["v5"].excerpts[f.id], f.rule


@pytest.mark.parametrize("version", ["v5", "v6"])
def test_markdown_report_matches_snapshot(reports, version) -> None:
    """Snapshots were read line by line when recorded; regenerate with REVIEWER_UPDATE_SNAPSHOTS=1."""
    text = renderer("markdown")(reports[version])
    snapshot = SNAPSHOTS / f"session-recovery-{version}.md"
    if os.environ.get("REVIEWER_UPDATE_SNAPSHOTS"):
        snapshot.parent.mkdir(exist_ok=True)
        snapshot.write_text(text, encoding="utf-8")
    assert text == snapshot.read_text(encoding="utf-8")


def test_demo_prints_the_v5_report(capsys) -> None:
    assert main(["demo"]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "DO-NOT-MERGE"
    for f in EXPECTED["v5"]["findings"]:
        assert f"`{f['path']}:{f['line']}" in out


def test_finding_ids_survive_a_blank_line_inserted_above(tmp_path, reports) -> None:
    """Issue 4: the same defect keeps its id when unrelated lines move."""
    import subprocess


    git_dir, base, patches = sample_repo(tmp_path)
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(git_dir), str(work)], check=True)
    git(work, "apply", str(patches["v5"]))
    shifted_files = ("packages/core/src/session/runner/llm.ts", "packages/core/src/session/execution/local.ts",
                     "packages/core/src/session/input.ts", "packages/core/src/session/recovery.ts")
    for rel in shifted_files:
        path = work / rel
        path.write_text("\n" + path.read_text())
    git(work, "add", "-A")
    shifted = tmp_path / "v5-shifted.patch"
    shifted.write_bytes(subprocess.run(["git", "diff", "--cached", "--binary", "--full-index"], cwd=work,
                                       capture_output=True, check=True).stdout)
    moved = review.run(review.Request(repo=str(git_dir), base=base, patch=str(shifted))).report
    before = {(f.rule, f.location.path): (f.id, f.location.line) for f in reports["v5"].findings}
    after = {(f.rule, f.location.path): (f.id, f.location.line) for f in moved.findings}
    assert before.keys() == after.keys()
    for key, (fid, line) in before.items():
        new_id, new_line = after[key]
        assert new_id == fid, key
        assert new_line == (line + 1 if key[1] in shifted_files else line), key
