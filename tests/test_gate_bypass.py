"""A patch cannot misstate its own change: what changed is git's diff of the blobs
git produced, whatever the patch's hunk headers, encoding or section order say.

Each test takes the sample's v5 patch (its hand-listed must-fix defects), says
the same change another way, and expects the same findings.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from gitrepo import ENV, make_change, sample_repo
from reviewer import review
from reviewer.cli import main
from reviewer.report.model import InvariantStatus

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = json.loads((ROOT / "samples" / "session-recovery" / "expected.json").read_text())
LOCAL = "packages/core/src/session/execution/local.ts"


def plumb(git_dir: Path, *args: str, stdin: bytes | None = None, index: Path | None = None) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | ENV
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    proc = subprocess.run(["git", f"--git-dir={git_dir}", *args], input=stdin, capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def commit_patch(git_dir: Path, parent: str, patch: bytes, tmp: Path) -> str:
    """The commit `git apply` makes of `patch` on `parent` (the truth a review must match)."""
    index = tmp / "index"
    plumb(git_dir, "read-tree", parent, index=index)
    plumb(git_dir, "apply", "--cached", "-", stdin=patch, index=index)
    tree = plumb(git_dir, "write-tree", index=index).decode().strip()
    index.unlink()
    return plumb(git_dir, "commit-tree", tree, "-p", parent, "-m", "patched").decode().strip()


def commit_files(git_dir: Path, parent: str, files: dict[str, bytes], tmp: Path) -> str:
    index = tmp / "index"
    plumb(git_dir, "read-tree", parent, index=index)
    for path, data in files.items():
        oid = plumb(git_dir, "hash-object", "-w", "--stdin", stdin=data).decode().strip()
        plumb(git_dir, "update-index", "--add", "--cacheinfo", f"100644,{oid},{path}", index=index)
    tree = plumb(git_dir, "write-tree", index=index).decode().strip()
    index.unlink()
    return plumb(git_dir, "commit-tree", tree, "-p", parent, "-m", "files").decode().strip()


def must_fix(report) -> list[tuple[str, str, int, int]]:
    return sorted((f.rule, f.location.path, f.location.line, f.location.end_line)
                  for f in report.findings if f.severity.value == "must-fix" and f.location is not None)


V5_MUST_FIX = sorted((f["rule"], f["path"], f["line"], f["end_line"]) for f in EXPECTED["v5"]["findings"]
                     if f.get("severity", "must-fix") == "must-fix")


@pytest.fixture()
def sample(tmp_path: Path):
    git_dir, base, patches = sample_repo(tmp_path)
    return git_dir, base, patches["v5"].read_bytes()


def review_bytes(tmp_path: Path, git_dir: Path, base: str, patch: bytes, name: str = "variant.patch", **kw):
    path = tmp_path / name
    path.write_bytes(patch)
    return review.run(review.Request(repo=str(git_dir), base=base, patch=str(path), **kw)).report


def test_the_sample_itself_gives_its_hand_listed_defects(tmp_path: Path, sample) -> None:
    git_dir, base, v5 = sample
    assert must_fix(review_bytes(tmp_path, git_dir, base, v5)) == V5_MUST_FIX


def test_a_lying_hunk_header_changes_nothing(tmp_path: Path, sample) -> None:
    git_dir, base, v5 = sample
    assert v5.count(b"@@ -59,7 +62,23 @@") == 1
    lying = v5.replace(b"@@ -59,7 +62,23 @@", b"@@ -2,7 +2,23 @@")
    truth = commit_patch(git_dir, base, v5, tmp_path)
    # git places the hunk by its context: the patched file is v5's, byte for byte.
    assert commit_patch(git_dir, base, lying, tmp_path) == truth
    report = review_bytes(tmp_path, git_dir, base, lying)
    assert next(c for c in report.checks if c.id == "integrity/clean-apply").status.value == "pass"
    assert must_fix(report) == V5_MUST_FIX
    assert report.verdict.value == "DO-NOT-MERGE"


@pytest.mark.parametrize("attributes", ["* binary\n", "*.ts -diff\n"])
def test_text_sent_as_a_git_binary_patch_changes_nothing(tmp_path: Path, sample, attributes: str) -> None:
    git_dir, base, v5 = sample
    patched = commit_patch(git_dir, base, v5, tmp_path)
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text(attributes)
    encoded = plumb(git_dir, "diff", "--binary", "--full-index", base, patched)
    (info / "attributes").unlink()
    assert encoded.count(b"GIT binary patch") >= 5
    local_section = encoded.split(f"diff --git a/{LOCAL}".encode(), 1)[1].split(b"diff --git", 1)[0]
    assert b"GIT binary patch" in local_section and b"\n@@ " not in local_section
    report = review_bytes(tmp_path, git_dir, base, encoded)
    assert must_fix(report) == V5_MUST_FIX
    local = next(f for f in report.files if f.path == LOCAL)
    assert not local.binary and local.added > 0
    assert report.patch.added == review_bytes(tmp_path, git_dir, base, v5, "plain.patch").patch.added


def test_pr_ignores_attributes_that_would_encode_text_as_binary(tmp_path: Path, sample, capsys) -> None:
    git_dir, base, v5 = sample
    patched = commit_patch(git_dir, base, v5, tmp_path)
    with_attrs = commit_files(git_dir, base, {".gitattributes": b"*.ts binary\n*.json -diff\n"}, tmp_path)
    head = commit_patch(git_dir, with_attrs, v5, tmp_path)
    info = git_dir / "info"
    info.mkdir(exist_ok=True)
    (info / "attributes").write_text("* binary\n")
    code = main(["pr", "--repo", str(git_dir), "--base", with_attrs, "--head", head, "--no-state", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    got = sorted((f["rule"], f["path"], f["line"], f["end_line"]) for f in report["findings"] if f["severity"] == "must-fix")
    assert got == V5_MUST_FIX
    assert patched != head


def test_one_file_in_two_sections_keeps_both_sections_changes(tmp_path: Path, sample) -> None:
    git_dir, base, v5 = sample
    patched = commit_patch(git_dir, base, v5, tmp_path)
    v5_local = plumb(git_dir, "cat-file", "blob", f"{patched}:{LOCAL}")
    # Section one brings the file to v5's text (with every seeded defect);
    # section two, for the same path, then only appends a comment.
    middle = commit_files(git_dir, base, {LOCAL: v5_local}, tmp_path)
    last = commit_files(git_dir, middle, {LOCAL: v5_local + b"// trailing note\n"}, tmp_path)
    first = plumb(git_dir, "diff", "--full-index", base, middle, "--", LOCAL)
    second = plumb(git_dir, "diff", "--full-index", middle, last, "--", LOCAL)
    others = re.split(rb"(?m)^(?=diff --git )", v5)
    rest = b"".join(s for s in others if s and not s.startswith(f"diff --git a/{LOCAL} ".encode()))
    report = review_bytes(tmp_path, git_dir, base, first + second + rest)
    assert next(c for c in report.checks if c.id == "integrity/clean-apply").status.value == "pass"
    assert [f.path for f in report.files].count(LOCAL) == 1
    assert must_fix(report) == V5_MUST_FIX
    assert report.patch.files == len({f.path for f in report.files})


CLAIM = "export const SessionExecutionClaim = {\n  clear: (id: string) => Effect.void,\n}\n"
RUN = """import { Effect } from "effect"
import { SessionExecutionClaim } from "./claim"
export const run = (id: string) =>
  Effect.gen(function* () {
    yield* work(id)
  }).pipe(
    Effect.catchTag("Lost", () => Effect.fail(new Error("lost"))),
    Effect.onExit(() => SessionExecutionClaim.clear(id)),
  )
