"""Configuration comes from the base commit or --config, never from the patch."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.cli import main
from reviewer.model import InvariantStatus, Location, Severity
from reviewer.registry import CheckSpec, Family, Outcome


def _probe() -> Family:
    """Reports one must-fix finding per changed file, naming the option it saw."""

    def run(ctx) -> Outcome:
        found = tuple(
            ctx.finding("seen", title=f"limit {ctx.options['limit']}", message="m", location=Location(f.path, 1, 1), anchor=f.path)
            for f in ctx.changeset.files if f.path.endswith(".ts")
        )
        return Outcome(InvariantStatus.VERIFIED, f"limit {ctx.options['limit']}", found)

    return Family("probe", "p", (CheckSpec("probe/seen", Severity.MUST_FIX, "seen", "s"),), run, defaults={"limit": 100})


def _review(tmp: Path, base_config: str | None, patched_config: str | None, config_file: str | None = None):
    base = {"src/a.ts": "a\n"}
    if base_config is not None:
        base["reviewer.toml"] = base_config
    patched = {"src/a.ts": "b\n"}
    if patched_config is not None:
        patched["reviewer.toml"] = patched_config
    repo, sha, patch, _ = make_change(tmp, base, patched)
    return review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), config=config_file), families=(_probe(),)).report


def test_defaults_without_any_config(tmp_path) -> None:
    report = _review(tmp_path, None, None)
    assert report.invariants[0].summary == "limit 100"


def test_base_config_applies(tmp_path) -> None:
    report = _review(tmp_path, "[rules.probe]\nlimit = 7\n", None)
    assert report.invariants[0].summary == "limit 7"


def test_a_patch_cannot_change_the_config_that_judges_it(tmp_path) -> None:
    weakened = "[rules.probe]\nlimit = 999\n[severity]\n\"probe/seen\" = \"consider\"\n"
    report = _review(tmp_path, "[rules.probe]\nlimit = 7\n", weakened)
    assert report.invariants[0].summary == "limit 7"
    assert report.verdict.value == "DO-NOT-MERGE"  # the severity downgrade did not apply
    note = next(f for f in report.findings if f.rule == "integrity/config-edited")
    assert note.severity is Severity.CONSIDER and "not applied" in note.title


def test_explicit_config_file_wins(tmp_path) -> None:
    cfg = tmp_path / "ci.toml"
    cfg.write_text("[rules.probe]\nlimit = 3\n[severity]\n\"probe/seen\" = \"should-fix\"\n")
    report = _review(tmp_path, "[rules.probe]\nlimit = 7\n", None, str(cfg))
    assert report.invariants[0].summary == "limit 3"
    assert report.findings[0].severity is Severity.SHOULD_FIX and report.verdict.value == "MERGE"


def test_disable_drops_a_rule(tmp_path) -> None:
    cfg = tmp_path / "ci.toml"
    cfg.write_text('[disable]\nrules = ["probe/seen"]\n')
    report = _review(tmp_path, None, None, str(cfg))
    assert report.findings == () and report.verdict.value == "MERGE"


@pytest.mark.parametrize("text, message", [
    ("[rules.nope]\nx = 1\n", "no such rule family"),
    ("[rules.probe]\nlimt = 1\n", "has no option 'limt'"),
    ("[rules.probe]\nlimit = \"ten\"\n", "limit must be an integer, got 'ten'"),
    ("[severity]\n\"probe/seen\" = \"blocker\"\n", "is not must-fix, should-fix or consider"),
    ("[severity]\n\"probe/nope\" = \"consider\"\n", "no such rule"),
    ("[disable]\nrules = [\"probe/nope\"]\n", "no such rule"),
    ("[limits]\nmax_files = -1\n", "must be a positive number"),
    ("[extras]\n", "unknown table"),
    ("not = [valid\n", "not valid TOML"),
])
def test_bad_config_is_a_clear_error(tmp_path, text, message) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(Exception) as info:
        _review(tmp_path, None, None, str(cfg))
    assert message in str(info.value) and str(cfg) in str(info.value)


def test_bad_config_via_cli_exits_2(tmp_path, capsys) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[rules.lease-renewal]\nno_such_option = 1\n")
    assert main(["review", "--repo", str(repo.path), "--base", sha, "--patch", str(patch), "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reviewer: ") and "no_such_option" in err and err.count("\n") == 1
