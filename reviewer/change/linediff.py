"""What changed inside each file, from git's own comparison of the two blobs.

Never from the patch: its hunk headers may lie about where they apply (git
places a hunk by its context, not its header), its text may be sent as a
`GIT binary patch`, and it may touch one file in several sections. The blobs
git wrote are the truth, so the changed lines are git's diff of those blobs.

Git runs with `-U0`, so each hunk header alone says which lines changed: the
`-a,b +c,d` header of a hunk with no context names exactly the removed lines
a..a+b-1 and the added lines c..c+d-1, and a pure deletion (`d == 0`) sits
after patched line c.
"""

from __future__ import annotations

import re
from typing import Iterator

from reviewer.change.changeset import Hunk
from reviewer.gitio import Repo
from reviewer.inputs.patchfile import unquote_git_path

_SECTION = re.compile(rb"^diff --git ", re.M)
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)
_DIFF_OPTIONS = ("-U0", "--no-color", "--no-ext-diff", "--no-textconv", "--full-index", "--diff-algorithm=myers")

# A path git could not diff as text (it judged the content binary).
BINARY = None


def tree_hunks(repo: Repo, base_tree: str, patched_tree: str) -> dict[str, tuple[Hunk, ...] | None]:
    """Path -> hunks for every path whose content differs between the trees.

    One git process for the whole change. `None` marks a path git treated as
    binary. Renames are not paired here (see `blob_hunks`).
    """
    out = repo.run("diff-tree", "-r", "-p", "--no-renames", *_DIFF_OPTIONS, base_tree, patched_tree).stdout
    return dict(_sections(out))


def blob_hunks(repo: Repo, old_blob: str | None, new_blob: str | None, text: bool = False) -> tuple[Hunk, ...] | None:
    """Hunks between two blobs (a rename or copy pairs blobs of two paths)."""
    empty = repo.run("hash-object", "-t", "blob", "--stdin", stdin=b"").stdout.decode().strip()
    extra = ("--text",) if text else ()
    out = repo.run("diff", *_DIFF_OPTIONS, *extra, old_blob or empty, new_blob or empty).stdout
    sections = [hunks for _, hunks in _sections(out)]
    return sections[0] if sections else ()


def _sections(out: bytes) -> Iterator[tuple[str, tuple[Hunk, ...] | None]]:
    starts = [m.start() for m in _SECTION.finditer(out)] + [len(out)]
    for start, end in zip(starts, starts[1:]):
        header_end = out.find(b"\n", start)
        path = _path_of(out[start + len(b"diff --git ") : header_end if header_end != -1 else end])
        body_start = header_end + 1 if header_end != -1 else end
        first_hunk = _HUNK.search(out, body_start, end)
        preamble = out[body_start : first_hunk.start() if first_hunk else end]
        if first_hunk is None and b"\nBinary files " in b"\n" + preamble:
            yield path, BINARY
            continue
        yield path, tuple(_hunk(m) for m in _HUNK.finditer(out, body_start, end))


def _hunk(m: re.Match[bytes]) -> Hunk:
    old_start, new_start = int(m[1]), int(m[3])
    old_count = 1 if m[2] is None else int(m[2])
    new_count = 1 if m[4] is None else int(m[4])
    added = tuple(range(new_start, new_start + new_count))
    removed = tuple(range(old_start, old_start + old_count))
    # With no context lines, a hunk that adds nothing removed lines just after
    # patched line `new_start` (0: before the first line).
    deleted_after = (new_start,) if new_count == 0 and old_count else ()
    return Hunk(old_start, old_count, new_start, new_count, added, removed, deleted_after)


def _path_of(header: bytes) -> str:
    """The path of `a/<p> b/<p>` (identical sides: git was told not to pair renames)."""
    header = header.rstrip(b"\r")
    if header.startswith(b'"'):
        end = _closing_quote(header)
        path = unquote_git_path(header[: end + 1]) or ""
        return path[2:] if path.startswith("a/") else path
    half = (len(header) - 1) // 2
    return header[2:half].decode("utf-8", "surrogateescape")


def _closing_quote(quoted: bytes) -> int:
    i = 1
    while i < len(quoted):
        if quoted[i] == 0x5C:
            i += 2
            continue
        if quoted[i] == 0x22:
            return i
        i += 1
    return len(quoted) - 1
