"""Reconstruction equals what `git apply` writes, for every kind of change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gitrepo import git, make_change
from reviewer import review
from reviewer.change.changeset import FileStatus

BASE = {
    "src/keep.ts": "export const a = 1\nexport const b = 2\nexport const c = 3\n",
    "src/gone.ts": "export const gone = true\n",
    "src/move.ts": "".join(f"export const line{i} = {i}\n" for i in range(30)),
    "bin/run.sh": "#!/bin/sh\necho hi\n",
    "img/logo.bin": bytes(range(256)),
    "crlf/win.ts": "const a = 1\r\nconst b = 2\r\n",
    "eof/no-newline.ts": "const last = 1",
    "latin/legacy.txt": "caf\xe9\n".encode("latin-1"),
}

CASES = {
    "modified": ({"src/keep.ts": "export const a = 1\nexport const b = 20\nexport const c = 3\nexport const d = 4\n"}, ()),
    "added": ({"src/new.ts": "export const fresh = 1\n"}, ()),
    "deleted": ({"src/gone.ts": None}, ()),
    "renamed-with-edit": (
        {"src/move.ts": None, "src/moved.ts": BASE["src/move.ts"].replace("line7 = 7", "line7 = 70")},
        ("-M",),
    ),
    "binary-modified": ({"img/logo.bin": bytes(reversed(range(256)))}, ()),
    "binary-deleted": ({"img/logo.bin": None}, ()),
    "crlf": ({"crlf/win.ts": "const a = 1\r\nconst b = 20\r\nconst c = 3\r\n"}, ()),
    "no-newline-at-eof": ({"eof/no-newline.ts": "const last = 2"}, ()),
    "adds-newline-at-eof": ({"eof/no-newline.ts": "const last = 1\n"}, ()),
    "non-utf8": ({"latin/legacy.txt": "caf\xe9 cr\xe8me\n".encode("latin-1")}, ()),
    "tabs-and-long-line": ({"src/keep.ts": "\texport const a = 1\n" + "x" * 5000 + "\n"}, ()),
    "empty-file": ({"src/empty.ts": ""}, ()),
    "bom": ({"src/bom.ts": "\ufeffexport const bom = 1\n"}, ()),
    "mixed-endings": ({"crlf/win.ts": "const a = 1\r\nconst b = 2\nconst c = 3\r"}, ()),
    "invalid-utf8": ({"latin/legacy.txt": b"ok\n\xff\xfe broken \xc3\x28\n"}, ()),
    "emptied-file": ({"src/gone.ts": ""}, ()),
}


def _git_apply_result(repo_path: Path, base: str, patch: Path, tmp: Path) -> Path:
    """Apply the patch the ordinary way in a separate clone: the reference result."""
    clone = tmp / "reference"
    git(tmp, "clone", "-q", str(repo_path), str(clone))
    git(clone, "config", "core.autocrlf", "false")
    git(clone, "checkout", "-q", base)
    git(clone, "apply", "--index", str(patch))
    return clone


@pytest.mark.parametrize("name", sorted(CASES))
def test_patched_bytes_equal_git_apply(name: str, tmp_path: Path) -> None:
    patched, diff_args = CASES[name]
    repo, base, patch, _ = make_change(tmp_path, BASE, patched, *diff_args)
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=())
    assert outcome.changeset is not None
    reference = _git_apply_result(repo.path, base, patch, tmp_path)
    for f in outcome.changeset.files:
        ref_file = reference / f.path
        if f.status is FileStatus.DELETED:
            assert not ref_file.exists()
            assert f.patched_bytes is None
            assert f.base_bytes == (repo.path / f.path).read_bytes()
        else:
            assert f.patched_bytes == ref_file.read_bytes(), f.path
    changed_by_git = set(git(reference, "diff", "--cached", "--name-only", "--no-renames", base).splitlines())
    ours = {f.path for f in outcome.changeset.files} | {f.old_path for f in outcome.changeset.files if f.old_path}
    assert ours == changed_by_git


def test_statuses_and_old_paths(tmp_path: Path) -> None:
    patched = {
        "src/keep.ts": BASE["src/keep.ts"] + "export const d = 4\n",
        "src/new.ts": "x\n",
        "src/gone.ts": None,
        "src/move.ts": None,
        "src/moved.ts": BASE["src/move.ts"],
        "img/logo.bin": b"\0\1\2",
    }
    repo, base, patch, _ = make_change(tmp_path, BASE, patched, "-M")
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=())
    cs = outcome.changeset
    assert cs is not None
    status = {f.path: f.status for f in cs.files}
    assert status == {
        "src/keep.ts": FileStatus.MODIFIED,
        "src/new.ts": FileStatus.ADDED,
        "src/gone.ts": FileStatus.DELETED,
        "src/moved.ts": FileStatus.RENAMED,
        "img/logo.bin": FileStatus.MODIFIED,
    }
    assert cs.file("src/moved.ts").old_path == "src/move.ts"
    assert cs.file("img/logo.bin").binary and cs.file("img/logo.bin").patched_text is None
    assert cs.file("src/gone.ts").patched_bytes is None


def test_mode_only_change(tmp_path: Path) -> None:
    repo, base, patch, _ = make_change(tmp_path, BASE, {})
    git(repo.path, "checkout", "-q", "-b", "modes")
    (repo.path / "src/keep.ts").chmod(0o755)
    git(repo.path, "add", "src/keep.ts")
    git(repo.path, "commit", "-q", "-m", "mode")
    mode_patch = tmp_path / "mode.patch"
    mode_patch.write_bytes(repo.diff(base, "modes"))
    git(repo.path, "checkout", "-q", "main")
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(mode_patch)), families=())
    (f,) = outcome.changeset.files
    assert (f.path, f.status, f.old_mode, f.new_mode) == ("src/keep.ts", FileStatus.MODE_CHANGED, "100644", "100755")
    assert f.hunks == ()


def test_hunk_line_numbers_map_to_patched_text(tmp_path: Path) -> None:
    new = BASE["src/move.ts"].splitlines(keepends=True)
    new[3] = "export const changed3 = 3\n"
    new.insert(20, "export const inserted = 1\n")
    del new[27]  # after the insert above, index 27 holds base line 26
    repo, base, patch, _ = make_change(tmp_path, BASE, {"src/move.ts": "".join(new)})
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=())
    f = outcome.changeset.file("src/move.ts")
    lines = f.patched_text.splitlines()
    assert sorted(f.added_lines) == [4, 21]
    assert lines[3] == "export const changed3 = 3" and lines[20] == "export const inserted = 1"
    removed = sorted(n for h in f.hunks for n in h.removed)
    base_lines = f.base_text.splitlines()
    assert [base_lines[n - 1] for n in removed] == ["export const line3 = 3", "export const line26 = 26"]
    assert f.touches(21) and not f.touches(10, 15)


def test_reconstruct_command_writes_patched_files(tmp_path: Path) -> None:
    from reviewer.cli import main

    repo, base, patch, _ = make_change(tmp_path, BASE, {"src/new.ts": "x\n", "src/gone.ts": None, "crlf/win.ts": "a\r\n"})
    out = tmp_path / "out"
    assert main(["reconstruct", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--out", str(out)]) == 0
    assert (out / "src/new.ts").read_bytes() == b"x\n"
    assert (out / "crlf/win.ts").read_bytes() == b"a\r\n"
    assert not (out / "src/gone.ts").exists()
    # Refuses a non-empty directory rather than mixing old files in.
    assert main(["reconstruct", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--out", str(out)]) == 2
    shutil.rmtree(out)


def test_pure_deletion_touches_only_its_neighbours(tmp_path: Path) -> None:
    lines = BASE["src/move.ts"].splitlines(keepends=True)
    del lines[12]  # base line 13 goes; patched lines 12 and 13 now meet where it was
    repo, base, patch, _ = make_change(tmp_path, BASE, {"src/move.ts": "".join(lines)})
    outcome = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=())
    f = outcome.changeset.file("src/move.ts")
    assert f.added_lines == frozenset()
    assert [h.deleted_after for h in f.hunks] == [(12,)]
    assert f.touches(12) and f.touches(13) and f.touches(5, 12)
    assert not f.touches(10) and not f.touches(11) and not f.touches(14, 20)


def test_deletion_at_the_top_of_a_file(tmp_path: Path) -> None:
    lines = BASE["src/move.ts"].splitlines(keepends=True)
    repo, base, patch, _ = make_change(tmp_path, BASE, {"src/move.ts": "".join(lines[2:])})
    f = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=()).changeset.file("src/move.ts")
    assert [h.deleted_after for h in f.hunks] == [(0,)]
    assert f.touches(1) and not f.touches(2)
