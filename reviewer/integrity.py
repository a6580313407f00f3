"""The integrity gate: prove the inputs are what they claim before any rule runs.

Each check yields a `Check` (pass / fail / skip) with a detail a maintainer can
act on. A failed check forces DO-NOT-MERGE but never stops the report.
"""

from __future__ import annotations

import re
import tempfile
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Mapping
from pathlib import Path, PurePosixPath

from reviewer.display import BIDI_CONTROLS, printable
from reviewer.errors import ReviewerError
from reviewer.gitio import RawChange, Repo, is_full_sha
from reviewer.limits import Limits, check_patch, limits_check
from reviewer.model import Check, CheckStatus
from reviewer.patchfile import HeaderInfo, NumstatEntry, PatchFile, numstat, sha256_file


@dataclass(frozen=True)
class Artifact:
    path: str
    sha256: str  # what the caller expects
    # Read once, before the review: the identity of a stored review and the
    # gate's check use the same digest, so a file changed in between cannot
    # pass under one and be remembered under the other.
    actual: str | None = None
    unreadable: str | None = None

    def hashed(self) -> "Artifact":
        try:
            return replace(self, actual=sha256_file(self.path))
        except OSError as exc:
            return replace(self, unreadable=exc.strerror or str(exc))


@dataclass(frozen=True)
class Inputs:
    repo: Repo
    base: str
    patch: PatchFile
    patch_sha256: str | None = None
    artifacts: tuple[Artifact, ...] = ()
    expect_files: int | None = None
    allow_symlinks: bool = False
    allow_gitlinks: bool = False


@dataclass(frozen=True)
class GateResult:
    checks: tuple[Check, ...]
    base_tree: str | None
    patched_tree: str | None
    entries: tuple[NumstatEntry, ...]
    # What git changed between the two trees: reconstruction reuses it.
    raw: Mapping[str, RawChange] = field(default_factory=dict)

    def with_check(self, check: Check) -> "GateResult":
        """This result with `check` replacing the check of the same id."""
        return replace(self, checks=tuple(check if c.id == check.id else c for c in self.checks))

    @property
    def reconstructable(self) -> bool:
        """Rules may run on the patched tree only if git built it and no path is unsafe."""
        paths = next((c for c in self.checks if c.id == "integrity/paths"), None)
        return self.patched_tree is not None and (paths is None or paths.status is not CheckStatus.FAIL)


def parse_sha256(value: str, what: str) -> str:
    text = value.strip().lower()
    if len(text) != 64 or any(ch not in "0123456789abcdef" for ch in text):
        raise ReviewerError(f"{what}: {value!r} is not a SHA-256 (64 hex digits)")
    return text


def parse_artifact(spec: str) -> Artifact:
    path, sep, digest = spec.rpartition("=")
    if not sep or not path:
        raise ReviewerError(f"--artifact {spec!r}: expected FILE=SHA256")
    return Artifact(path, parse_sha256(digest, f"--artifact {path}"))


def require_full_sha(repo: Repo, base: str) -> str:
    """Refuse anything but a full commit id: a ref can move under the review."""
    if is_full_sha(base.lower()):
        return base.lower()
    hint = ""
    res = repo.run("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}", check=False)
    if res.returncode == 0 and base.strip():
        hint = f" ({base!r} currently resolves to {res.stdout.decode().strip()}; pass that id if it is the one you mean)"
    raise ReviewerError(f"--base must be a full 40-hex commit id, not {base!r}{hint}")


def check_base(repo: Repo, base: str) -> tuple[Check, str | None]:
    kind = repo.object_type(base)
    if kind is None:
        return Check("integrity/base-commit", CheckStatus.FAIL, f"commit {base} does not exist in {repo.display}"), None
    if kind != "commit":
        return Check("integrity/base-commit", CheckStatus.FAIL, f"{base} is a {kind}, not a commit"), None
    tree = repo.tree_of(base)
    return Check("integrity/base-commit", CheckStatus.PASS, f"commit {base} exists"), tree


def check_patch_sha(patch: PatchFile, expected: str | None) -> Check:
    actual = patch.sha256
    if expected is None:
        return Check("integrity/patch-sha256", CheckStatus.SKIP, f"sha256 {actual} (no --patch-sha256 given)")
    if actual == expected:
        return Check("integrity/patch-sha256", CheckStatus.PASS, f"sha256 {actual} matches --patch-sha256")
    return Check("integrity/patch-sha256", CheckStatus.FAIL, f"sha256 is {actual}, but --patch-sha256 says {expected}")


