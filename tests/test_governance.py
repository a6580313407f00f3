"""Governance: what a patch may silence, and a patch that breaks reviewer.toml.

Every test builds a real base commit and a real patch with git, and runs the
whole review on them.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.cli import main
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.errors import ReviewerError
from reviewer.inputs.config import Suppressions, build_config, defaults
from reviewer.report.formats import renderer
from reviewer.report.model import InvariantStatus, Location, Report, Severity

DOCS = Path(__file__).resolve().parent.parent / "docs"
IGNORE_FLAG = "// reviewer-ignore: probe/flag -- the caller re-raises it\n"
IGNORE_WARN = "// reviewer-ignore: probe/warn -- bounded elsewhere\n"


def _probe() -> Family:
    """A must-fix for every line with FLAG, a should-fix for every line with WARN (changed files only)."""

    def run(ctx) -> Outcome:
        found = []
        for f in ctx.changeset.files:
            if not f.path.endswith(".ts"):
                continue
            for n, line in enumerate((f.patched_text or "").split("\n"), start=1):
                for word, check in (("FLAG", "flag"), ("WARN", "warn")):
                    if word in line:
                        found.append(ctx.finding(check, title=check, message=line.strip(),
                                                 location=Location(f.path, n, n), anchor=line.strip()))
        return Outcome("probed", tuple(found), examined=1)

    checks = (CheckSpec("probe/flag", Severity.MUST_FIX, "flag", "flags FLAG"),
              CheckSpec("probe/warn", Severity.SHOULD_FIX, "warn", "flags WARN"))
    return Family("probe", "test probe", checks, run)


def _review(tmp: Path, base: dict, patched: dict, config: str | None = None, scope: str = "changed") -> Report:
    repo, sha, patch, _ = make_change(tmp, base, patched)
    req = review.Request(repo=str(repo.path), base=sha, patch=str(patch), config=config, scope=scope)
    return review.run(req, families=(_probe(),)).report


def _json(report: Report) -> dict:
    return json.loads(renderer("json")(report))


def _rules(report: Report) -> list[tuple[str, str]]:
    return [(f.rule, f.severity.value) for f in report.findings]


# ------------------------------------------------------------------ patch-added suppressions


def test_a_patch_added_suppression_of_a_must_fix_is_refused_and_keeps_blocking(tmp_path) -> None:
    report = _review(tmp_path, {"a.ts": "x\n"}, {"a.ts": f"x\n{IGNORE_FLAG}const FLAG = 1\n"})
    assert report.verdict.value == "DO-NOT-MERGE"
    # The finding stays where the verdict and the invariant count it, and a
    # refused directive is not reported as unused.
    assert _rules(report) == [("probe/flag", "must-fix")]
    (finding,) = report.findings
    (inv,) = report.invariants
    assert inv.status is InvariantStatus.VIOLATED and inv.findings == (finding,) and inv.suppressed == 0
    assert "suppressed" not in inv.summary
    (s,) = report.suppressed
    assert (s.finding.id, s.path, s.line, s.added_by_patch, s.honoured) == (finding.id, "a.ts", 2, True, False)
    assert report.causes() == (f"{finding.title} at a.ts:3 (hygiene)",)
    data = _json(report)
    assert data["suppressed"] == [{"finding": finding.id, "rule": "probe/flag", "path": "a.ts", "line": 2,
                                   "reason": "the caller re-raises it", "added_by_patch": True, "honoured": False}]
    assert data["findings"][0]["id"] == finding.id
    assert data["invariants"][0]["status"] == "violated" and data["invariants"][0]["suppressed"] == 0


def test_the_base_can_let_a_patch_silence_must_fix(tmp_path) -> None:
    base = {"a.ts": "x\n", "reviewer.toml": '[suppressions]\npatch_may_silence = ["must-fix", "should-fix", "consider"]\n'}
    report = _review(tmp_path, base, {"a.ts": f"x\n{IGNORE_FLAG}const FLAG = 1\n"})
    assert report.verdict.value == "MERGE" and report.findings == ()
    (s,) = report.suppressed
    assert s.added_by_patch and s.honoured
    (inv,) = report.invariants
    assert inv.status is InvariantStatus.VERIFIED and inv.findings == () and inv.suppressed == 1
    data = _json(report)
    assert data["suppressed"][0]["honoured"] is True
    assert data["invariants"][0]["status"] == "verified" and data["invariants"][0]["suppressed"] == 1


def test_a_suppression_already_in_the_base_silences_a_must_fix(tmp_path) -> None:
    base = {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\nconst y = 1\n"}
    report = _review(tmp_path, base, {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\nconst y = 2\n"}, scope="file")
    assert report.verdict.value == "MERGE" and report.findings == ()
    (s,) = report.suppressed
    assert (s.added_by_patch, s.honoured) == (False, True)
    assert report.invariants[0].suppressed == 1


def test_the_base_cannot_restrict_its_own_suppressions(tmp_path) -> None:
    """`patch_may_silence = []` governs what the patch adds, not what the base already had."""
    base = {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\nconst y = 1\n", "reviewer.toml": "[suppressions]\npatch_may_silence = []\n"}
    report = _review(tmp_path, base, {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\nconst y = 2\n"}, scope="file")
    assert report.verdict.value == "MERGE" and report.suppressed[0].honoured


def test_a_patch_added_suppression_of_a_should_fix_is_honoured_by_default(tmp_path) -> None:
    report = _review(tmp_path, {"a.ts": "x\n"}, {"a.ts": f"x\n{IGNORE_WARN}const WARN = 1\n"})
    assert report.verdict.value == "MERGE" and report.findings == ()
    (s,) = report.suppressed
    assert (s.finding.rule, s.added_by_patch, s.honoured) == ("probe/warn", True, True)
    (inv,) = report.invariants
    assert inv.status is InvariantStatus.VERIFIED and inv.suppressed == 1


def test_an_empty_allowance_refuses_even_a_should_fix(tmp_path) -> None:
    base = {"a.ts": "x\n", "reviewer.toml": "[suppressions]\npatch_may_silence = []\n"}
    report = _review(tmp_path, base, {"a.ts": f"x\n{IGNORE_WARN}const WARN = 1\n"})
    # Should-fix never blocks, but the invariant stays violated and the refusal is listed.
    assert report.verdict.value == "MERGE" and _rules(report) == [("probe/warn", "should-fix")]
    assert report.invariants[0].status is InvariantStatus.VIOLATED and report.invariants[0].suppressed == 0
    assert [(s.honoured, s.added_by_patch) for s in report.suppressed] == [(False, True)]


def test_the_severity_compared_is_the_configured_one(tmp_path) -> None:
    """A must-fix re-rated to should-fix by the base may be silenced by the patch; the reverse may not."""
    base = {"a.ts": "x\n", "reviewer.toml": '[severity]\n"probe/flag" = "should-fix"\n"probe/warn" = "must-fix"\n'}
    report = _review(tmp_path, base, {"a.ts": f"x\n{IGNORE_FLAG}const FLAG = 1\n{IGNORE_WARN}const WARN = 2\n"})
    assert {(s.finding.rule, s.honoured) for s in report.suppressed} == {("probe/flag", True), ("probe/warn", False)}
    assert _rules(report) == [("probe/warn", "must-fix")] and report.verdict.value == "DO-NOT-MERGE"


def test_a_patch_cannot_widen_what_it_may_silence(tmp_path) -> None:
    widened = '[suppressions]\npatch_may_silence = ["must-fix", "should-fix", "consider"]\n'
    report = _review(tmp_path, {"a.ts": "x\n"}, {"a.ts": f"x\n{IGNORE_FLAG}const FLAG = 1\n", "reviewer.toml": widened})
    assert report.verdict.value == "DO-NOT-MERGE"
    assert _rules(report) == [("probe/flag", "must-fix"), ("integrity/config-edited", "consider")]
    assert [s.honoured for s in report.suppressed] == [False]


def test_a_base_suppression_beside_a_patch_added_one_on_a_rewritten_line_is_refused(tmp_path) -> None:
    """The patch rewrote the silenced line (adding its own directive there), so the base's directive no longer
    vouches for it: the must-fix stays blocking, and neither directive is reported as unused."""
    base = {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\n"}
    patched = {"a.ts": f"{IGNORE_FLAG}const FLAG = 1 // reviewer-ignore: probe -- mine as well\n"}
    report = _review(tmp_path, base, patched)
    assert _rules(report) == [("probe/flag", "must-fix")] and report.verdict.value == "DO-NOT-MERGE"
    (s,) = report.suppressed
    assert (s.added_by_patch, s.honoured) == (True, False)

def test_a_refused_suppression_outside_the_scope_stays_pre_existing(tmp_path) -> None:
    """A patch that adds a directive above an unchanged must-fix: the finding is the base's, listed and not blocking."""
    base = {"a.ts": "const FLAG = 1\nconst y = 1\n"}
    report = _review(tmp_path, base, {"a.ts": f"{IGNORE_FLAG}const FLAG = 1\nconst y = 2\n"})
    assert report.findings == () and report.verdict.value == "MERGE"
    assert [(f.rule, f.location.line) for f in report.pre_existing] == [("probe/flag", 2)]
    assert [(s.honoured, s.added_by_patch) for s in report.suppressed] == [(False, True)]
    assert report.invariants[0].status is InvariantStatus.PRE_EXISTING


