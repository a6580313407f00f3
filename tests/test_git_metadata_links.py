"""Issue 24 item 3: git metadata read through links.

With `.git/packed-refs` a symbolic link to a file outside the repository,
`reviewer sweep` once printed a line of that file (`DATABASE_URL=...`) on
standard error: git quoted it as an "unexpected line in packed-refs". Every
piece of git metadata (HEAD, config, packed-refs, shallow, every loose ref,
objects/info/*, info/grafts, commondir, gitdir, the `.git` file, and the
directories refs/, objects/, objects/info/, objects/pack/) must be a regular file or a
real directory inside the git directory: anything else is refused by every
command, in one line naming it, before git reads anything, and no byte of
the file it leads to is ever shown. Real repositories, real commands.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitrepo import Repo, git
from reviewer.cli import main

SECRET = "DATABASE_URL=postgres://reviewer:hunter2@db.internal/production"
COMMANDS = ("review", "pr", "sweep", "init", "history")
REFUSED = "reviewer: refusing to read this repository: "


@dataclass(frozen=True)
class Fixture:
    repo: Path  # what --repo names: a checkout's top level, a linked worktree or a bare repository
    git_dir: Path  # where the metadata is planted
    base: str
    head: str
    patch: Path
    secret: Path  # a file outside the repository, holding SECRET
    state: Path


def _checkout(tmp_path: Path) -> Fixture:
    """main: base, then head; refs packed (as `git gc` leaves them), so git needs packed-refs to find main."""
    work = Repo(tmp_path / "repo")
    base = work.commit({"src/a.ts": "export const a = 1\n"}, "base")
    head = work.commit({"src/a.ts": "export const a = 2\n", "src/b.ts": "export const b = 3\n"}, "head")
    git(work.path, "pack-refs", "--all")
    assert not (work.path / ".git" / "refs" / "heads" / "main").exists()
    patch = tmp_path / "change.patch"
    patch.write_bytes(work.diff(base, head))
    secret = tmp_path / "outside" / "secrets.env"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return Fixture(work.path, work.path / ".git", base, head, patch, secret, tmp_path / "state")


def _bare(tmp_path: Path) -> Fixture:
    f = _checkout(tmp_path)
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(f.repo), str(bare))
    assert (bare / "packed-refs").is_file()
    return Fixture(bare, bare, f.base, f.head, f.patch, f.secret, f.state)


def _worktree(tmp_path: Path) -> Fixture:
    """A `git worktree add` checkout on branch topic, one commit past main; --repo names the worktree."""
    f = _checkout(tmp_path)
    linked = tmp_path / "linked"
    git(f.repo, "worktree", "add", "-q", "-b", "topic", str(linked))
    (linked / "src" / "c.ts").write_text("export const c = 4\n")
    git(linked, "add", "-A")
    git(linked, "commit", "-q", "-m", "topic")
    assert (linked / ".git").is_file()
    patch = tmp_path / "topic.patch"
    patch.write_bytes(_diff(linked, f.head, "HEAD"))
    return Fixture(linked, f.git_dir / "worktrees" / "linked", f.head, git(linked, "rev-parse", "HEAD"), patch,
                   f.secret, f.state)


def _diff(repo: Path, a: str, b: str) -> bytes:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "diff", "--binary", "--full-index", a, b], cwd=repo, capture_output=True, env=env,
                          check=True).stdout


def _args(command: str, f: Fixture) -> list[str]:
    return {
        "review": ["review", "--repo", str(f.repo), "--base", f.base, "--patch", str(f.patch), "--no-state",
                   "--format", "json"],
        "pr": ["pr", "--repo", str(f.repo), "--base", f.base, "--head", f.head, "--no-state", "--format", "json"],
        "sweep": ["sweep", "--repo", str(f.repo), "--range", f"{f.base}..{f.head}", "--no-progress"],
        "init": ["init", "--repo", str(f.repo), "--base", f.head],
        "history": ["history", "--repo", str(f.repo), "--state-dir", str(f.state)],
    }[command]


def _run(capfd, args: list[str]) -> tuple[int, str, str]:
    """In this process; capfd also sees whatever a git child writes to the inherited descriptors."""
    code = main(args)
    out, err = capfd.readouterr()
    return code, out, err


def _assert_refused(code: int, out: str, err: str, f: Fixture, named: str) -> None:
    assert code == 2, (out[-300:], err)
    assert out == ""
    assert err.startswith(REFUSED) and err.endswith("\n") and err.count("\n") == 1, err
    assert named in err, err
    for leak in (SECRET, "postgres://", "hunter2", str(f.secret)):
        assert leak not in out and leak not in err, err


def _link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(target)


# ------------------------------------------------------------ the reported case, every command


@pytest.mark.parametrize("command", COMMANDS)
def test_packed_refs_linked_outside_is_refused_by_every_command(tmp_path: Path, capfd, command: str) -> None:
    f = _checkout(tmp_path)
    _link(f.git_dir / "packed-refs", f.secret)
    code, out, err = _run(capfd, _args(command, f))
    _assert_refused(code, out, err, f, ".git/packed-refs is a symbolic link")


@pytest.mark.parametrize("command", COMMANDS)
def test_packed_refs_linked_outside_a_bare_repository_is_refused(tmp_path: Path, capfd, command: str) -> None:
    f = _bare(tmp_path)
    _link(f.git_dir / "packed-refs", f.secret)
    code, out, err = _run(capfd, _args(command, f))
    _assert_refused(code, out, err, f, ": packed-refs is a symbolic link")


def test_the_reported_sweep_as_a_separate_process(tmp_path: Path) -> None:
    """Issue 24's reproduction as typed: `reviewer sweep --range A..B`, standard error read from outside."""
    f = _checkout(tmp_path)
    _link(f.git_dir / "packed-refs", f.secret)
    proc = subprocess.run([sys.executable, "-m", "reviewer", *_args("sweep", f)], capture_output=True, text=True,
                          timeout=120)
    _assert_refused(proc.returncode, proc.stdout, proc.stderr, f, ".git/packed-refs is a symbolic link")