def check_artifacts(artifacts: tuple[Artifact, ...]) -> list[Check]:
    if not artifacts:
        return [Check("integrity/artifact-sha256", CheckStatus.SKIP, "no --artifact given")]
    checks = []
    for art in artifacts:
        if art.actual is None:
            art = art.hashed()
        actual = art.actual
        if actual is None:
            checks.append(Check("integrity/artifact-sha256", CheckStatus.FAIL, f"{art.path}: cannot read ({art.unreadable})"))
            continue
        if actual == art.sha256:
            checks.append(Check("integrity/artifact-sha256", CheckStatus.PASS, f"{art.path}: sha256 {actual} matches"))
        else:
            checks.append(
                Check("integrity/artifact-sha256", CheckStatus.FAIL, f"{art.path}: sha256 is {actual}, expected {art.sha256}")
            )
    return checks


def printable_path(path: str) -> str:
    """`path` as a reader may safely see it (see reviewer.display)."""
    return printable(path)


# Code points HFS+ ignores when it compares names (git's `is_hfs_dotgit`):
# on a Mac, `.g\u200cit` is `.git`.
_HFS_IGNORED = frozenset(
    "\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    "\u206a\u206b\u206c\u206d\u206e\u206f\ufeff"
)
_NTFS_SHORT_GIT = re.compile(r"git~[0-9]+")
_WINDOWS_DEVICES = {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(1, 10)} | {f"lpt{i}" for i in range(1, 10)}


def path_problem(path: str) -> str | None:
    """Why a path must not be written, or None when it is safe."""
    if not path:
        return "empty path"
    if any("\udc80" <= ch <= "\udcff" for ch in path):
        return "not valid UTF-8"
    if any(unicodedata.category(ch) == "Cc" for ch in path):
        return "control character in path"
    if any(ch in BIDI_CONTROLS for ch in path):
        return "bidirectional control character in path"
    if path.startswith("/") or PurePosixPath(path).is_absolute() or (len(path) > 1 and path[1] == ":"):
        return "absolute path"
    if "\\" in path:
        return "backslash in path"
    for part in path.split("/"):
        # As case-insensitive (Windows, macOS) and HFS+ file systems see it.
        visible = "".join(ch for ch in part if ch not in _HFS_IGNORED)
        folded = unicodedata.normalize("NFC", visible).casefold().rstrip(". ")
        if part in ("", "."):
            return "empty or '.' path component"
        if part == "..":
            return "'..' path component"
        if folded == ".git" or folded.startswith((".git ", ".git:")) or _NTFS_SHORT_GIT.fullmatch(folded):
            return "path inside .git/"
        if folded.split(".")[0] in _WINDOWS_DEVICES:
            return "device name as path component"
    return None


def check_paths(entries: tuple[NumstatEntry, ...], headers: list[HeaderInfo], modes: dict[str, str], inputs: Inputs) -> Check:
    """`modes` are what git wrote; header modes cover patches git refused to apply."""
    problems: list[str] = []
    aligned = headers if len(headers) == len(entries) else [HeaderInfo(None, False)] * len(entries)
    for entry, header in zip(entries, aligned):
        source = header.source
        for path in (entry.path, source):
            if path is None:
                continue
            why = path_problem(path)
            if why:
                problems.append(f"'{printable_path(path)}': {why}")
        mode = modes.get(entry.path) or header.new_mode
        if mode == "120000" and not inputs.allow_symlinks:
            problems.append(f"'{printable_path(entry.path)}': creates a symbolic link")
        if mode == "160000" and not inputs.allow_gitlinks:
            problems.append(f"'{printable_path(entry.path)}': creates a gitlink (submodule)")
    if problems:
        return Check("integrity/paths", CheckStatus.FAIL, "; ".join(sorted(set(problems))))
    return Check("integrity/paths", CheckStatus.PASS, f"{len(entries)} paths, all safe")


def changed_paths(entries: tuple[NumstatEntry, ...]) -> int:
    """Files the patch changes: a file touched by two sections is one file."""
    return len({e.path for e in entries})


def check_file_count(entries: tuple[NumstatEntry, ...], expected: int | None) -> Check:
    n = changed_paths(entries)
    if expected is None:
        return Check("integrity/file-count", CheckStatus.SKIP, f"{n} changed files (no --expect-files given)")
    if n == expected:
        return Check("integrity/file-count", CheckStatus.PASS, f"{n} changed files, as --expect-files says")
    return Check("integrity/file-count", CheckStatus.FAIL, f"{n} changed files, but --expect-files says {expected}")


