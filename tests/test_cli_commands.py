"""The small commands: `verify` (the gate alone), `diff` (markdown and JSON), `history`,
and what `--scope` means for each family, on real repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitrepo import Repo, git, make_change
from reviewer import RULESET_VERSION
from reviewer.cli import build_parser, main

CLAIM = """\
export namespace SessionExecutionClaim {
  export const release = (db: any, claim: string) => db.delete(claim)
}
"""

# A release of the claim on a changed line, outside any finalizer: lease-renewal must-fix.
NUDGE_V1 = """\
import { Effect } from "effect"
import { SessionExecutionClaim } from "./claim"

export const nudge = (db: any, claim: string, text: string) =>
  Effect.gen(function* () {
    if (!text) yield* SessionExecutionClaim.release(db, claim)
    yield* Effect.log(text)
  })
"""
NUDGE_V2 = NUDGE_V1.replace("    if (!text) yield* SessionExecutionClaim.release(db, claim)\n", "")

PUBLISH_TWICE = """\
import { Effect } from "effect"
import { SessionEvent } from "./event"

export const close = (bus: any, broken: boolean) =>
  Effect.gen(function* () {
    if (broken) yield* bus.publish(SessionEvent.Step.Failed, { why: "x" })
    yield* bus.publish(SessionEvent.Step.Ended, { ok: true })
  })