def test_integrity_findings_stay_unsilenceable_whatever_the_allowance(tmp_path) -> None:
    cfg = tmp_path / "ci.toml"
    cfg.write_text('[suppressions]\npatch_may_silence = ["must-fix", "should-fix", "consider"]\n')
    repo, sha, patch, _ = make_change(tmp_path, {"a.ts": "x\n"}, {"a.ts": "// reviewer-ignore: integrity -- trust me\nx\n"})
    req = review.Request(repo=str(repo.path), base=sha, patch=str(patch), patch_sha256="0" * 64, config=str(cfg))
    report = review.run(req, families=()).report
    assert report.verdict.value == "DO-NOT-MERGE" and report.suppressed == ()
    assert [f.rule for f in report.findings] == ["integrity/patch-sha256", "suppression/unused"]


# ------------------------------------------------------------------ the [suppressions] table


def test_default_allowance_is_should_fix_and_consider() -> None:
    assert defaults(()).suppressions.patch_may_silence == (Severity.SHOULD_FIX, Severity.CONSIDER)
    config = build_config({"suppressions": {"patch_may_silence": ["consider", "must-fix", "consider"]}}, (), "x.toml")
    assert config.suppressions.patch_may_silence == (Severity.MUST_FIX, Severity.CONSIDER)


