"""Checkouts whose `.git` is a file: linked worktrees and submodules.

Their objects and refs live in another git directory (the main repository's,
or `.git/modules/<name>` of the superproject), and HEAD is the checkout's
own. A review from such a checkout must find the objects, resolve `HEAD` in
that checkout, give the same report as from the main checkout, and change
nothing in either.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from gitrepo import Repo, git
from reviewer.cli import main

BASE = {"src/a.ts": "export const a = 1\n", "src/b.ts": "export const b = 2\n"}
TOPIC = {"src/a.ts": "export const a = 10\n", "src/c.ts": "export const c = 3\n"}


@pytest.fixture(autouse=True)
def _outside_github(monkeypatch) -> None:
    for name in ("GITHUB_EVENT_PATH", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(name, raising=False)


def _digest(*roots: Path) -> str:
    """Every byte and name under `roots` (git directories, work trees, `.git` files included)."""
    h = hashlib.sha256()
    for root in roots:
        for p in sorted(root.rglob("*")):
            h.update(str(p).encode() + b"\0")
            if p.is_symlink():
                h.update(b"L" + str(p.readlink()).encode())
            elif p.is_file():
                h.update(b"F" + p.read_bytes())
    return h.hexdigest()


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def worktree(tmp_path: Path):
    """(main checkout, linked worktree on branch `topic`, base commit, topic commit).

    The main checkout stays on `main` at the base, so `HEAD` means something
    different in each of the two checkouts.
    """
    work = Repo(tmp_path / "work")
    base = work.commit(BASE, "base")
    linked = tmp_path / "linked"
    git(work.path, "worktree", "add", "-q", "-b", "topic", str(linked))
    for rel, text in TOPIC.items():
        (linked / rel).write_text(text)
    git(linked, "add", "-A")
    git(linked, "commit", "-q", "-m", "topic")
    assert (linked / ".git").is_file()
    return work.path, linked, base, git(linked, "rev-parse", "HEAD")


def test_review_from_a_linked_worktree_is_the_review_from_the_main_checkout(worktree, capsys, tmp_path) -> None:
    work, linked, base, topic = worktree
    patch = tmp_path / "topic.patch"
    patch.write_bytes(git(work, "diff", "--binary", "--full-index", base, topic).encode() + b"\n")
    before = _digest(work, linked)
    outputs = {}
    for repo in (work, linked):
        for fmt in ("json", "markdown"):
            code, out, err = _run(capsys, "review", "--repo", str(repo), "--base", base, "--patch", str(patch),
                                  "--no-state", "--format", fmt)
            assert code == 0, err
            outputs[repo, fmt] = out
    assert outputs[linked, "json"] == outputs[work, "json"]
    assert outputs[linked, "markdown"] == outputs[work, "markdown"]
    report = json.loads(outputs[linked, "json"])
    assert all(c["status"] != "fail" for c in report["checks"])
    assert sorted(f["path"] for f in report["files"]) == ["src/a.ts", "src/c.ts"]
    assert _digest(work, linked) == before


def test_pr_from_a_linked_worktree_resolves_its_own_head(worktree, capsys) -> None:
    work, linked, base, topic = worktree
    before = _digest(work, linked)
    code, out, err = _run(capsys, "pr", "--repo", str(linked), "--base", "main", "--head", "HEAD", "--no-state",
                          "--format", "json")
    assert code == 0, err
    from_linked = json.loads(out)
    # HEAD of the worktree (topic), not of the main checkout (main, the base: nothing to review).
    assert from_linked["pull_request"]["head"] == topic and from_linked["base"] == base
    assert sorted(f["path"] for f in from_linked["files"]) == ["src/a.ts", "src/c.ts"]
    code, out, _ = _run(capsys, "pr", "--repo", str(work), "--base", "main", "--head", "topic", "--no-state",
                        "--format", "json")
    from_main = json.loads(out)
    assert code == 0
    differs = {"pull_request"}  # the head ref's text: HEAD in one, topic in the other
    assert {k: v for k, v in from_linked.items() if k not in differs} == {
        k: v for k, v in from_main.items() if k not in differs
    }
    assert from_main["pull_request"]["head"] == topic
    # And from the main checkout, HEAD is main: the same command finds nothing to review there.
    code, out, _ = _run(capsys, "pr", "--repo", str(work), "--base", "main", "--head", "HEAD", "--no-state",
                        "--format", "json")
    assert code == 0 and json.loads(out)["files"] == []
    assert _digest(work, linked) == before


def test_a_linked_worktree_and_its_main_checkout_share_stored_reviews(worktree, capsys, tmp_path) -> None:
    """One repository, one identity: the stored review is replayed from the other checkout."""
    work, linked, base, topic = worktree
    patch = tmp_path / "topic.patch"
    patch.write_bytes(git(work, "diff", "--binary", "--full-index", base, topic).encode() + b"\n")
    state = tmp_path / "state"
    common = ["review", "--base", base, "--patch", str(patch), "--state-dir", str(state)]
    code, first, err = _run(capsys, *common, "--repo", str(work))
    assert code == 0 and err == ""
    code, again, err = _run(capsys, *common, "--repo", str(linked))
    assert code == 0 and again == first and "re-run" in err
    code, history, _ = _run(capsys, "history", "--repo", str(linked), "--state-dir", str(state))
    assert code == 0 and len(history.splitlines()) == 2


@pytest.fixture
def submodule(tmp_path: Path):
    """(superproject, submodule checkout on branch `topic`, base commit, topic commit)."""
    lib = Repo(tmp_path / "lib")
    base = lib.commit(BASE, "lib base")
    sup = Repo(tmp_path / "super")
    sup.commit({"README.md": "super\n"}, "super base")
    git(sup.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib.path), "lib")
    git(sup.path, "commit", "-q", "-m", "add lib")
    checkout = sup.path / "lib"
    assert (checkout / ".git").is_file() and "modules" in (checkout / ".git").read_text()
    git(checkout, "checkout", "-q", "-b", "topic")
    for rel, text in TOPIC.items():
        (checkout / rel).write_text(text)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "topic")
    return sup.path, checkout, base, git(checkout, "rev-parse", "HEAD")


def test_pr_and_review_from_a_submodule_checkout(submodule, capsys, tmp_path) -> None:
    sup, checkout, base, topic = submodule
    before = _digest(sup)
    code, out, err = _run(capsys, "pr", "--repo", str(checkout), "--base", "main", "--head", "HEAD", "--no-state",
                          "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["base"] == base and report["pull_request"]["head"] == topic
    assert sorted(f["path"] for f in report["files"]) == ["src/a.ts", "src/c.ts"]
    patch = tmp_path / "topic.patch"
    patch.write_bytes(git(checkout, "diff", "--binary", "--full-index", base, topic).encode() + b"\n")
    code, out, err = _run(capsys, "review", "--repo", str(checkout), "--base", base, "--patch", str(patch),
                          "--no-state", "--format", "json")
    assert code == 0, err
    reviewed = json.loads(out)
    assert reviewed["files"] == report["files"] and reviewed["findings"] == report["findings"]
    assert _digest(sup) == before


@pytest.mark.parametrize("where", ["main checkout", "linked worktree"])
def test_a_subdirectory_of_a_checkout_is_refused_with_the_top_level_named(worktree, capsys, where) -> None:
    """Not supported: `--repo` names a checkout's top level (never a parent's repository by surprise)."""
    work, linked, base, _ = worktree
    top = work if where == "main checkout" else linked
    code, out, err = _run(capsys, "pr", "--repo", str(top / "src"), "--base", "main", "--head", "HEAD", "--no-state")
    assert (code, out) == (2, "")
    assert "not its top level" in err and err.count("\n") == 1


def test_the_reported_command_from_inside_a_linked_worktree(worktree, capsys, monkeypatch) -> None:
    """Issue 14's reproduction, as typed: `reviewer pr --repo . --base main --head HEAD` in the worktree."""
    work, linked, base, topic = worktree
    monkeypatch.chdir(linked)
    code, out, err = _run(capsys, "pr", "--repo", ".", "--base", "main", "--head", "HEAD", "--no-state",
                          "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["base"] == base and report["pull_request"]["head"] == topic
    assert all(c["status"] != "fail" for c in report["checks"])
    assert all(i["status"] != "error" for i in report["invariants"])


def test_a_worktree_of_a_bare_repository(tmp_path: Path, capsys) -> None:
    """`git clone --bare` plus `git worktree add`: objects in the bare repository, HEAD in the worktree."""
    origin = Repo(tmp_path / "origin")
    base = origin.commit(BASE, "base")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin.path), str(bare))
    checkout = tmp_path / "checkout"
    git(bare, "worktree", "add", "-q", "-b", "topic", str(checkout), "main")
    for rel, text in TOPIC.items():
        (checkout / rel).write_text(text)
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "topic")
    before = _digest(bare, checkout)
    code, out, err = _run(capsys, "pr", "--repo", str(checkout), "--base", "main", "--head", "HEAD", "--no-state",
                          "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["base"] == base and sorted(f["path"] for f in report["files"]) == ["src/a.ts", "src/c.ts"]
    assert _digest(bare, checkout) == before
