"""Rebuild every changed file from git objects: base blobs plus the patched tree.

The patched tree is the one git wrote from the temporary index, so the
patched text is exactly what `git apply` produces. What changed inside each
file is git's own diff of the two blobs (`reviewer.change.linediff`), and whether a
file is binary is decided from its content, never from how the patch encoded it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from reviewer.change.changeset import ChangedFile, ChangeSet, FileStatus, Hunk, is_binary
from reviewer.gitio import RawChange, Repo
from reviewer.change.linediff import BINARY, blob_hunks, tree_hunks
from reviewer.inputs.patchfile import HeaderInfo, NumstatEntry

_ZERO = "0" * 40


def _lookup(repo: Repo, tree: str, path: str) -> tuple[str, str] | None:
    """(mode, oid) of `path` in `tree`, or None."""
    res = repo.run("ls-tree", "-z", "--full-tree", tree, "--", path, check=False)
    record = res.stdout.split(b"\0", 1)[0]
    if res.returncode != 0 or not record:
        return None
    meta = record.split(b"\t", 1)[0].decode().split()
    return meta[0], meta[2]


@dataclass(frozen=True)
class _Plan:
    path: str
    old_path: str | None
    status: FileStatus
    old_mode: str | None
    new_mode: str | None
    old_blob: str | None
    new_blob: str | None


_NO_CLAIM = HeaderInfo(None, False)
_BLOB_MODES = ("100644", "100755")


def unique_entries(entries: tuple[NumstatEntry, ...], headers: list[HeaderInfo]) -> list[tuple[NumstatEntry, HeaderInfo]]:
    """One entry per path, in first-appearance order, with the rename/copy claim made for it.

    A patch may change one file in several `diff --git` sections; git applies
    them in turn, so the file changed once, from base to the final blob. A
    claim is matched by the path it names (`rename to`), never by position:
    git skips a header it cannot read, so positions can disagree with git's.
    """
    claims: dict[str, HeaderInfo] = {}
    for header in headers:
        if header.source and header.target:
            claims.setdefault(header.target, header)
    seen: dict[str, tuple[NumstatEntry, HeaderInfo]] = {}
    for entry in entries:
        seen.setdefault(entry.path, (entry, claims.get(entry.path, _NO_CLAIM)))
    return list(seen.values())


def _proven_source(repo: Repo, base_tree: str, patched_tree: str, path: str, header: HeaderInfo,
                   raw: Mapping[str, RawChange]) -> tuple[str, bool, tuple[str, str], tuple[str, str]] | None:
    """(source, copied, base side, patched side) when git's trees bear the claim out, else None.

    The source must be a file of the base (a blob, not a tree, gitlink or
    symbolic link), the target a file of the patched tree, and a rename must
    have removed the source.
    """
    source = header.source
    if not source or source == path:
        return None
    base_side = _lookup(repo, base_tree, source)
    new_side = _lookup(repo, patched_tree, path)
    if base_side is None or new_side is None or base_side[0] not in _BLOB_MODES or new_side[0] not in _BLOB_MODES:
        return None
    still_there = source not in raw or raw[source].status != "D"
    if not header.copied and still_there:
        return None
    return source, header.copied, base_side, new_side


def _plan(repo: Repo, base_tree: str, patched_tree: str, entry: NumstatEntry, header: HeaderInfo,
          raw: Mapping[str, RawChange]) -> _Plan:
    path = entry.path
    rec = raw.get(path)
    proven = _proven_source(repo, base_tree, patched_tree, path, header, raw)
    old_path: str | None = None
    if proven is not None:
        old_path, copied, (old_mode, old_oid), (new_mode, new_oid) = proven
        status = FileStatus.COPIED if copied else FileStatus.RENAMED
    elif rec is None:
        # The section changed nothing git records (e.g. an empty patch section).
        side = _lookup(repo, patched_tree, path)
        status = FileStatus.MODIFIED
        old_mode = new_mode = side[0] if side else None
        old_oid = new_oid = side[1] if side else None
    else:
        old_mode, new_mode, old_oid, new_oid, letter = rec.old_mode, rec.new_mode, rec.old_oid, rec.new_oid, rec.status
        if letter == "A":
            status, old_mode, old_oid = FileStatus.ADDED, None, None
        elif letter == "D":
            status, new_mode, new_oid = FileStatus.DELETED, None, None
        elif letter == "T":
            status = FileStatus.TYPE_CHANGED
        elif old_oid == new_oid:
            status = FileStatus.MODE_CHANGED
        else:
            status = FileStatus.MODIFIED
    return _Plan(path, old_path, status, old_mode, new_mode,
                 None if old_oid in (None, _ZERO) else old_oid, None if new_oid in (None, _ZERO) else new_oid)


def build_changeset(
    repo: Repo,
    base: str,
    base_tree: str,
    patched_tree: str,
    entries: tuple[NumstatEntry, ...],
    headers: list[HeaderInfo],
    raw: Mapping[str, RawChange] | None = None,
) -> ChangeSet:
    raw = raw if raw is not None else repo.diff_trees(base_tree, patched_tree)
    plans = [_plan(repo, base_tree, patched_tree, e, h, raw) for e, h in unique_entries(entries, headers)]
    blobs = repo.read_blobs([oid for p in plans for oid in (p.old_blob, p.new_blob) if oid])
    by_path = tree_hunks(repo, base_tree, patched_tree) if plans else {}
    files: list[ChangedFile] = []
    for p in plans:
        base_bytes = blobs.get(p.old_blob) if p.old_blob else None
        patched_bytes = blobs.get(p.new_blob) if p.new_blob else None
        binary = is_binary(base_bytes) or is_binary(patched_bytes)
        hunks: tuple[Hunk, ...] = ()
        if not binary:
            # Changed lines are judged at the path, against the same path in
            # the base: a moved or copied file is new code where it now lives,
            # so whether the patch calls it a rename cannot change the review.
            found = by_path.get(p.path, ())
            if found is BINARY:
                # Git judged text binary only if something (an attribute) told
                # it so; the content says text, so ask again without that judgement.
                same_path_base = None if p.old_path is not None else p.old_blob
                found = blob_hunks(repo, same_path_base, p.new_blob, text=True) or ()
            hunks = found
        files.append(
            ChangedFile(
                path=p.path, old_path=p.old_path, status=p.status, old_mode=p.old_mode, new_mode=p.new_mode,
                old_blob=p.old_blob, new_blob=p.new_blob, binary=binary, hunks=hunks,
                base_bytes=base_bytes, patched_bytes=patched_bytes,
            )
        )
    return ChangeSet(base=base, base_tree=base_tree, patched_tree=patched_tree, files=tuple(files))


def write_patched_files(changeset: ChangeSet, out_dir: Path) -> list[Path]:
    """Write each patched file under `out_dir`; deleted files are not written.

    Paths were already proven safe by the gate, and nothing here follows a
    symbolic link: every parent is created fresh under `out_dir`.
    """
    written: list[Path] = []
    root = out_dir.resolve()
    for f in changeset.files:
        if f.patched_bytes is None:
            continue
        target = (root / f.path).resolve()
        if root not in target.parents:
            raise ValueError(f"refusing to write outside {root}: {f.path}")
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(f.patched_bytes)
        if f.new_mode == "100755":
            target.chmod(0o755)
        written.append(target)
    return written
