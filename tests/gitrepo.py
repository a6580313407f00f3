"""Real git repositories for tests, built with the git CLI (never mocked)."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-02-03T04:05:06+0000",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_DATE": "2026-02-03T04:05:06+0000",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def git(repo: Path, *args: str, stdin: bytes | None = None, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(ENV)
    proc = subprocess.run(["git", *args], cwd=repo, input=stdin, capture_output=True, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def write_files(root: Path, files: dict[str, bytes | str | None]) -> None:
    for rel, content in files.items():
        path = root / rel
        if content is None:
            if path.is_symlink() or path.exists():
                path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


class Repo:
    """A work-tree repository with helpers to commit and diff."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        git(path, "init", "-q", "-b", "main")
        git(path, "config", "core.autocrlf", "false")

    def commit(self, files: dict[str, bytes | str | None], message: str = "commit") -> str:
        write_files(self.path, files)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def diff(self, a: str, b: str, *extra: str) -> bytes:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(ENV)
        return subprocess.run(
            ["git", "diff", "--binary", "--full-index", *extra, a, b], cwd=self.path, capture_output=True, env=env, check=True
        ).stdout

    def show(self, rev: str, path: str) -> bytes:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=self.path, capture_output=True, env=env, check=True).stdout


def make_change(tmp: Path, base: dict[str, bytes | str | None], patched: dict[str, bytes | str | None], *diff_args: str):
    """A repo whose HEAD is `base`; returns (repo, base_sha, patch_path, patched_sha).

    The patched commit is made on a side branch and the branch deleted, so the
    repository holds only the base as a ref, like a reviewer's checkout.
    """
    repo = Repo(tmp / "repo")
    base_sha = repo.commit(base or {"README.md": "base\n"}, "base")
    git(repo.path, "checkout", "-q", "-b", "candidate")
    patched_sha = repo.commit(patched, "candidate")
    patch = repo.diff(base_sha, patched_sha, *diff_args)
    git(repo.path, "checkout", "-q", "main")
    git(repo.path, "branch", "-q", "-D", "candidate")
    patch_path = tmp / "change.patch"
    patch_path.write_bytes(patch)
    return repo, base_sha, patch_path, patched_sha


def state_digest(git_dir_or_repo: Path) -> str:
    """Hash of everything a review must not change: index, refs, config, HEAD, work tree."""
    root = git_dir_or_repo
    dot_git = root / ".git" if (root / ".git").is_dir() else root
    digest = hashlib.sha256()
    for rel in ("index", "HEAD", "config", "packed-refs"):
        p = dot_git / rel
        digest.update(rel.encode() + b"\0" + (p.read_bytes() if p.exists() else b"<absent>") + b"\0")
    for sub in ("refs",):
        for p in sorted((dot_git / sub).rglob("*")):
            if p.is_file():
                digest.update(str(p.relative_to(dot_git)).encode() + b"\0" + p.read_bytes())
    if dot_git != root:
        for p in sorted(root.rglob("*")):
            if ".git" in p.relative_to(root).parts:
                continue
            if p.is_symlink():
                digest.update(b"L" + str(p.relative_to(root)).encode() + os.readlink(p).encode())
            elif p.is_file():
                digest.update(b"F" + str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + oct(p.stat().st_mode).encode())
    return digest.hexdigest()


def sample_repo(tmp: Path, name: str = "session-recovery") -> tuple[Path, str, dict[str, Path]]:
    """The shipped sample as a bare repository plus its patch files: (git_dir, base, {patch name: path})."""
    from reviewer.demo import load_sample, materialize

    sample = load_sample(name)
    git_dir, base = materialize(sample, tmp / "repo.git")
    patches = {}
    for p in sample.patches:
        patches[p.name] = tmp / p.file
        patches[p.name].write_bytes(sample.patch_bytes(p.name))
    return git_dir, base, patches


def commit_versions(git_dir: Path, patches: dict[str, Path], work: Path, names: tuple[str, ...] = ("v5", "v6")) -> dict[str, str]:
    """Clone the sample to `work` and commit each named patch on its own branch from origin/main: {name: commit}."""
    subprocess.run(["git", "clone", "-q", str(git_dir), str(work)], check=True)
    commits = {}
    for name in names:
        git(work, "checkout", "-q", "-B", f"build-{name}", "origin/main")
        git(work, "apply", "--index", str(patches[name]))
        git(work, "commit", "-q", "-m", name)
        commits[name] = git(work, "rev-parse", "HEAD")
    return commits
