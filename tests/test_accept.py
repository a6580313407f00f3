"""`[[accept]]`: an owner accepts one finding of the base by its stable id, with a reason.

Each test builds real repositories: a first review gives the finding's id as
the report prints it (what a maintainer copies), then the base's
reviewer.toml accepts that id and the change is reviewed again.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from flagfamily import flag_family, review_change
from reviewer.errors import ReviewerError
from reviewer.inputs.config import build_config, parse_toml
from reviewer.report.formats import renderer
from reviewer.report.model import InvariantStatus, Severity, Verdict

CODE = "export const a = 1\n"
FLAGGED = "export const a = 1\n// FLAG_MUST here\n"


def _flag_id(tmp_path: Path, patched: str = FLAGGED) -> str:
    report = review_change(tmp_path / "first", {"src/a.ts": CODE}, {"src/a.ts": patched}, families=(flag_family(),))
    (finding,) = report.findings
    return finding.id


def _accepting(entries: str) -> dict[str, str]:
    return {"src/a.ts": CODE, "reviewer.toml": entries}


def _epoch(day: str) -> str:
    return str(int(datetime.datetime.fromisoformat(day + "T12:00:00+00:00").timestamp()))


def test_an_accepted_finding_is_reported_with_its_reason_and_never_blocks(tmp_path) -> None:
    fid = _flag_id(tmp_path)
    toml = f'[[accept]]\nid = "{fid}"\nreason = "renewed by the caller, see ADR-12"\n'
    base = _accepting(toml)
    report = review_change(tmp_path / "second", base, {**base, "src/a.ts": FLAGGED}, families=(flag_family(),))
    assert report.verdict is Verdict.MERGE and report.findings == ()
    (accepted,) = report.accepted
    assert accepted.finding.id == fid and accepted.reason == "renewed by the caller, see ADR-12" and accepted.until is None
    (inv,) = report.invariants
    assert inv.status is InvariantStatus.VERIFIED and inv.accepted == 1 and inv.summary.endswith("(1 accepted)")
    md = renderer("markdown")(report)
    assert "## Accepted (not blocking)\n" in md
    assert f"- must-fix `flag/must` at `src/a.ts:2` — must flagged (id `{fid}`): renewed by the caller, see ADR-12\n" in md
    assert "| flag | ☑️ accepted (1) |" in md and md.splitlines()[-1] == "MERGE"
    data = json.loads(renderer("json")(report))
    (item,) = data["findings"]
    assert item["id"] == fid and item["accepted"] == {"reason": "renewed by the caller, see ADR-12", "until": None}
    assert data["invariants"][0]["accepted"] == 1 and data["judged_on"] is None
    (result,) = json.loads(renderer("sarif")(report))["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "external", "status": "accepted", "justification":
                                       "renewed by the caller, see ADR-12 (accepted by the base's reviewer.toml)"}]
    assert "accepted by the base's reviewer.toml, not counted" in renderer("github")(report)
    assert "**Accepted by the base's `reviewer.toml`** (not counted):" in renderer("comment")(report)


def test_an_acceptance_holds_through_its_last_day_and_then_blocks_again(tmp_path, monkeypatch) -> None:
    fid = _flag_id(tmp_path)
    base = _accepting(f'[[accept]]\nid = "{fid}"\nreason = "until the fix lands"\nuntil = 2027-03-31\n')
    monkeypatch.setenv("SOURCE_DATE_EPOCH", _epoch("2027-03-31"))
    held = review_change(tmp_path / "held", base, {**base, "src/a.ts": FLAGGED}, families=(flag_family(),))
    assert held.verdict is Verdict.MERGE and [a.until for a in held.accepted] == ["2027-03-31"]
    assert held.judged_on == "2027-03-31"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", _epoch("2027-04-01"))
    late = review_change(tmp_path / "late", base, {**base, "src/a.ts": FLAGGED}, families=(flag_family(),))
    assert late.verdict is Verdict.DO_NOT_MERGE and late.accepted == ()
    assert [f.id for f in late.findings] == [fid] and [a.finding.id for a in late.expired] == [fid]
    md = renderer("markdown")(late)
    assert ("⌛ Accepted by the base's `reviewer.toml` until 2027-03-31; that day has passed (judged on 2027-04-01), "
            "so it blocks again. Reason given: `until the fix lands`") in md
    (item,) = json.loads(renderer("json")(late))["findings"]
    assert item["accepted"] is None and item["acceptance_expired"] == {"reason": "until the fix lands", "until": "2027-03-31"}


def test_an_acceptance_ends_when_the_code_it_points_at_changes(tmp_path) -> None:
    fid = _flag_id(tmp_path)
    base = _accepting(f'[[accept]]\nid = "{fid}"\nreason = "reviewed"\n')
    # The same rule on the same path, but other code: a new finding, judged again.
    changed = "export const a = 1\n// FLAG_MUST here, and more\n"
    report = review_change(tmp_path / "second", base, {**base, "src/a.ts": changed}, families=(flag_family(),))
    assert report.verdict is Verdict.DO_NOT_MERGE and report.accepted == ()
    assert [f.id for f in report.findings] != [fid] and report.count(Severity.MUST_FIX) == 1
    # Unrelated lines moving keep the id, and the acceptance.
    moved = "// a new first line\nexport const a = 1\n// FLAG_MUST here\n"
    kept = review_change(tmp_path / "third", base, {**base, "src/a.ts": moved}, families=(flag_family(),))
    assert kept.verdict is Verdict.MERGE and [a.finding.id for a in kept.accepted] == [fid]


def test_a_patch_cannot_accept_its_own_finding(tmp_path) -> None:
    fid = _flag_id(tmp_path)
    base = {"src/a.ts": CODE, "reviewer.toml": "# no acceptances\n"}
    patched = {"src/a.ts": FLAGGED, "reviewer.toml": f'[[accept]]\nid = "{fid}"\nreason = "trust me"\n'}
    report = review_change(tmp_path / "second", base, patched, families=(flag_family(),))
    assert report.verdict is Verdict.DO_NOT_MERGE and report.accepted == ()
    assert fid in {f.id for f in report.findings}
    assert "integrity/config-edited" in {f.rule for f in report.findings}


def test_an_integrity_finding_cannot_be_accepted(tmp_path) -> None:
    first = review_change(tmp_path / "first", {"src/a.ts": CODE}, {"src/a.ts": FLAGGED}, families=(flag_family(),),
                          patch_sha256="0" * 64)
    sha = next(f for f in first.findings if f.rule == "integrity/patch-sha256")
    base = _accepting(f'[[accept]]\nid = "{sha.id}"\nreason = "hash is fine"\n')
    report = review_change(tmp_path / "second", base, {**base, "src/a.ts": FLAGGED}, families=(flag_family(),),
                           patch_sha256="0" * 64)
    assert report.verdict is Verdict.DO_NOT_MERGE and report.accepted == ()
    assert "integrity/patch-sha256" in {f.rule for f in report.findings}


@pytest.mark.parametrize("entry, message", [
    ('id = "XYZ"\nreason = "r"', "id must be a finding's 16-hex-digit id"),
    ('id = "0123456789ABCDEF"\nreason = "r"', "id must be a finding's 16-hex-digit id"),
    ('id = "0123456789abcdef"', "reason must be a non-empty string"),
    ('id = "0123456789abcdef"\nreason = "  "', "reason must be a non-empty string"),
    ('id = "0123456789abcdef"\nreason = "r"\nuntil = "next week"', "until must be a date such as 2027-03-31"),
    ('id = "0123456789abcdef"\nreason = "r"\nuntil = 2027-02-30', "not valid TOML"),
    ('id = "0123456789abcdef"\nreason = "r"\nuntil = "2027-02-30"', "until must be a date"),
    ('id = "0123456789abcdef"\nreason = "r"\nuntil = 2027-03-31T10:00:00Z', "until must be a date"),
    ('id = "0123456789abcdef"\nreason = "r"\nexpires = 2027-03-31', "has no option expires"),
])
def test_a_malformed_acceptance_is_an_error_naming_the_entry(entry, message) -> None:
    source = "reviewer.toml at base"
    with pytest.raises(ReviewerError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        build_config(parse_toml(f"[[accept]]\n{entry}\n".encode(), source), (flag_family(),), source)
    if "TOML" not in message:
        assert "[[accept]] entry 1" in str(caught.value)


def test_repeated_or_misshapen_accept_tables_are_errors() -> None:
    twice = '[[accept]]\nid = "0123456789abcdef"\nreason = "a"\n[[accept]]\nid = "0123456789abcdef"\nreason = "b"\n'
    with pytest.raises(ReviewerError, match="accepted twice"):
        build_config(parse_toml(twice.encode(), "t"), (flag_family(),), "t")
    with pytest.raises(ReviewerError, match=r"accept must be an array of tables"):
        build_config(parse_toml(b'accept = "0123456789abcdef"\n', "t"), (flag_family(),), "t")
    config = build_config(parse_toml(b'[[accept]]\nid = "0123456789abcdef"\nreason = " spaced "\nuntil = "2027-01-02"\n',
                                     "t"), (flag_family(),), "t")
    (entry,) = config.accepts
    assert (entry.reason, entry.until) == ("spaced", datetime.date(2027, 1, 2))
    # An acceptance is part of what a stored review was made with.
    assert config.digest != build_config({}, (flag_family(),), "t").digest
