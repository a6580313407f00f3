"""Rebuild every changed file from git objects: base blobs plus the patched tree.

The patched tree is the one git wrote from the temporary index, so the
patched text is exactly what `git apply` produces; the hunks (for line
mapping) come from the patch and are checked against that text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from reviewer.changeset import ChangedFile, ChangeSet, FileStatus, Hunk
from reviewer.gitio import RawChange, Repo
from reviewer.patchfile import HeaderInfo, NumstatEntry, PatchFile, hunks_by_section, hunks_from_git

_ZERO = "0" * 40


def _lookup(repo: Repo, tree: str, path: str) -> tuple[str, str] | None:
    """(mode, oid) of `path` in `tree`, or None."""
    res = repo.run("ls-tree", "-z", "--full-tree", tree, "--", path, check=False)
    record = res.stdout.split(b"\0", 1)[0]
    if res.returncode != 0 or not record:
        return None
    meta = record.split(b"\t", 1)[0].decode().split()
    return meta[0], meta[2]


def _hunks_match(hunks: tuple[Hunk, ...], lines: list[str], patched_lines_expected: int | None) -> bool:
    for h in hunks:
        for n in h.added:
            if n < 1 or n > len(lines):
                return False
    if patched_lines_expected is not None and sum(len(h.added) for h in hunks) != patched_lines_expected:
        return False
    return True


def build_changeset(
    repo: Repo,
    base: str,
    base_tree: str,
    patched_tree: str,
    patch: PatchFile,
    entries: tuple[NumstatEntry, ...],
    headers: list[HeaderInfo],
    raw: Mapping[str, RawChange] | None = None,
) -> ChangeSet:
    raw = raw if raw is not None else repo.diff_trees(base_tree, patched_tree)
    sections = hunks_by_section(patch)
    if sections is not None and len(sections) != len(entries):
        sections = None

    plan: list[dict] = []
    for i, entry in enumerate(entries):
        header = headers[i] if i < len(headers) and len(headers) == len(entries) else HeaderInfo(None, False)
        path = entry.path
        rec = raw.get(path)
        old_path = header.source if header.source and header.source != path else None
        if old_path is not None:
            base_side = _lookup(repo, base_tree, old_path)
            new_side = _lookup(repo, patched_tree, path)
            still_there = _lookup(repo, patched_tree, old_path)
            status = FileStatus.COPIED if (header.copied or still_there is not None) else FileStatus.RENAMED
            old_mode, old_oid = base_side if base_side else (None, None)
            new_mode, new_oid = new_side if new_side else (None, None)
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
        plan.append(
            dict(path=path, old_path=old_path, status=status, old_mode=old_mode, new_mode=new_mode,
                 old_blob=None if old_oid in (None, _ZERO) else old_oid,
                 new_blob=None if new_oid in (None, _ZERO) else new_oid,
                 binary=entry.added is None, expected_added=entry.added)
        )

    blobs = repo.read_blobs([p[k] for p in plan for k in ("old_blob", "new_blob") if p[k]])
    files: list[ChangedFile] = []
    for i, p in enumerate(plan):
        base_bytes = blobs.get(p["old_blob"]) if p["old_blob"] else None
        patched_bytes = blobs.get(p["new_blob"]) if p["new_blob"] else None
        hunks: tuple[Hunk, ...] = ()
        if not p["binary"]:
            hunks = sections[i] if sections is not None else ()
            patched_lines = (patched_bytes or b"").split(b"\n")
            if sections is None or not _hunks_match(hunks, patched_lines, p["expected_added"]):
                hunks = hunks_from_git(repo, p["old_blob"], p["new_blob"])
        files.append(
            ChangedFile(
                path=p["path"], old_path=p["old_path"], status=p["status"], old_mode=p["old_mode"],
                new_mode=p["new_mode"], old_blob=p["old_blob"], new_blob=p["new_blob"], binary=p["binary"],
                hunks=hunks, base_bytes=base_bytes, patched_bytes=patched_bytes,
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
