"""The change set: what the patch does to each file, rebuilt from git objects."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from functools import cached_property


class FileStatus(str, enum.Enum):
    ADDED = "added"
    MODIFIED = "modified"
    DELETED = "deleted"
    RENAMED = "renamed"
    COPIED = "copied"
    MODE_CHANGED = "mode-changed"
    TYPE_CHANGED = "type-changed"


@dataclass(frozen=True)
class Hunk:
    """One hunk; `added` are patched line numbers, `removed` base line numbers.

    `deleted_after` says where removed lines were, in patched terms: each entry
    is the patched line just before a run of removed lines (0: before line 1).
    """

    old_start: int
    old_count: int
    new_start: int
    new_count: int
    added: tuple[int, ...]
    removed: tuple[int, ...]
    deleted_after: tuple[int, ...] = ()


# The one list of source suffixes: what the gate's limits, the model and every
# rule family read as code. JavaScript counts: a helper moved into a `.js` or
# `.mjs` file and imported by the TypeScript runs all the same.
TYPESCRIPT_ONLY_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
JAVASCRIPT_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs")
SOURCE_SUFFIXES = TYPESCRIPT_ONLY_SUFFIXES + JAVASCRIPT_SUFFIXES
_DECLARATION_FILES = (".d.ts", ".d.mts", ".d.cts")
# Installed packages and minified bundles are not code anyone reviews (the model still reads a file
# reviewed code imports). Folder names such as `dist/`, `build/` or `vendor/` are not a reason: a patch
# may put a helper anywhere, and what a file is, not where it is, decides.
_NOT_REVIEWED_JS = re.compile(r"(?:^|/)node_modules/|[.-]min\.[cm]?js$")


def is_source(path: str) -> bool:
    """A source file under review: TypeScript (not a declaration file, `.d.ts`), or JavaScript
    that is not an installed package (`node_modules/`) or a minified bundle (`*.min.js`)."""
    if path.endswith(TYPESCRIPT_ONLY_SUFFIXES):
        return not path.endswith(_DECLARATION_FILES)
    return path.endswith(JAVASCRIPT_SUFFIXES) and _NOT_REVIEWED_JS.search(path) is None


# Git's own rule (`buffer_is_binary`): a NUL in the first 8000 bytes.
_BINARY_PROBE = 8000


def is_binary(data: bytes | None) -> bool:
    """Binary by content, whatever the patch's encoding or the repository's attributes say."""
    return data is not None and b"\0" in data[:_BINARY_PROBE]


def decode_text(data: bytes | None) -> str | None:
    """UTF-8 text, or None for binary / non-UTF-8 content (represented, not crashed on)."""
    if data is None or is_binary(data):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass(frozen=True)
class ChangedFile:
    path: str
    old_path: str | None
    status: FileStatus
    old_mode: str | None
    new_mode: str | None
    old_blob: str | None
    new_blob: str | None
    binary: bool
    hunks: tuple[Hunk, ...]
    base_bytes: bytes | None = field(repr=False)
    patched_bytes: bytes | None = field(repr=False)

    @property
    def source_path(self) -> str:
        """Where the file lived in the base tree."""
        return self.old_path or self.path

    @cached_property
    def base_text(self) -> str | None:
        return None if self.binary else decode_text(self.base_bytes)

    @cached_property
    def patched_text(self) -> str | None:
        return None if self.binary else decode_text(self.patched_bytes)

    @cached_property
    def added_lines(self) -> frozenset[int]:
        return frozenset(n for h in self.hunks for n in h.added)

    @property
    def added_count(self) -> int:
        return sum(len(h.added) for h in self.hunks)

    @property
    def removed_count(self) -> int:
        return sum(len(h.removed) for h in self.hunks)

    def touches(self, line: int, end_line: int | None = None) -> bool:
        """Did the patch add or change any patched line in [line, end_line]?

        A pure deletion between two kept lines counts as touching both
        neighbours: the code around it changed meaning.
        """
        end = end_line if end_line is not None else line
        if self.status is FileStatus.ADDED:
            return True
        for h in self.hunks:
            if any(line <= n <= end for n in h.added):
                return True
            # Lines were removed between patched lines d and d + 1.
            if any(line <= d + 1 and d <= end for d in h.deleted_after):
                return True
        return False


@dataclass(frozen=True)
class ChangeSet:
    base: str
    base_tree: str
    patched_tree: str
    files: tuple[ChangedFile, ...]

    @cached_property
    def by_path(self) -> dict[str, ChangedFile]:
        """The one path lookup: each changed file by its patched path.

        Reconstruction merges every section naming one path into one file
        (reviewer/change/reconstruct.py), so a path is never listed twice.
        """
        out: dict[str, ChangedFile] = {}
        for f in self.files:
            out.setdefault(f.path, f)
        return out

    @cached_property
    def by_either_path(self) -> dict[str, ChangedFile]:
        """`by_path`, plus each moved file by its base path where no changed file has that path."""
        out = dict(self.by_path)
        for f in sorted(self.by_path.values(), key=lambda f: f.path):
            if f.old_path:
                out.setdefault(f.old_path, f)
        return out

    def file(self, path: str) -> ChangedFile | None:
        # Asked per finding and per related location: a lookup, not a scan.
        return self.by_path.get(path)

    def source_paths(self) -> tuple[str, ...]:
        """Changed TypeScript sources that exist, as text, in the patched tree; sorted."""
        return tuple(sorted(
            f.path for f in self.by_path.values()
            if f.status is not FileStatus.DELETED and not f.binary and f.patched_text is not None and is_source(f.path)
        ))

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)
