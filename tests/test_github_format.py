"""`--format github`: every DO-NOT-MERGE names its cause, suppressions the patch adds are annotated.

Each output is read back as workflow commands (`::name props::message`),
unescaped, so a test sees exactly what the runner would.
"""

from __future__ import annotations

import dataclasses

import pytest

from flagfamily import flag_family, review_change
from reviewer.cli import main
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.formats import renderer
from reviewer.report.model import Check, CheckStatus, InvariantStatus, Report, Severity, Verdict

SESSION = "packages/core/src/session/a.ts"
# A claim release inside a region tree-sitter cannot parse, on a changed line:
# the families that look for it err without any finding.
UNPARSABLE = (
    "import { SessionExecutionClaim } from './claim'\n"
    "export const f = (db, claim) => { SessionExecutionClaim.clear(db, claim) ))) }\n"
)


def _unescape(value: str) -> str:
    return value.replace("%0A", "\n").replace("%0D", "\r").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def commands(out: str) -> list[tuple[str, dict[str, str], str]]:
    """(command, properties, message) of every line; each line must be one command."""
    parsed = []
    for line in out.splitlines():
        assert line.startswith("::"), line
        head, sep, message = line[2:].partition("::")
        assert sep, line
        name, _, props = head.partition(" ")
        fields = dict(p.split("=", 1) for p in props.split(",")) if props else {}
        parsed.append((name, {k: _unescape(v) for k, v in fields.items()}, _unescape(message)))
    return parsed


# ------------------------------------------------------------------ causes


def test_a_parse_error_in_changed_lines_is_an_error_and_the_verdict_says_why(tmp_path) -> None:
    report = review_change(tmp_path, {SESSION: "export const a = 1\n"}, {SESSION: UNPARSABLE})
    errored = {i.id: i.summary for i in report.invariants if i.status is InvariantStatus.ERROR}
    assert "lease-renewal" in errored and report.count(Severity.MUST_FIX) == 0
    parsed = commands(renderer("github")(report))
    errors = [(props, message) for name, props, message in parsed[1:] if name == "error"]
    assert errors == [
        ({"title": f"{family}: could not check its invariant"}, f"rule family {family} could not be checked: {summary}")
        for family, summary in sorted(errored.items())
    ]
    name, props, verdict = parsed[0]
    assert name == "error" and props == {"title": "reviewer: DO-NOT-MERGE"}
    assert verdict.startswith("reviewer 0.1.0: DO-NOT-MERGE (0 must-fix, ")
    assert verdict.endswith(" because " + "; ".join(report.causes()))
    assert "rule family lease-renewal could not be checked: " in verdict and "does not parse" in verdict


def test_a_rule_that_raises_is_annotated_once(tmp_path) -> None:
    def run(ctx) -> Outcome:
        raise RuntimeError("rule bug")

    boom = Family("boom", "raises", (CheckSpec("boom/x", Severity.MUST_FIX, "x", "x"),), run)
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(boom,))
    parsed = commands(renderer("github")(report))
    # The internal-error finding is the annotation; no second one for the same family.
    assert [(n, p["title"].split(":")[0]) for n, p, _ in parsed[1:]] == [("error", "boom/internal-error")]
    assert "because rule family boom could not be checked: rule error: RuntimeError: rule bug" in parsed[0][2]


def test_a_failed_check_is_annotated_by_its_finding_and_named_in_the_verdict(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(flag_family(),), patch_sha256="0" * 64)
    parsed = commands(renderer("github")(report))
    sha = [(n, m) for n, p, m in parsed[1:] if p.get("title", "").startswith("integrity/patch-sha256")]
    assert len(sha) == 1 and sha[0][0] == "error" and "--patch-sha256" in sha[0][1]
    assert "because integrity check integrity/patch-sha256 failed: " in parsed[0][2]


def test_a_failed_check_without_a_finding_gets_its_own_error(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(flag_family(),))
    failed = Check("integrity/file-count", CheckStatus.FAIL, "1 changed files, but --expect-files says 2")
    bare = dataclasses.replace(report, checks=(*report.checks, failed), verdict=Verdict.DO_NOT_MERGE)
    parsed = commands(renderer("github")(bare))
    assert parsed[1:] == [("error", {"title": "integrity/file-count: integrity check failed"},
                            "integrity check integrity/file-count failed: 1 changed files, but --expect-files says 2")]
    assert parsed[0] == ("error", {"title": "reviewer: DO-NOT-MERGE"}, "reviewer 0.1.0: DO-NOT-MERGE (0 must-fix, 0 should-fix, 0 consider) because "
                                       "integrity check integrity/file-count failed: 1 changed files, but --expect-files says 2")


def test_a_merge_verdict_line_is_unchanged(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "FLAG_SHOULD\n"}, families=(flag_family(),))
    assert commands(renderer("github")(report))[0] == (
        "notice", {"title": "reviewer: MERGE"}, "reviewer 0.1.0: MERGE (0 must-fix, 1 should-fix, 0 consider)")


