"""Claims a patch makes about itself that git does not bear out, and
repositories built to hang or flood the reviewer. Each attack below was found
by attacking the reviewer; each must end in DO-NOT-MERGE or one clear line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitrepo import Repo, git, make_change, sample_repo
from reviewer import review
from reviewer.cli import main
from reviewer.gate.integrity import path_problem

RECOVERY = "packages/core/src/session/recovery.ts"


def _v5_sections(patch: bytes) -> dict[str, bytes]:
    parts = [b"diff --git " + p for p in patch.split(b"\ndiff --git ")]
    parts[0] = parts[0][len(b"diff --git "):]
    out = {}
    for part in parts:
        path = part.split(b"\n", 1)[0].split(b" b/", 1)[1].decode()
        out[path] = part if part.endswith(b"\n") else part + b"\n"
    return out


def _review(tmp_path: Path, git_dir: Path, base: str, patch: bytes, *extra: str, name: str = "x.patch"):
    path = tmp_path / name
    path.write_bytes(patch)
    return review.run(review.Request(repo=str(git_dir), base=base, patch=str(path))).report


def test_a_fake_copy_header_git_skips_cannot_hide_a_file(tmp_path: Path) -> None:
    """git stops reading a header at the first line it does not know, so the
    `copy from` below is never git's; the section is a plain ---/+++ change."""
    git_dir, base, patches = sample_repo(tmp_path)
    section = _v5_sections(patches["v5"].read_bytes())[RECOVERY]
    body = section[section.index(b"--- a/"):]
    fake = b"diff --git a/x b/x\nnot a header\ncopy from packages\ncopy to " + RECOVERY.encode() + b"\n" + body
    real = _review(tmp_path, git_dir, base, section, name="real.patch")
    faked = _review(tmp_path, git_dir, base, fake, name="fake.patch")
    assert real.verdict.value == faked.verdict.value == "DO-NOT-MERGE"
    assert [(f.rule, f.location.line) for f in faked.findings if f.location] == \
        [(f.rule, f.location.line) for f in real.findings if f.location]
    assert [(f.path, f.status, f.binary) for f in faked.files] == [(RECOVERY, "modified", False)]


def test_a_rename_claim_must_name_a_file_of_the_base(tmp_path: Path) -> None:
    repo, base, _, _ = make_change(tmp_path, {"src/a.ts": "export const a = 1\n", "src/sub/b.ts": "x\n"},
                                   {"src/a.ts": "export const a = 1\n", "src/sub/b.ts": "x\n"})
    patch = (b"diff --git a/src/sub b/src/c.ts\nsimilarity index 100%\ncopy from src/sub\ncopy to src/c.ts\n"
             b"--- /dev/null\n+++ b/src/c.ts\n@@ -0,0 +1 @@\n+export const c = 1\n")
    report = _review(tmp_path, repo.path, base, patch)
    assert all(f.old_path is None for f in report.files), report.files
    assert "integrity/clean-apply" in {c.id for c in report.checks}


