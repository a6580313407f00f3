"""SARIF, GitHub workflow commands, the job summary and the sticky PR comment."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from gitrepo import make_change, sample_repo
from reviewer import review
from reviewer.cli import main
from reviewer.report.model import InvariantStatus, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.formats import renderer
from reviewer.report.github import cap_summary, escape_data, escape_property

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture(scope="module")
def sample_reports(tmp_path_factory):
    """The shipped sample's v5 and v6 reviewed once for all format tests."""
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    return {
        name: review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches[name]))).report
        for name in ("v5", "v6")
    }


@pytest.mark.parametrize("name", ["v5", "v6"])
def test_sarif_is_schema_valid(sample_reports, name) -> None:
    sarif = json.loads(renderer("sarif")(sample_reports[name]))
    jsonschema.validate(sarif, SCHEMA)
    run = sarif["runs"][0]
    assert sarif["version"] == "2.1.0" and run["tool"]["driver"]["name"] == "reviewer"
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    for rule in run["tool"]["driver"]["rules"]:
        assert rule["shortDescription"]["text"] and rule["fullDescription"]["text"] and rule["help"]["text"]
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        loc = result["locations"][0]["physicalLocation"]
        assert not loc["artifactLocation"]["uri"].startswith("/")
        assert loc["region"]["startLine"] <= loc["region"]["endLine"]
        assert result["partialFingerprints"]["primaryLocationLineHash"]
    assert run["properties"]["verdict"] == sample_reports[name].verdict.value


def test_sarif_levels_follow_severity(sample_reports) -> None:
    report = sample_reports["v5"]
    sarif = json.loads(renderer("sarif")(report))
    levels = {(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]): r["level"] for r in sarif["runs"][0]["results"]}
    expected = {"must-fix": "error", "should-fix": "warning", "consider": "note"}
    for f in report.findings:
        if f.location:
            assert levels[(f.rule, f.location.line)] == expected[f.severity.value]


def test_github_escaping() -> None:
    assert escape_data("100%\r\nnext") == "100%25%0D%0Anext"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def _hostile_family() -> Family:
    def run(ctx) -> Outcome:
        return Outcome("s", (ctx.finding(
            "x", title="t, with: colon", message="line one\n::set-output name=x::y\n::add-mask::secret\n::stop-commands::tok",
            location=Location("src/a,b:c.ts", 1, 2), anchor="a"),), examined=1)
    return Family("hostile", "h", (CheckSpec("hostile/x", Severity.SHOULD_FIX, "t", "s"),), run)


def test_github_commands_cannot_be_injected(tmp_path) -> None:
    repo, base, patch, _ = make_change(tmp_path, {}, {"src/a,b:c.ts": "const a = 1\nconst b = 2\n"})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(_hostile_family(),)).report
    out = renderer("github")(report)
    lines = out.splitlines()
    assert len(lines) == 2  # one annotation, one verdict line: nothing the message carried became a command
    assert lines[0] == "::notice title=reviewer%3A MERGE::reviewer 0.1.0: MERGE (0 must-fix, 1 should-fix, 0 consider)"
    assert lines[1].startswith("::warning file=src/a%2Cb%3Ac.ts,line=1,endLine=2,title=hostile/x%3A t%2C with%3A colon::")
    assert "%0A::set-output" in lines[1] and "%0A::stop-commands" in lines[1]


def test_step_summary_is_appended_and_capped(tmp_path, monkeypatch, capsys) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["demo", "--format", "github"]) == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n> ⛔ **DO-NOT-MERGE** — 13 must-fix, 1 should-fix") and text.rstrip().endswith("DO-NOT-MERGE")
    assert "\n# Review of `v5.patch`\n" in text
    assert capsys.readouterr().out.splitlines()[0].startswith("::error title=reviewer%3A DO-NOT-MERGE::reviewer 0.1.0: DO-NOT-MERGE")


def test_summary_truncation_keeps_a_note_and_the_verdict() -> None:
    body = "# Review\n\n```ts\n" + "const x = 1\n" * 200_000 + "```\n\nDO-NOT-MERGE\n"
    capped = cap_summary(body)
    assert len(capped.encode()) < 1024 * 1024
    assert "**Truncated:**" in capped and capped.splitlines()[-1] == "DO-NOT-MERGE"
    before_note = capped[: capped.index("> **Truncated:**")]
    assert before_note.count("```") % 2 == 0  # the cut fence was closed before the note
    assert cap_summary("short\n\nMERGE\n") == "short\n\nMERGE\n"


def test_comment_is_short_sticky_and_lists_must_fix(sample_reports) -> None:
    report = sample_reports["v5"]
    body = renderer("comment")(report)
    assert body.startswith("<!-- reviewer:sticky-comment -->\n")
    assert body.splitlines()[-1] == "DO-NOT-MERGE"
    for f in report.by_severity(Severity.MUST_FIX):
        if f.location:
            assert f"`{f.location.path}:{f.location.line}" in body
    assert len(body) < len(renderer("markdown")(report)) / 2


@pytest.mark.parametrize("fmt", ["json", "markdown", "sarif", "github", "comment"])
def test_every_format_is_byte_identical_across_runs(sample_reports, fmt, tmp_path) -> None:
    git_dir, base, patches = sample_repo(tmp_path)
    again = review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches["v5"]))).report
    assert renderer(fmt)(again) == renderer(fmt)(sample_reports["v5"])


