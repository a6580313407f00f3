"""Configuration comes from the base commit or --config, never from the patch."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.cli import main
from reviewer.inputs.config import build_config, parse_toml
from reviewer.errors import ReviewerError
from reviewer.gate.limits import Limits
from reviewer.report.model import InvariantStatus, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Kind, Option, Outcome


def _probe() -> Family:
    """Reports one must-fix finding per changed file, naming the option it saw."""

    def run(ctx) -> Outcome:
        found = tuple(
            ctx.finding("seen", title=f"limit {ctx.options['limit']}", message="m", location=Location(f.path, 1, 1), anchor=f.path)
            for f in ctx.changeset.files if f.path.endswith(".ts")
        )
        return Outcome(f"limit {ctx.options['limit']}", found, examined=1)

    return Family("probe", "p", (CheckSpec("probe/seen", Severity.MUST_FIX, "seen", "s"),), run,
                  (Option("limit", 100, Kind.INTEGER, "A probe bound."),))


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
    ("[rules.probe]\nlimit = \"ten\"\n", "limit must be a non-negative integer, got 'ten'"),
    ("[severity]\n\"probe/seen\" = \"blocker\"\n", "is not must-fix, should-fix or consider"),
    ("[severity]\n\"probe/nope\" = \"consider\"\n", "no such rule"),
    ("[disable]\nrules = [\"probe/nope\"]\n", "no such rule"),
    ("[limits]\nmax_files = -1\n", "[limits] max_files must be a positive integer, got -1"),
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


# ---------------------------------------------------------------- values of the wrong type
#
# Each case is a reviewer.toml and the exact message after "<source>: ". They go
# through the real command line and the real rule families, once as --config and
# once committed in the base commit: either way the run must stop with exit 2
# and that one line, never "internal error" and never a review that quietly ran
# with a check switched off (a NaN bound compares false with everything).

WRONG_VALUES = [
    # [limits]: positive integers, and seconds that setitimer can arm.
    ("[limits]\nmax_files = nan\n", "[limits] max_files must be a positive integer, got nan"),
    ("[limits]\nmax_files = inf\n", "[limits] max_files must be a positive integer, got inf"),
    ("[limits]\nmax_files = -inf\n", "[limits] max_files must be a positive integer, got -inf"),
    ("[limits]\nmax_files = 0\n", "[limits] max_files must be a positive integer, got 0"),
    ("[limits]\nmax_files = 1e400\n", "[limits] max_files must be a positive integer, got inf"),
    ("[limits]\nmax_files = 2.5\n", "[limits] max_files must be a positive integer, got 2.5"),
    ("[limits]\nmax_files = 10.0\n", "[limits] max_files must be a positive integer, got 10.0"),
    ("[limits]\nmax_files = true\n", "[limits] max_files must be a positive integer, got True"),
    ("[limits]\nmax_files = \"10\"\n", "[limits] max_files must be a positive integer, got '10'"),
    ("[limits]\nmax_files = [10]\n", "[limits] max_files must be a positive integer, got [10]"),
    ("[limits]\nmax_patch_bytes = 99999999999999999999\n",
     "[limits] max_patch_bytes must be a positive integer, got 99999999999999999999"),
    ("[limits]\nrule_seconds = nan\n", "[limits] rule_seconds must be a positive number of seconds, at most 86400, got nan"),
    ("[limits]\nrule_seconds = inf\n", "[limits] rule_seconds must be a positive number of seconds, at most 86400, got inf"),
    ("[limits]\nrule_seconds = 0\n", "[limits] rule_seconds must be a positive number of seconds, at most 86400, got 0"),
    ("[limits]\nrule_seconds = 1e10\n",
     "[limits] rule_seconds must be a positive number of seconds, at most 86400, got 10000000000.0"),
    ("[limits]\nrule_seconds = false\n",
     "[limits] rule_seconds must be a positive number of seconds, at most 86400, got False"),
    # Top-level keys that must be tables; a falsy value must not read as "absent".
    ("limits = [1]\n", "limits must be a table ([limits]), got [1]"),
    ("limits = 0\n", "limits must be a table ([limits]), got 0"),
    ("rules = \"x\"\n", "rules must be a table ([rules.<family>]), got 'x'"),
    ("rules = []\n", "rules must be a table ([rules.<family>]), got []"),
    ("severity = 3\n", "severity must be a table ([severity]), got 3"),
    ("disable = \"x\"\n", "disable must be a table ([disable]), got 'x'"),
    ("disable = \"\"\n", "disable must be a table ([disable]), got ''"),
    ("[rules]\nlease-renewal = 3\n", "[rules.lease-renewal] must be a table, got 3"),
    # [disable] and [severity] values.
    ("[disable]\nrules = [1]\n", "[disable] rules must be a list of rule ids (strings), got [1]"),
    ("[disable]\nrules = [{}]\n", "[disable] rules must be a list of rule ids (strings), got [{}]"),
    ("[disable]\nrules = \"bounded-scan/unbounded\"\n",
     "[disable] rules must be a list of rule ids (strings), got 'bounded-scan/unbounded'"),
    ("[disable]\nrule = []\n", "[disable] has no option 'rule'; it takes only rules = [\"<family>/<check>\", ...]"),
    ("[severity]\n\"lease-renewal/renewal-period\" = 3\n",
     "[severity] lease-renewal/renewal-period: 3 is not must-fix, should-fix or consider"),
    ("[severity]\n\"lease-renewal/renewal-period\" = [\"consider\"]\n",
     "[severity] lease-renewal/renewal-period: ['consider'] is not must-fix, should-fix or consider"),
    # Family options, typed by the families' DEFAULTS (rules/*.py).
    ("[rules.lease-renewal]\nrelease = [1, \"x\"]\n", "[rules.lease-renewal] release must be a list of strings, got [1, 'x']"),
    ("[rules.lease-renewal]\nrelease = [[\"x\"]]\n", "[rules.lease-renewal] release must be a list of strings, got [['x']]"),
    ("[rules.lease-renewal]\nrelease = { clear = \"x\" }\n",
     "[rules.lease-renewal] release must be a list of strings, got {'clear': 'x'}"),
    ("[rules.lease-renewal]\nrelease = \"SessionExecutionClaim.clear\"\n",
     "[rules.lease-renewal] release must be a list of strings, got 'SessionExecutionClaim.clear'"),
    ("[rules.bounded-scan]\ncursor_columns = [1]\n", "[rules.bounded-scan] cursor_columns must be a list of strings, got [1]"),
    ("[rules.terminal-commit-order]\nsettle_tools = [true]\n",
     "[rules.terminal-commit-order] settle_tools must be a list of strings, got [True]"),
    ("[rules.schema-prev-ids]\nroot_ids = [1979-05-27]\n",
     "[rules.schema-prev-ids] root_ids must be a list of strings, got [datetime.date(1979, 5, 27)]"),
    ("[rules.bounded-scan]\nbound = true\n", "[rules.bounded-scan] bound must be a non-negative integer, got True"),
    ("[rules.bounded-scan]\nbound = nan\n", "[rules.bounded-scan] bound must be a non-negative integer, got nan"),
    ("[rules.bounded-scan]\nbound = 2.5\n", "[rules.bounded-scan] bound must be a non-negative integer, got 2.5"),
    ("[rules.bounded-scan]\nbound = -1\n", "[rules.bounded-scan] bound must be a non-negative integer, got -1"),
    ("[rules.bounded-scan]\nmax_helper_depth = \"4\"\n",
     "[rules.bounded-scan] max_helper_depth must be a non-negative integer, got '4'"),
    ("[rules.lease-renewal]\nmax_period_fraction = nan\n",
     "[rules.lease-renewal] max_period_fraction must be a non-negative finite number, got nan"),
    ("[rules.lease-renewal]\nmax_period_fraction = inf\n",
     "[rules.lease-renewal] max_period_fraction must be a non-negative finite number, got inf"),
    ("[rules.lease-renewal]\nmax_period_fraction = true\n",
     "[rules.lease-renewal] max_period_fraction must be a non-negative finite number, got True"),
    ("[rules.lease-renewal]\nlease_ms_fallback = 30000.5\n",
     "[rules.lease-renewal] lease_ms_fallback must be a non-negative integer, got 30000.5"),
    ("[rules.lease-renewal]\nlease_constant = 5\n", "[rules.lease-renewal] lease_constant must be a string, got 5"),
    # A key with a newline is quoted, so the message stays one line.
    ("[rules.\"lease\\nrenewal\"]\nx = 1\n",
     "[rules.\"lease\\nrenewal\"]: no such rule family (known: bounded-scan, cleanup-propagation, dependency-direction, lease-renewal, recovery-revalidation, regression-evidence, resume-identity, schema-prev-ids, terminal-commit-order)"),
    # Values tomllib itself cannot turn into Python objects.
    ("[limits]\nmax_files = 1" + "0" * 5000 + "\n", None),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML (arrays or tables nested too deeply)"),
]


def _cli(repo: Path, base: str, patch: Path, *extra: str) -> int:
    return main(["review", "--repo", str(repo), "--base", base, "--patch", str(patch), "--no-state", *extra])


def _one_line_error(capsys, source: str, message: str | None) -> None:
    out, err = capsys.readouterr()
    assert out == ""
    if message is None:
        assert err.startswith(f"reviewer: {source}: not valid TOML (") and err.count("\n") == 1, err
    else:
        assert err == f"reviewer: {source}: {message}\n"


@pytest.mark.parametrize("text, message", WRONG_VALUES, ids=[m or t[:40] for t, m in WRONG_VALUES])
def test_wrong_value_in_config_file_exits_2_with_one_line(tmp_path, capsys, text, message) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    cfg = tmp_path / "ci.toml"
    cfg.write_text(text)
    assert _cli(repo.path, sha, patch, "--config", str(cfg)) == 2
    _one_line_error(capsys, str(cfg), message)


@pytest.mark.parametrize("text, message", WRONG_VALUES, ids=[m or t[:40] for t, m in WRONG_VALUES])
def test_wrong_value_in_base_reviewer_toml_exits_2_with_one_line(tmp_path, capsys, text, message) -> None:
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n", "reviewer.toml": text}, {"src/a.ts": "b\n"})
    assert _cli(repo.path, sha, patch) == 2
    _one_line_error(capsys, "reviewer.toml at base", message)


@pytest.mark.parametrize("field", [f.name for f in fields(Limits)])
@pytest.mark.parametrize("value", ["nan", "inf", "0", "true", "[]"])
def test_every_limit_rejects_non_positive_and_non_numbers(field, value) -> None:
    """Every [limits] field, present and future, is validated (not only the ones listed above)."""
    with pytest.raises(ReviewerError) as info:
        build_config(parse_toml(f"[limits]\n{field} = {value}\n".encode(), "t.toml"), (), "t.toml")
    message = str(info.value)
    assert message.startswith(f"t.toml: [limits] {field} must be a positive ") and "\n" not in message


def test_well_typed_edge_values_are_accepted(tmp_path, capsys) -> None:
    """The validation is not a blanket refusal: an integer where a float is
    expected, zero where zero means something, and an empty list all review."""
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    cfg = tmp_path / "ci.toml"
    cfg.write_text(
        "[limits]\nrule_seconds = 30\nmax_files = 1\n"
        "[rules.lease-renewal]\nmax_period_fraction = 1\ncoordinator_cleanup_arg = 0\nrelease = []\n"
        "[rules.bounded-scan]\nmax_helper_depth = 0\ncursor_columns = [\"cursor\"]\n"
        "[disable]\nrules = []\n"
    )
    assert _cli(repo.path, sha, patch, "--config", str(cfg)) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.endswith("MERGE\n")


def test_a_float_option_given_as_an_integer_is_the_same_configuration() -> None:
    """`max_period_fraction = 1` and `= 1.0` are one configuration (one identity for stored reviews)."""
    from reviewer.engine.registry import discover

    families = discover()
    as_int = build_config(parse_toml(b"[rules.lease-renewal]\nmax_period_fraction = 1\n", "t"), families, "t")
    as_float = build_config(parse_toml(b"[rules.lease-renewal]\nmax_period_fraction = 1.0\n", "t"), families, "t")
    assert as_int.for_family("lease-renewal")["max_period_fraction"] == 1.0
    assert as_int.digest == as_float.digest


# ---------------------------------------------------------------- checks that are never configurable
#
# Integrity checks are the gate, suppression checks the audit trail of
# silencing, and an internal error means a family proved nothing: [severity]
# and [disable] may name none of them, and say so (and why) in one line.

NEVER_CONFIGURABLE = [
    ("integrity/clean-apply", "they are the gate"),
    ("integrity/limits", "they are the gate"),
    ("integrity/config-edited", "they are the gate"),
    ("integrity", "they are the gate"),
    ("suppression/missing-reason", "they are the audit trail of silencing"),
    ("suppression/unused", "they are the audit trail of silencing"),
    ("suppression", "they are the audit trail of silencing"),
    ("lease-renewal/internal-error", "proved nothing, so the verdict fails closed"),
    ("bounded-scan/internal-error", "proved nothing, so the verdict fails closed"),
]


def _severity_table(rule_id: str) -> str:
    return f'[severity]\n"{rule_id}" = "consider"\n'


def _disable_table(rule_id: str) -> str:
    return f'[disable]\nrules = ["{rule_id}"]\n'


@pytest.mark.parametrize("table, render", [("severity", _severity_table), ("disable", _disable_table)])
@pytest.mark.parametrize("rule_id, why", NEVER_CONFIGURABLE)
def test_builtin_checks_can_never_be_re_rated_or_disabled(table, render, rule_id, why) -> None:
    from reviewer.engine.registry import discover

    with pytest.raises(ReviewerError) as info:
        build_config(parse_toml(render(rule_id).encode(), "t.toml"), discover(), "t.toml")
    message = str(info.value)
    assert message.startswith(f"t.toml: [{table}] {rule_id!r}: ") and "\n" not in message
    assert "can never be re-rated or disabled" in message and why in message


@pytest.mark.parametrize("render", [_severity_table, _disable_table])
@pytest.mark.parametrize("rule_id", ["integrity/nope", "suppression/nope", "nope/internal-error", "integrity/", "internal-error"])
def test_unknown_ids_near_builtin_ones_are_still_no_such_rule(render, rule_id) -> None:
    from reviewer.engine.registry import discover

    with pytest.raises(ReviewerError) as info:
        build_config(parse_toml(render(rule_id).encode(), "t.toml"), discover(), "t.toml")
    assert str(info.value).endswith(f"{rule_id!r}: no such rule")


def test_a_test_familys_internal_error_is_refused_too(tmp_path) -> None:
    """The refusal follows the families actually configured, not a fixed list."""
    cfg = tmp_path / "bad.toml"
    cfg.write_text(_disable_table("probe/internal-error"))
    with pytest.raises(ReviewerError, match="can never be re-rated or disabled"):
        _review(tmp_path, None, None, str(cfg))


@pytest.mark.parametrize("source", ["--config", "base"])
def test_re_rating_an_integrity_check_exits_2_with_one_line(tmp_path, capsys, source) -> None:
    text = _severity_table("integrity/paths")
    base = {"src/a.ts": "a\n"}
    if source == "base":
        base["reviewer.toml"] = text
    repo, sha, patch, _ = make_change(tmp_path, base, {"src/a.ts": "b\n"})
    extra: tuple[str, ...] = ()
    where = "reviewer.toml at base"
    if source == "--config":
        cfg = tmp_path / "ci.toml"
        cfg.write_text(text)
        extra, where = ("--config", str(cfg)), str(cfg)
    assert _cli(repo.path, sha, patch, *extra) == 2
    _one_line_error(
        capsys, where,
        "[severity] 'integrity/paths': integrity checks can never be re-rated or disabled: they are the gate "
        "that proves the inputs are what they claim, and a review of anything else proves nothing",
    )


# ---------------------------------------------------------------- options declared once


def test_a_pattern_option_must_compile(tmp_path, capsys) -> None:
    """A regular expression that does not compile is refused when the configuration
    is read, in one line, instead of failing the family at run time."""
    repo, sha, patch, _ = make_change(tmp_path, {"src/a.ts": "a\n"}, {"src/a.ts": "b\n"})
    cfg = tmp_path / "bad.toml"
    cfg.write_text('[rules.schema-prev-ids]\nv1_folder_pattern = "^(\\\\d{14}_"\n')
    code = main(["review", "--repo", str(repo.path), "--base", sha, "--patch", str(patch), "--config", str(cfg)])
    err = capsys.readouterr().err
    assert code == 2
    assert "[rules.schema-prev-ids] v1_folder_pattern is not a valid regular expression" in err


def test_typed_options_come_from_the_declarations() -> None:
    from reviewer.engine.api import Options

    declared = (
        Option("names", ["a", "b"], Kind.NAMES, "n"),
        Option("ratio", 0.5, Kind.NUMBER, "r"),
        Option("folder", r"^\d+_", Kind.PATTERN, "p"),
    )
    opts = Options(declared, {"ratio": 1})
    assert opts.names == ("a", "b") and opts.ratio == 1.0 and isinstance(opts.ratio, float)
    assert opts.folder.match("12_x") and not opts.folder.match("x")
    with pytest.raises(AttributeError, match="no option 'nmes'"):
        opts.nmes  # noqa: B018 - a misspelt option fails the family, never reads as None


def test_a_family_cannot_declare_a_bad_default_or_an_option_twice() -> None:
    def run(ctx) -> Outcome:
        return Outcome("x")

    with pytest.raises(TypeError, match="its default must be a non-negative integer"):
        Family("f", "f", (), run, (Option("n", -1, Kind.INTEGER, "d"),))
    with pytest.raises(TypeError, match="declares an option twice"):
        Family("f", "f", (), run, (Option("n", 1, Kind.INTEGER, "d"), Option("n", 2, Kind.INTEGER, "d")))


def test_explain_shows_each_option_with_its_description(capsys) -> None:
    from reviewer.engine.registry import discover

    assert main(["rules", "--explain", "bounded-scan"]) == 0
    out = capsys.readouterr().out
    for option in next(f for f in discover() if f.id == "bounded-scan").options:
        assert f"  {option.name} = " in out and option.description in out