"""


@pytest.fixture(autouse=True)
def _outside_github(monkeypatch) -> None:
    for name in ("GITHUB_EVENT_PATH", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def versions(tmp_path: Path):
    """A base holding the claim API and two versions of a change: (repo, base, v1.patch, v2.patch)."""
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"src/claim.ts": CLAIM}, "base")
    patches = []
    for name, nudge in (("v1", NUDGE_V1), ("v2", NUDGE_V2)):
        git(repo.path, "checkout", "-q", "-b", name, base)
        head = repo.commit({"src/nudge.ts": nudge}, name)
        path = tmp_path / f"{name}.patch"
        path.write_bytes(repo.diff(base, head))
        patches.append(path)
    git(repo.path, "checkout", "-q", "main")
    return repo.path, base, patches[0], patches[1]


# ---------------------------------------------------------------- verify


def _verify(capsys, repo: Path, base: str, patch: Path, *extra: str) -> tuple[int, str, str]:
    return _run(capsys, "verify", "--repo", str(repo), "--base", base, "--patch", str(patch), *extra)


def test_verify_says_gate_passed_never_a_merge_verdict(versions, capsys) -> None:
    repo, base, v1, _ = versions
    # v1 carries a must-fix finding: verify runs no rule, so it neither sees nor hides it.
    code, out, err = _verify(capsys, repo, base, v1)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[-1] == "GATE PASSED" and lines[0] == "# Integrity gate of `v1.patch`"
    assert "MERGE" not in out and "Review of" not in out
    for check in ("integrity/base-commit", "integrity/patch-sha256", "integrity/artifact-sha256",
                  "integrity/clean-apply", "integrity/file-count", "integrity/paths", "integrity/limits"):
        assert sum(1 for ln in lines if ln.startswith(f"| {check} |")) == 1, check


def test_verify_failing_gate_exits_1_and_says_gate_failed(versions, capsys) -> None:
    repo, base, v1, _ = versions
    code, out, _ = _verify(capsys, repo, base, v1, "--patch-sha256", "0" * 64, "--expect-files", "3")
    assert code == 1 and out.splitlines()[-1] == "GATE FAILED" and "MERGE" not in out
    assert "| integrity/patch-sha256 | ❌ fail |" in out and "| integrity/file-count | ❌ fail |" in out
    assert "2 checks failed: integrity/patch-sha256, integrity/file-count." in out


def test_verify_json_is_a_gate_object(versions, capsys) -> None:
    repo, base, v1, _ = versions
    code, out, _ = _verify(capsys, repo, base, v1, "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["schema"] == "reviewer-gate/1" and data["gate"] == "pass"
    assert data["base"] == base and data["patch"]["name"] == "v1.patch" and data["patch"]["files"] == 1
    assert "verdict" not in data and "findings" not in data
    assert [c["id"] for c in data["checks"]][:2] == ["integrity/base-commit", "integrity/patch-sha256"]
    code, out, _ = _verify(capsys, repo, base, v1, "--format", "json", "--expect-files", "2")
    data = json.loads(out)
    assert code == 1 and data["gate"] == "fail"
    assert {c["id"]: c["status"] for c in data["checks"]}["integrity/file-count"] == "fail"


def test_verify_github_annotates_failed_checks_and_writes_the_summary(versions, capsys, tmp_path, monkeypatch) -> None:
    repo, base, v1, _ = versions
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out, _ = _verify(capsys, repo, base, v1, "--format", "github", "--expect-files", "5")
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith("::error title=integrity/file-count::") and len(lines) == 2
    assert lines[-1].startswith("::error::reviewer ") and "gate failed" in lines[-1]
    assert summary.read_text().splitlines()[-1] == "GATE FAILED"
    code, out, _ = _verify(capsys, repo, base, v1, "--format", "github")
    assert code == 0 and len(out.splitlines()) == 1 and out.startswith("::notice::") and "gate passed" in out


@pytest.mark.parametrize("fmt", ["sarif", "comment", "sarif=out.sarif"])
def test_verify_refuses_review_only_formats(versions, capsys, tmp_path, fmt) -> None:
    repo, base, v1, _ = versions
    code, out, err = _verify(capsys, repo, base, v1, "--format", fmt)
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert f"verify --format {fmt.split('=')[0]}" in err and "reviewer review" in err
    assert not (Path.cwd() / "out.sarif").exists()


def test_verify_keeps_a_hostile_patch_name_off_the_last_line(versions, capsys, tmp_path) -> None:
    repo, base, v1, _ = versions
    hostile = tmp_path / "x`\n\nGATE PASSED\n\n| a |"
    hostile.write_bytes(v1.read_bytes())
    code, out, _ = _verify(capsys, repo, base, hostile, "--expect-files", "9")
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == "GATE FAILED" and "GATE PASSED" not in lines
    assert lines[0].startswith("# Integrity gate of ``")


# ---------------------------------------------------------------- diff


@pytest.fixture
def two_reports(versions, capsys, tmp_path):
    repo, base, v1, v2 = versions
    paths = []
    for patch in (v1, v2):
        out = tmp_path / f"{patch.stem}.json"
        _run(capsys, "review", "--repo", str(repo), "--base", base, "--patch", str(patch), "--no-state",
             "--format", f"json={out}")
        paths.append(out)
    return paths


def test_diff_json_lists_resolved_new_and_still_open(two_reports, capsys) -> None:
    old, new = two_reports
    code, out, err = _run(capsys, "diff", str(old), str(new), "--format", "json")
    assert (code, err) == (0, "")
    delta = json.loads(out)
    v1, v2 = json.loads(old.read_text()), json.loads(new.read_text())
    assert delta["schema"] == "reviewer-delta/1"
    assert v1["patch"]["sha256"][:12] in delta["previous"] and v2["patch"]["sha256"][:12] in delta["current"]
    resolved = {d["rule"] for d in delta["resolved"]}
    assert "lease-renewal/release-outside-finalizer" in resolved
    assert {d["id"] for d in delta["resolved"]} == {f["id"] for f in v1["findings"]} - {f["id"] for f in v2["findings"]}
    assert {d["id"] for d in delta["new"]} == {f["id"] for f in v2["findings"]} - {f["id"] for f in v1["findings"]}
    assert {d["id"] for d in delta["still_open"]} == {f["id"] for f in v2["findings"]} & {f["id"] for f in v1["findings"]}
    assert set(delta["resolved"][0]) == {"id", "rule", "severity", "title", "path", "line"}
    # Reversed, what was resolved is new.
    _, back, _ = _run(capsys, "diff", str(new), str(old), "--format", "json")
    assert {d["id"] for d in json.loads(back)["new"]} == {d["id"] for d in delta["resolved"]}


def test_diff_markdown_is_the_default(two_reports, capsys) -> None:
    old, new = two_reports
    code, out, _ = _run(capsys, "diff", str(old), str(new))
    assert code == 0 and "## Since the previous review" in out and "**Resolved**" in out
    assert "`lease-renewal/release-outside-finalizer`" in out
    assert _run(capsys, "diff", str(old), str(new), "--format", "markdown")[1] == out
    code, _, err = _run(capsys, "diff", str(old), str(new), "--format", "sarif")
    assert code == 2 and "invalid choice" in err


# ---------------------------------------------------------------- history

_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def test_history_shows_date_head_verdict_base_patch_and_rules(versions, capsys, tmp_path) -> None:
    repo, base, v1, _ = versions
    state = tmp_path / "state"
    code, _, _ = _run(capsys, "review", "--repo", str(repo), "--base", base, "--patch", str(v1), "--state-dir", str(state))
    assert code == 1
    head = git(repo, "rev-parse", "v2")
    code, _, _ = _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", "v2", "--state-dir", str(state))
    assert code == 0
    code, out, _ = _run(capsys, "history", "--repo", str(repo), "--state-dir", str(state))
    header, *rows = out.splitlines()
    assert code == 0 and len(rows) == 2
    assert header.split()[:3] == ["recorded", "(UTC)", "review"] and "head" in header and "rules" in header
    records = {json.loads(p.read_text())["key"][:16]: json.loads(p.read_text()) for p in (state / "reviews").glob("*.json")}
    for row, expect_head, verdict in zip(rows, ["-", head[:12]], ["DO-NOT-MERGE", "MERGE"]):
        cells = row.split()
        record = records[cells[1]]
        assert _ISO.fullmatch(cells[0])
        assert cells[0] == _utc(record["recorded_at"])
        assert cells[2:7] == [verdict, expect_head, base[:12], record["identity"]["patch_sha256"][:12], RULESET_VERSION]


def _utc(seconds: float) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def test_history_reads_records_written_before_identities_named_their_fields(versions, capsys, tmp_path) -> None:
    """An older record keeps its pull request as a list: its head is still shown."""
    repo, _, _, _ = versions
    state = tmp_path / "state"
    _run(capsys, "pr", "--repo", str(repo), "--base", "main", "--head", "v1", "--state-dir", str(state))
    from reviewer.state.store import Identity, Record, StateStore

    store = StateStore(state)
    (path,) = (state / "reviews").glob("*.json")
    old = store.load_path(path)
    pr = old.identity["pull_request"]
    ident = dict(old.identity, pull_request=[pr["base_ref"], pr["head_ref"], pr["base"], pr["head"], pr["merge_base"]])
    key = Identity(ident).key
    path.unlink()
    store.save(Record(key, ident, old.repo, old.verdict, old.outputs, old.report, old.recorded_at))
    _, out, _ = _run(capsys, "history", "--repo", str(repo), "--state-dir", str(state))
    assert out.splitlines()[1].split()[3] == pr["head"][:12]


# ---------------------------------------------------------------- --scope, per family


def _scoped(tmp: Path, scope: str, base: dict[str, str], patched: dict[str, str]):
    from reviewer import review

    repo, sha, patch, _ = make_change(tmp / scope, base, patched)
    return review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), scope=scope)).report


def _blocking(report, family: str) -> tuple[list[str], list[str]]:
    counted = [f.rule for f in report.findings if f.family == family and f.severity.value != "consider"]
    return counted, [f.rule for f in report.pre_existing if f.family == family]


def test_scope_lease_renewal_judges_only_changed_constructs_unless_all(tmp_path: Path) -> None:
    """An early release on an unchanged line of a changed file: not looked at under
    `changed` or `file` (the same result), found and counted under `all`."""
    base = {"src/claim.ts": CLAIM, "src/nudge.ts": NUDGE_V1}
    patched = {**base, "src/nudge.ts": NUDGE_V1.replace("yield* Effect.log(text)", "yield* Effect.log(text, 1)")}
    results = {scope: _blocking(_scoped(tmp_path, scope, base, patched), "lease-renewal")
               for scope in ("changed", "file", "all")}
    assert results["changed"] == results["file"] == ([], [])
    assert results["all"] == (["lease-renewal/release-outside-finalizer"], [])


def test_scope_terminal_commit_order_counts_a_touched_function_under_file(tmp_path: Path) -> None:
    """A success after a failure on unchanged lines of a function the patch touched:
    pre-existing under `changed`, counted under `file` and `all`."""
    base = {"src/close.ts": PUBLISH_TWICE, "src/other.ts": "export const other = 1\n"}
    touched = PUBLISH_TWICE.replace("{ ok: true })\n", '{ ok: true })\n    yield* Effect.log("closed")\n')
    results = {scope: _blocking(_scoped(tmp_path, scope, base, {**base, "src/close.ts": touched}), "terminal-commit-order")
               for scope in ("changed", "file", "all")}
    rule = "terminal-commit-order/success-after-failure"
    assert results["changed"] == ([], [rule])
    assert results["file"] == results["all"] == ([rule], [])


def _fixture_files(*dirs: str) -> dict[str, str]:
    root = Path(__file__).parent / "fixtures" / "rules" / "bounded-scan"
    files: dict[str, str] = {}
    for d in dirs:
        for p in sorted((root / d).rglob("*.ts")):
            files[str(p.relative_to(root / d))] = p.read_text(encoding="utf-8")
    return files


def test_scope_bounded_scan_judges_every_query_of_a_changed_scan_path_file(tmp_path: Path) -> None:
    """Over-bound scans on unchanged lines of a changed scan-path file: pre-existing under
    `changed`, counted under `file` and `all`."""
    base = _fixture_files("_shared", "bound-too-large/patched")
    recovery = "packages/core/src/session/recovery.ts"
    patched = {**base, recovery: base[recovery] + "\nexport const touched = 1\n"}
    results = {scope: _blocking(_scoped(tmp_path, scope, base, patched), "bounded-scan")
               for scope in ("changed", "file", "all")}
    assert results["changed"][0] == [] and "bounded-scan/bound-too-large" in results["changed"][1]
    assert "bounded-scan/bound-too-large" in results["file"][0] and results["file"][1] == []
    assert results["all"] == results["file"]


def test_scope_is_explained_per_family_in_help_and_usage() -> None:
    import argparse

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    scope_help = next(a.help for a in sub.choices["review"]._actions if a.dest == "scope")
    usage = (Path(__file__).parent.parent / "docs" / "usage.md").read_text(encoding="utf-8")
    section = usage[usage.index("`--scope` chooses"):usage.index("## Stored reviews")]
    for family in ("bounded-scan", "lease-renewal", "schema-prev-ids", "terminal-commit-order"):
        assert family in scope_help, family
        assert f"| {family} |" in section, family
    for scope in ("changed", "file", "all"):
        assert f"{scope}:" in scope_help or f"{scope} (default):" in scope_help, scope
        assert f"- `{scope}`" in section, scope
    # What the tests above prove, said in both places.
    assert "for them file is changed" in scope_help
    assert "so `file` gives the result of `changed`" in section


# ------------------------------------------------------------------ the front door


def test_a_bare_reviewer_prints_its_commands_and_one_error_line(capsys) -> None:
    assert main([]) == 2
    captured = capsys.readouterr()
    assert captured.out.startswith("usage: reviewer ") and "review" in captured.out and "demo" in captured.out
    assert captured.err == "reviewer: no command given: choose one of the commands above\n"


def test_an_argument_error_names_the_command_once(capsys) -> None:
    assert main(["review", "--repo", "."]) == 2
    err = capsys.readouterr().err
    assert err == ("reviewer: review: the following arguments are required: --base, --patch "
                   "(see reviewer review --help)\n")


def test_a_patch_from_a_pipe_is_named_by_its_hash_not_its_descriptor(tmp_path, capsys) -> None:
    import hashlib
    import os
    import subprocess
    import sys

    repo, base, patch, _ = make_change(tmp_path, {"a.md": "x\n"}, {"a.md": "y\n"})
    data = patch.read_bytes()
    # What `--patch <(git diff ...)` hands over: a /dev/fd path to a pipe.
    read, write = os.pipe()
    os.write(write, data)
    os.close(write)
    out = subprocess.run(
        [sys.executable, "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base,
         "--patch", f"/dev/fd/{read}", "--no-state", "--no-cache"],
        pass_fds=(read,), capture_output=True, text=True, check=False)
    os.close(read)
    assert out.returncode == 0, out.stderr
    assert f"# Review of `patch {hashlib.sha256(data).hexdigest()[:12]}`" in out.stdout.splitlines()
