"""Report contracts: JSON shape, Markdown order and last line, verdicts, exit codes,
fail-closed rule plumbing and byte-identical output."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.report.model import InvariantStatus, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.formats import renderer

BASE = {"src/a.ts": "export const a = 1\nexport const b = 2\n"}
PATCHED = {"src/a.ts": "export const a = 1\nexport const b = 20 // @octocat </details> ```\nexport const c = 3\n"}


def _family(fid: str, run, checks: tuple[str, ...] = ("demo",), severity: Severity = Severity.MUST_FIX) -> Family:
    return Family(
        id=fid,
        summary=f"{fid} test family",
        checks=tuple(CheckSpec(f"{fid}/{c}", severity, f"{c} title", f"{c} summary") for c in checks),
        run=run,
    )


def _flag_line_two(ctx) -> Outcome:
    f = ctx.changeset.file("src/a.ts")
    finding = ctx.finding(
        "demo",
        title="Line two changed",
        message="Quoted from the patch: `b = 20` with @octocat and <details>",
        location=Location("src/a.ts", 2, 3),
        related=[Location("src/a.ts", 1, 1, "first line")],
        failure_sequence=["first this", "then that"],
        anchor="b = 20",
    )
    return Outcome("checked src/a.ts", (finding,) if f else (), examined=1)


def _raise(ctx) -> Outcome:
    raise RuntimeError("rule bug")


def _not_applicable(ctx) -> Outcome:
    return Outcome("nothing to check")


@pytest.fixture
def change(tmp_path: Path):
    return make_change(tmp_path, BASE, PATCHED)


def _run(change, families, scope: str = "changed"):
    repo, base, patch, _ = change
    return review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch), scope=scope), families=families).report


def test_json_contract_shape(change) -> None:
    report = _run(change, (_family("alpha", _flag_line_two), _family("beta", _not_applicable)))
    data = json.loads(renderer("json")(report))
    assert data["schema"] == "reviewer-report/1"
    assert data["tool"]["name"] == "reviewer" and data["tool"]["version"] == "0.1.0"
    assert data["verdict"] == "DO-NOT-MERGE"
    assert re.fullmatch(r"[0-9a-f]{40}", data["base"]) and re.fullmatch(r"[0-9a-f]{64}", data["patch"]["sha256"])
    assert data["patch"]["files"] == 1
    assert [c["id"] for c in data["checks"]] == [
        "integrity/base-commit", "integrity/patch-sha256", "integrity/artifact-sha256",
        "integrity/clean-apply", "integrity/file-count", "integrity/paths", "integrity/limits",
    ]
    assert data["files"] == [{"path": "src/a.ts", "old_path": None, "status": "modified"}]
    (finding,) = data["findings"]
    assert {k: finding[k] for k in ("rule", "severity", "path", "line", "end_line")} == {
        "rule": "alpha/demo", "severity": "must-fix", "path": "src/a.ts", "line": 2, "end_line": 3,
    }
    assert finding["related"] == [{"path": "src/a.ts", "line": 1, "end_line": 1, "note": "first line"}]
    assert data["invariants"] == [
        {"id": "alpha", "status": "violated", "findings": [finding["id"]], "pre_existing": [],
         "summary": "checked src/a.ts", "vocabulary": ""},
        {"id": "beta", "status": "not-applicable", "findings": [], "pre_existing": [], "summary": "nothing to check",
         "vocabulary": ""},
    ]


def test_markdown_parts_in_order_and_last_line_is_verdict(change) -> None:
    report = _run(change, (_family("alpha", _flag_line_two),))
    md = renderer("markdown")(report)
    lines = md.splitlines()
    assert lines[-1] == "DO-NOT-MERGE"
    order = [md.index(h) for h in ("# Review of", "## Invariants", "## MUST-FIX", "## SHOULD-FIX", "## CONSIDER", "## Changed files")]
    assert order == sorted(order)
    assert "`src/a.ts:2-3`" in md
    assert "**Failure sequence.** first this → then that" in md
    # Quoted code sits in a fence longer than any backtick run it contains.
    assert "````ts\nexport const b = 20 // @octocat </details> ```\nexport const c = 3\n````" in md
    # Prose cannot ping or inject HTML.
    assert "@octocat" not in md.replace("````ts\nexport const b = 20 // @octocat", "")
    assert "<details>" not in md


def test_merge_when_nothing_blocks(change) -> None:
    report = _run(change, (_family("alpha", _flag_line_two, severity=Severity.CONSIDER),))
    assert report.verdict.value == "MERGE"
    assert renderer("markdown")(report).splitlines()[-1] == "MERGE"


def test_a_rule_that_raises_fails_closed(change) -> None:
    report = _run(change, (_family("alpha", _raise), _family("beta", _not_applicable)))
    assert report.verdict.value == "DO-NOT-MERGE"
    alpha = next(i for i in report.invariants if i.id == "alpha")
    assert alpha.status is InvariantStatus.ERROR and "RuntimeError: rule bug" in alpha.summary
    assert [f.rule for f in report.findings] == ["alpha/internal-error"]


def test_a_rule_over_its_budget_fails_closed(change) -> None:
    def slow(ctx) -> Outcome:
        while True:
            pass

    repo, base, patch, _ = change
    report = review.run(
        review.Request(repo=str(repo.path), base=base, patch=str(patch), budget_seconds=0.2), families=(_family("slow", slow),)
    ).report
    assert report.invariants[0].status is InvariantStatus.ERROR
    assert "time budget" in report.invariants[0].summary and report.verdict.value == "DO-NOT-MERGE"


def test_findings_sorted_by_severity_path_line(change) -> None:
    def many(ctx) -> Outcome:
        mk = lambda sev, path, line: ctx.finding(sev, title=f"{sev}{line}", message="m", location=Location(path, line, line), anchor=f"{path}{line}")
        return Outcome("s", (
            mk("c", "src/a.ts", 1), mk("a", "src/z.ts", 9), mk("b", "src/a.ts", 3), mk("a", "src/a.ts", 5), mk("a", "src/a.ts", 2),
        ), examined=1)

    fam = Family("fam", "f", (
        CheckSpec("fam/a", Severity.MUST_FIX, "a", "a"), CheckSpec("fam/b", Severity.SHOULD_FIX, "b", "b"),
        CheckSpec("fam/c", Severity.CONSIDER, "c", "c"),
    ), many)
    report = _run(change, (fam,), scope="all")
    assert [(f.severity.value, f.location.path, f.location.line) for f in report.findings] == [
        ("must-fix", "src/a.ts", 2), ("must-fix", "src/a.ts", 5), ("must-fix", "src/z.ts", 9),
        ("should-fix", "src/a.ts", 3), ("consider", "src/a.ts", 1),
    ]


def test_same_inputs_give_byte_identical_reports(change) -> None:
    fams = (_family("alpha", _flag_line_two), _family("beta", _not_applicable))
    one, two = _run(change, fams), _run(change, fams)
    for fmt in ("json", "markdown"):
        assert renderer(fmt)(one) == renderer(fmt)(two)


def test_finding_id_is_stable_when_unrelated_lines_move(tmp_path: Path) -> None:
    first = _run(make_change(tmp_path / "one", BASE, PATCHED), (_family("alpha", _flag_line_two),))
    moved = {"src/a.ts": "// a new header comment\n" + PATCHED["src/a.ts"]}
    second = _run(make_change(tmp_path / "two", BASE, moved), (_family("alpha", _flag_line_two),))
    assert first.findings[0].id == second.findings[0].id


def test_findings_that_share_an_id_at_different_places_are_both_kept() -> None:
    """The same statement written twice in one file is two defects, not one reached twice."""
    from reviewer.engine.run import _distinct
    from reviewer.report.model import Finding, Location, Severity

    def at(line: int) -> Finding:
        return Finding(rule="lease-renewal/release-outside-finalizer", severity=Severity.MUST_FIX, title="t",
                       message="m", location=Location("a.ts", line, line), anchor="Claim.release(db, c)")

    kept = _distinct([at(9), at(3), at(3)])
    assert [f.location.line for f in kept] == [3, 3, 9]
    assert len({f.id for f in kept}) == 2  # the two at line 3 are one defect; line 9 is another
    assert kept[0].id == at(3).id  # the first keeps its id: stable when a second copy is added later