def test_a_moved_file_is_judged_as_new_code_where_it_now_lives(tmp_path: Path) -> None:
    """Whether a patch calls a move a rename or a delete plus an add cannot change the verdict."""
    git_dir, base, patches = sample_repo(tmp_path)
    plain = _review(tmp_path, git_dir, base, patches["v5"].read_bytes(), name="v5.patch")
    work = Repo(tmp_path / "work")
    git(work.path, "fetch", "-q", str(git_dir), base)
    git(work.path, "checkout", "-q", "FETCH_HEAD")
    subprocess.run(["git", "apply"], input=patches["v5"].read_bytes(), cwd=work.path, check=True)
    moved_from, moved_to = "packages/core/src/session/input.ts", "packages/core/src/session/wake/input.ts"
    git(work.path, "add", "-A")
    (work.path / "packages/core/src/session/wake").mkdir()
    git(work.path, "mv", moved_from, moved_to)
    git(work.path, "commit", "-qm", "v5 with recovery.ts moved")
    head = git(work.path, "rev-parse", "HEAD")
    renamed = work.diff(base, head, "-M")
    as_add_delete = work.diff(base, head, "--no-renames")
    assert f"rename to {moved_to}".encode() in renamed
    by_rename = _review(tmp_path, git_dir, base, renamed, name="renamed.patch")
    by_add_delete = _review(tmp_path, git_dir, base, as_add_delete, name="adddel.patch")
    rules = lambda r: sorted((f.rule, f.location.path, f.location.line) for f in r.findings if f.location)  # noqa: E731
    assert rules(by_rename) == rules(by_add_delete)
    # regression-evidence is left out of the count: the move also breaks the new test's import of
    # the module, so the moved code is rightly untested there.
    moved = [f for f in rules(by_rename) if f[1] == moved_to and not f[0].startswith("regression-evidence/")]
    assert moved and [f[0] for f in moved] == [f[0] for f in rules(plain) if f[1] == moved_from]
    assert next(f for f in by_rename.files if f.path == moved_to).old_path == moved_from


@pytest.mark.parametrize("prefix", [b"// \xff\n", b"// \x00\n", b"/* \xc3 */\n"])
def test_typescript_the_rules_cannot_read_fails_the_review(tmp_path: Path, prefix: bytes) -> None:
    git_dir, base, patches = sample_repo(tmp_path)
    work = Repo(tmp_path / "work")
    git(work.path, "fetch", "-q", str(git_dir), base)
    git(work.path, "checkout", "-q", "FETCH_HEAD")
    subprocess.run(["git", "apply"], input=patches["v5"].read_bytes(), cwd=work.path, check=True)
    target = work.path / RECOVERY
    target.write_bytes(prefix + target.read_bytes())
    git(work.path, "add", "-A")
    git(work.path, "commit", "-qm", "v5 with an unreadable byte")
    head = git(work.path, "rev-parse", "HEAD")
    report = _review(tmp_path, git_dir, base, work.diff(base, head))
    limits = next(c for c in report.checks if c.id == "integrity/limits")
    assert limits.status.value == "fail" and RECOVERY in limits.detail and "cannot read it as TypeScript" in limits.detail
    assert report.verdict.value == "DO-NOT-MERGE"


def test_a_form_feed_cannot_shift_a_suppression_onto_another_line(tmp_path: Path) -> None:
    """Lines are numbered by "\\n" alone everywhere; str.splitlines would count
    the form feeds below as line breaks and move the directive."""
    base_code = "export const a = 1\n" * 3
    scan = ('import { db } from "./db"\nimport { SessionInputTable } from "./sql"\n'
            "export const wake = () =>\n  db.select().from(SessionInputTable)\n")
    directive = "// reviewer-ignore: bounded-scan/unbounded -- reviewed\n"
    patched = {"packages/core/src/session/input.ts": "export const a = 1\x0c\x0c\x0c\n" + directive + "\n\n" + scan}
    repo, base, patch, _ = make_change(tmp_path, {"packages/core/src/session/input.ts": base_code}, patched)
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch))).report
    assert not report.suppressed
    unbounded = [f for f in report.findings if f.rule == "bounded-scan/unbounded"]
    assert unbounded and report.verdict.value == "DO-NOT-MERGE"
    assert any(f.rule == "suppression/unused" and f.location.line == 2 for f in report.findings)


def test_quoted_code_never_carries_terminal_or_bidi_controls(tmp_path: Path) -> None:
    code = "export const a = 1 // \x1b[1A\x1b[2K\u202e evil\n\tindented\n"
    repo, base, patch, _ = make_change(tmp_path, {"src/a.ts": "export const a = 0\n"}, {"src/a.ts": code})
    odd_name = tmp_path / "x\x1b]0;pwned\x07.patch"
    odd_name.write_bytes(patch.read_bytes())
    from reviewer.engine.api import CheckSpec, Family, Outcome
    from reviewer.report.model import InvariantStatus, Location, Severity

    def flag(ctx) -> Outcome:
        return Outcome("s", (ctx.finding("x", title="t", message="m",
                                                                     location=Location("src/a.ts", 1, 2)),), examined=1)
    family = Family("quoting", "q", (CheckSpec("quoting/x", Severity.MUST_FIX, "t", "s"),), flag)
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(odd_name)), families=(family,)).report
    from reviewer.report.formats import renderer

    for fmt in ("markdown", "comment", "github", "json", "sarif"):
        text = renderer(fmt)(report)
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text, fmt
    md = renderer("markdown")(report)
    assert "\\x1b[1A" in md and "\\u202e" in md and "\n\tindented\n" in md