def test_repeated_formats_write_their_files(tmp_path, capsys) -> None:
    out_json, out_sarif = tmp_path / "r.json", tmp_path / "r.sarif"
    assert main(["demo", "--format", f"json={out_json}", "--format", f"sarif={out_sarif}", "--format", "markdown"]) == 1
    assert json.loads(out_json.read_text())["verdict"] == "DO-NOT-MERGE"
    jsonschema.validate(json.loads(out_sarif.read_text()), SCHEMA)
    assert capsys.readouterr().out.splitlines()[-1] == "DO-NOT-MERGE"


def _flag_family(family: str = "cap") -> Family:
    """A must-fix finding on every line that mentions FLAG, with a related location on the line above."""

    def run(ctx) -> Outcome:
        found = []
        for f in ctx.changeset.files:
            for n, line in enumerate((f.patched_text or "").splitlines(), start=1):
                if "FLAG" in line:
                    found.append(ctx.finding("flag", title="flagged", message=line, location=Location(f.path, n, n),
                                             related=(Location(f.path, max(1, n - 1), n, "above"),), anchor=str(n)))
        return Outcome("flagged", tuple(found), examined=1)

    return Family(family, "flags FLAG", (CheckSpec(f"{family}/flag", Severity.MUST_FIX, "flag", "flags FLAG"),), run)


def test_comment_is_capped_below_githubs_limit_with_a_note(tmp_path) -> None:
    """1,260 findings once made a 199,000-character comment; GitHub refuses bodies over 65,536."""
    long_reason = "reviewed by hand " * 300  # one patch-controlled value must not fill the comment
    silenced = [f"// reviewer-ignore: cap/flag -- {long_reason if i == 0 else f'reviewed by hand, case {i}'}\nFLAG {i}"
                for i in range(400)]
    flagged = [f"FLAG {i}" for i in range(3000)]
    repo, base, patch, _ = make_change(tmp_path, {"a.md": "x\n"}, {"a.md": "\n".join(["x", *silenced, *flagged]) + "\n"})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(_flag_family(),)).report
    must_fix = [f for f in report.findings if f.severity is Severity.MUST_FIX]
    # A patch may not silence a must-fix: the 400 requests are refused and their findings still block.
    assert len(must_fix) == 3400 and len(report.suppressed) == 400
    body = renderer("comment")(report)
    assert len(body) <= 65_536 - 4_096 and len(body.encode("utf-16-le")) // 2 <= 65_536 - 4_096
    lines = body.splitlines()
    assert lines[0] == "<!-- reviewer:sticky-comment -->" and lines[-1] == "DO-NOT-MERGE"
    # What to fix first: the first three roots by name, then how many more.
    assert lines[3:4] == ["**Why DO-NOT-MERGE:**"] and lines[7:9] == ["- 3397 more must-fix findings", ""]
    assert all(line.startswith("- flagged at a.md:") for line in lines[4:7])
    # What the author tried to silence comes first: every suppression is listed, the long reason clipped.
    assert "**400 suppressions this patch adds (400 not honoured: their findings still block):**" in lines
    listed_suppressions = [l for l in lines if l.startswith("- `cap/flag` at")]
    assert len(listed_suppressions) == 400 and max(len(l) for l in listed_suppressions) < 600
    assert listed_suppressions[0].endswith("…`") and all(" — not honoured: " in l for l in listed_suppressions)
    # Must-fix findings are listed in report order until the room runs out; the note counts the rest.
    listed = [l for l in lines if l.startswith("- flagged — `cap/flag` at ")]
    assert 0 < len(listed) < 3400
    assert listed == [f"- flagged — `cap/flag` at `{f.location.path}:{f.location.line}`" for f in must_fix[: len(listed)]]
    (note,) = [l for l in lines if "Not listed here" in l]
    assert f": {3400 - len(listed)} must-fix findings." in note
    assert "in the Markdown report (`--format markdown`)" in note and "SARIF and JSON outputs" in note
    assert lines[-3] == note  # the note, a blank line, the verdict


def test_comment_without_a_cut_has_no_note(sample_reports) -> None:
    body = renderer("comment")(sample_reports["v5"])
    assert "Not listed here" not in body and body.splitlines()[-3] == "The full report is in the Markdown report (`--format markdown`)."


SARIF_PATHS = ["sp ace.ts", "hash#frag.ts", "pct%0Aname.ts", "100%.ts", "q?uery=1.ts", "https:x.ts",
               "dir/mailto:a@b.ts", "ünï/日本.ts"]


def test_sarif_uris_are_percent_encoded_relative_references(tmp_path) -> None:
    from urllib.parse import unquote, urlsplit

    repo, base, patch, _ = make_change(tmp_path, {"README.md": "x\n"}, {p: "ok\nFLAG\n" for p in SARIF_PATHS})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(_flag_family(),)).report
    sarif = json.loads(renderer("sarif")(report))
    jsonschema.validate(sarif, SCHEMA)
    locations = []
    for result in sarif["runs"][0]["results"]:
        locations += [result["locations"][0]["physicalLocation"]]
        locations += [r["physicalLocation"] for r in result["relatedLocations"]]
    assert len(locations) == 2 * len(SARIF_PATHS)
    seen = set()
    for loc in locations:
        uri = loc["artifactLocation"]["uri"]
        parts = urlsplit(uri)
        assert (parts.scheme, parts.netloc, parts.query, parts.fragment) == ("", "", "", ""), uri
        assert re.fullmatch(r"(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})+", uri), uri  # nothing raw but unreserved and `/`
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        seen.add(unquote(uri))
    assert seen == set(SARIF_PATHS)
