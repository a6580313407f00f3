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
        {"id": "alpha", "status": "violated", "findings": [finding["id"]], "pre_existing": [], "suppressed": 0,
         "accepted": 0, "summary": "checked src/a.ts", "vocabulary": ""},
        {"id": "beta", "status": "not-applicable", "findings": [], "pre_existing": [], "suppressed": 0,
         "accepted": 0, "summary": "nothing to check", "vocabulary": ""},
    ]


def test_markdown_parts_in_order_and_last_line_is_verdict(change) -> None:
    report = _run(change, (_family("alpha", _flag_line_two),))
    md = renderer("markdown")(report)
    lines = md.splitlines()
    assert lines[0].startswith("> ⛔ **DO-NOT-MERGE** — 1 must-fix, 0 should-fix, 0 consider · 1 of 1 families examined the change · base `")
    assert lines[-1] == "DO-NOT-MERGE"
    (f,) = report.findings
    order = [md.index(h) for h in (f"**Why DO-NOT-MERGE:**\n\n- {f.title} at src/a.ts:2 (hygiene)\n", "# Review of",
                                   "✅ **Inputs proven:** base `", "## Invariants",
                                   "## MUST-FIX", "## SHOULD-FIX", "## CONSIDER", "## Changed files")]
    assert order == sorted(order)
    assert "`src/a.ts:2-3`" in md
    assert "**Failure sequence:**\n\n1. first this\n2. then that\n" in md
    assert f"`src/a.ts:2-3` · impact: hygiene · id `{f.id}`" in md
    # Quoted code sits in a fence longer than any backtick run it contains.
    fenced = "````ts\nexport const b = 20 // @octocat </details> ```\nexport const c = 3\n````"
    assert fenced in md
    outside = md.replace(fenced, "")
    # Prose cannot ping or inject HTML: the only tags are our own, on lines of their own.
    assert "@octocat" not in outside
    assert [line for line in outside.splitlines() if "<" in line] == [
        "<details><summary>Integrity checks (7)</summary>", "</details>"]


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


# -- the banner, why, suppressions, folding, plurals ---------------------------

CLAIM = "export const SessionExecutionClaim = {\n  clear: (id: string) => Effect.void,\n}\n"
RUN = """import { Effect } from "effect"
import { SessionExecutionClaim } from "./claim"
export const run = (id: string) =>
  Effect.gen(function* () {
    yield* work(id)
  }).pipe(
    Effect.onExit(() => SessionExecutionClaim.clear(id)),
  )
"""
EXECUTION = "packages/core/src/session/execution/local.ts"


def test_a_parse_error_in_changed_lines_names_its_cause_in_the_report_and_the_comment(tmp_path: Path) -> None:
    """DO-NOT-MERGE with 0 must-fix once said nothing about why."""
    base = {"packages/core/src/session/execution/claim.ts": CLAIM, EXECUTION: RUN}
    broken = {**base, EXECUTION: RUN.replace("yield* work(id)\n", "yield* work(id))\n")}
    repo, sha, patch, _ = make_change(tmp_path, base, broken)
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report
    assert report.verdict.value == "DO-NOT-MERGE" and report.count(Severity.MUST_FIX) == 0
    lease = next(i for i in report.invariants if i.id == "lease-renewal")
    assert lease.status is InvariantStatus.ERROR
    md, comment = renderer("markdown")(report), renderer("comment")(report)
    for rendered in (md, comment):
        assert "**Why DO-NOT-MERGE:**" in rendered
        (cause,) = [line for line in rendered.splitlines() if line.startswith("- rule family lease-renewal could not")]
        assert "does not parse" in cause and EXECUTION in cause
        assert rendered.splitlines()[-1] == "DO-NOT-MERGE"
    assert md.startswith("> ⛔ **DO-NOT-MERGE** — 0 must-fix, 0 should-fix, ")
    assert md.index("**Why DO-NOT-MERGE:**") < md.index("# Review of")
    assert f"| lease-renewal | ⛔ error | {lease.summary.split(' ')[0]}" in md
    assert comment.splitlines()[1] == md.splitlines()[0]  # the same banner opens the comment


