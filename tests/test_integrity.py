"""Each integrity check passing and failing, each bad input, and the repository untouched."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from gitrepo import Repo, git, make_change, state_digest
from reviewer.cli import main

BASE = {"src/a.ts": "export const a = 1\n", "src/b.ts": "export const b = 2\n"}
PATCHED = {"src/a.ts": "export const a = 10\n", "src/c.ts": "export const c = 3\n"}


def _review(capsys, *args: str) -> tuple[int, dict, str]:
    code = main(["review", *args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else {}), err


def _checks(report: dict) -> dict[str, str]:
    return {c["id"]: c["status"] for c in report["checks"]}


@pytest.fixture
def change(tmp_path: Path):
    return make_change(tmp_path, BASE, PATCHED)


def test_all_checks_pass(change, capsys) -> None:
    repo, base, patch, _ = change
    sha = hashlib.sha256(patch.read_bytes()).hexdigest()
    artifact = patch.parent / "server.bin"
    artifact.write_bytes(b"artifact")
    code, report, _ = _review(
        capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--patch-sha256", sha,
        "--expect-files", "2", "--artifact", f"{artifact}={hashlib.sha256(b'artifact').hexdigest()}",
    )
    assert code == 0 and report["verdict"] == "MERGE"
    assert _checks(report) == {
        "integrity/base-commit": "pass", "integrity/patch-sha256": "pass", "integrity/artifact-sha256": "pass",
        "integrity/clean-apply": "pass", "integrity/file-count": "pass", "integrity/paths": "pass",
        "integrity/limits": "pass",
    }


def test_optional_checks_skip_when_not_asked(change, capsys) -> None:
    repo, base, patch, _ = change
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    checks = _checks(report)
    assert code == 0
    assert checks["integrity/patch-sha256"] == checks["integrity/file-count"] == checks["integrity/artifact-sha256"] == "skip"


@pytest.mark.parametrize(
    "extra, failed",
    [
        (["--patch-sha256", "0" * 64], "integrity/patch-sha256"),
        (["--expect-files", "3"], "integrity/file-count"),
    ],
)
def test_mismatch_fails_one_check_and_blocks(change, capsys, extra, failed) -> None:
    repo, base, patch, _ = change
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch), *extra)
    assert code == 1 and report["verdict"] == "DO-NOT-MERGE"
    assert [cid for cid, st in _checks(report).items() if st == "fail"] == [failed]
    assert any(f["rule"] == failed and f["severity"] == "must-fix" for f in report["findings"])


def test_artifact_mismatch_and_missing_artifact(change, capsys, tmp_path) -> None:
    repo, base, patch, _ = change
    art = tmp_path / "server.bin"
    art.write_bytes(b"real")
    code, report, _ = _review(
        capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch),
        "--artifact", f"{art}={'1' * 64}", "--artifact", f"{tmp_path / 'absent.bin'}={'2' * 64}",
    )
    details = [c["detail"] for c in report["checks"] if c["id"] == "integrity/artifact-sha256"]
    assert code == 1 and len(details) == 2
    assert "expected 1111" in details[0] and "cannot read" in details[1]


def test_unknown_base_commit_fails_check_not_crash(change, capsys) -> None:
    repo, _, patch, _ = change
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", "f" * 40, "--patch", str(patch))
    checks = _checks(report)
    assert code == 1
    assert checks["integrity/base-commit"] == "fail" and checks["integrity/clean-apply"] == "skip"
    assert all(inv["status"] == "error" for inv in report["invariants"])


def test_base_that_is_a_tree_not_a_commit(change, capsys) -> None:
    repo, base, patch, _ = change
    tree = git(repo.path, "rev-parse", f"{base}^{{tree}}")
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", tree, "--patch", str(patch))
    assert code == 1 and "is a tree, not a commit" in report["checks"][0]["detail"]


def test_patch_that_does_not_apply(tmp_path, capsys) -> None:
    repo, base, patch, _ = make_change(tmp_path, BASE, PATCHED)
    other = Repo(tmp_path / "other")
    ob = other.commit({"src/a.ts": "something else\n"})
    code, report, _ = _review(capsys, "--repo", str(other.path), "--base", ob, "--patch", str(patch))
    assert code == 1
    apply = next(c for c in report["checks"] if c["id"] == "integrity/clean-apply")
    assert apply["status"] == "fail" and "does not apply" in apply["detail"]


@pytest.mark.parametrize(
    "path, why",
    [
        ("../outside.ts", "'..' path component"),
        ("/etc/passwd", "absolute path"),
        (".git/hooks/post-checkout", "inside .git/"),
        ("sub/.GIT/config", "inside .git/"),
    ],
)
def test_unsafe_paths_fail_the_paths_check(tmp_path, capsys, path, why) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README.md": "x\n"})
    patch = tmp_path / "evil.patch"
    patch.write_text(
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1 @@\n+owned\n"
    )
    before = state_digest(repo.path)
    code = main(["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 1, err
    report = json.loads(out)
    checks = {c["id"]: c for c in report["checks"]}
    assert checks["integrity/paths"]["status"] == "fail"
    assert why in checks["integrity/paths"]["detail"]
    assert state_digest(repo.path) == before
    assert not (tmp_path / "outside.ts").exists()


def test_symlink_creation_is_refused(tmp_path, capsys) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README.md": "x\n"})
    git(repo.path, "checkout", "-q", "-b", "link")
    (repo.path / "lnk").symlink_to("/etc")
    git(repo.path, "add", "lnk")
    git(repo.path, "commit", "-q", "-m", "link")
    patch = tmp_path / "link.patch"
    patch.write_bytes(repo.diff(base, "link"))
    git(repo.path, "checkout", "-q", "main")
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    paths = next(c for c in report["checks"] if c["id"] == "integrity/paths")
    assert code == 1 and paths["status"] == "fail" and "symbolic link" in paths["detail"]


@pytest.mark.parametrize(
    "make_args, message",
    [
        (lambda r, b, p, t: ["--repo", str(t / "nope"), "--base", b, "--patch", str(p)], "no such directory"),
        (lambda r, b, p, t: ["--repo", str(t), "--base", b, "--patch", str(p)], "not a git repository"),
        (lambda r, b, p, t: ["--repo", str(r.path / "src"), "--base", b, "--patch", str(p)], "not its top level"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", "main", "--patch", str(p)], "full 40-hex commit id"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b[:12], "--patch", str(p)], "full 40-hex commit id"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(t / "missing.patch")], "no such file"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(t / "empty.patch")], "the patch is empty"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(t / "prose.patch")], "not a diff"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(p), "--patch-sha256", "xyz"], "not a SHA-256"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(p), "--artifact", "nohash"], "FILE=SHA256"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(p), "--format", "yaml"], "unknown format"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b, "--patch", str(p), "--format", "json", "--format", "markdown"], "at most one"),
        (lambda r, b, p, t: ["--repo", str(r.path), "--base", b], "--patch"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, capsys, make_args, message) -> None:
    work = tmp_path / "w"
    work.mkdir()
    repo, base, patch, _ = make_change(work, BASE, PATCHED)
    (tmp_path / "empty.patch").write_bytes(b"\n\n")
    (tmp_path / "prose.patch").write_text("this is a letter, not a diff\n")
    before = state_digest(repo.path)
    code = main(["review", *make_args(repo, base, patch, tmp_path)])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.startswith("reviewer: ") and message in err and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert state_digest(repo.path) == before


def test_ref_instead_of_sha_names_the_resolved_id(change, capsys) -> None:
    repo, base, patch, _ = change
    assert main(["review", "--repo", str(repo.path), "--base", "main", "--patch", str(patch)]) == 2
    assert base in capsys.readouterr().err


def test_checkout_with_uncommitted_changes_stays_exactly_as_it_was(change, capsys) -> None:
    repo, base, patch, _ = change
    (repo.path / "src/a.ts").write_text("uncommitted edit\n")
    (repo.path / "untracked.txt").write_text("scratch\n")
    git(repo.path, "add", "untracked.txt")  # staged, too
    (repo.path / "src/b.ts").write_text("unstaged edit\n")
    before = state_digest(repo.path)
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    assert code == 0 and report["verdict"] == "MERGE"
    assert state_digest(repo.path) == before
    assert (repo.path / "src/a.ts").read_text() == "uncommitted edit\n"


def test_bare_repository_works_and_is_untouched(change, capsys, tmp_path) -> None:
    repo, base, patch, _ = change
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(bare)], check=True)
    before = state_digest(bare)
    objects_before = sorted(p.name for p in (bare / "objects").rglob("*") if p.is_file())
    code, report, _ = _review(capsys, "--repo", str(bare), "--base", base, "--patch", str(patch), "--expect-files", "2")
    assert code == 0 and report["verdict"] == "MERGE"
    assert state_digest(bare) == before
    assert not (bare / "index").exists()
    # Not even the blobs and trees git derives from the patch land in the repository.
    assert sorted(p.name for p in (bare / "objects").rglob("*") if p.is_file()) == objects_before


def test_verify_runs_the_gate_only(change, capsys) -> None:
    repo, base, patch, _ = change
    code = main(["verify", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["schema"] == "reviewer-gate/1" and report["gate"] == "pass"
    assert len(report["checks"]) == 7 and "invariants" not in report and "verdict" not in report


def test_symlink_then_write_through_it_is_refused(tmp_path, capsys) -> None:
    """The CVE-2023-23946 shape: create a link, then a file 'inside' it."""
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README.md": "x\n"})
    patch = tmp_path / "cve.patch"
    patch.write_text(
        "diff --git a/lnk b/lnk\nnew file mode 120000\n--- /dev/null\n+++ b/lnk\n@@ -0,0 +1 @@\n+../outside\n"
        "\\ No newline at end of file\n"
        "diff --git a/lnk/owned b/lnk/owned\nnew file mode 100644\n--- /dev/null\n+++ b/lnk/owned\n@@ -0,0 +1 @@\n+owned\n"
    )
    before = state_digest(repo.path)
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    checks = {c["id"]: c for c in report["checks"]}
    assert code == 1
    assert checks["integrity/clean-apply"]["status"] == "fail"
    assert checks["integrity/paths"]["status"] == "fail" and "'lnk': creates a symbolic link" in checks["integrity/paths"]["detail"]
    assert state_digest(repo.path) == before and not (tmp_path / "outside").exists()


def test_gitlink_is_refused(tmp_path, capsys) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README.md": "x\n"})
    patch = tmp_path / "sub.patch"
    patch.write_text(
        "diff --git a/vendor/lib b/vendor/lib\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n"
        "+++ b/vendor/lib\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n"
    )
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch))
    paths = next(c for c in report["checks"] if c["id"] == "integrity/paths")
    assert code == 1 and "gitlink" in paths["detail"]


def test_binary_hunk_and_rename_pass_the_gate(tmp_path, capsys) -> None:
    base_files = {"img/a.bin": bytes(range(200)), "src/old.ts": "".join(f"const v{i} = {i}\n" for i in range(20))}
    patched = {"img/a.bin": bytes(range(100)), "src/old.ts": None, "src/new.ts": base_files["src/old.ts"] + "const w = 1\n"}
    repo, base, patch, _ = make_change(tmp_path, base_files, patched, "-M")
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--expect-files", "2")
    assert code == 0, report["checks"]
    assert {f["path"]: (f["status"], f["old_path"]) for f in report["files"]} == {
        "img/a.bin": ("modified", None), "src/new.ts": ("renamed", "src/old.ts"),
    }


def test_blob_reader_recovers_after_an_interrupted_read(change) -> None:
    from reviewer.gitio import BlobReader, open_repo

    repo_obj, base, _, _ = change
    repo = open_repo(str(repo_obj.path))
    oid = git(repo_obj.path, "rev-parse", f"{base}:src/a.ts")
    reader = BlobReader(repo)
    assert reader.get(oid) == b"export const a = 1\n"
    with pytest.raises(Exception):
        reader.get("f" * 40)
    assert reader.get(oid) == b"export const a = 1\n"
    reader.close()


def test_apply_failure_keeps_gits_cause(tmp_path, capsys) -> None:
    repo, base, patch, _ = make_change(tmp_path, BASE, PATCHED)
    other = Repo(tmp_path / "other")
    ob = other.commit({"src/a.ts": "export const a = 1\nmore\n", "src/b.ts": "different\n"})
    code, report, _ = _review(capsys, "--repo", str(other.path), "--base", ob, "--patch", str(patch))
    detail = next(c["detail"] for c in report["checks"] if c["id"] == "integrity/clean-apply")
    assert code == 1 and "src/a.ts" in detail and "patch does not apply" in detail


def test_symlinks_can_be_allowed_explicitly(tmp_path, capsys) -> None:
    repo = Repo(tmp_path / "repo")
    base = repo.commit({"README.md": "x\n"})
    git(repo.path, "checkout", "-q", "-b", "link")
    (repo.path / "favicon.ico").symlink_to("assets/favicon.ico")
    git(repo.path, "add", "favicon.ico")
    git(repo.path, "commit", "-q", "-m", "link")
    patch = tmp_path / "link.patch"
    patch.write_bytes(repo.diff(base, "link"))
    git(repo.path, "checkout", "-q", "main")
    code, report, _ = _review(capsys, "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--allow-symlinks")
    assert code == 0 and next(c for c in report["checks"] if c["id"] == "integrity/paths")["status"] == "pass"
    out = tmp_path / "out"
    assert main(["reconstruct", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--out", str(out), "--allow-symlinks"]) == 0
    written = out / "favicon.ico"
    assert not written.is_symlink() and written.read_bytes() == b"assets/favicon.ico"  # the link's target, as a plain file
