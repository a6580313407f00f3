"""Property and fuzz tests: reconstruction equals git, and no patch makes the reader crash."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitrepo import git, make_change
from reviewer import review
from reviewer.errors import ReviewerError

LINE = st.text(alphabet=st.sampled_from(list("abcxyz {}();=\t`é") + ["\r"]), max_size=12)
FILE = st.lists(LINE, max_size=25).map(lambda lines: "\n".join(lines))
EOL = st.sampled_from(["", "\n"])


@st.composite
def edits(draw):
    base = draw(FILE) + draw(EOL)
    lines = base.split("\n")
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["insert", "delete", "replace"]))
        at = draw(st.integers(0, len(lines)))
        if op == "insert":
            lines.insert(at, draw(LINE))
        elif lines and at < len(lines):
            if op == "delete":
                del lines[at]
            else:
                lines[at] = draw(LINE)
    return base, "\n".join(lines) + draw(EOL)


def _lines(data: bytes) -> list[bytes]:
    """Lines as git counts them: split on LF only, no phantom line after a final LF."""
    if not data:
        return []
    lines = data.split(b"\n")
    return lines[:-1] if data.endswith(b"\n") else lines


@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pair=edits(), name=st.sampled_from(["a.ts", "dir/b.txt", "x y.ts"]))
def test_reconstruction_and_line_mapping_match_git(tmp_path_factory, pair, name) -> None:
    base_text, new_text = pair
    tmp = tmp_path_factory.mktemp("prop")
    repo, base, patch, patched_sha = make_change(tmp, {name: base_text, "keep.txt": "k\n"}, {name: new_text})
    request = review.Request(repo=str(repo.path), base=base, patch=str(patch))
    if base_text == new_text:
        with pytest.raises(ReviewerError, match="the patch is empty"):
            review.run(request, families=())
        return
    outcome = review.run(request, families=())
    (f,) = outcome.changeset.files
    assert f.patched_bytes == repo.show(patched_sha, name)
    assert f.base_bytes == repo.show(base, name)
    # Every line the hunks call added holds new text, and every other patched
    # line exists in the base in the same order (the mapping is a real diff).
    patched_lines = _lines(f.patched_bytes)
    base_lines = _lines(f.base_bytes)
    kept = [patched_lines[i - 1] for i in range(1, len(patched_lines) + 1) if i not in f.added_lines]
    removed = {n for h in f.hunks for n in h.removed}
    base_kept = [base_lines[i - 1] for i in range(1, len(base_lines) + 1) if i not in removed]
    assert kept == base_kept


def _mutations(data: bytes, rng: random.Random) -> list[bytes]:
    lines = data.split(b"\n")
    out = [data[: rng.randrange(1, len(data))] for _ in range(4)]  # truncated
    for _ in range(6):
        mutated = list(lines)
        i = rng.randrange(len(mutated))
        choice = rng.randrange(6)
        if choice == 0:
            mutated[i] = mutated[i].replace(b",", b",9", 1)  # wrong hunk counts
        elif choice == 1:
            del mutated[i]
        elif choice == 2:
            mutated.insert(i, bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40))))  # garbage
        elif choice == 3:
            mutated[i] = b"@@ -" + str(rng.randrange(1000)).encode() + b" +1 @@"
        elif choice == 4:
            mutated = mutated[:i] + mutated[i:][::-1]
        else:
            mutated[i] = mutated[i].replace(b"a/", b"../", 1)
        out.append(b"\n".join(mutated))
    return out


def test_mutated_patches_give_a_failure_or_a_review_never_an_exception(tmp_path: Path) -> None:
    base = {f"src/f{i}.ts": "".join(f"export const v{j} = {j}\n" for j in range(12)) for i in range(3)}
    patched = {
        "src/f0.ts": base["src/f0.ts"].replace("v3 = 3", "v3 = 30"),
        "src/f1.ts": None,
        "src/new.ts": "export const n = 1\n",
        "img.bin": bytes(range(64)),
    }
    repo, base_sha, patch, _ = make_change(tmp_path, base, patched)
    original = patch.read_bytes()
    rng = random.Random(20261129)
    outcomes = {"review": 0, "refused": 0}
    for i, data in enumerate(m for _ in range(5) for m in _mutations(original, rng)):
        mutated = tmp_path / f"m{i}.patch"
        mutated.write_bytes(data)
        try:
            report = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(mutated))).report
        except ReviewerError:
            outcomes["refused"] += 1  # a clean exit-2 message (empty, not a diff)
            continue
        outcomes["review"] += 1
        assert report.verdict.value in ("MERGE", "DO-NOT-MERGE")
        failed = [c for c in report.checks if c.status.value == "fail"]
        if report.verdict.value == "MERGE":
            assert not failed
    assert outcomes["review"] > 20
    assert git(repo.path, "status", "--porcelain") == ""


def test_cli_never_prints_a_traceback_on_garbage(tmp_path: Path) -> None:
    repo, base, _, _ = make_change(tmp_path, {"a.ts": "a\n"}, {"a.ts": "b\n"})
    rng = random.Random(7)
    for i in range(8):
        junk = tmp_path / f"junk{i}.patch"
        junk.write_bytes(b"diff --git a/a.ts b/a.ts\n" + bytes(rng.randrange(256) for _ in range(300)))
        proc = subprocess.run(
            ["python", "-m", "reviewer", "review", "--repo", str(repo.path), "--base", base, "--patch", str(junk)],
            capture_output=True,
        )
        assert proc.returncode in (1, 2) and b"Traceback" not in proc.stderr
