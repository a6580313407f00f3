"""SARIF 2.1.0: every DO-NOT-MERGE names its cause, suppressions stay honest,
every rule carries Markdown help and a link to its section of the rules reference.

Each SARIF log here is validated against the official 2.1.0 schema
(tests/data/sarif-schema-2.1.0.json) as well as checked field by field.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from flagfamily import flag_family, review_change
from reviewer import review
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.engine.explain import explain
from reviewer.engine.registry import catalog, catalog_checks, discover
from reviewer.report import json_format
from reviewer.report.formats import renderer
from reviewer.report.model import (
    Check,
    CheckStatus,
    InvariantStatus,
    Report,
    Severity,
    Verdict,
)
from reviewer.state.delta import with_delta

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
SESSION = "packages/core/src/session/a.ts"
# The claim release sits inside a region tree-sitter cannot parse, on a changed
# line: lease-renewal (and terminal-commit-order) cannot judge it and err,
# with no must-fix finding at all.
UNPARSABLE = (
    "import { SessionExecutionClaim } from './claim'\n"
    "export const f = (db, claim) => { SessionExecutionClaim.clear(db, claim) ))) }\n"
)


def sarif_of(report: Report) -> dict[str, Any]:
    data = json.loads(renderer("sarif")(report))
    jsonschema.validate(data, SCHEMA)
    return data


@pytest.fixture(scope="module")
def parse_error_report(tmp_path_factory) -> Report:
    return review_change(tmp_path_factory.mktemp("parse"), {SESSION: "export const a = 1\n"}, {SESSION: UNPARSABLE})


@pytest.fixture(scope="module")
def suppression_report(tmp_path_factory) -> Report:
    """The patch adds a suppression for a must-fix (refused by the default
    [suppressions] patch_may_silence) and one for a should-fix (honoured)."""
    patched = {"src/a.ts": (
        "x\n"
        "// reviewer-ignore: flag/must -- trust me\n"
        "FLAG_MUST 1\n"
        "// reviewer-ignore: flag/should -- reviewed by hand\n"
        "FLAG_SHOULD 2\n"
        "FLAG_MUST 3\n"
    )}
    return review_change(tmp_path_factory.mktemp("sup"), {"src/a.ts": "x\n"}, patched, families=(flag_family(),))


# ------------------------------------------------------------------ causes of DO-NOT-MERGE


def test_a_parse_error_in_changed_lines_is_named_as_the_cause(parse_error_report) -> None:
    report = parse_error_report
    errored = [i.id for i in report.invariants if i.status is InvariantStatus.ERROR]
    assert "lease-renewal" in errored
    assert report.verdict is Verdict.DO_NOT_MERGE and report.count(Severity.MUST_FIX) == 0
    run = sarif_of(report)["runs"][0]
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    notes = {n["descriptor"]["id"]: n for n in invocation["toolExecutionNotifications"]}
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for family in errored:
        note = notes[f"{family}/internal-error"]
        summary = next(i.summary for i in report.invariants if i.id == family)
        assert note["level"] == "error"
        assert note["message"]["text"] == f"rule family {family} could not be checked: {summary}"
        assert "does not parse" in note["message"]["text"] and SESSION in note["message"]["text"]
        assert rules[note["associatedRule"]["index"]] == note["associatedRule"]["id"] == f"{family}/internal-error"
    assert run["properties"]["verdict"] == "DO-NOT-MERGE"
    assert run["properties"]["causes"] == list(report.causes())
    assert any(c.startswith("rule family lease-renewal could not be checked: ") for c in run["properties"]["causes"])


def _raising_family() -> Family:
    def run(ctx) -> Outcome:
        raise RuntimeError("rule bug")

    return Family("boom", "raises", (CheckSpec("boom/x", Severity.MUST_FIX, "x", "x"),), run)


def test_a_rule_that_raises_is_notified_once(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(_raising_family(),))
    invocation = sarif_of(report)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    ids = [n["descriptor"]["id"] for n in invocation["toolExecutionNotifications"]]
    # The internal-error finding already carries the cause: no second notification for the same family.
    assert ids == ["boom/internal-error"]
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "RuntimeError: rule bug" in note["message"]["text"]


def test_a_failed_check_is_a_notification_and_a_cause(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(flag_family(),), patch_sha256="0" * 64)
    run = sarif_of(report)["runs"][0]
    notes = [n for n in run["invocations"][0]["toolExecutionNotifications"] if n["descriptor"]["id"] == "integrity/patch-sha256"]
    assert len(notes) == 1 and notes[0]["level"] == "error" and "--patch-sha256" in notes[0]["message"]["text"]
    assert any(c.startswith("integrity check integrity/patch-sha256 failed: ") for c in run["properties"]["causes"])
    assert run["invocations"][0]["executionSuccessful"] is not any(
        i.status is InvariantStatus.ERROR for i in report.invariants)


def test_a_failed_check_without_its_finding_is_still_notified(tmp_path) -> None:
    """A report assembled elsewhere may carry the failed check only; SARIF names it anyway."""
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n"}, families=(flag_family(),))
    failed = Check("integrity/file-count", CheckStatus.FAIL, "2 changed files, but --expect-files says 3")
    bare = dataclasses.replace(report, checks=(*report.checks, failed), verdict=Verdict.DO_NOT_MERGE)
    run = sarif_of(bare)["runs"][0]
    (note,) = [n for n in run["invocations"][0]["toolExecutionNotifications"] if n["level"] == "error"]
    assert note["descriptor"]["id"] == "integrity/file-count"
    assert note["message"]["text"] == "integrity check integrity/file-count failed: 2 changed files, but --expect-files says 3"
    assert run["properties"]["causes"] == ["integrity check integrity/file-count failed: 2 changed files, but --expect-files says 3"]


def test_a_merge_has_no_causes_and_ran_successfully(tmp_path) -> None:
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "FLAG_SHOULD\n"}, families=(flag_family(),))
    assert report.verdict is Verdict.MERGE
    run = sarif_of(report)["runs"][0]
    assert run["properties"]["verdict"] == "MERGE" and run["properties"]["causes"] == []
    assert run["invocations"][0] == {"executionSuccessful": True, "toolExecutionNotifications": []}


# ------------------------------------------------------------------ suppressions


def _results(run: dict[str, Any], rule: str) -> list[dict[str, Any]]:
    return [r for r in run["results"] if r["ruleId"] == rule]


def test_an_honoured_suppression_is_accepted_in_source(suppression_report) -> None:
    honoured = [s for s in suppression_report.suppressed if s.honoured]
    assert [s.finding.rule for s in honoured] == ["flag/should"]
    (result,) = _results(sarif_of(suppression_report)["runs"][0], "flag/should")
    assert result["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "reviewed by hand (suppression added by this patch)"}
    ]
    assert result["properties"]["suppressionAddedByPatch"] is True
    assert "suppressionRequest" not in result["properties"]


def test_a_refused_suppression_leaves_one_unsuppressed_error(suppression_report) -> None:
    report = suppression_report
    (refused,) = [s for s in report.suppressed if not s.honoured]
    assert refused.finding in report.findings and report.verdict is Verdict.DO_NOT_MERGE
    run = sarif_of(report)["runs"][0]
    results = _results(run, "flag/must")
    # One result per must-fix finding: the refused one is not listed twice.
    assert len(results) == 2 == len([f for f in report.findings if f.rule == "flag/must"])
    (asked,) = [r for r in results if r["properties"]["findingId"] == refused.finding.id]
    assert "suppressions" not in asked and asked["level"] == "error"
    request = asked["properties"]["suppressionRequest"]
    assert request["addedByPatch"] is True and request["honoured"] is False
    assert (request["path"], request["line"], request["justification"]) == ("src/a.ts", 2, "trust me")
    assert "refused" in request["note"] and "refused" in asked["message"]["text"]
    (other,) = [r for r in results if r is not asked]
    assert "suppressionRequest" not in other["properties"] and "suppressions" not in other


def test_a_refused_suppression_missing_from_the_findings_still_shows(suppression_report) -> None:
    """Fail visible: a refused request is an alert even if the findings lost it."""
    (refused,) = [s for s in suppression_report.suppressed if not s.honoured]
    lost = dataclasses.replace(suppression_report, findings=tuple(f for f in suppression_report.findings if f != refused.finding))
    (asked,) = [r for r in _results(sarif_of(lost)["runs"][0], "flag/must")
                if r["properties"]["findingId"] == refused.finding.id]
    assert "suppressions" not in asked and asked["properties"]["suppressionRequest"]["honoured"] is False


def test_a_hostile_reason_reaches_sarif_inert(tmp_path) -> None:
    reason = "ok \x1b[2J \u202e reversed"
    report = review_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": f"x\n// reviewer-ignore: flag -- {reason}\nFLAG_MUST\nFLAG_SHOULD\n"},
                     families=(flag_family(),))
    assert {s.reason for s in report.suppressed} == {reason} and len(report.suppressed) == 1
    text = renderer("sarif")(report)
    assert "\u202e" not in text and "\\u001b" not in text and "\\\\x1b[2J \\\\u202e reversed" in text


def test_delta_marks_new_and_unchanged_results(tmp_path) -> None:
    first = review_change(tmp_path / "one", {"src/a.ts": "x\n"}, {"src/a.ts": "x\nFLAG_MUST old\n"}, families=(flag_family(),))
    second = review_change(tmp_path / "two", {"src/a.ts": "x\n"},
                     {"src/a.ts": "x\nFLAG_MUST old\n// reviewer-ignore: flag/should -- ok\nFLAG_SHOULD\nFLAG_MUST new\n"},
                     families=(flag_family(),))
    report = with_delta(second, json_format.to_dict(first))
    run = sarif_of(report)["runs"][0]
    states = {r["message"]["text"].split("flagged. ", 1)[1].split(" ", 2)[1]: r.get("baselineState")
              for r in run["results"] if r["ruleId"] == "flag/must"}
    assert states == {"old": "unchanged", "new": "new"}
    assert run["properties"]["delta"]["new"] == [d.id for d in report.delta.new] != []


# ------------------------------------------------------------------ rule help and links


def _github_slug(heading: str) -> str:
    """GitHub's anchor for a heading: code spans kept as text, lower case,
    everything but letters, digits, `-`, `_` and spaces dropped, spaces to dashes."""
    text = re.sub(r"`+([^`]*)`+", r"\1", heading.strip())
    text = "".join(ch for ch in text.lower() if ch in "-_ " or unicodedata.category(ch)[0] in "LNM")
    return text.replace(" ", "-")


def _anchors_on_disk(page: Path) -> set[str]:
    anchors, seen, fence = set(), {}, False
    for line in page.read_text(encoding="utf-8").split("\n"):
        if line.startswith("```"):
            # Opened by any fence line, closed only by a bare one (the generator's fences carry no info string).
            fence = not fence if not fence or line.strip("`") == "" else fence
            continue
        if not fence and re.match(r"#{1,6} ", line):
            slug = _github_slug(line.lstrip("#"))
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_every_rule_links_to_its_heading_in_the_generated_reference(suppression_report, monkeypatch) -> None:
    """Given where the reference is published (the Action passes its own repository at its commit)."""
    base = "https://github.example/octo/reviewer/blob/0123abc/docs/rules/"
    monkeypatch.setenv("REVIEWER_RULE_DOCS_URL", base)
    rules = sarif_of(suppression_report)["runs"][0]["tool"]["driver"]["rules"]
    documented = {spec.id for spec in catalog_checks(discover())}
    linked = {r["id"]: r["helpUri"] for r in rules if "helpUri" in r}
    assert set(linked) == documented
    pages = {g.id: ROOT / "docs" / "rules" / f"{g.id}.md" for g in catalog(discover())}
    for rule_id, uri in linked.items():
        parts = urlsplit(uri)
        assert uri.startswith(base) and parts.scheme == "https" and parts.query == "", uri
        page_name, fragment = uri[len(base):].split("#")
        group = next(g for g in catalog(discover()) if g.check(rule_id) is not None)
        assert page_name == f"{group.id}.md"
        assert fragment == _github_slug(f"`{rule_id}`")
        assert fragment in _anchors_on_disk(pages[group.id]), f"{uri}: no such heading in docs/rules/{page_name}"


def test_rule_help_is_the_explain_text_in_markdown(suppression_report) -> None:
    rules = {r["id"]: r for r in sarif_of(suppression_report)["runs"][0]["tool"]["driver"]["rules"]}
    for group in catalog(discover()):
        for spec in group.checks:
            markdown = rules[spec.id]["help"]["markdown"]
            plain = explain(discover(), spec.id)
            assert spec.summary in markdown and spec.summary in plain, spec.id
            assert f"**Why it matters.** {spec.why}" in markdown, spec.id
            for example in (spec.bad, spec.good):
                if example:
                    body = example.strip("\n")
                    fenced = re.search(r"(`{3,})\n" + re.escape(body) + r"\n\1(?:\n|$)", markdown)
                    assert fenced, f"{spec.id}: example not in a fence of its own"
                    assert max((len(run) for run in re.findall("`+", body)), default=0) < len(fenced.group(1))
            assert rules[spec.id]["help"]["text"], spec.id


def test_the_sample_reports_still_validate(tmp_path) -> None:
    from gitrepo import sample_repo

    git_dir, base, patches = sample_repo(tmp_path)
    for name in ("v5", "v6"):
        report = review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches[name]))).report
        run = sarif_of(report)["runs"][0]
        assert run["properties"]["verdict"] == report.verdict.value
        assert run["properties"]["causes"] == list(report.causes())
        assert (run["properties"]["causes"] == []) is (report.verdict is Verdict.MERGE)
