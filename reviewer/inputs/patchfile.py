"""Reading the patch file: its bytes (read once), hash, and what git says it names.

Paths come from git itself (`git apply --numstat -z`), which is what git will
write; this module only adds what numstat leaves out (the source of a rename
or copy, a new mode). What changed inside each file is never read from the
patch: reconstruction compares the blobs git produced (see `reviewer.change.linediff`).
"""

from __future__ import annotations

import hashlib
import re
import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from reviewer.display import printable
from reviewer.errors import ReviewerError
from reviewer.gitio import Repo

_DIFF_HEADER = re.compile(rb"^diff --git ", re.M)
_HUNK_HEADER = re.compile(rb"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)
_CHUNK = 1 << 20
STDIN = "-"


@dataclass(frozen=True)
class PatchFile:
    """The patch as read, once: what is hashed is exactly what is reviewed.

    `data` is empty when the patch is over the size limit: it was hashed while
    it streamed past, never held.
    """

    name: str
    data: bytes
    size: int
    sha256: str

    @property
    def oversized(self) -> bool:
        return self.size > len(self.data)

    @classmethod
    def of(cls, name: str, data: bytes) -> "PatchFile":
        return cls(name, data, len(data), hashlib.sha256(data).hexdigest())


# Where a shell's process substitution (`--patch <(git diff ...)`) points: a
# descriptor number, not a name worth a title.
_DESCRIPTOR = re.compile(r"/(?:dev|proc/self|proc/[0-9]+)/fd/[0-9]+|/dev/stdin")


def display_name(path: str, digest: str = "") -> str:
    """How the report names the patch: its file name, `stdin`, or for a pipe
    (`<(git diff ...)`), the start of its SHA-256 (`patch b853ebc32ba7`)."""
    if path == STDIN:
        return "stdin"
    if _DESCRIPTOR.fullmatch(path):
        # A named FIFO keeps its name: someone chose it (and it is part of a stored review's identity).
        return f"patch {digest[:12]}" if digest else "patch from a pipe"
    return printable(path.rstrip("/").rsplit("/", 1)[-1] or path)


def read_patch(path: str, max_bytes: int | None = None) -> PatchFile:
    """Read `path` (a file, FIFO, /dev/fd/N or `-` for standard input) exactly once.

    Memory stays within `max_bytes` plus one chunk whatever the input's size:
    past the limit the bytes are only hashed.
    """
    where = "standard input" if path == STDIN else path
    try:
        if path == STDIN:
            data, size, digest = _stream(sys.stdin.buffer, max_bytes)
        else:
            with open(path, "rb") as fh:
                data, size, digest = _stream(fh, max_bytes)
    except FileNotFoundError:
        raise ReviewerError(f"--patch {path}: no such file") from None
    except IsADirectoryError:
        raise ReviewerError(f"--patch {path}: is a directory, not a patch file") from None
    except OSError as exc:
        raise ReviewerError(f"--patch {where}: cannot read ({exc.strerror})") from None
    patch = PatchFile(display_name(path, digest), data, size, digest)
    if patch.oversized:
        return patch
    if not data.strip():
        raise ReviewerError(f"--patch {where}: the patch is empty")
    if not (_DIFF_HEADER.search(data) or (b"\n+++ " in data and b"--- " in data) or _HUNK_HEADER.search(data)):
        raise ReviewerError(f"--patch {where}: not a diff (no 'diff --git', '---'/'+++' or '@@' header found)")
    return patch


def _stream(fh: BinaryIO, max_bytes: int | None) -> tuple[bytes, int, str]:
    digest = hashlib.sha256()
    kept: list[bytes] | None = []
    size = 0
    while chunk := fh.read(_CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if kept is not None:
            kept.append(chunk)
            if max_bytes is not None and size > max_bytes:
                kept = None  # over the limit: hash the rest, keep none of it
    return (b"".join(kept) if kept is not None else b""), size, digest.hexdigest()


def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass(frozen=True)
class NumstatEntry:
    path: str
    added: int | None  # None for binary
    removed: int | None


def numstat(repo: Repo, patch: PatchFile) -> tuple[NumstatEntry, ...] | str:
    """Per-file entries in patch order, or git's reason for refusing the patch."""
    res = repo.run("apply", "--numstat", "-z", "--allow-empty", stdin=patch.data, check=False)
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


_C_ESCAPES = {ord("a"): 7, ord("b"): 8, ord("t"): 9, ord("n"): 10, ord("v"): 11, ord("f"): 12, ord("r"): 13,
              ord("\\"): 0x5C, ord('"'): 0x22}
_OCTAL = b"01234567"


def unquote_git_path(raw: bytes) -> str | None:
    """Undo git's C-style quoting of unusual path names; None when the quoting is
    malformed (git refuses such a header too, so the patch will not apply)."""
    raw = raw.rstrip(b"\r")
    if not raw.startswith(b'"'):
        return raw.decode("utf-8", "surrogateescape")
    if len(raw) < 2 or not raw.endswith(b'"'):
        return None
    body, out, i = raw[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != 0x5C:
            out.append(ch)
            i += 1
            continue
        escape = body[i + 1 : i + 4]
        if escape[:1] and escape[0] in _C_ESCAPES:
            out.append(_C_ESCAPES[escape[0]])
            i += 2
        elif len(escape) == 3 and all(b in _OCTAL for b in escape) and escape[0] <= ord("3"):
            out.append(int(escape, 8))
            i += 4
        else:
            return None
    return bytes(out).decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class HeaderInfo:
    """What one section's extended header claims. A claim only: git may not
    even read these lines as a header (it stops at the first line it does not
    know), so reconstruction checks every claim against the trees git wrote."""

    source: str | None  # `rename from` / `copy from`
    copied: bool
    new_mode: str | None = None  # from `new file mode` / `new mode` / the `index` line
    target: str | None = None  # `rename to` / `copy to`: the path the source claim is about


def section_headers(patch: PatchFile) -> list[HeaderInfo]:
    """Rename/copy sources and new modes of each `diff --git` section, in patch order.

    Only each section's extended header is read, line by line, so the cost is
    the number of headers, never the size of the hunks.
    """
    infos: list[HeaderInfo] = []
    data = patch.data
    for match in _DIFF_HEADER.finditer(data):
        source, copied, mode, target = None, False, None, None
        for line in _header_lines(data, match.end()):
            if line.startswith((b"@@", b"--- ", b"GIT binary patch", b"Binary files ", b"diff --git ")):
                break
            if line.startswith((b"new file mode ", b"new mode ")):
                mode = line.rsplit(b" ", 1)[1].strip().decode("ascii", "replace")
            elif line.startswith(b"index ") and line.count(b" ") == 2 and mode is None:
                mode = line.rsplit(b" ", 1)[1].strip().decode("ascii", "replace")
            elif line.startswith(b"rename from "):
                source = unquote_git_path(line[len(b"rename from ") :])
            elif line.startswith(b"copy from "):
                source, copied = unquote_git_path(line[len(b"copy from ") :]), True
            elif line.startswith((b"rename to ", b"copy to ")):
                target = unquote_git_path(line.split(b" ", 2)[2])
        infos.append(HeaderInfo(source, copied, mode, target if source else None))
    return infos


def _header_lines(data: bytes, start: int) -> Iterator[bytes]:
    """Lines of `data` from the one after `start`'s, lazily."""
    pos = data.find(b"\n", start)
    while pos != -1:
        end = data.find(b"\n", pos + 1)
        yield data[pos + 1 : end if end != -1 else len(data)]
        pos = end
