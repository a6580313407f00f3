"""What to fix first: findings grouped by root cause and ordered by impact, and
annotations kept within what GitHub shows."""

from __future__ import annotations

import itertools
import json

import pytest

from flagfamily import flag_family, review_change
from reviewer.cli import main
from reviewer.engine.registry import catalog, discover, impacts
from reviewer.report.formats import renderer
from reviewer.report.github import ANNOTATIONS_PER_LEVEL
from reviewer.report.model import Finding, Impact, Location, Severity
from reviewer.report.order import arrange, groups


def _f(rule: str, path: str, line: int, end: int | None = None, related=(), severity=Severity.MUST_FIX) -> Finding:
    return Finding(rule, severity, f"{rule} title", "m", Location(path, line, end or line),
                   tuple(Location(p, a, b) for p, a, b in related), anchor=f"{rule}{path}{line}")


IMPACT = {"x/release": Impact.TWO_OWNERS, "x/lost": Impact.LOST_OUTCOME, "x/read": Impact.DUPLICATED_WORK,
          "x/promote": Impact.LOST_OUTCOME, "x/scan": Impact.STARVATION, "x/style": Impact.HYGIENE}


def test_a_finding_that_names_another_ones_site_is_listed_beneath_it() -> None:
    read = _f("x/read", "b.ts", 48, 55)
    promote = _f("x/promote", "b.ts", 201, related=[("b.ts", 50, 52)])  # cites the read
    scan = _f("x/scan", "a.ts", 10)
    release = _f("x/release", "z.ts", 44)
    ordered, roots = arrange([scan, promote, release, read], IMPACT)
    # Two owners first; the read is the root of the promotion (the construct to change), and the
    # group ranks by its most harmful member (a lost outcome), ahead of starvation.
    assert ordered == (release, read, promote, scan)
    assert roots == {promote.id: read.id}


def test_groups_are_one_root_and_its_direct_consequences_never_a_chain() -> None:
    a = _f("x/scan", "a.ts", 1)
    b = _f("x/lost", "a.ts", 10, related=[("a.ts", 1, 1)])   # cites a
    c = _f("x/style", "a.ts", 20, related=[("a.ts", 10, 10)])  # cites b, not a
    d = _f("x/promote", "a.ts", 30, related=[("a.ts", 1, 1)])  # cites a
    (first, second) = groups([a, b, c, d], IMPACT)
    assert first.root == a and first.consequences == (b, d)  # a is cited most; its citers, most harmful first
    assert second.root == c and second.consequences == ()     # c cites b, already placed: not chained under a


def test_same_site_findings_share_one_root_and_findings_elsewhere_do_not() -> None:
    one = _f("x/release", "a.ts", 71, 74)
    two = _f("x/lost", "a.ts", 71, 74)
    apart = _f("x/lost", "b.ts", 71, 74, related=[("a.ts", 80, 90)])  # another path's lines, and no overlap
    (g1, g2) = groups([two, apart, one], IMPACT)
    assert g1.root == one and g1.consequences == (two,) and g2.root == apart


def test_the_order_is_the_same_whatever_order_the_findings_come_in() -> None:
    findings = [_f("x/read", "b.ts", 48, 55), _f("x/promote", "b.ts", 201, related=[("b.ts", 50, 52)]),
                _f("x/scan", "a.ts", 10), _f("x/release", "z.ts", 44), _f("x/style", "a.ts", 10),
                _f("x/lost", "c.ts", 3, related=[("z.ts", 44, 44)]),
                _f("x/style", "c.ts", 9, severity=Severity.SHOULD_FIX, related=[("z.ts", 44, 44)])]
    results = [arrange(p, IMPACT) for p in itertools.permutations(findings)]
    (only,) = {(tuple(f.id for f in o), tuple(sorted(r.items()))) for o, r in results}
    ordered = [f for f in findings if f.id in only[0]]
    by_id = {f.id: f for f in ordered}
    severities = [by_id[i].severity.rank for i in only[0]]
    assert severities == sorted(severities)  # never across severities: a should-fix stays below every must-fix


def test_every_built_in_check_declares_its_impact() -> None:
    undeclared = [spec.id for group in catalog(discover()) for spec in group.checks if spec.impact is None]
    assert undeclared == []
    table = impacts(discover())
    assert table["lease-renewal/release-in-interrupt-commit"] is Impact.TWO_OWNERS
    assert table["bounded-scan/unbounded"] is Impact.STARVATION and table["integrity/clean-apply"] is Impact.REVIEW


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo") / "r.json"
    assert main(["demo", "--format", f"json={out}"]) == 1
    return json.loads(out.read_text(encoding="utf-8"))


def test_the_demo_leads_with_what_to_fix_first(demo_json) -> None:
    must = [f for f in demo_json["findings"] if f["severity"] == "must-fix"]
    # The seed review's first MUST-FIX: the claim released while the old run still executes.
    assert must[0]["rule"] == "lease-renewal/release-in-interrupt-commit" and must[0]["root"] is None
    rules = [f["rule"] for f in must]
    # One root (the newest-row read) and the promotion that trusts it, together.
    read = rules.index("resume-identity/newest-as-identity")
    assert rules[read + 1] == "recovery-revalidation/promotion-by-recency"
    assert must[read + 1]["root"] == must[read]["id"]
    # Root groups by impact: two owners, lost outcomes, duplicated work, starvation, hygiene.
    rank = {i.value: n for n, i in enumerate(Impact)}
    group_rank = []
    for f in must:
        members = [g for g in must if g["root"] == f["id"]] + [f]
        if f["root"] is None:
            group_rank.append(min(rank[g["impact"]] for g in members))
    assert group_rank == sorted(group_rank)
    assert rules[-1] == "dependency-direction/layer-violation"  # hygiene last


def test_annotations_stay_within_githubs_cap_and_lose_nothing(tmp_path) -> None:
    lines = [f"FLAG_MUST {n}" for n in range(15)] + [f"FLAG_SHOULD {n}" for n in range(12)]
    report = review_change(tmp_path, {"src/a.ts": "x\n"}, {"src/a.ts": "x\n" + "\n".join(lines) + "\n"},
                           families=(flag_family(),))
    assert report.count(Severity.MUST_FIX) == 15 and report.count(Severity.SHOULD_FIX) == 12
    out = renderer("github")(report).splitlines()
    errors = [line for line in out if line.startswith("::error ")]
    warnings = [line for line in out if line.startswith("::warning ")]
    assert len(errors) == len(warnings) == ANNOTATIONS_PER_LEVEL == 10
    assert errors[0].startswith("::error title=reviewer%3A DO-NOT-MERGE::reviewer 0.1.0: DO-NOT-MERGE (15 must-fix")
    assert errors[-1].startswith("::error title=reviewer%3A 7 more::7 more error annotations are not shown here")
    assert warnings[-1].startswith("::warning title=reviewer%3A 3 more::3 more warning annotations")
    # Every finding is annotated or named in its level's last annotation, by title and line.
    for f in report.findings:
        annotated = any(f"line={f.location.line}," in line for line in errors[1:-1] + warnings[:-1])
        named = f"{f.rule}: {f.title} at src/a.ts:{f.location.line}" in (errors[-1] + warnings[-1]).replace("%3A", ":")
        assert annotated != named, f
