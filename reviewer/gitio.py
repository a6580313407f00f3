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
    def error_summary(self) -> str:
        """git's last few messages: the final line alone ("patch does not apply")
        often hides the cause given just before it ("failed to read <path>")."""
        lines = [ln.strip() for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return "; ".join(lines[-3:]) if lines else f"git exited with status {self.returncode}"

    @property
    def last_error_line(self) -> str:
        lines = [ln for ln in self.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else f"git exited with status {self.returncode}"


@dataclass(frozen=True)
class RawChange:
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str
    status: str  # git's letter: A, D, M, T


class BlobReader:
    """One long-lived `git cat-file --batch` for reading files one at a time.

    Rules and the TypeScript model ask for files lazily; a process per file
    would dominate the run time of a review.
    """

    def __init__(self, repo: "Repo") -> None:
        self._repo = repo
        self._proc: subprocess.Popen[bytes] | None = None

    def _start(self) -> subprocess.Popen[bytes]:
        if self._proc is None:
            cmd = ["git", f"--git-dir={self._repo.git_dir}"]
            for item in _SAFE_CONFIG:
                cmd += ["-c", item]
            self._proc = subprocess.Popen(
                cmd + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, env=_base_env(None, self._repo.git_dir, self._repo.scratch_objects),
                cwd=self._repo.git_dir,
            )
        return self._proc

    def get(self, oid: str) -> bytes:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(oid.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().decode().split()
            if len(header) < 3 or header[1] == "missing":
                raise GitError(f"object {oid} is missing from the repository")
            data = proc.stdout.read(int(header[2]))
            proc.stdout.read(1)  # the newline after the content
            return data
        except BaseException:
            # Interrupted mid-answer (a rule's time budget, a signal): the
            # stream is out of step, so the next read must start a fresh process.
            proc.kill()
            self.close()
            raise

    def close(self) -> None:
        if self._proc is not None:
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
            self._proc.wait()
            self._proc = None


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

    def diff_trees(self, old_tree: str, new_tree: str) -> dict[str, "RawChange"]:
        """Every path that differs between two trees, without rename detection."""
        out = self.run("diff-tree", "-r", "-z", "--raw", "--no-renames", "--full-index", old_tree, new_tree).stdout
        fields = out.split(b"\0")
        changes: dict[str, RawChange] = {}
        for meta, path in zip(fields[0::2], fields[1::2]):
            if meta.startswith(b":"):
                old_mode, new_mode, old_oid, new_oid, status = meta[1:].decode().split()
                changes[path.decode("utf-8", "surrogateescape")] = RawChange(old_mode, new_mode, old_oid, new_oid, status[0])
        return changes

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
    # Locate the git directory of exactly this directory (a checkout's top
    # level or a bare repository), never a parent's.
    env = _base_env(None)
    proc = subprocess.run(
        ["git", "-c", "safe.directory=*", "rev-parse", "--absolute-git-dir", "--show-cdup", "--is-bare-repository"],
        cwd=target, capture_output=True, env=env,
    )
    fields = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    if proc.returncode != 0 or not fields:
        raise ReviewerError(f"--repo {path}: not a git repository")
    bare = fields[-1] == "true"
    cdup = "" if bare else (fields[1] if len(fields) == 3 else "")
    if cdup:
        raise ReviewerError(f"--repo {path}: is inside a repository, not its top level (try --repo {target.resolve() / cdup})")
    return Repo(Path(fields[0]).resolve(), str(path))
