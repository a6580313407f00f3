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
from reviewer.gate.limits import Limits, check_patch, limits_check
from reviewer.gate.lookalike import escaped, lookalike_problems, suspicious
from reviewer.report.model import Check, CheckStatus, Impact, Severity
from reviewer.inputs.patchfile import HeaderInfo, NumstatEntry, PatchFile, numstat, sha256_file
from reviewer.engine.api import CheckGroup, CheckSpec


def _s(n: int) -> str:
    return "" if n == 1 else "s"


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
    """`path` as a reader may safely see it (see reviewer.display); a look-alike
    (reviewer.gate.lookalike) has every non-ASCII character escaped."""
    return escaped(path) if suspicious(path) else printable(path)


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


def check_paths(
    entries: tuple[NumstatEntry, ...], headers: list[HeaderInfo], modes: dict[str, str], inputs: Inputs,
    base_tree: str | None = None, deleted: frozenset[str] = frozenset(),
) -> Check:
    """`modes` are what git wrote; header modes cover patches git refused to apply.

    A path the patch writes or renames from that is safe but a look-alike (it mixes
    scripts, or reads as another path of `base_tree` or of the patch) fails too;
    the base tree is listed only when such a path has a non-ASCII character."""
    problems: list[str] = []
    written: list[str] = []
    aligned = headers if len(headers) == len(entries) else [HeaderInfo(None, False)] * len(entries)
    for entry, header in zip(entries, aligned):
        source = header.source
        for path in (entry.path, source):
            if path is None:
                continue
            why = path_problem(path)
            if why:
                problems.append(f"'{printable_path(path)}': {why}")
            elif (path == entry.path and path not in deleted) or (path != entry.path and not header.copied):
                written.append(path)  # added, modified, renamed or copied to; renamed from
        mode = modes.get(entry.path) or header.new_mode
        if mode == "120000" and not inputs.allow_symlinks:
            problems.append(f"'{printable_path(entry.path)}': creates a symbolic link")
        if mode == "160000" and not inputs.allow_gitlinks:
            problems.append(f"'{printable_path(entry.path)}': creates a gitlink (submodule)")
    changed = [p for e, h in zip(entries, aligned) for p in (e.path, h.source) if p is not None]
    listed = (lambda: [*inputs.repo.ls_tree(base_tree), *changed]) if base_tree else (lambda: changed)
    for path, why in lookalike_problems(written, listed).items():
        problems.append(f"'{escaped(path)}': {why}")
    if problems:
        return Check("integrity/paths", CheckStatus.FAIL, "; ".join(sorted(set(problems))))
    return Check("integrity/paths", CheckStatus.PASS, f"{len(entries)} path{_s(len(entries))}, all safe")


def changed_paths(entries: tuple[NumstatEntry, ...]) -> int:
    """Files the patch changes: a file touched by two sections is one file."""
    return len({e.path for e in entries})


def check_file_count(entries: tuple[NumstatEntry, ...], expected: int | None) -> Check:
    n = changed_paths(entries)
    if expected is None:
        return Check("integrity/file-count", CheckStatus.SKIP, f"{n} changed file{_s(n)} (no --expect-files given)")
    if n == expected:
        return Check("integrity/file-count", CheckStatus.PASS, f"{n} changed file{_s(n)}, as --expect-files says")
    return Check("integrity/file-count", CheckStatus.FAIL, f"{n} changed file{_s(n)}, but --expect-files says {expected}")


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
        deleted = frozenset(p for p, c in raw.items() if c.status == "D")
        checks.append(check_paths(entries, headers, {p: c.new_mode for p, c in raw.items()}, inputs, base_tree, deleted))
        checks.append(limits_check([]))
        return GateResult(tuple(checks), base_tree, patched_tree, entries, raw)
    checks.append(limits_check([]))
    return GateResult(tuple(checks), base_tree, patched_tree, entries)


# ------------------------------------------------------------------ what each check means
#
# `reviewer rules --explain integrity/<name>` and the SARIF rule metadata read
# these; review.py takes each failure's title and severity from them. A check
# the gate gains needs its spec here (tests/test_registry.py enforces it).