@pytest.mark.parametrize("table, message", [
    ({"patch_may_silense": []}, "x.toml: [suppressions] has no option patch_may_silense (known: patch_may_silence)"),
    ({"patch_may_silence": "must-fix"}, "x.toml: [suppressions] patch_may_silence must be a list of severities"),
    ({"patch_may_silence": ["must_fix"]}, "x.toml: [suppressions] patch_may_silence must be a list of severities"),
    ({"patch_may_silence": [1]}, "got [1]"),
])
def test_a_bad_suppressions_table_is_a_clear_error(table, message) -> None:
    with pytest.raises(ReviewerError) as err:
        build_config({"suppressions": table}, (), "x.toml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_suppressions_must_be_a_table() -> None:
    with pytest.raises(ReviewerError, match=r"suppressions must be a table \(\[suppressions\]\)"):
        build_config({"suppressions": ["must-fix"]}, (), "x.toml")


def test_a_bad_suppressions_table_in_the_base_exits_2(tmp_path, capsys) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"a.ts": "x\n", "reviewer.toml": "[suppressions]\nsilence = true\n"},
                                      {"a.ts": "y\n", "reviewer.toml": "[suppressions]\nsilence = true\n"})
    assert main(["review", "--repo", str(repo.path), "--base", sha, "--patch", str(patch)]) == 2
    err = capsys.readouterr().err.strip()
    assert "reviewer.toml at base" in err and "[suppressions] has no option silence" in err and "\n" not in err


def test_the_allowance_is_part_of_the_configuration_identity() -> None:
    plain = defaults(())
    explicit = build_config({"suppressions": {"patch_may_silence": ["should-fix", "consider"]}}, (), "x.toml")
    wider = build_config({"suppressions": {"patch_may_silence": ["must-fix"]}}, (), "x.toml")
    # The default spelled out is the default (stored reviews keep their identity); another allowance is not.
    assert explicit.digest == plain.digest != wider.digest


def test_configuration_doc_states_the_declared_default() -> None:
    doc = (DOCS / "configuration.md").read_text(encoding="utf-8")
    (field,) = fields(Suppressions)
    shown = json.dumps(Suppressions().patch_may_silence_value())
    assert f"| `{field.name}` | `{shown}` |" in doc
    assert "### `[suppressions]`" in doc


# ------------------------------------------------------------------ a patch that edits reviewer.toml


def _config_edit(tmp: Path, patched_config: str | bytes | None, base_config: str = "[limits]\nmax_files = 2000\n"):
    base = {"a.ts": "x\n", "reviewer.toml": base_config}
    return _review(tmp, base, {"a.ts": "y\n", "reviewer.toml": patched_config})


def test_a_valid_config_edit_is_only_a_note(tmp_path) -> None:
    report = _config_edit(tmp_path, "[limits]\nmax_files = 3000\n")
    assert report.verdict.value == "MERGE" and _rules(report) == [("integrity/config-edited", "consider")]
    assert "valid" in report.findings[0].message and "reviewer.toml at base" in report.findings[0].message


