"""The one family template (reviewer/engine/template.py): the skeleton every family runs.

A probe family declared on the template flags `HOLD(` calls; every test
reviews a real patch in a repository built under `tmp_path`, so what is
asserted is the skeleton's behaviour on git's result, not on a mock.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from flagfamily import review_change
from reviewer.engine.api import CheckSpec, Family, Kind, Option, parse_error_check
from reviewer.engine.registry import discover
from reviewer.engine.template import Reading, Template
from reviewer.report.model import Finding, InvariantStatus, Location, Severity


@dataclass
class _Run:
    ctx: object
    changed: tuple[str, ...] = ()
    holds: int = 0


def _holds(run: _Run) -> Iterator[Finding]:
    """A changed line calling `HOLD(` is a must-fix finding there."""
    ctx = run.ctx
    for path in run.changed:
        changed = ctx.changeset.file(path)
        for n, line in enumerate((changed.patched_text or "").split("\n"), start=1):
            if "HOLD(" in line:
                run.holds += 1
                if changed.touches(n, n):
                    yield ctx.finding("hold", title="A hold is taken", message=line.strip(),
                                      location=Location(path, n, n), anchor=line.strip())


def _probe(phrases: dict | None = None) -> Family:
    template = Template(
        reading=Reading(idioms="hold", unchecked="holds", region_title="Unparsed region with holds",
                        tokens=lambda opts: ("HOLD",), ignore="ignore_paths"),
        start=_Run,
        relevant=lambda run, module: "HOLD" in (run.ctx.patched.text(module.path) or ""),
        idle=lambda run: "no changed file takes a hold",
        checks=(_holds,),
        examined=lambda run: run.holds,
        proved=lambda run, findings: f"{run.holds} hold(s), none on a changed line",
        phrases=phrases if phrases is not None else {"hold": "a hold is taken"},
    )
    checks = (CheckSpec("probe/hold", Severity.MUST_FIX, "hold", "HOLD"),
              parse_error_check("probe", "Unparsed region with holds", "A region did not parse.", "Never green."))
    return Family("probe", "probe", checks, template.run,
                  (Option("ignore_paths", [], Kind.GLOBS, "never reviewed"),))


def _result(report, family: str = "probe"):
    return next(r for r in report.invariants if r.id == family)


def test_every_registered_family_runs_the_template() -> None:
    """The family shape is one: each registered family's run is a Template's, none writes its own."""
    for family in discover():
        owner = getattr(family.run, "__self__", None)
        assert isinstance(owner, Template), f"{family.id} runs {family.run!r}, not a Template"


def test_nothing_reviewed_irrelevant_and_verified(tmp_path: Path) -> None:
    base = {"src/a.ts": "export const a = 1\n"}
    none = review_change(tmp_path / "none", base, {**base, "README.md": "x\n"}, families=(_probe(),))
    assert _result(none).status is InvariantStatus.NOT_APPLICABLE
    assert _result(none).summary == "no changed TypeScript file"
    idle = review_change(tmp_path / "idle", base, {"src/a.ts": "export const a = 2\n"}, families=(_probe(),))
    assert _result(idle).summary == "no changed file takes a hold"
    held = {"src/a.ts": "export const a = HOLD(1)\n"}
    old = review_change(tmp_path / "old", held, {"src/a.ts": "export const a = HOLD(1)\nexport const b = 2\n"},
                        families=(_probe(),))
    assert _result(old).status is InvariantStatus.VERIFIED
    assert _result(old).summary == "1 hold(s), none on a changed line"


def test_violation_basis_names_every_blocking_check(tmp_path: Path) -> None:
    """A blocking finding is in the basis by its phrase, and by its title when the family gave none:
    a basis never reads as if the violation were not there."""
    base = {"src/a.ts": "export const a = 1\n"}
    patched = {"src/a.ts": "export const a = HOLD(1)\n"}
    phrased = _result(review_change(tmp_path / "p", base, patched, families=(_probe(),)))
    assert phrased.status is InvariantStatus.VIOLATED
    assert phrased.summary == "a hold is taken (a.ts:1)"
    bare = _result(review_change(tmp_path / "b", base, patched, families=(_probe({}),)))
    assert bare.summary == "A hold is taken (a.ts:1)"


def test_ignored_paths_are_not_reviewed(tmp_path: Path) -> None:
    config = '[rules.probe]\nignore_paths = ["gen/**"]\n'
    base = {"reviewer.toml": config, "gen/a.ts": "export const a = 1\n"}
    report = review_change(tmp_path, base, {**base, "gen/a.ts": "export const a = HOLD(1)\n"}, families=(_probe(),))
    assert _result(report).status is InvariantStatus.NOT_APPLICABLE


def test_error_region_over_changed_idioms_is_error_elsewhere_a_note(tmp_path: Path) -> None:
    """An ERROR region on changed lines that mention the idiom fails the family closed; one in
    code the patch did not change is a note with the one anchor format, and the family still judges."""
    base = {"src/a.ts": "export const a = 1\n",
            "src/b.ts": "function g() {\n  const x = f(a, b))\n}\n\nexport const b = HOLD(1)\n"}
    broken = review_change(tmp_path / "broken", base, {**base, "src/a.ts": "export const a = HOLD(f(1)))\n"},
                           families=(_probe(),))
    assert _result(broken).status is InvariantStatus.ERROR
    assert "src/a.ts:1-1 does not parse" in _result(broken).summary
    elsewhere = review_change(tmp_path / "elsewhere", base,
                              {**base, "src/b.ts": base["src/b.ts"] + "export const c = HOLD(2)\n"},
                              families=(_probe(),))
    result = _result(elsewhere)
    assert result.status is InvariantStatus.VIOLATED
    notes = [f for f in elsewhere.findings if f.rule == "probe/parse-error"]
    assert [n.location.path for n in notes] == ["src/b.ts"] and notes[0].location.line <= 2