INTEGRITY_CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id="integrity/base-commit",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Base commit is not in the repository",
        summary="`--base` names a commit object that exists in the repository (a bare repository works); "
        "a missing object, or the id of a tree, blob or tag, fails.",
        why=(
            "Everything is measured against the base: the patch is applied to its tree, the unchanged files the "
            "rules read come from it, and so does reviewer.toml. A review against a commit the repository does "
            "not have proves nothing about what will be merged. Anything but a full 40-hex id (a branch, a "
            "short id) is refused before the review starts (exit 2): a ref can move while the review runs."
        ),
        bad=(
            "reviewer review --repo . --base 5d41402abc4b2a76b9719d911017c592c0ffee00 --patch change.patch\n"
            "# a full id, but of a commit this (shallow) clone never fetched"
        ),
        good=(
            "git fetch origin main\n"
            "reviewer review --repo . --base \"$(git rev-parse origin/main)\" --patch change.patch"
        ),
    ),
    CheckSpec(
        id="integrity/patch-sha256",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Patch does not match its SHA-256",
        summary="The SHA-256 of the patch bytes, read once, equals `--patch-sha256`; skipped when none is given.",
        why=(
            "The digest pins the review to the exact bytes someone approved: a patch replaced or edited on its "
            "way to the bot (a force-pushed branch, a truncated download, a swapped file) would otherwise be "
            "reviewed, and merged, under the old approval. The bytes hashed are the bytes git applies and the "
            "rules read; the patch is never read twice."
        ),
        bad=(
            "reviewer review --repo . --base \"$BASE\" --patch change.patch \\\n"
            "    --patch-sha256 2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\n"
            "# the digest of the version that was approved, but change.patch was edited since"
        ),
        good=(
            "reviewer review --repo . --base \"$BASE\" --patch change.patch \\\n"
            "    --patch-sha256 \"$APPROVED_SHA256\"   # published with the patch when it was approved"
        ),
    ),
    CheckSpec(
        id="integrity/artifact-sha256",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Artifact does not match its SHA-256",
        summary="Each `--artifact FILE=SHA256` is readable and its SHA-256 matches; skipped when none is given.",
        why=(
            "Artifacts are the other inputs a verdict vouches for (a generated schema, a lock file, a build "
            "output). Each is hashed once, before the review, and that digest is both checked and recorded in "
            "the stored review's identity, so a file that changes during the review cannot pass under one "
            "content and be remembered under another. An unreadable artifact fails too: unverified is not verified."
        ),
        bad=(
            "reviewer review ... --artifact packages/core/schema.json="
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08\n"
            "# the digest of last week's schema.json; the file was regenerated since"
        ),
        good=(
            "reviewer review ... --artifact packages/core/schema.json=\"$SCHEMA_SHA256\"\n"
            "# the digest recorded when schema.json was generated for this change"
        ),
    ),
    CheckSpec(
        id="integrity/clean-apply",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Patch does not apply cleanly to the base",
        summary="git reads the patch and applies it to the base tree in a temporary index (`git apply --cached`, "
        "never the repository's index or work tree); a patch git cannot parse, or whose context does not match "
        "the base, fails.",
        why=(
            "The rules judge the tree git builds from the base plus the patch. A patch made against another "
            "commit, a truncated hunk, or one that only applies with fuzz has no patched tree that is certainly "
            "the one that will be merged, so the report could not describe the change; the review fails instead "
            "of guessing. Nothing the patch contains is executed, and the repository is never modified."
        ),
        bad=(
            "diff --git a/src/session/lease.ts b/src/session/lease.ts\n"
            "--- a/src/session/lease.ts\n"
            "+++ b/src/session/lease.ts\n"
            "@@ -12 +12 @@\n"
            "-export const RENEW_MS = 10_000\n"
            "+export const RENEW_MS = 20_000\n"
            "# made against another commit: line 12 of the base reads `export const RENEW_MS = 5_000`"
        ),
        good=(
            "git diff \"$BASE\" \"$HEAD\" > change.patch   # made against the exact base under review\n"
            "reviewer review --repo . --base \"$BASE\" --patch change.patch\n"
            "# or let `reviewer pr --base origin/main --head HEAD` compute the merge-base diff itself"
        ),
    ),
    CheckSpec(
        id="integrity/file-count",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Patch changes a different number of files than --expect-files",
        summary="The number of files the patch changes, as git reads it (a file touched by two sections counts "
        "once), equals `--expect-files`; skipped when none is given.",
        why=(
            "The count is a cheap, independent claim about the patch's scope, made by whoever approved it. A "
            "patch that quietly grew a file (a CI workflow, a vendored script, a lock file) fails here even "
            "when every hunk looks harmless on its own. It is counted from git's reading of the patch, not "
            "from the patch's own headers, so a patch cannot misstate it."
        ),
        bad=(
            "reviewer review ... --patch change.patch --expect-files 33\n"
            "# change.patch also edits .github/workflows/ci.yml: it changes 34 files"
        ),
        good=(
            "git diff --name-only \"$BASE\" \"$HEAD\" | wc -l     # 33, checked when the change was approved\n"
            "reviewer review ... --patch change.patch --expect-files 33"
        ),
    ),
    CheckSpec(
        id="integrity/paths",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Patch writes an unsafe path",
        summary="No path the patch writes or renames from is empty, absolute, has a `..` or `.` component, a "
        "backslash, a control or bidirectional character, invalid UTF-8, a Windows device name, or lies inside "
        "`.git/` (in any case, `.git.`, `git~1`, with code points HFS+ ignores); no file becomes a symbolic link "
        "or a gitlink unless `--allow-symlinks` / `--allow-gitlinks` says so. No path it adds, modifies, renames "
        "(either side) or copies to is a look-alike (Unicode TS #39): a name or extension that mixes scripts "
        "(Latin with Cyrillic or Greek; one script, or Latin with Han and kana, Hangul or Bopomofo, is fine), or a "
        "path whose confusable skeleton is that of another path or directory of the base tree or of the patch.",
        why=(
            "Paths are chosen by the patch's author. A file inside `.git/` can plant a hook or a config that "
            "runs a program on the next git command; `..`, absolute paths and symbolic links write outside the "
            "tree (CVE-2023-23946: a symlink, then a write through it); control and bidirectional characters "
            "make a report show a different name than the one written. A look-alike is two names that show as one: "
            "`packages/core/src/sess\\u0456on/input.ts` (a Cyrillic i) reads as `packages/core/src/session/input.ts`, "
            "so a rename moves the file out of every rule's scope while the file table seems to show the same path. "
            "The Unicode data (scripts, confusables) is read only when a changed path has a non-ASCII character. "
            "A patch with an unsafe path is not reconstructed and no rule runs on it; the path is shown escaped "
            "(`\\u0456`), never raw."
        ),
        bad=(
            "diff --git a/.git/config b/.git/config\n"
            "new file mode 100644\n"
            "--- /dev/null\n"
            "+++ b/.git/config\n"
            "@@ -0,0 +1,2 @@\n"
            "+[core]\n"
            "+    hooksPath = tools/hooks\n"
            "# also refused: a/../../etc/profile, /etc/profile, .GIT/config, git~1/config,\n"
            "# CON.ts, a name with ESC or U+202E in it, a new file with mode 120000 (a symlink),\n"
            "# a rename of packages/core/src/session/input.ts to packages/core/src/sess\\u0456on/input.ts (Cyrillic i),\n"
            "# src/r\\u03bfuter.ts (Greek omicron) beside src/router.ts"
        ),
        good=(
            "diff --git a/src/session/lease.ts b/src/session/lease.ts\n"
            "--- a/src/session/lease.ts\n"
            "+++ b/src/session/lease.ts\n"
            "# a relative path inside the tree, written as a regular file; a name in one script that reads as no\n"
            "# other path passes too: docs/\u8aac\u660e.md, docs/r\u00e9sum\u00e9.md"
        ),
    ),
    CheckSpec(
        id="integrity/limits",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="Patch is over a resource limit",
        summary="The patch and its files stay within [limits]: `max_patch_bytes` and `max_files` for the patch; "
        "for each changed .ts/.tsx/.mts/.cts file `max_file_bytes`, `max_line_length`, no NUL byte and valid "
        "UTF-8. Over a limit there fails the review; over `max_file_bytes` or `max_line_length` in a file no "
        "rule parses is a `consider` note that the file was not analysed.",
        why=(
            "A giant or minified input must fail clearly, never hang the bot or be skipped in silence: a "
            "TypeScript file the rules cannot read is a file where a violation could hide, so the review fails "
            "closed rather than pass it unread. A file no family parses (JSON, Markdown, a lock file) changes "
            "nothing the rules can see, so it is only a note. The limits are read from the base, before the "
            "patch is, so a patch cannot raise them."
        ),
        bad=(
            "+export const bundle = \"...\"   // src/session/bundle.ts: a 250,000-character minified line,\n"
            "                               // over max_line_length = 100000"
        ),
        good=(
            "# keep generated bundles out of .ts sources, or raise the bound in the base's reviewer.toml:\n"
            "[limits]\n"
            "max_line_length = 300000"
        ),
    ),
    CheckSpec(
        id="integrity/config-edited",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="The patch edits reviewer.toml; the edit was not applied",
        summary="The patch changes (or deletes) reviewer.toml, and the patched file loads; the review still ran "
        "on the configuration of the base commit (or `--config`), never on the patched one. An edit that does "
        "not load is `integrity/config-invalid` instead.",
        why=(
            "A patch must not be able to weaken the rules that judge it: raise a bound, disable a check or "
            "re-rate a must-fix in the same change that needs it. The note tells maintainers that the "
            "configuration changes too, so they review it as code; it takes effect once merged."
        ),
        bad=(
            "diff --git a/reviewer.toml b/reviewer.toml\n"
            "--- a/reviewer.toml\n"
            "+++ b/reviewer.toml\n"
            "@@ -1,2 +1,5 @@\n"
            " [rules.bounded-scan]\n"
            " bound = 100\n"
            "+\n"
            "+[disable]\n"
            "+rules = [\"lease-renewal/lost-suppressed\"]\n"
            "# in the same patch as the code that swallows Lost"
        ),
        good="# change reviewer.toml in a pull request of its own; the code change is then judged by the merged rules",
    ),
    CheckSpec(
        id="integrity/config-invalid",
        severity=Severity.MUST_FIX,
        impact=Impact.REVIEW,
        title="The patch makes reviewer.toml invalid",
        summary="The patch changes reviewer.toml into a file the configuration loader refuses (not TOML, an "
        "unknown table, option or rule id, a value of the wrong type); the review itself still ran on the "
        "configuration of the base commit (or `--config`).",
        why=(
            "The configuration is read from the target branch before anything else, and a file it cannot load "
            "stops every review there with an error and no verdict. Merging an invalid reviewer.toml would turn "
            "the bot off for every later pull request until someone repairs it, so the change that breaks it "
            "must not merge. The patched file is loaded with the same loader and the same rule families as "
            "the base's; a patch that deletes reviewer.toml is valid (the built-in defaults then apply)."
        ),
        bad=(
            "diff --git a/reviewer.toml b/reviewer.toml\n"
            "--- a/reviewer.toml\n"
            "+++ b/reviewer.toml\n"
            "@@ -1,2 +1,2 @@\n"
            " [limits]\n"
            "-max_files = 2000\n"
            "+max_file = 2000\n"
            "# [limits] has no option 'max_file': every review on main would exit 2"
        ),
        good=(
            "[limits]\n"
            "max_files = 2000\n"
            "# an edit can be checked before pushing: --config loads a file with the same loader\n"
            "reviewer verify --repo . --base \"$BASE\" --patch change.patch --config reviewer.toml"
        ),
    ),
)

INTEGRITY = CheckGroup(
    id="integrity",
    summary=(
        "The integrity gate: before any rule runs it proves the inputs are what they claim (the base commit "
        "exists, the patch and artifacts match their hashes, the patch applies cleanly, the file count is as "
        "stated, every path is safe, the patch is within limits). A failed check is a must-fix finding and "
        "forces DO-NOT-MERGE."
    ),
    checks=INTEGRITY_CHECKS,
    locked=(
        "integrity checks can never be re-rated or disabled: they are the gate that proves the inputs are "
        "what they claim, and a review of anything else proves nothing"
    ),
)


def integrity_check(check_id: str) -> CheckSpec:
    """The spec of `integrity/<name>`; a KeyError for an id without one."""
    spec = INTEGRITY.check(check_id)
    if spec is None:
        raise KeyError(f"no integrity check {check_id!r}")
    return spec