def test_a_config_edit_that_is_not_toml_is_must_fix(tmp_path) -> None:
    report = _config_edit(tmp_path, "[limits]\nmax_files = 2000\nmax_file_bytes 4\n")
    assert report.verdict.value == "DO-NOT-MERGE"
    assert _rules(report) == [("integrity/config-invalid", "must-fix")]
    (f,) = report.findings
    assert "reviewer.toml as patched: not valid TOML" in f.message and "would fail" in f.message
    # Located on the line the TOML error names.
    assert (f.location.path, f.location.line) == ("reviewer.toml", 3)
    assert any(c.startswith(f"{f.title} at reviewer.toml:3 (") for c in report.causes())


def test_a_config_edit_with_an_unknown_key_is_must_fix(tmp_path) -> None:
    report = _config_edit(tmp_path, "[limits]\nmax_file = 2000\n")
    assert report.verdict.value == "DO-NOT-MERGE" and _rules(report) == [("integrity/config-invalid", "must-fix")]
    message = report.findings[0].message
    assert "reviewer.toml as patched: [limits] has no option 'max_file'" in message
    # The review itself still ran on the base's configuration.
    assert "reviewer.toml at base" in message and report.findings[0].location.line == 1


def test_a_config_edit_naming_an_unknown_family_or_rule_is_must_fix(tmp_path) -> None:
    report = _config_edit(tmp_path, '[disable]\nrules = ["probe/nope"]\n')
    assert _rules(report) == [("integrity/config-invalid", "must-fix")]
    assert "[disable] 'probe/nope': no such rule" in report.findings[0].message


def test_a_config_edit_that_is_not_utf8_is_must_fix(tmp_path) -> None:
    report = _config_edit(tmp_path, b"[limits]\nmax_files = 2000 # \xff\n")
    assert _rules(report) == [("integrity/config-invalid", "must-fix")]


def test_an_invalid_config_finding_cannot_be_silenced_or_re_rated(tmp_path) -> None:
    patched = '# reviewer-ignore: integrity -- mine\n[limits]\nmax_file = 1\n'
    report = _config_edit(tmp_path, patched,
                          base_config='[suppressions]\npatch_may_silence = ["must-fix", "should-fix", "consider"]\n')
    assert [r for r, _ in _rules(report)] == ["integrity/config-invalid", "suppression/unused"]
    assert report.verdict.value == "DO-NOT-MERGE"


def test_deleting_reviewer_toml_is_a_valid_edit(tmp_path) -> None:
    report = _config_edit(tmp_path, None)
    assert report.verdict.value == "MERGE" and _rules(report) == [("integrity/config-edited", "consider")]
    assert "built-in defaults" in report.findings[0].message


def test_adding_an_invalid_reviewer_toml_is_must_fix(tmp_path) -> None:
    report = _review(tmp_path, {"a.ts": "x\n"}, {"a.ts": "y\n", "reviewer.toml": "[rules]\nprobe = 1\n"})
    assert _rules(report) == [("integrity/config-invalid", "must-fix")]


def test_moving_reviewer_toml_away_is_a_valid_edit(tmp_path) -> None:
    text = "[limits]\nmax_files = 2000\n"
    report = _review(tmp_path, {"a.ts": "x\n", "reviewer.toml": text}, {"a.ts": "y\n", "reviewer.toml": None, "old.toml": text})
    assert _rules(report) == [("integrity/config-edited", "consider")]
    assert "removes reviewer.toml" in report.findings[0].message


def test_the_invalid_edit_is_judged_with_the_reviews_families(tmp_path) -> None:
    """An option the probe family declares is valid; the same option for a family not in this review is not."""
    ok = _config_edit(tmp_path / "ok", "[severity]\n\"probe/warn\" = \"must-fix\"\n")
    assert _rules(ok) == [("integrity/config-edited", "consider")]
    bad = _config_edit(tmp_path / "bad", "[severity]\n\"other/warn\" = \"must-fix\"\n")
    assert _rules(bad) == [("integrity/config-invalid", "must-fix")]


