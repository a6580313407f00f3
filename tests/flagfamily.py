"""A test rule family that reports what a line says it is, and a review with it, for the format tests."""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.model import Location, Report, Severity


def flag_family() -> Family:
    """`FLAG_MUST` / `FLAG_SHOULD` on a line is a must-fix / should-fix finding there."""

    def run(ctx) -> Outcome:
        found = []
        for f in ctx.changeset.files:
            for n, line in enumerate((f.patched_text or "").split("\n"), start=1):
                for word in ("must", "should"):
                    if f"FLAG_{word.upper()}" in line:
                        found.append(ctx.finding(word, title=f"{word} flagged", message=line,
                                                 location=Location(f.path, n, n), anchor=line))
        return Outcome("flagged", tuple(found), examined=1)

    return Family("flag", "flags FLAG_*", (
        CheckSpec("flag/must", Severity.MUST_FIX, "must flagged", "FLAG_MUST"),
        CheckSpec("flag/should", Severity.SHOULD_FIX, "should flagged", "FLAG_SHOULD"),
    ), run)


def review_change(tmp_path: Path, base: dict, patched: dict, families=None, **request) -> Report:
    """The review of `base` -> `patched` in a repository built under `tmp_path` (all families by default)."""
    repo, sha, patch, _ = make_change(tmp_path, base, patched)
    req = review.Request(repo=str(repo.path), base=sha, patch=str(patch), **request)
    return (review.run(req, families=families) if families is not None else review.run(req)).report