export const unrelated = (n: number) => n + 1
"""
EXECUTION = "packages/core/src/session/execution/local.ts"


def _review_run_file(tmp_path: Path, patched: str):
    base = {"packages/core/src/session/execution/claim.ts": CLAIM, EXECUTION: RUN}
    repo, sha, patch, _ = make_change(tmp_path, base, {**base, EXECUTION: patched})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report
    return report, next(i for i in report.invariants if i.id == "lease-renewal")


@pytest.mark.parametrize("broken", [
    RUN.replace("yield* work(id)\n", "yield* work(id))\n"),
    RUN.replace("export const run", ")\nexport const run"),
    RUN.replace("(id: string) =>\n", "(id: string)) =>\n"),
    RUN.replace("  Effect.gen(function* () {\n", "  Effect.gen(function* () {)\n"),
    # The stray paren also swallows `Lost` into a success: the violation hides in the region.
    RUN.replace('Effect.catchTag("Lost", () => Effect.fail(new Error("lost"))),', ') Effect.catchTag("Lost", () => Effect.void),'),
], ids=["after-work", "top-level", "arrow", "gen-head", "swallowed-lost"])
def test_a_parse_error_in_changed_claim_code_fails_closed(tmp_path: Path, broken: str) -> None:
    report, lease = _review_run_file(tmp_path, broken)
    assert lease.status is InvariantStatus.ERROR, lease.summary
    assert "does not parse" in lease.summary and EXECUTION in lease.summary
    assert report.verdict.value == "DO-NOT-MERGE"


def test_a_parse_error_in_a_changed_declaration_without_claim_idioms_is_a_note(tmp_path: Path) -> None:
    report, lease = _review_run_file(tmp_path, RUN.replace("(n: number) => n + 1", "(n: number)) => n + 2"))
    assert lease.status is InvariantStatus.VERIFIED, lease.summary
    assert [f.rule for f in lease.findings] == ["lease-renewal/parse-error"]
    assert report.verdict.value == "MERGE"


def test_the_fixture_parses_and_is_verified_when_intact(tmp_path: Path) -> None:
    report, lease = _review_run_file(tmp_path, RUN.replace("(n: number) => n + 1", "(n: number) => n + 2"))
    assert lease.status is InvariantStatus.VERIFIED and not lease.findings, lease.summary


def test_a_generic_word_around_a_grammar_gap_is_not_a_claim_idiom(tmp_path: Path) -> None:
    """Real code (opencode's plugin layer): an `import("…")` type the grammar
    cannot parse, on a changed line, inside a declaration that calls an
    unrelated `Map.clear()`. Only the qualified idiom makes it claim code."""
    plugin = (
        'import { Effect } from "effect"\n'
        "export const layer = Effect.gen(function* () {\n"
        "  const active = new Map<string, number>()\n"
        '  let host: Parameters<import("x").Plugin["effect"]>[0]\n'
        "  active.clear()\n"
        "})\n"
    )
    base = {EXECUTION: RUN, "packages/core/src/plugin.ts": plugin.replace('[0]\n', '[1]\n')}
    repo, sha, patch, _ = make_change(tmp_path, base, {**base, "packages/core/src/plugin.ts": plugin})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report
    lease = next(i for i in report.invariants if i.id == "lease-renewal")
    assert lease.status is not InvariantStatus.ERROR, lease.summary
    assert report.verdict.value == "MERGE"