def test_json_report_of_an_invalid_edit_validates_and_names_the_finding(tmp_path, capsys) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "x\n"}, {"src/a.ts": "x\n", "reviewer.toml": "[limits\n"})
    code = main(["review", "--repo", str(repo.path), "--base", sha, "--patch", str(patch), "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["verdict"] == "DO-NOT-MERGE"
    # The real families add their consider notes (idioms not found); the one blocking finding is the edit.
    assert [(f["rule"], f["path"], f["line"]) for f in data["findings"] if f["severity"] != "consider"] == [
        ("integrity/config-invalid", "reviewer.toml", 1)]


def test_rules_lists_and_explains_config_invalid(capsys) -> None:
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out
    assert re.search(r"^integrity/config-invalid\s+must-fix", listed, re.M), listed
    assert main(["rules", "--explain", "integrity/config-invalid"]) == 0
    explained = capsys.readouterr().out
    assert explained.startswith("integrity/config-invalid (must-fix)") and "same loader" in explained
    page = (DOCS / "rules" / "integrity.md").read_text(encoding="utf-8")
    assert "integrity/config-invalid" in page


# ------------------------------------------------------------------ hostile: related lines, merged config

_WAKE = ('import { db } from "./db"\nimport { SessionInputTable } from "./sql"\nconst BATCH = {n}\n'
         "export const wake = () =>\n"
         "  // reviewer-ignore: bounded-scan/bound-too-large -- 150 rows is fine here, measured in #12\n"
         "  db.select().from(SessionInputTable).orderBy(SessionInputTable.wake_attempts).limit(BATCH)\n")


def test_a_base_suppression_does_not_cover_a_finding_the_patch_causes_through_a_related_line(tmp_path) -> None:
    """The patch raises the bound the old directive vouched for: the finding is the patch's doing."""
    path = "packages/core/src/session/input.ts"
    repo, sha, patch, _ = make_change(tmp_path, {path: _WAKE.replace("{n}", "150")},
                                      {path: _WAKE.replace("{n}", "1000000000")})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report
    assert report.verdict.value == "DO-NOT-MERGE"
    assert [f.rule for f in report.findings if f.severity.value == "must-fix"] == ["bounded-scan/bound-too-large"]
    (s,) = report.suppressed
    assert (s.added_by_patch, s.honoured) == (True, False)


def test_a_pull_request_whose_reviewer_toml_merges_into_an_invalid_one_is_must_fix(tmp_path, capsys) -> None:
    """Two valid edits (one on the branch, one on the target since) merge into a file that does not load."""
    from gitrepo import Repo, git

    repo = Repo(tmp_path / "r")
    repo.commit({"reviewer.toml": "[rules.bounded-scan]\nbound = 100\n", "a.txt": "x\n"})
    git(repo.path, "checkout", "-q", "-b", "pr")
    repo.commit({"reviewer.toml": "[limits]\nrule_seconds = 60\n\n[rules.bounded-scan]\nbound = 100\n"})
    git(repo.path, "checkout", "-q", "main")
    repo.commit({"reviewer.toml": "[rules.bounded-scan]\nbound = 100\n\n[limits]\nmax_files = 5000\n"})
    out = tmp_path / "r.json"
    code = main(["pr", "--repo", str(repo.path), "--base", "main", "--head", "pr", "--no-state",
                 "--format", f"json={out}"])
    data = json.loads(out.read_text())
    assert code == 1, capsys.readouterr().err
    (finding,) = [f for f in data["findings"] if f["rule"] == "integrity/config-invalid"]
    assert "Merged into the target main" in finding["message"] and "twice" in finding["message"]
    # The same edit against an unchanged target merges into what the branch has: valid, a note only.
    git(repo.path, "branch", "-q", "old-main", "main~1")
    code = main(["pr", "--repo", str(repo.path), "--base", "old-main", "--head", "pr", "--no-state",
                 "--format", f"json={out}"])
    rules = [f["rule"] for f in json.loads(out.read_text())["findings"]]
    assert code == 0 and "integrity/config-edited" in rules and "integrity/config-invalid" not in rules


def test_a_pull_request_whose_reviewer_toml_conflicts_with_the_target_is_must_fix(tmp_path) -> None:
    from gitrepo import Repo, git

    repo = Repo(tmp_path / "r")
    repo.commit({"reviewer.toml": "[rules.bounded-scan]\nbound = 100\n", "a.txt": "x\n"})
    git(repo.path, "checkout", "-q", "-b", "pr")
    repo.commit({"reviewer.toml": "[rules.bounded-scan]\nbound = 50\n"})
    git(repo.path, "checkout", "-q", "main")
    repo.commit({"reviewer.toml": "[rules.bounded-scan]\nbound = 80\n"})
    out = tmp_path / "r.json"
    assert main(["pr", "--repo", str(repo.path), "--base", "main", "--head", "pr", "--no-state",
                 "--format", f"json={out}"]) == 1
    (finding,) = [f for f in json.loads(out.read_text())["findings"] if f["rule"] == "integrity/config-invalid"]
    assert "does not merge cleanly" in finding["message"]
