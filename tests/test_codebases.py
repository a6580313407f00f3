"""Every case of every corpus code base gives exactly its recorded result (tests/corpus.py):
each annotated defect found unless recorded as a miss, nothing else blocking unless recorded as
noise. A recorded miss that is found, or recorded noise that is gone, fails too: the record is
kept true both ways (promote the line)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import cases, codebases, run

CASES = [(cb, case) for cb in codebases() for case in cases(cb)]


@pytest.mark.parametrize("codebase,case", CASES, ids=[f"{cb.name}/{c.name}" for cb, c in CASES])
def test_codebase_case(codebase: Path, case: Path, tmp_path: Path) -> None:
    result = run(codebase, case, tmp_path)
    exp = result.expected
    found = exp.ruleid - exp.miss
    missing = sorted(found - result.reported)
    now_found = sorted(exp.miss & result.reported)
    noisy = sorted(result.reported - exp.ruleid - exp.noise)
    quiet = sorted(exp.noise - result.reported)
    assert not (missing or now_found or noisy or quiet), (
        f"missed (false negatives): {missing}\nfound though recorded as missed (promote to ruleid): {now_found}\n"
        f"false alarms: {noisy}\nrecorded noise no longer reported (drop the line): {quiet}"
    )


def test_every_codebase_has_defects_and_look_alikes() -> None:
    for cb in codebases():
        names = [c.name for c in cases(cb)]
        assert any(n.startswith("ok-") for n in names), cb.name
        assert any(not n.startswith("ok-") for n in names), cb.name
        assert not (cb / "base" / "reviewer.toml").exists(), "a corpus code base is read without configuration"