@pytest.mark.parametrize("path", [".g\u200cit/hooks/post-checkout", ".GIT\u200d/config", ".git\ufeff/config",
                                  "GIT~2/config", "git~1/config", ".git:$DATA/x", "a/.Git./config"])
def test_dot_git_look_alikes_are_refused(path: str) -> None:
    assert path_problem(path) is not None, path


@pytest.mark.parametrize("path", [".github/workflows/ci.yml", "src/.gitkeep", "docs/git~guide.md", "gitx/a.ts"])
def test_names_that_only_resemble_dot_git_are_fine(path: str) -> None:
    assert path_problem(path) is None, path


def _pr_with_config_on_main(tmp_path: Path) -> tuple[Path, str, str]:
    """main tightens reviewer.toml after the PR branched: the PR must be judged by main's rules."""
    work = Repo(tmp_path / "work")
    work.commit({"README.md": "hi\n"}, "base")
    git(work.path, "checkout", "-q", "-b", "topic")
    scan = ('import { db } from "./db"\nimport { Jobs } from "./sql"\n'
            "export const sweep = () =>\n  db.select().from(Jobs)\n")
    head = work.commit({"packages/core/src/worker/sweep.ts": scan}, "an unbounded sweep")
    git(work.path, "checkout", "-q", "main")
    tight = '[rules.bounded-scan]\ntables = ["Jobs"]\nscan_paths = ["packages/core/src/**"]\n'
    main_tip = work.commit({"reviewer.toml": tight}, "tighten the rules")
    return work.path, main_tip, head


def test_pr_is_judged_by_the_target_branchs_configuration(tmp_path: Path, capsys) -> None:
    repo, main_tip, head = _pr_with_config_on_main(tmp_path)
    code = main(["pr", "--repo", str(repo), "--base", main_tip, "--head", head, "--no-state", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1, report["invariants"]
    assert any(f["rule"] == "bounded-scan/unbounded" for f in report["findings"])


def _bare_sample(tmp_path: Path) -> tuple[Path, str, Path]:
    git_dir, base, patches = sample_repo(tmp_path)
    return git_dir, base, patches["v6"]


@pytest.mark.parametrize("plant", ["head-device", "packed-refs-fifo", "alternates-device", "shallow-fifo"])
def test_a_repository_that_would_hang_or_flood_is_refused_in_one_line(tmp_path: Path, plant: str) -> None:
    git_dir, base, patch = _bare_sample(tmp_path)
    if plant == "head-device":
        (git_dir / "HEAD").unlink()
        # git accepts a symbolic-link HEAD whose target starts with refs/
        (git_dir / "HEAD").symlink_to("refs/" + "../" * (len(git_dir.parts) + 2) + "dev/zero")
    elif plant == "packed-refs-fifo":
        os.mkfifo(git_dir / "packed-refs")
    elif plant == "shallow-fifo":
        os.mkfifo(git_dir / "shallow")
    else:
        (git_dir / "objects" / "info").mkdir(exist_ok=True)
        (git_dir / "objects" / "info" / "alternates").symlink_to("/dev/zero")
    proc = subprocess.run([sys.executable, "-m", "reviewer", "review", "--repo", str(git_dir), "--base", base,
                           "--patch", str(patch), "--no-state"], capture_output=True, timeout=60)
    assert proc.returncode == 2, proc.stdout[-200:]
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "refusing to read this repository" in err, err
