"""Every git process the reviewer starts goes through here.

The repository under review is untrusted: its config could name hooks, an
fsmonitor, external diff or textconv drivers, a promisor remote whose lazy
fetch runs a transport program, or allow a protocol that `protocol.allow`
cannot take back. So git never reads the repository's config at all: every
command runs against a *shadow* git directory of our own (an empty config,
the repository's HEAD, its refs and shallow list through symbolic links, and
its object store as a read-only alternate). Objects git derives go to the
shadow's own store, every transport is refused (`GIT_ALLOW_PROTOCOL` names
none, overriding any config), lazy fetching is off, and no work tree is ever
touched. Before git reads anything, every piece of git metadata must be a regular
file or a real directory inside the git directory (`check_git_metadata`).
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from reviewer.errors import GitError, ReviewerError
from reviewer.grepout import grep_paths, grep_records

MIN_GIT = (2, 39, 2)
# No git command of a review legitimately takes minutes; a FIFO or device
# planted in a repository would otherwise hang the review for ever.
OPEN_SECONDS = 60
GIT_SECONDS = 300
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
    "core.attributesFile=/dev/null",
    "apply.whitespace=nowarn",
    "protocol.allow=never",
    "safe.directory=*",
)


def is_full_sha(text: str) -> bool:
    return bool(_HEX40.fullmatch(text))


def _base_env(index_file: Path | None, objects: Path | None = None, alternate: Path | None = None) -> dict[str, str]:
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
        # Set, it is the whole list of allowed transports, whatever any config
        # says; empty, it allows none. Lazy fetching is off on git >= 2.44 too.
        GIT_ALLOW_PROTOCOL="",
        GIT_PROTOCOL_FROM_USER="0",
        GIT_NO_LAZY_FETCH="1",
        LC_ALL="C",
        LANG="C",
    )
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    if objects is not None and alternate is not None:
        # Objects git derives from the patch go to the shadow's store; the
        # repository's own store is only read, as an alternate.
        env["GIT_OBJECT_DIRECTORY"] = str(objects)
        env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(alternate)
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
            cmd, env, cwd = self._repo.command("cat-file", "--batch")
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd,
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


_HEAD_BYTES = 4096
_ALTERNATES_BYTES = 1 << 20
_ALTERNATE_DEPTH = 5  # as deep as git itself follows alternates


def _hostile(path: Path, why: str) -> ReviewerError:
    return ReviewerError(f"{path}: {why}; refusing to read this repository")


def _small_file(path: Path, limit: int, what: str) -> bytes | None:
    """The bytes of a regular file of at most `limit` bytes, None if absent.

    A FIFO would hang the review, a device such as /dev/zero would fill
    memory and a symbolic link could lead anywhere: only a regular file is read.
    """
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _hostile(path, f"{what} cannot be read ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _hostile(path, f"{what} is not a regular file")
    if st.st_size > limit:
        raise _hostile(path, f"{what} is {st.st_size:,} bytes, over {limit:,}")
    with open(path, "rb") as fh:
        return fh.read(limit + 1)[:limit]


# Git metadata: what git reads to find a repository, its refs and its objects. Each must be a regular
# file (or a real directory) inside the git directory: through a symbolic link git would read a file from
# anywhere and quote it in an error ("unexpected line in packed-refs: DATABASE_URL=..."), and a FIFO or a
# device would hang or flood it. Only lstat and scandir, before any git command reads the repository; a
# directory is checked before anything under it (lstat follows links in the middle of a path). Not checked,
# because git never reads them here: hooks/ (reviewer runs no hook: core.hooksPath=/dev/null and the shadow
# has none), index, logs/, info/attributes and info/exclude, FETCH_HEAD and the other pseudo-refs (the
# shadow borrows none of them), and the loose objects and packs (their directories are checked, their
# files are not walked: a stat per object; git reads them as binary data, never quoting them).
_META_DIRS = ("objects", "objects/pack", "info")
_META_TREES = ("refs", "objects/info")  # every file and directory under them, walked
_META_FILES = ("HEAD", "commondir", "gitdir", "config", "config.worktree", "packed-refs", "shallow", "info/grafts")
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISREG, "a file"))


def _refused(path: Path, top: Path, why: str) -> ReviewerError:
    """One line naming `path` (relative to the repository's top level when inside it) and why; never its content."""
    from reviewer.display import printable

    shown = path.relative_to(top).as_posix() if path.is_relative_to(top) and path != top else str(path)
    return ReviewerError(f"refusing to read this repository: {printable(shown)} {why}; "
                         "git metadata must be regular files and directories inside the git directory")


def _expect(path: Path, top: Path, directory: bool) -> bool:
    """Whether `path` exists as a real directory (`directory`) or a regular file; refused if it is anything else."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as exc:
        raise _refused(path, top, f"cannot be examined ({exc.strerror})") from None
    if (stat.S_ISDIR if directory else stat.S_ISREG)(mode):
        return True
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    if kind in ("a file", "a directory"):
        kind += " where a directory is expected" if directory else " where a file is expected"
    raise _refused(path, top, f"is {kind}")


def _walk(root: Path, top: Path) -> None:
    """`root` and everything under it are real directories and regular files (d_type: no stat per entry)."""
    pending = [root] if _expect(root, top, directory=True) else []
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append(Path(entry.path))
                    elif not entry.is_file(follow_symlinks=False):
                        _expect(Path(entry.path), top, directory=False)
        except OSError as exc:
            raise _refused(folder, top, f"cannot be listed ({exc.strerror})") from None


def check_git_metadata(git_dir: Path, common_dir: Path, top: Path) -> None:
    """Refuse, in one line, a repository whose git metadata is not regular files and real directories
    inside its git directory (and common directory: a linked worktree's `<common>/worktrees/<name>`)."""
    if git_dir != common_dir and git_dir.parent != common_dir / "worktrees":
        raise _refused(git_dir / "commondir", top, "names a common git directory of which this one is not a "
                       "linked worktree (<common>/worktrees/<name>)")
    for root in dict.fromkeys((git_dir, common_dir)):
        for name in _META_DIRS:
            _expect(root / name, top, directory=True)
        for name in _META_TREES:
            _walk(root / name, top)
        for name in _META_FILES:
            _expect(root / name, top, directory=False)


def _discover(top: Path) -> tuple[Path, Path] | None:
    """The git and common directories git will find for exactly `top` (a checkout's `.git` directory, the
    directory a `.git` file names, or `top` itself when bare), found as git finds them but with lstat
    first and never opening anything but a regular file; None when `top` is neither (git then decides)."""
    dot = top / ".git"
    if os.path.lexists(dot) and stat.S_ISDIR(os.lstat(dot).st_mode):
        git_dir = dot
    elif os.path.lexists(dot):
        _expect(dot, top, directory=False)  # a link, a FIFO or a device is refused here
        text = (_small_file(dot, _HEAD_BYTES, ".git") or b"").decode("utf-8", "surrogateescape").strip()
        if not text.startswith("gitdir:"):
            return None  # git refuses it itself
        git_dir = (top / text[len("gitdir:"):].strip()).resolve()
    elif all(os.path.lexists(top / name) for name in ("HEAD", "objects", "refs")):
        git_dir = top
    else:
        return None
    common_dir = git_dir
    if _expect(git_dir / "commondir", top, directory=False):
        named = (_small_file(git_dir / "commondir", _HEAD_BYTES, "commondir") or b"").decode("utf-8", "surrogateescape")
        common_dir = (git_dir / named.strip()).resolve()
    return git_dir, common_dir


def _check_alternates(objects: Path, depth: int) -> None:
    """Every alternates file git would follow from `objects` is a small regular file."""
    data = _small_file(objects / "info" / "alternates", _ALTERNATES_BYTES, "objects/info/alternates")
    if not data or depth <= 0:
        return
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not line.startswith('"'):
            target = Path(line) if os.path.isabs(line) else objects / line
            _check_alternates(target, depth - 1)


_SHADOW_CONFIG = "[core]\n\trepositoryformatversion = {version}\n\tbare = true\n{extensions}"


class _Shadow:
    """The git directory every command of one `Repo` runs against.

    Only what addresses objects is borrowed from the repository: HEAD (copied),
    refs, packed-refs and the shallow list (symbolic links, only ever read).
    Its config is ours, so no extension, remote, hook or protocol setting of
    the repository reaches git. Removed with the object (or at exit).
    """

    def __init__(self, git_dir: Path, common_dir: Path, object_format: str) -> None:
        head = _small_file(git_dir / "HEAD", _HEAD_BYTES, "HEAD") or b"ref: refs/heads/main\n"
        # Repo checked them (check_git_metadata): regular files and a real directory inside the git directory.
        borrowed = [name for name in ("refs", "packed-refs", "shallow") if os.path.lexists(common_dir / name)]
        _check_alternates(common_dir / "objects", _ALTERNATE_DEPTH)
        self._tmp = tempfile.TemporaryDirectory(prefix="reviewer-gitdir-")
        root = Path(self._tmp.name)
        (root / "HEAD").write_bytes(head)
        for name in borrowed:
            (root / name).symlink_to(common_dir / name)
        if not (root / "refs").is_dir():
            (root / "refs").mkdir()
        (root / "objects" / "info").mkdir(parents=True)
        (root / "objects" / "pack").mkdir()
        sha256 = object_format == "sha256"
        (root / "config").write_text(_SHADOW_CONFIG.format(
            version=1 if sha256 else 0,
            extensions="[extensions]\n\tobjectFormat = sha256\n" if sha256 else "",
        ))
        self.root = root
        self.objects = root / "objects"
        self.alternate = common_dir / "objects"

    def close(self) -> None:
        self._tmp.cleanup()


class Repo:
    """A repository opened for reading, addressed through its shadow git directory only."""

    def __init__(self, git_dir: Path, display: str, common_dir: Path | None = None, object_format: str = "sha1",
                 top: Path | None = None, checked: bool = False) -> None:
        """`top`: the checkout's top level (or the bare repository) paths are shown relative to; `checked`:
        open_repo already ran check_git_metadata on exactly these directories."""
        self.git_dir = git_dir
        self.common_dir = common_dir or git_dir
        self.display = display
        if not checked:
            check_git_metadata(git_dir, self.common_dir, top or git_dir)
        self._shadow = _Shadow(git_dir, self.common_dir, object_format)

    @property
    def is_shallow(self) -> bool:
        return (self.common_dir / "shallow").exists()

    def close(self) -> None:
        self._shadow.close()

    def command(self, *args: str, index_file: Path | None = None) -> tuple[list[str], dict[str, str], Path]:
        """argv, environment and working directory of one git command."""
        shadow = self._shadow
        cmd = ["git", f"--git-dir={shadow.root}"]
        for item in _SAFE_CONFIG:
            cmd += ["-c", item]
        return cmd + list(args), _base_env(index_file, shadow.objects, shadow.alternate), shadow.root

    def run(
        self,
        *args: str,
        stdin: bytes | None = None,
        index_file: Path | None = None,
        check: bool = True,
    ) -> GitResult:
        cmd, env, cwd = self.command(*args, index_file=index_file)
        try:
            proc = subprocess.run(cmd, input=stdin if stdin is not None else b"", capture_output=True, env=env,
                                  cwd=cwd, timeout=GIT_SECONDS)
        except subprocess.TimeoutExpired:
            raise GitError(
                f"git {args[0]} did not finish within {GIT_SECONDS} s in {self.display} "
                "(is a ref a FIFO or a device?)"
            ) from None
        except OSError as exc:  # e.g. a command line past the system's limit
            raise GitError(f"git {args[0]} could not be started in {self.display}: {exc.strerror or exc}") from None
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

    def patch_between(self, old: str, new: str) -> GitResult:
        """git's own patch from commit `old` to `new`, as `reviewer pr` and `reviewer sweep` review it:
        binary-safe, full blob ids, renames found, never the user's diff drivers or colours."""
        return self.run("diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "-M",
                        old, new, check=False)

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

    def _grep(self, tree: str, flags: list[str], patterns: list[str], suffixes: tuple[str, ...],
              paths: Sequence[str] | None = None) -> bytes:
        """`git grep <flags>` over the files of `tree` with one of `suffixes`; the output, b"" for no match.

        Patterns go one per line on stdin (`-f -`): no length limit from the command line, and a
        pattern can never be read as an option. One holding a line break would be two: dropped.
        """
        wanted = sorted({p for p in patterns if p and "\n" not in p and "\r" not in p and "\0" not in p})
        if not wanted:
            return b""
        # Given paths are taken literally (no glob, no magic a name could smuggle in).
        specs = [f"*{suffix}" for suffix in suffixes] if paths is None else [f":(literal){p}" for p in paths]
        res = self.run("grep", "-z", "-I", "--no-color", *flags, "-f", "-", tree, "--", *specs,
                       stdin="\n".join(wanted).encode() + b"\n", check=False)
        if res.returncode not in (0, 1):
            raise GitError(f"git grep failed: {res.last_error_line}")
        return res.stdout

    def grep_word_files(self, tree: str, words: list[str], suffixes: tuple[str, ...]) -> tuple[str, ...]:
        """Paths of the files of `tree` with one of `suffixes` in which one of `words` occurs as a whole
        word (fixed strings, one process), sorted."""
        return grep_paths(self._grep(tree, ["-l", "-F", "-w"], words, suffixes), tree)

    def grep_files(
        self, tree: str, patterns: list[str], suffixes: tuple[str, ...], all_match: bool = False,
        paths: Sequence[str] | None = None,
    ) -> tuple[str, ...]:
        """Paths of the files of `tree` with one of `suffixes` (or of exactly `paths`) whose text matches
        any (with `all_match`, every one) of the extended regular expressions `patterns`, sorted; one process."""
        mode = ["--all-match"] if all_match else []
        return grep_paths(self._grep(tree, ["-l", "-E", *mode], patterns, suffixes, paths), tree)

    def grep_lines(
        self, tree: str, literals: list[str], suffixes: tuple[str, ...], paths: Sequence[str] | None = None
    ) -> list[tuple[str, str]]:
        """(path, line) for every line of the files of `tree` with one of `suffixes` (or of exactly
        `paths`) that contains any of the fixed strings `literals`; one process, in git's order.

        The literals go as one alternation of escaped strings (`-E`), not one `-F` pattern each: git
        tries every pattern of a list on every line, so 45 literals cost 45 passes (1.5 s over
        opencode's tree, against 0.35 s for the alternation, which one regex automaton answers). The
        same lines match: under LC_ALL=C both compare bytes.
        """
        kept = sorted({lit for lit in literals if lit and "\n" not in lit and "\r" not in lit and "\0" not in lit})
        # Bounded alternations: the C library compiles one automaton per pattern, and one of 400,000
        # strings exhausts memory; groups keep each small and the passes few.
        alternations = ["|".join(ere_escape(lit) for lit in kept[i:i + _ALTERNATION]) for i in range(0, len(kept), _ALTERNATION)]
        return grep_records(self._grep(tree, ["-E"], alternations, suffixes, paths), tree)

    def ls_entry(self, tree: str, path: str) -> tuple[str, str, str] | None:
        """(mode, type, oid) of the one entry `path` of `tree`, without listing the rest of the tree."""
        out = self.run("ls-tree", "-z", "--full-tree", tree, "--", path).stdout
        for record in out.split(b"\0"):
            meta, _, name = record.partition(b"\t")
            if name.decode("utf-8", "surrogateescape") == path:
                mode, otype, oid = meta.decode().split()
                return mode, otype, oid
        return None

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


# Fixed strings per alternation `grep_lines` hands git.
_ALTERNATION = 256

_ERE_SPECIAL = re.compile(r"([\\.\[\](){}*+?|^$])")


def ere_escape(text: str) -> str:
    """`text` as a literal in an extended regex (and in Python's `re`, which reads it the same)."""
    return _ERE_SPECIAL.sub(r"\\\1", text)


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
    # level, a linked worktree or a bare repository), never a parent's. This
    # one command reads the repository's config; it reads no object, so no
    # promisor remote is ever asked for one. What it reads (the `.git` file,
    # HEAD, commondir, config) is checked first, as git will find it.
    top = target.resolve()
    found = _discover(top)
    if found is not None:
        check_git_metadata(*found, top)
    cmd = ["git"]
    for item in _SAFE_CONFIG:
        cmd += ["-c", item]
    try:
        proc = subprocess.run(
            cmd + ["rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir",
                   "--show-object-format", "--is-bare-repository", "--show-cdup"],
            cwd=target, capture_output=True, env=_base_env(None), timeout=OPEN_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise ReviewerError(
            f"--repo {path}: git did not open it within {OPEN_SECONDS} s (is its config, or a file it includes, "
            "a FIFO or a device?)"
        ) from None
    fields = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if proc.returncode != 0 or len(fields) < 4:
        raise ReviewerError(f"--repo {path}: not a git repository")
    git_dir, common_dir, object_format, bare = fields[:4]
    cdup = "" if bare == "true" else (fields[4] if len(fields) > 4 else "")
    if cdup:
        raise ReviewerError(f"--repo {path}: is inside a repository, not its top level (try --repo {target.resolve() / cdup})")
    dirs = (Path(git_dir).resolve(), Path(common_dir).resolve())
    return Repo(dirs[0], str(path), dirs[1], object_format, top=top, checked=dirs == found)
