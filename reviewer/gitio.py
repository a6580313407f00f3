"""Every git process the reviewer starts goes through here.

The repository under review is untrusted: its config could name hooks, an
fsmonitor, external diff or textconv drivers. Git runs with those neutralised,
with no global or system config, with optional locks off (so even read
commands never rewrite the repository's index), and always against an
explicit git directory so no work tree is ever touched.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import git as gitpython

from reviewer.errors import GitError, ReviewerError

MIN_GIT = (2, 39, 2)
_HEX40 = re.compile(r"[0-9a-f]{40}")

# Passed as `-c` so they win over anything in the repository's own config.
_SAFE_CONFIG = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "core.sshCommand=false",
    "core.pager=cat",
    "core.quotePath=true",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "diff.external=",
    "apply.whitespace=nowarn",
    "protocol.allow=never",
    "safe.directory=*",
)


def is_full_sha(text: str) -> bool:
    return bool(_HEX40.fullmatch(text))


def _base_env(index_file: Path | None, git_dir: Path | None = None, scratch_objects: Path | None = None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in {"EDITOR", "VISUAL", "PAGER"}
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_ATTR_NOSYSTEM="1",
        LC_ALL="C",
        LANG="C",
    )
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    if scratch_objects is not None and git_dir is not None:
        # Objects git derives from the patch go to a scratch store; the
        # repository's own store is only read, as an alternate.
        env["GIT_OBJECT_DIRECTORY"] = str(scratch_objects)
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(git_dir / "objects")
    return env


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def last_error_line(self) -> str:
        lines = [ln for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else f"git exited with status {self.returncode}"


class Repo:
    """A repository opened for reading, addressed by its git directory only."""

    def __init__(self, git_dir: Path, display: str, scratch_objects: Path | None = None) -> None:
        self.git_dir = git_dir
        self.display = display
        self.scratch_objects = scratch_objects

    def isolated(self, scratch: Path) -> "Repo":
        """This repository with every object write redirected under `scratch`."""
        objects = scratch / "objects"
        (objects / "info").mkdir(parents=True, exist_ok=True)
        (objects / "pack").mkdir(exist_ok=True)
        return Repo(self.git_dir, self.display, objects)

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        index_file: Path | None = None,
        check: bool = True,
    ) -> GitResult:
        cmd = ["git", f"--git-dir={self.git_dir}"]
        for item in _SAFE_CONFIG:
            cmd += ["-c", item]
        cmd += list(args)
        proc = subprocess.run(
            cmd,
            input=stdin if stdin is not None else b"",
            capture_output=True,
            env=_base_env(index_file, self.git_dir, self.scratch_objects),
            cwd=self.git_dir,
        )
        result = GitResult(proc.returncode, proc.stdout, proc.stderr)
        if check and proc.returncode != 0:
            raise GitError(f"git {args[0]} failed: {result.last_error_line}")
        return result

    def object_type(self, oid: str) -> str | None:
        res = self.run("cat-file", "-t", oid, check=False)
        return res.stdout.decode().strip() if res.returncode == 0 else None

    def tree_of(self, commit: str) -> str:
        return self.run("rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}").stdout.decode().strip()

    def read_blobs(self, oids: list[str]) -> dict[str, bytes]:
        """Read many objects with one `git cat-file --batch` process."""
        unique = sorted(set(oids))
        if not unique:
            return {}
        out = self.run("cat-file", "--batch", stdin=("\n".join(unique) + "\n").encode()).stdout
        blobs: dict[str, bytes] = {}
        pos = 0
        for oid in unique:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].decode()
            pos = nl + 1
            parts = header.split()
            if len(parts) < 3 or parts[1] == "missing":
                raise GitError(f"object {oid} is missing from the repository")
            size = int(parts[2])
            blobs[oid] = out[pos : pos + size]
            pos += size + 1
        return blobs

    def ls_tree(self, tree: str) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, oid) for every entry of a tree, recursively."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", tree).stdout
        entries: dict[str, tuple[str, str, str]] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, path = record.partition(b"\t")
            mode, otype, oid = meta.decode().split()
            entries[path.decode("utf-8", "surrogateescape")] = (mode, otype, oid)
        return entries


def git_version() -> tuple[int, int, int]:
    try:
        out = subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ReviewerError(f"git is not available: {exc}") from None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    if not match:
        raise ReviewerError(f"cannot read git's version from {out.strip()!r}")
    return (int(match[1]), int(match[2]), int(match[3]))


def check_git_version(version: tuple[int, int, int]) -> None:
    if version < MIN_GIT:
        have = ".".join(map(str, version))
        raise ReviewerError(
            f"git {have} is too old: 2.39.2 or newer is required (CVE-2023-23946 is fixed there)"
        )


def require_git() -> None:
    check_git_version(git_version())


def open_repo(path: str) -> Repo:
    """Open `path` (a checkout or a bare repository) without touching it."""
    require_git()
    target = Path(path)
    if not target.exists():
        raise ReviewerError(f"--repo {path}: no such directory")
    if not target.is_dir():
        raise ReviewerError(f"--repo {path}: not a directory")
    try:
        # GitPython only locates the git directory here; every command after
        # this runs through Repo.run with the neutralised configuration.
        found = gitpython.Repo(target, search_parent_directories=False)
    except gitpython.exc.InvalidGitRepositoryError:
        raise ReviewerError(f"--repo {path}: not a git repository") from None
    except gitpython.exc.NoSuchPathError:
        raise ReviewerError(f"--repo {path}: no such directory") from None
    git_dir = Path(found.git_dir).resolve()
    found.close()
    return Repo(git_dir, str(path))
