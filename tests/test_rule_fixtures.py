"""Runs every rule fixture under tests/fixtures/rules/<family>/<case>/.

A case is a small source tree: `base/` (optional) is committed first, then
`patched/` is laid over it and the difference becomes the patch under review.
Files every case of a family shares live once in `<family>/_shared/`, the
bottom layer of each of that family's bases.
Annotations say what must and must not be reported, Semgrep-style:

    // ruleid: lease-renewal/release-in-interrupt-commit
    interruptedCommit: () => SessionExecutionClaim.clear(db, claim),

    interruptedCommit: () => markInterrupted(), // ok: lease-renewal/release-in-interrupt-commit

A comment alone on its line applies to the next line that is not itself an
annotation; a trailing comment applies to its own line. Files without
comments (JSON) list expectations in the case's EXPECT file:

    ruleid: schema-prev-ids/prev-id-mismatch packages/core/schema.json:4
    ok: schema-prev-ids/duplicate-id packages/core/schema.json:3
    invariant: verified

Reported (rule, path, line) must equal the `ruleid` set exactly: a missing
one is a false negative, an extra one a false positive (`ok` lines just make
the look-alike explicit; any unexpected finding fails).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.engine.registry import discover

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
_ANNOTATION = re.compile(r"(?://|#|/\*)\s*(ruleid|ok):\s*([\w./-]+)")


@dataclass(frozen=True)
class Expectations:
    ruleid: frozenset[tuple[str, str, int]]
    ok: frozenset[tuple[str, str, int]]
    invariant: str | None


def _read_tree(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _annotations(path: str, text: str) -> tuple[set, set]:
    ruleid: set[tuple[str, str, int]] = set()
    ok: set[tuple[str, str, int]] = set()
    pending: list[tuple[str, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        matches = _ANNOTATION.findall(line)
        code_part = _ANNOTATION.split(line, maxsplit=1)[0].strip()
        if matches and not code_part:
            pending.extend(matches)
            continue
        targets = pending + list(matches)
        pending = []
        for kind, rule in targets:
            (ruleid if kind == "ruleid" else ok).add((rule, path, number))
    return ruleid, ok


def expectations(case: Path, patched: dict[str, bytes]) -> Expectations:
    ruleid: set[tuple[str, str, int]] = set()
    ok: set[tuple[str, str, int]] = set()
    for path, data in patched.items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        r, o = _annotations(path, text)
        ruleid |= r
        ok |= o
    invariant = None
    expect_file = case / "EXPECT"
    if expect_file.exists():
        for raw in expect_file.read_text().splitlines():
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            kind, _, rest = line.partition(":")
            if kind == "invariant":
                invariant = rest.strip()
                continue
            rule, _, where = rest.strip().partition(" ")
            path, _, number = where.strip().rpartition(":")
            (ruleid if kind == "ruleid" else ok).add((rule, path, int(number)))
    return Expectations(frozenset(ruleid), frozenset(ok), invariant)


def _cases() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*") if p.is_dir() and (p / "patched").is_dir())


def case_trees(case: Path) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """(base tree, patched tree) of a case, shared files included unless the case has a `NO_SHARED`
    file (a code base in its own vocabulary, where the family must infer its names from the tree)."""
    shared = {} if (case / "NO_SHARED").exists() else _read_tree(case.parent / "_shared")
    base = {**shared, **_read_tree(case / "base")}
    return base, {**base, **_read_tree(case / "patched")}


def run_case(case: Path, tmp_path: Path):
    base, merged_patched = case_trees(case)
    repo, base_sha, patch_path, _ = make_change(tmp_path, base, merged_patched)
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch_path)))
    return outcome, merged_patched


@pytest.mark.parametrize("case", _cases(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_rule_fixture(case: Path, tmp_path: Path) -> None:
    family = case.parent.name
    outcome, patched = run_case(case, tmp_path)
    expected = expectations(case, patched)
    invariant = next(i for i in outcome.report.invariants if i.id == family)
    reported = {
        (f.rule, f.location.path, f.location.line)
        for f in invariant.findings
        if f.location is not None
    }
    missing = sorted(expected.ruleid - reported)
    noisy = sorted(reported - expected.ruleid)
    assert not missing and not noisy, (
        f"missing (false negatives): {missing}\nnoisy (false positives): {noisy}\n"
        f"invariant: {invariant.status.value} — {invariant.summary}"
    )
    if expected.invariant is not None:
        assert invariant.status.value == expected.invariant, invariant.summary
    elif not expected.ruleid:
        assert invariant.status.value in ("verified", "not-applicable"), invariant.summary


def test_every_family_has_enough_fixtures() -> None:
    """Issue 3: at least 6 positive and 6 negative fixtures per family."""
    for family in discover():
        positives = negatives = 0
        for case in _cases():
            if case.parent.name != family.id:
                continue
            exp = expectations(case, case_trees(case)[1])
            positives += len(exp.ruleid)
            negatives += len(exp.ok)
        assert positives >= 6 and negatives >= 6, f"{family.id}: {positives} ruleid, {negatives} ok annotations"