def test_the_demo_verdict_names_its_must_fix_findings(capsys) -> None:
    assert main(["demo", "--format", "github"]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    # What to fix first leads: the claim released while the run still executes (the seed's first MUST-FIX).
    assert first.startswith("::error title=reviewer%3A DO-NOT-MERGE::reviewer 0.1.0: DO-NOT-MERGE (13 must-fix, ")
    assert "because `interruptedCommit` releases the claim before the run's finalizers finish at " in first
    assert first.endswith(" more must-fix findings")


# ------------------------------------------------------------------ suppressions


@pytest.fixture(scope="module")
def suppression_report(tmp_path_factory) -> Report:
    patched = {"src/a.ts": (
        "x\n"
        "// reviewer-ignore: flag/must -- trust me\n"
        "FLAG_MUST 1\n"
        "// reviewer-ignore: flag/should -- reviewed by hand\n"
        "FLAG_SHOULD 2\n"
    )}
    base = {"src/a.ts": "x\n", "src/b.ts": "// reviewer-ignore: flag/should -- known, tracked in #12\nFLAG_SHOULD 0\n"}
    patched["src/b.ts"] = base["src/b.ts"] + "y\n"
    return review_change(tmp_path_factory.mktemp("sup"), base, patched, families=(flag_family(),))


def test_suppressions_the_patch_adds_are_annotated(suppression_report) -> None:
    report = suppression_report
    by_rule = {(s.finding.rule, s.path): s for s in report.suppressed}
    assert by_rule[("flag/should", "src/a.ts")].honoured and not by_rule[("flag/must", "src/a.ts")].honoured
    assert not by_rule[("flag/should", "src/b.ts")].added_by_patch
    parsed = commands(renderer("github")(report))
    on = {(p.get("file"), p.get("line")): (n, p, m) for n, p, m in parsed}
    name, props, message = on[("src/a.ts", "4")]
    assert (name, props["endLine"], props["title"]) == ("warning", "4", "suppression added by this patch: flag/should")
    assert message == "suppression added by this patch silences flag/should: reviewed by hand"
    name, props, message = on[("src/a.ts", "2")]
    assert name == "notice" and props["title"] == "suppression requested by this patch, not honoured: flag/must"
    assert message.startswith("suppression requested by this patch for flag/must (must-fix) was not honoured")
    assert message.endswith("Reason given: trust me")
    # The refused one's finding is still the error it was.
    assert on[("src/a.ts", "3")][0] == "error" and on[("src/a.ts", "3")][1]["title"].startswith("flag/must:")
    # A suppression already in the base is not the patch's doing: not annotated.
    assert not [c for c in parsed if c[1].get("file") == "src/b.ts"]
    must = report.by_severity(Severity.MUST_FIX)[0]
    assert parsed[0][2].endswith(f"because {must.title} at src/a.ts:3 (hygiene)")


def test_a_hostile_suppression_reason_stays_one_annotation(tmp_path) -> None:
    # A directive ends at its line, but a carriage return and percent escapes travel in the reason.
    reason = "ok\r::set-output name=x::y %0A::add-mask::secret \x1b[2J \u202e"
    patched = {"src/a,b:c.ts": f"x\n// reviewer-ignore: flag/should -- {reason}\nFLAG_SHOULD\n"}
    report = review_change(tmp_path, {"README.md": "x\n"}, patched, families=(flag_family(),))
    (s,) = report.suppressed
    assert "\r::set-output" in s.reason and "%0A::add-mask" in s.reason
    out = renderer("github")(report)
    lines = out.splitlines()
    assert len(lines) == 2  # the verdict and the suppression: nothing in the reason became a command
    assert lines[1].startswith("::warning file=src/a%2Cb%3Ac.ts,line=2,endLine=2,title=")
    # Shown as visible escapes (`\\r`), and a literal `%0A` cannot decode into a line break.
    assert "ok\\r::set-output" in lines[1] and "%250A::add-mask" in lines[1] and "\r" not in out
    assert "\x1b" not in out and "\u202e" not in out and "\\x1b[2J \\u202e" in out
    _, (name, props, message) = commands(out)
    assert props["file"] == "src/a,b:c.ts"
    assert message == "suppression added by this patch silences flag/should: ok\\r::set-output name=x::y %0A::add-mask::secret \\x1b[2J \\u202e"


def test_a_summary_cut_inside_a_folded_block_closes_it_before_the_note() -> None:
    from reviewer.report.github import cap_summary

    body = ("# Review\n\n<details><summary>Failure sequence diagram</summary>\n\n"
            + "step\n" * 300_000 + "\n</details>\n\nDO-NOT-MERGE\n")
    capped = cap_summary(body)
    before_note = capped[: capped.index("> **Truncated:**")]
    assert before_note.count("<details>") == before_note.count("</details>") == 1
    assert capped.splitlines()[-1] == "DO-NOT-MERGE" and len(capped.encode()) < 1024 * 1024
    # Tags inside a code fence are code, not blocks to close.
    fenced = "# R\n\n```\n<details>\n" + "x\n" * 600_000 + "```\n\nMERGE\n"
    assert "</details>" not in cap_summary(fenced)