def apply_to_temp_index(repo: Repo, base_tree: str, patch: PatchFile) -> tuple[str | None, str]:
    """Apply the patch to the base tree in a throw-away index; return (tree, detail).

    The repository's own index, work tree and refs are never involved: the
    index lives in a temporary directory and `--cached` keeps git off any
    work tree. `write-tree` only adds tree and blob objects git derives.
    """
    with tempfile.TemporaryDirectory(prefix="reviewer-index-") as tmp:
        index = Path(tmp) / "index"
        repo.run("read-tree", base_tree, index_file=index)
        # The bytes go on standard input: git reads exactly what was hashed.
        checked = repo.run("apply", "--cached", "--check", "--allow-empty", stdin=patch.data, index_file=index, check=False)
        if checked.returncode != 0:
            return None, f"does not apply to the base: {checked.error_summary}"
        repo.run("apply", "--cached", "--allow-empty", stdin=patch.data, index_file=index)
        tree = repo.run("write-tree", index_file=index).stdout.decode().strip()
    return tree, "applies cleanly to the base (temporary index)"


def run_gate(
    inputs: Inputs,
    headers: list[HeaderInfo],
    limits: Limits = Limits(),
    base: tuple[Check, str | None] | None = None,
) -> GateResult:
    """`base` is `check_base`'s answer when the caller already asked git."""
    repo = inputs.repo
    checks: list[Check] = []
    base_check, base_tree = base if base is not None else check_base(repo, inputs.base)
    checks.append(base_check)
    checks.append(check_patch_sha(inputs.patch, inputs.patch_sha256))
    checks.extend(check_artifacts(inputs.artifacts))

    over = check_patch(limits, inputs.patch.size, 0)
    if over or inputs.patch.oversized:
        why = "not attempted: the patch is over the limits"
        checks += [Check(f"integrity/{name}", CheckStatus.SKIP, why) for name in ("clean-apply", "file-count", "paths")]
        checks.append(limits_check(over or ["the patch is over max_patch_bytes"]))
        return GateResult(tuple(checks), base_tree, None, ())

    entries_or_error = numstat(repo, inputs.patch)
    if not isinstance(entries_or_error, str):
        too_many = check_patch(limits, inputs.patch.size, changed_paths(entries_or_error))
        if too_many:
            why = "not attempted: the patch is over the limits"
            checks.append(Check("integrity/clean-apply", CheckStatus.SKIP, why))
            checks.append(check_file_count(entries_or_error, inputs.expect_files))
            checks.append(Check("integrity/paths", CheckStatus.SKIP, why))
            checks.append(limits_check(too_many))
            return GateResult(tuple(checks), base_tree, None, entries_or_error)
    entries: tuple[NumstatEntry, ...] = () if isinstance(entries_or_error, str) else entries_or_error
    patched_tree: str | None = None
    if isinstance(entries_or_error, str):
        checks.append(Check("integrity/clean-apply", CheckStatus.FAIL, f"git cannot read the patch: {entries_or_error}"))
    elif base_tree is None:
        checks.append(Check("integrity/clean-apply", CheckStatus.SKIP, "base commit is not available"))
    else:
        patched_tree, detail = apply_to_temp_index(repo, base_tree, inputs.patch)
        status = CheckStatus.PASS if patched_tree else CheckStatus.FAIL
        checks.append(Check("integrity/clean-apply", status, detail))

    if isinstance(entries_or_error, str):
        unread = "git cannot read the patch, so its files are unknown"
        checks.append(Check("integrity/file-count", CheckStatus.FAIL if inputs.expect_files is not None else CheckStatus.SKIP, unread))
        checks.append(Check("integrity/paths", CheckStatus.SKIP, unread))
    else:
        checks.append(check_file_count(entries, inputs.expect_files))
        raw = repo.diff_trees(base_tree, patched_tree) if base_tree and patched_tree else {}
        checks.append(check_paths(entries, headers, {p: c.new_mode for p, c in raw.items()}, inputs))
        checks.append(limits_check([]))
        return GateResult(tuple(checks), base_tree, patched_tree, entries, raw)
    checks.append(limits_check([]))
    return GateResult(tuple(checks), base_tree, patched_tree, entries)