def test_the_banner_names_the_head_commit_of_a_pull_request_else_the_patch(change) -> None:
    from dataclasses import replace

    from reviewer.report.model import PullRequest

    report = _run(change, (_family("alpha", _flag_line_two, severity=Severity.CONSIDER),))
    assert renderer("markdown")(report).splitlines()[0] == (
        f"> ✅ **MERGE** — 0 must-fix, 0 should-fix, 1 consider · 1 of 1 families examined the change · base `{report.base[:12]}`"
        f" · patch `{report.patch.sha256[:12]}` · 1 file")
    head = "ab" * 20
    pr = replace(report, pull_request=PullRequest("main", "topic", report.base, head, report.base, number=3))
    for fmt in ("markdown", "comment"):
        assert f"· base `{report.base[:12]}` · head `{head[:12]}` · 1 file" in renderer(fmt)(pr)
        assert "· patch `" not in renderer(fmt)(pr)


def _probe(severity: Severity) -> Family:
    """Flags every changed line that mentions FLAG."""

    def run(ctx) -> Outcome:
        found = []
        for f in ctx.changeset.files:
            for n, line in enumerate((f.patched_text or "").splitlines(), start=1):
                if "FLAG" in line and "reviewer-ignore" not in line:
                    found.append(ctx.finding("flag", title="flagged", message=f"`{line}`",
                                             location=Location(f.path, n, n), anchor=line.strip()))
        return Outcome("probed", tuple(found), examined=1)

    return Family("probe", "test probe", (CheckSpec("probe/flag", severity, "flag", "flags FLAG"),), run)


SUPPRESSED = {"a.ts": "x\n// reviewer-ignore: probe/flag -- checked by hand\nconst FLAG = 1\n"}


def test_an_invariant_whose_findings_were_silenced_reads_suppressed_not_verified(tmp_path: Path) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"a.ts": "x\n"}, SUPPRESSED)
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch)),
                        families=(_probe(Severity.SHOULD_FIX),)).report
    assert report.verdict.value == "MERGE" and report.invariants[0].suppressed == 1
    md = renderer("markdown")(report)
    (row,) = [line for line in md.splitlines() if line.startswith("| probe |")]
    assert row.startswith("| probe | 🔇 suppressed (1) | ") and "verified" not in row
    assert "- `probe/flag` at `a.ts:3` — flagged; silenced at `a.ts:2` **by a suppression this patch adds**: `checked by hand`" in md
    comment = renderer("comment")(report)
    assert "**1 suppression this patch adds:**\n- `probe/flag` at `a.ts:2`: `checked by hand`\n" in comment


def test_a_refused_suppression_is_listed_and_its_finding_still_blocks(tmp_path: Path) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"a.ts": "x\n"}, SUPPRESSED)
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch)),
                        families=(_probe(Severity.MUST_FIX),)).report
    assert report.verdict.value == "DO-NOT-MERGE" and [s.honoured for s in report.suppressed] == [False]
    md = renderer("markdown")(report)
    refusal = ("suppression requested by this patch — not honoured: must-fix findings cannot be silenced by the "
               "patch that adds the suppression")
    must_fix = md[md.index("## MUST-FIX"):md.index("## SHOULD-FIX")]
    (f,) = report.findings
    assert f"### 1. flagged — `probe/flag`\n\n`a.ts:3` · impact: hygiene · id `{f.id}`\n" in must_fix  # still blocks
    assert f"🔇 `a.ts:2`: {refusal}. Reason given: `checked by hand`" in must_fix
    assert f"## Suppressions not honoured\n\n- `probe/flag` at `a.ts:3` — flagged; {refusal} (at `a.ts:2`): `checked by hand`\n" in md
    assert "## Suppressed\n" not in md
    (row,) = [line for line in md.splitlines() if line.startswith("| probe |")]
    assert row.startswith("| probe | ❌ violated (1) | ")
    comment = renderer("comment")(report)
    assert ("**1 suppression this patch adds (1 not honoured: its finding still blocks):**\n"
            "- `probe/flag` at `a.ts:2` — not honoured: must-fix findings cannot be silenced by the patch that adds "
            "the suppression: `checked by hand`\n") in comment
    assert "- flagged — `probe/flag` at `a.ts:3`" in comment