# ------------------------------------------------------------ every kind of metadata


def _plant(f: Fixture, tmp_path: Path, what: str) -> str:
    """Plant `what` in the fixture's git directory; the text the refusal must contain."""
    g = f.git_dir
    outside = tmp_path / "outside"
    if what == "loose ref":
        _link(g / "refs" / "heads" / "leak", f.secret)
        return ".git/refs/heads/leak is a symbolic link"
    if what == "loose ref, deep":
        (g / "refs" / "remotes" / "origin").mkdir(parents=True)
        _link(g / "refs" / "remotes" / "origin" / "main", f.secret)
        return ".git/refs/remotes/origin/main is a symbolic link"
    if what == "loose ref, a line break in its name":
        _link(g / "refs" / "heads" / "evil\nname", f.secret)
        return ".git/refs/heads/evil\\nname is a symbolic link"
    if what == "HEAD":
        _link(g / "HEAD", f.secret)
        return ".git/HEAD is a symbolic link"
    if what == "HEAD into refs/":
        _link(g / "HEAD", Path("refs/heads/main"))  # the old core.preferSymlinkRefs form: still a link
        return ".git/HEAD is a symbolic link"
    if what == "refs directory":
        (outside / "refs" / "heads").mkdir(parents=True)
        shutil.copy(f.secret, outside / "refs" / "heads" / "main")
        _link(g / "refs", outside / "refs")
        return ".git/refs is a symbolic link"
    if what == "refs subdirectory":
        (outside / "tags").mkdir()
        _link(g / "refs" / "tags", outside / "tags")
        return ".git/refs/tags is a symbolic link"
    if what == "objects directory":
        shutil.move(str(g / "objects"), str(outside / "objects"))
        (g / "objects").symlink_to(outside / "objects")
        return ".git/objects is a symbolic link"
    if what == "objects/pack directory":
        shutil.move(str(g / "objects" / "pack"), str(outside / "pack"))
        (g / "objects" / "pack").symlink_to(outside / "pack")
        return ".git/objects/pack is a symbolic link"
    if what == "alternates":
        _link(g / "objects" / "info" / "alternates", f.secret)
        return ".git/objects/info/alternates is a symbolic link"
    if what == "objects/info file":
        _link(g / "objects" / "info" / "commit-graph", f.secret)
        return ".git/objects/info/commit-graph is a symbolic link"
    if what == "config":
        shutil.copy(g / "config", outside / "config")
        _link(g / "config", outside / "config")
        return ".git/config is a symbolic link"
    if what == "shallow":
        _link(g / "shallow", f.secret)
        return ".git/shallow is a symbolic link"
    if what == "grafts":
        (g / "info").mkdir(exist_ok=True)
        _link(g / "info" / "grafts", f.secret)
        return ".git/info/grafts is a symbolic link"
    if what == "packed-refs a directory":
        (g / "packed-refs").unlink()
        (g / "packed-refs").mkdir()
        return ".git/packed-refs is a directory where a file is expected"
    if what == ".git a link":
        shutil.move(str(g), str(outside / "dot-git"))
        (f.repo / ".git").symlink_to(outside / "dot-git")
        return ": .git is a symbolic link"
    raise AssertionError(what)


