"""Reading the patch file: bytes, hash, and the per-file sections git will apply.

Paths come from git itself (`git apply --numstat -z`), which is what git will
write; this module only adds what numstat leaves out (the source of a rename
or copy) and the hunks, so the two can never disagree about which files change.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from reviewer.changeset import Hunk
from reviewer.errors import ReviewerError
from reviewer.gitio import Repo

_DIFF_HEADER = re.compile(rb"^diff --git ", re.M)
_HUNK_HEADER = re.compile(rb"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)


@dataclass(frozen=True)
class PatchFile:
    path: Path
    data: bytes
    # Size and hash of the file on disk; `data` is left empty when the file
    # is over the size limit, so a huge patch is hashed but never loaded.
    size: int = -1
    digest: str = ""

    @property
    def sha256(self) -> str:
        return self.digest or hashlib.sha256(self.data).hexdigest()

    @property
    def byte_size(self) -> int:
        return self.size if self.size >= 0 else len(self.data)

    @property
    def oversized(self) -> bool:
        return self.byte_size > len(self.data)

    @property
    def name(self) -> str:
        return self.path.name


def read_patch(path: str, max_bytes: int | None = None) -> PatchFile:
    p = Path(path)
    if not p.exists():
        raise ReviewerError(f"--patch {path}: no such file")
    if p.is_dir():
        raise ReviewerError(f"--patch {path}: is a directory, not a patch file")
    try:
        size = p.stat().st_size
        if max_bytes is not None and size > max_bytes:
            return PatchFile(p, b"", size, sha256_file(path))
        data = p.read_bytes()
    except OSError as exc:
        raise ReviewerError(f"--patch {path}: cannot read ({exc.strerror})") from None
    if not data.strip():
        raise ReviewerError(f"--patch {path}: the patch is empty")
    if not (_DIFF_HEADER.search(data) or (b"\n+++ " in data and b"--- " in data) or _HUNK_HEADER.search(data)):
        raise ReviewerError(f"--patch {path}: not a diff (no 'diff --git', '---'/'+++' or '@@' header found)")
    return PatchFile(p, data)


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class NumstatEntry:
    path: str
    added: int | None  # None for binary
    removed: int | None


def numstat(repo: Repo, patch: PatchFile) -> tuple[NumstatEntry, ...] | str:
    """Per-file entries in patch order, or git's reason for refusing the patch."""
    res = repo.run("apply", "--numstat", "-z", "--allow-empty", str(patch.path.resolve()), check=False)
    if res.returncode != 0:
        return res.last_error_line
    entries: list[NumstatEntry] = []
    for record in res.stdout.split(b"\0"):
        if not record:
            continue
        fields = record.split(b"\t", 2)
        if len(fields) != 3:
            return f"unexpected numstat record {record[:80]!r}"
        added, removed, raw_path = fields
        entries.append(
            NumstatEntry(
                path=raw_path.decode("utf-8", "surrogateescape"),
                added=None if added == b"-" else int(added),
                removed=None if removed == b"-" else int(removed),
            )
        )
    return tuple(entries)


_C_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13}


def unquote_git_path(raw: bytes) -> str:
    """Undo git's C-style quoting of unusual path names."""
    raw = raw.rstrip(b"\r")
    if not (len(raw) >= 2 and raw.startswith(b'"') and raw.endswith(b'"')):
        return raw.decode("utf-8", "surrogateescape")
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch == 0x5C and i + 1 < len(body):  # backslash
            nxt = body[i + 1]
            if 0x30 <= nxt <= 0x37 and i + 3 < len(body) + 1:
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_C_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return bytes(out).decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class HeaderInfo:
    source: str | None  # `rename from` / `copy from`
    copied: bool
    new_mode: str | None = None  # from `new file mode` / `new mode` / the `index` line


def section_headers(patch: PatchFile) -> list[HeaderInfo]:
    """Rename/copy sources of each `diff --git` section, in patch order."""
    infos: list[HeaderInfo] = []
    for section in _DIFF_HEADER.split(patch.data)[1:]:
        source, copied, mode = None, False, None
        for line in section.split(b"\n"):
            if line.startswith((b"@@", b"--- ", b"GIT binary patch", b"Binary files ")):
                break
            if line.startswith((b"new file mode ", b"new mode ")):
                mode = line.rsplit(b" ", 1)[1].strip().decode("ascii", "replace")
            elif line.startswith(b"index ") and line.count(b" ") == 2 and mode is None:
                mode = line.rsplit(b" ", 1)[1].strip().decode("ascii", "replace")
            elif line.startswith(b"rename from "):
                source = unquote_git_path(line[len(b"rename from ") :])
            elif line.startswith(b"copy from "):
                source, copied = unquote_git_path(line[len(b"copy from ") :]), True
        infos.append(HeaderInfo(source, copied, mode))
    return infos


def hunks_by_section(patch: PatchFile) -> list[tuple[Hunk, ...]] | None:
    """Hunks of each file section in patch order, or None when unidiff cannot read it."""
    try:
        parsed = PatchSet(patch.data.decode("utf-8", "surrogateescape"))
    except (UnidiffParseError, ValueError, IndexError):
        return None
    result: list[tuple[Hunk, ...]] = []
    for patched in parsed:
        hunks = []
        for h in patched:
            added = tuple(line.target_line_no for line in h if line.is_added and line.target_line_no)
            removed = tuple(line.source_line_no for line in h if line.is_removed and line.source_line_no)
            hunks.append(Hunk(h.source_start, h.source_length, h.target_start, h.target_length, added, removed,
                              _deletion_points(h)))
        result.append(tuple(hunks))
    return result


def _deletion_points(hunk) -> tuple[int, ...]:
    """Patched line before each run of purely removed lines (see Hunk.deleted_after).

    A run that added lines replace is a modification: the added lines already
    mark it, so it adds no point of its own.
    """
    lines = list(hunk)
    points: list[int] = []
    last_target = hunk.target_start - 1 if hunk.target_length else hunk.target_start
    i = 0
    while i < len(lines):
        if not lines[i].is_removed:
            if lines[i].target_line_no:
                last_target = lines[i].target_line_no
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].is_removed:
            i += 1
        replaced = (i < len(lines) and lines[i].is_added) or (start > 0 and lines[start - 1].is_added)
        if not replaced:
            points.append(last_target)
    return tuple(points)


def hunks_from_git(repo: Repo, old_blob: str | None, new_blob: str | None) -> tuple[Hunk, ...]:
    """Git's own hunks between two blobs (fallback when the patch text is unusual)."""
    empty = repo.run("hash-object", "-t", "blob", "--stdin", stdin=b"").stdout.decode().strip()
    res = repo.run(
        "diff", "--no-color", "--no-ext-diff", "--no-textconv", "-U0", "--text",
        old_blob or empty, new_blob or empty,
    )
    text = res.stdout
    if not text.strip():
        return ()
    sections = hunks_by_section(PatchFile(Path("git-diff"), text))
    return sections[0] if sections else ()