def test_long_evidence_and_many_related_locations_fold_into_details(tmp_path: Path) -> None:
    lines = [f"const v{n} = {n}\n" for n in range(1, 21)]
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "".join(lines[:1])}, {"src/a.ts": "".join(lines)})

    def two(ctx) -> Outcome:
        long = ctx.finding("demo", title="long", message="m", location=Location("src/a.ts", 2, 11), anchor="long",
                           related=tuple(Location("src/a.ts", n, n, f"note {n}") for n in (12, 13, 14, 15)))
        short = ctx.finding("demo", title="short", message="m", location=Location("src/a.ts", 16, 18), anchor="short",
                            related=tuple(Location("src/a.ts", n, n) for n in (19, 20, 1)))
        return Outcome("s", (long, short), examined=1)

    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch)),
                        families=(_family("alpha", two),)).report
    md = renderer("markdown")(report)
    first = md[md.index("### 1. long"):md.index("### 2. short")]
    excerpt = "".join(lines[1:11])
    ids = {f.title: f.id for f in report.findings}
    assert f"`src/a.ts:2-11` · impact: hygiene · id `{ids['long']}`\n\n<details><summary>Excerpt: 10 lines</summary>\n\n```ts\n{excerpt}```\n\n</details>\n\n" in first
    related = "".join(f"- `src/a.ts:{n}` — note {n}\n" for n in (12, 13, 14, 15))
    assert f"\n\n<details><summary>Related locations (4)</summary>\n\n{related}\n</details>\n\n" in first
    second = md[md.index("### 2. short"):md.index("## SHOULD-FIX")]
    assert "<details>" not in second  # three lines, three related locations: shown as they are
    assert f"`src/a.ts:16-18` · impact: hygiene · id `{ids['short']}`\n```ts\n" in second and "Related:\n- `src/a.ts:19`\n- `src/a.ts:20`\n- `src/a.ts:1`\n" in second


def test_plurals_and_no_empty_tables(change) -> None:
    report = _run(change, ())
    md = renderer("markdown")(report)
    assert "| integrity/clean-apply | 1 file, +2 −1 |" in md
    assert md.splitlines()[-3].startswith("0 must-fix, 0 should-fix, 0 consider · 1 file · reviewer ")
    assert "## Invariants\n\nNo rule family ran: only the inputs were checked.\n\n" in md
    assert "| invariant |" not in md and "**Why DO-NOT-MERGE:**" not in md


def test_code_a_rule_quotes_is_shown_as_written(change) -> None:
    def quoting(ctx) -> Outcome:
        return Outcome("s", (ctx.finding("demo", title="t", anchor="q", location=Location("src/a.ts", 2, 2),
                                         message="bound is `size > 100  ?  100 : size || 1` and `` `${key}` ``"),),
                       examined=1)

    md = renderer("markdown")(_run(change, (_family("alpha", quoting),)))
    # Spaces kept, `<`/`>` never entities inside code, a template literal in a longer span.
    assert "\nbound is `size > 100  ?  100 : size || 1` and `` `${key}` ``\n" in md


def test_coverage_says_which_families_examined_the_change_and_a_merge_of_none_is_no_green_light(change) -> None:
    import json

    both = _run(change, (_family("alpha", _flag_line_two, severity=Severity.CONSIDER), _family("beta", _not_applicable)))
    data = json.loads(renderer("json")(both))
    assert data["coverage"] == {
        "families": 2, "examined": ["alpha"],
        "not_examined": [{"id": "beta", "status": "not-applicable", "why": "nothing to check"}],
    }
    assert " · 1 of 2 families examined the change · " in renderer("markdown")(both).splitlines()[0]
    none = _run(change, (_family("beta", _not_applicable),))
    banner = renderer("markdown")(none).splitlines()[0]
    assert none.verdict.value == "MERGE"
    assert banner.startswith("> ⚪ **MERGE**") and "none of 1 families examined the change: nothing was checked" in banner
    assert "✅" not in banner
