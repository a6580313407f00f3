"""Integrity, suppression and internal-error checks live in the registry.

They are documented like every family check (`reviewer rules`, `--explain`,
SARIF rule metadata), never run as families, and the findings that carry
them take their title and severity from the same specs.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import jsonschema
import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.cli import main
from reviewer.errors import ReviewerError
from reviewer.engine.explain import explain
from reviewer.report.model import Check, CheckStatus, InvariantStatus, Severity
from reviewer.engine.api import CheckGroup, CheckSpec, Family, Outcome
from reviewer.engine.registry import (
    builtin_groups,
    catalog,
    catalog_checks,
    discover,
    idioms_not_found_check,
    internal_error_check,
    locked_reason,
)
from reviewer.report.formats import renderer

ROOT = Path(__file__).resolve().parent.parent
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())

# Every id outside the families that a finding (or a gate check) can carry.
# A new one needs a spec in reviewer/gate/integrity.py or reviewer/engine/suppress.py, and
# a line here: the test below fails until both exist.
BUILTIN_IDS = {
    "integrity/base-commit",
    "integrity/patch-sha256",
    "integrity/artifact-sha256",
    "integrity/clean-apply",
    "integrity/file-count",
    "integrity/paths",
    "integrity/limits",
    "integrity/config-edited",
    "integrity/config-invalid",
    "suppression/malformed",
    "suppression/missing-reason",
    "suppression/unused",
}
LOCKED = "can never be re-rated or disabled"

_LITERAL_ID = re.compile(r"\b(?:integrity|suppression)/[a-z0-9][a-z0-9-]*(?![a-z0-9-])")
# An id built at run time: `f"integrity/{name}"`, `f"{family.id}/internal-error"`.
_DYNAMIC_ID = re.compile(r"\b(?:integrity|suppression)/\{|\}/internal-error")
_NAMES_TUPLE = re.compile(r"for name in \(([^)]*)\)")


def _sources() -> list[Path]:
    return sorted(p for d in ("reviewer", "rules") for p in (ROOT / d).rglob("*.py"))


def _emitted_ids() -> tuple[set[str], list[str]]:
    """(ids the code names, dynamic id constructions this test cannot resolve).

    Every `integrity/...` and `suppression/...` literal in the pipeline and the
    rules, plus the names of `f"integrity/{name}" ... for name in ("a", "b")`.
    `<family>/internal-error` is checked separately (one per family).
    """
    found: set[str] = set()
    unresolved: list[str] = []
    for path in _sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found.update(_LITERAL_ID.findall(line))
            for match in _DYNAMIC_ID.finditer(line):
                if match.group().endswith("/internal-error"):
                    continue
                names = _NAMES_TUPLE.search(line)
                if match.group().startswith("integrity/") and names:
                    found.update(f"integrity/{n}" for n in re.findall(r"\"([a-z0-9-]+)\"", names.group(1)))
                else:
                    unresolved.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found, unresolved


def test_every_id_a_producer_can_emit_is_in_the_catalog() -> None:
    found, unresolved = _emitted_ids()
    assert not unresolved, "a rule id built at run time: give each value a spec and teach this test to read it"
    assert found == BUILTIN_IDS, "an id without a spec (or a spec nothing raises): update the specs and BUILTIN_IDS"
    families = discover()
    documented = {spec.id for spec in catalog_checks(families)}
    assert BUILTIN_IDS <= documented
    assert {spec.id for g in builtin_groups() for spec in g.checks} == BUILTIN_IDS
    # The engine names a rule error `<family>/internal-error`: one per family.
    assert any("/internal-error" in p.read_text(encoding="utf-8") for p in _sources())
    assert {f"{f.id}/internal-error" for f in families} <= documented


def test_gate_checks_all_have_a_spec(tmp_path) -> None:
    """The ids a real gate run reports are exactly the integrity specs (config-edited is a review note)."""
    repo, base, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), gate_only=True).report
    gate_ids = {c.id for c in report.checks}
    assert gate_ids == {s.id for s in builtin_groups()[0].checks} - {"integrity/config-edited", "integrity/config-invalid"}


def test_builtin_groups_are_frozen_documented_and_never_runnable() -> None:
    groups = builtin_groups()
    assert [g.id for g in groups] == ["integrity", "suppression"]
    families = discover()
    assert all(isinstance(f, Family) for f in families)
    assert not {f.id for f in families} & {g.id for g in groups}, "discover() must not return built-in groups"
    assert not any(s.id.endswith("/internal-error") for f in families for s in f.checks), "Family.checks unchanged"
    for group in groups:
        assert isinstance(group, CheckGroup) and group.builtin and group.family is None
        assert group.summary and LOCKED in group.locked
        with pytest.raises(dataclasses.FrozenInstanceError):
            group.id = "x"  # type: ignore[misc]
        for spec in group.checks:
            assert isinstance(spec, CheckSpec) and spec.id.startswith(f"{group.id}/")
            assert spec.title and spec.summary and spec.why and spec.bad and spec.good, spec.id
    assert "gate" in groups[0].locked and "audit trail" in groups[1].locked


def test_catalog_lists_families_then_builtin_groups_sorted() -> None:
    families = discover()
    groups = catalog(tuple(reversed(families)))
    ids = [g.id for g in groups]
    assert ids == sorted(f.id for f in families) + ["integrity", "suppression"]
    for group in groups[: len(families)]:
        assert not group.builtin and group.family is not None and group.family.id == group.id
        blind = (idioms_not_found_check(group.id),) if any(o.vocabulary for o in group.family.options) else ()
        assert group.checks == (*group.family.checks, *blind, internal_error_check(group.id))
    check_ids = [s.id for s in catalog_checks(families)]
    assert len(check_ids) == len(set(check_ids))


def test_a_family_may_not_take_a_builtin_group_id() -> None:
    clash = Family("integrity", "x", (), lambda ctx: Outcome("x"))
    with pytest.raises(TypeError, match="reserved"):
        catalog((clash,))


def test_locked_reason_covers_exactly_the_builtin_checks() -> None:
    families = discover()
    for spec in catalog_checks(families):
        builtin = spec.id in BUILTIN_IDS or spec.id.endswith("/internal-error")
        assert bool(locked_reason(families, spec.id)) == builtin, spec.id
    assert locked_reason(families, "integrity") and locked_reason(families, "suppression")
    for unknown in ("integrity/nope", "nope/internal-error", "lease-renewal", "suppression/"):
        assert locked_reason(families, unknown) is None


def test_reviewer_rules_lists_every_catalog_check(capsys) -> None:
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()]
    families = discover()
    expected = [s.id for s in catalog_checks(families)]
    assert listed == expected
    assert BUILTIN_IDS <= set(listed) and {f"{f.id}/internal-error" for f in families} <= set(listed)
    # Families first, then the built-in groups.
    first_builtin = min(listed.index(i) for i in BUILTIN_IDS)
    assert all(not i.startswith(("integrity/", "suppression/")) for i in listed[:first_builtin])
    line = next(ln for ln in out.splitlines() if ln.startswith("integrity/clean-apply "))
    assert "must-fix" in line


def test_explain_works_for_every_catalog_check() -> None:
    families = discover()
    for spec in catalog_checks(families):
        text = explain(families, spec.id)
        assert text.startswith(f"{spec.id} ({spec.severity.value})"), spec.id
        assert spec.title in text and "Why it matters" in text and "\nBad:\n" in text and "\nGood:\n" in text, spec.id
        builtin = spec.id in BUILTIN_IDS or spec.id.endswith("/internal-error")
        assert (LOCKED in text) == builtin, spec.id


@pytest.mark.parametrize("group_id", ["integrity", "suppression"])
def test_explain_a_builtin_group(group_id) -> None:
    text = explain(discover(), group_id)
    group = next(g for g in builtin_groups() if g.id == group_id)
    assert text.startswith(f"{group_id}: {group.summary}")
    assert all(spec.id in text for spec in group.checks) and LOCKED in text


def test_explain_from_the_command_line(capsys) -> None:
    assert main(["rules", "--explain", "integrity/clean-apply"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("integrity/clean-apply (must-fix)") and "temporary index" in out and "Why it matters" in out
    assert main(["rules", "--explain", "lease-renewal/internal-error"]) == 0
    assert "lease-renewal could not check its invariant" in capsys.readouterr().out
    assert main(["rules", "--explain", "integrity/nope"]) == 2
    err = capsys.readouterr().err
    assert "no such rule" in err and err.count("\n") == 1
    with pytest.raises(ReviewerError, match="no such rule"):
        explain(discover(), "nope/internal-error")


# ---------------------------------------------------------------- producers use the specs


def _spec(rule_id: str) -> CheckSpec:
    return next(s for s in catalog_checks(discover()) if s.id == rule_id)


def test_failed_gate_checks_take_title_and_severity_from_the_specs() -> None:
    gate = sorted(BUILTIN_IDS - {"integrity/config-edited", "integrity/config-invalid"} - {i for i in BUILTIN_IDS if i.startswith("suppression/")})
    checks = tuple(Check(cid, CheckStatus.FAIL, f"detail of {cid}") for cid in gate)
    findings = review._check_findings((*checks, Check("integrity/paths", CheckStatus.PASS, "fine")))
    assert [f.rule for f in findings] == gate
    for f in findings:
        spec = _spec(f.rule)
        assert (f.title, f.severity, f.message) == (spec.title, spec.severity, f"detail of {f.rule}")


def test_internal_error_finding_matches_its_spec(tmp_path) -> None:
    def boom(ctx) -> Outcome:
        raise RuntimeError("rule bug")

    family = Family("alpha", "a", (CheckSpec("alpha/x", Severity.MUST_FIX, "x", "x"),), boom)
    repo, base, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(family,)).report
    (finding,) = report.findings
    spec = internal_error_check("alpha")
    assert (finding.rule, finding.severity, finding.title) == (spec.id, spec.severity, spec.title)
    assert spec in catalog((family,))[0].checks


@pytest.fixture(scope="module")
def builtin_report(tmp_path_factory):
    """A real review (real families) with a failed integrity check, the
    config-edited note, and one finding of each suppression check."""
    tmp = tmp_path_factory.mktemp("builtin")
    base = {"src/a.ts": "export const a = 1\n", "reviewer.toml": "[limits]\nmax_files = 100\n"}
    patched = {
        "src/a.ts": (
            "// reviewer-ignore: -- no rule named\n"
            "// reviewer-ignore: bounded-scan/unbounded\n"
            "// reviewer-ignore: bounded-scan/unbounded -- nothing is reported here\n"
            "export const a = 2\n"
        ),
        "reviewer.toml": "[limits]\nmax_files = 100000\n",
    }
    repo, sha, patch, _ = make_change(tmp, base, patched)
    return review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), patch_sha256="0" * 64)).report


def test_builtin_findings_carry_their_specs(builtin_report) -> None:
    rules = {f.rule for f in builtin_report.findings}
    wanted = {"integrity/patch-sha256", "integrity/config-edited", *(i for i in BUILTIN_IDS if i.startswith("suppression/"))}
    assert wanted <= rules, rules
    assert builtin_report.verdict.value == "DO-NOT-MERGE"
    for f in builtin_report.findings:
        if f.rule in wanted:
            spec = _spec(f.rule)
            assert (f.title, f.severity) == (spec.title, spec.severity), f.rule


def test_sarif_rules_carry_the_registry_help_and_validate(builtin_report) -> None:
    sarif = json.loads(renderer("sarif")(builtin_report))
    jsonschema.validate(sarif, SARIF_SCHEMA)
    run = sarif["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    families = discover()
    assert set(rules) == {s.id for s in catalog_checks(families)}
    for rule in rules.values():
        help_text = rule["help"]["text"]
        assert "Why:" in help_text and "Bad:" in help_text and "Good:" in help_text, rule["id"]
    for rule_id in sorted(BUILTIN_IDS) + ["lease-renewal/internal-error"]:
        spec, rule = _spec(rule_id), rules[rule_id]
        assert rule["shortDescription"]["text"] == spec.title
        assert rule["fullDescription"]["text"] == spec.summary
        assert rule["defaultConfiguration"]["level"] == {"must-fix": "error", "should-fix": "warning", "consider": "note"}[
            spec.severity.value
        ]
        help_text = rule["help"]["text"]
        assert spec.why in help_text and spec.bad.strip() in help_text and spec.good.strip() in help_text
        assert LOCKED in help_text
    ids = list(rules)
    located = {r["ruleId"] for r in run["results"]}
    assert {"integrity/config-edited", "suppression/malformed", "suppression/missing-reason", "suppression/unused"} <= located
    for result in run["results"]:
        assert ids[result["ruleIndex"]] == result["ruleId"]
    notified = {n["descriptor"]["id"] for n in run["invocations"][0]["toolExecutionNotifications"]}
    assert "integrity/patch-sha256" in notified
