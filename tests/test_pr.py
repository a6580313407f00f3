"""`reviewer pr` on real repositories: refs resolved, merge-base..head reviewed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from gitrepo import Repo, git, sample_repo, state_digest
from reviewer.cli import main


@pytest.fixture(autouse=True)
def _outside_github(monkeypatch) -> None:
    """Run under GitHub Actions or not, the PR identity and links come only from each test's arguments."""
    for name in ("GITHUB_EVENT_PATH", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def pr_repo(tmp_path: Path):
    """A bare repository with `main` and a `feature` branch that forked from it."""
    work = Repo(tmp_path / "work")
    fork_point = work.commit({"src/a.ts": "export const a = 1\n", "src/b.ts": "export const b = 2\n"}, "base")
    git(work.path, "checkout", "-q", "-b", "feature")
    head = work.commit({"src/a.ts": "export const a = 10\n", "src/c.ts": "export const c = 3\n"}, "feature")
    git(work.path, "checkout", "-q", "main")
    main_tip = work.commit({"src/b.ts": "export const b = 20\n", "docs.md": "later on main\n"}, "main moves on")
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path), str(bare)], check=True)
    return bare, fork_point, head, main_tip


def _pr(capsys, *args: str):
    code = main(["pr", *args, "--format", "json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_pr_reviews_merge_base_to_head_on_a_bare_repo(pr_repo, capsys) -> None:
    bare, fork_point, head, _ = pr_repo
    before = state_digest(bare)
    code, report, err = _pr(capsys, "--repo", str(bare), "--base", "main", "--head", "feature", "--expect-files", "2")
    assert code == 0, err
    assert report["base"] == fork_point  # not main's tip: main's own later commits are not the PR's
    assert {f["path"] for f in report["files"]} == {"src/a.ts", "src/c.ts"}
    pr = report["pull_request"]
    assert {k: pr[k] for k in ("base_ref", "head_ref", "base", "head", "merge_base")} == {
        "base_ref": "main", "head_ref": "feature", "base": pr_repo[3], "head": head, "merge_base": fork_point,
    }
    # The identity fields, once the JSON renderer shows them: no number given, the head is branch `feature`.
    assert {k: pr[k] for k in ("number", "head_branch") if k in pr} in ({}, {"number": None, "head_branch": "feature"})
    assert state_digest(bare) == before


def test_pr_with_nothing_to_review_is_merge(pr_repo, capsys) -> None:
    bare, fork_point, _, _ = pr_repo
    code, report, _ = _pr(capsys, "--repo", str(bare), "--base", "main", "--head", fork_point)
    assert code == 0 and report["verdict"] == "MERGE"
    assert report["files"] == [] and "nothing to review" in report["checks"][3]["detail"]


@pytest.mark.parametrize("base, head, message", [
    ("main", "no-such-branch", "--head 'no-such-branch': no such ref"),
    ("nope", "feature", "--base 'nope': no such ref"),
    ("main", "--upload-pack=evil", "not a ref or commit"),
])
def test_pr_unknown_refs(pr_repo, capsys, base, head, message) -> None:
    bare = pr_repo[0]
    code, report, err = _pr(capsys, "--repo", str(bare), f"--base={base}", f"--head={head}")
    assert code == 2 and report is None and message in err and err.count("\n") == 1


def test_pr_unrelated_histories(pr_repo, capsys, tmp_path) -> None:
    bare = pr_repo[0]
    other = Repo(tmp_path / "other")
    other.commit({"x.ts": "x\n"}, "unrelated root")
    git(other.path, "push", "-q", str(bare), "main:refs/heads/orphan")
    code, _, err = _pr(capsys, "--repo", str(bare), "--base", "main", "--head", "orphan")
    assert code == 2 and "no common ancestor" in err


def test_pr_shallow_clone_missing_history_says_fetch(pr_repo, capsys, tmp_path) -> None:
    bare, fork_point, _, _ = pr_repo
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{bare}", str(shallow)], check=True)
    code, _, err = _pr(capsys, "--repo", str(shallow), "--base", fork_point, "--head", "origin/feature")
    assert code == 2 and "shallow clone" in err and "fetch" in err


def test_pr_on_the_sample(tmp_path, capsys) -> None:
    """v5 pushed as a branch over the sample's base: same findings as `review`."""
    git_dir, base, patches = sample_repo(tmp_path)
    patch = patches["v5"]
    work = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(git_dir), str(work)], check=True)
    git(work, "checkout", "-q", "-b", "v5")
    git(work, "apply", "--index", str(patch))
    git(work, "commit", "-q", "-m", "v5")
    code, report, _ = _pr(capsys, "--repo", str(work), "--base", "origin/main", "--head", "v5")
    assert main(["review", "--repo", str(git_dir), "--base", base, "--patch", str(patch), "--format", "json"]) == 1
    direct = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"]] == [
        (f["rule"], f["path"], f["line"]) for f in direct["findings"]
    ]


def test_pr_from_a_linked_worktree(tmp_path: Path, capsys) -> None:
    """A `git worktree add` checkout keeps its objects and refs in the main
    repository's git directory: the review must find them there."""
    work = Repo(tmp_path / "work")
    base = work.commit({"src/a.ts": "export const a = 1\n"}, "base")
    linked = tmp_path / "linked"
    git(work.path, "worktree", "add", "-q", "-b", "topic", str(linked))
    (linked / "src" / "a.ts").write_text("export const a = 2\n")
    git(linked, "commit", "-q", "-am", "topic")
    before = state_digest(work.path)
    code, report, err = _pr(capsys, "--repo", str(linked), "--base", "main", "--head", "HEAD", "--no-state")
    assert code == 0, err
    assert report["base"] == base and [f["path"] for f in report["files"]] == ["src/a.ts"]
    assert all(c["status"] != "fail" for c in report["checks"])
    assert state_digest(work.path) == before