PLANTS = ("loose ref", "loose ref, deep", "loose ref, a line break in its name", "HEAD", "HEAD into refs/",
          "refs directory", "refs subdirectory", "objects directory", "objects/pack directory", "alternates",
          "objects/info file", "config", "shallow", "grafts", "packed-refs a directory", ".git a link")


@pytest.mark.parametrize("command", ["sweep", "pr"])
@pytest.mark.parametrize("what", PLANTS)
def test_any_git_metadata_that_is_not_a_regular_file_inside_is_refused(tmp_path: Path, capfd, what: str,
                                                                       command: str) -> None:
    f = _checkout(tmp_path)
    named = _plant(f, tmp_path, what)
    code, out, err = _run(capfd, _args(command, f))
    _assert_refused(code, out, err, f, named)


@pytest.mark.parametrize("where", ["packed-refs", "HEAD", "config", "shallow", "refs/heads/main", ".git"])
def test_a_fifo_is_refused_without_being_opened(tmp_path: Path, where: str) -> None:
    """A FIFO would block the first reader for ever: refused from lstat alone, well inside the timeout."""
    f = _checkout(tmp_path)
    path = f.repo / where if where == ".git" else f.git_dir / where
    if where == ".git":
        shutil.move(str(path), str(tmp_path / "outside" / "dot-git"))
    elif path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    proc = subprocess.run([sys.executable, "-m", "reviewer", *_args("sweep", f)], capture_output=True, text=True,
                          timeout=30)
    shown = ".git" if where == ".git" else f".git/{where}"
    _assert_refused(proc.returncode, proc.stdout, proc.stderr, f, f"{shown} is a FIFO")


# ------------------------------------------------------------ linked worktrees


@pytest.mark.parametrize("what", ["its HEAD", "its .git file", "its commondir"])
def test_a_linked_worktrees_own_metadata_is_checked(tmp_path: Path, capfd, what: str) -> None:
    f = _worktree(tmp_path)
    if what == "its HEAD":
        _link(f.git_dir / "HEAD", f.secret)
        named = "/worktrees/linked/HEAD is a symbolic link"
    elif what == "its .git file":
        (f.repo / ".git").unlink()
        (f.repo / ".git").symlink_to(f.git_dir)
        named = ": .git is a symbolic link"
    else:
        # A commondir naming another repository: this git directory is not one of its worktrees.
        other = Repo(tmp_path / "other")
        other.commit({"x": "x\n"})
        (f.git_dir / "commondir").write_text(f"{other.path / '.git'}\n")
        named = "/worktrees/linked/commondir names a common git directory"
    code, out, err = _run(capfd, _args("pr", f))
    _assert_refused(code, out, err, f, named)


def test_the_main_repository_of_a_linked_worktree_is_checked(tmp_path: Path, capfd) -> None:
    f = _worktree(tmp_path)
    _link(f.git_dir.parent.parent / "packed-refs", f.secret)
    code, out, err = _run(capfd, _args("sweep", f))
    _assert_refused(code, out, err, f, "/repo/.git/packed-refs is a symbolic link")


# ------------------------------------------------------------ positive controls


def _assert_works(command: str, code: int, out: str, err: str) -> None:
    assert code in (0, 1), err
    assert "refusing" not in err, err
    if command in ("review", "pr"):
        assert json.loads(out)["verdict"] in ("MERGE", "DO-NOT-MERGE")
    elif command == "sweep":
        assert out.startswith("sweep of ") and "1 reviewed" in out, out
    elif command == "init":
        assert out.strip(), err
    else:
        assert out.startswith("no stored reviews of "), out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_normal_repository_still_works(tmp_path: Path, capfd, command: str) -> None:
    f = _checkout(tmp_path)
    (f.git_dir / "info").mkdir(exist_ok=True)
    (f.git_dir / "info" / "grafts").write_text("")  # regular metadata of every kind present
    _link(f.git_dir / "hooks" / "post-checkout", f.secret)  # hooks are never run: not checked
    git(f.repo, "commit-graph", "write", "--reachable")
    _assert_works(command, *_run(capfd, _args(command, f)))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_linked_worktree_still_works(tmp_path: Path, capfd, command: str) -> None:
    f = _worktree(tmp_path)
    _assert_works(command, *_run(capfd, _args(command, f)))


@pytest.mark.parametrize("command", ["review", "pr", "sweep"])
def test_a_bare_repository_still_works(tmp_path: Path, capfd, command: str) -> None:
    f = _bare(tmp_path)
    _assert_works(command, *_run(capfd, _args(command, f)))
