"""`reviewer rules --explain ID` for every id `reviewer rules` lists, and the
helpers SARIF's rule help is built with (heading anchors, Markdown help)."""

from __future__ import annotations

import re

import pytest

from reviewer.cli import main
from reviewer.engine.api import CheckGroup, CheckSpec
from reviewer.engine.explain import heading_anchors, help_markdown, help_paths, rule_pages
from reviewer.engine.registry import catalog, discover
from reviewer.report.model import Severity


def _listed_ids(capsys) -> list[str]:
    assert main(["rules"]) == 0
    return [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()]


def test_every_listed_id_explains_what_and_why(capsys) -> None:
    ids = _listed_ids(capsys)
    # The pipeline's own checks are listed, not only the families'.
    assert {"integrity/base-commit", "integrity/config-edited", "suppression/malformed",
            "suppression/missing-reason", "suppression/unused"} <= set(ids)
    assert len(ids) == len(set(ids)) == len([s for g in catalog(discover()) for s in g.checks])
    for rule_id in ids:
        assert main(["rules", "--explain", rule_id]) == 0, rule_id
        captured = capsys.readouterr()
        text = captured.out
        assert text.startswith(f"{rule_id} (") and captured.err == "", rule_id
        what = re.search(r"^What it checks: (.+)$", text, re.M)
        why = re.search(r"^Why it matters: (.+)$", text, re.M)
        assert what and what.group(1).strip() and why and why.group(1).strip(), rule_id


@pytest.mark.parametrize("rule_id", ["integrity/base-commit", "integrity/config-edited", "integrity/clean-apply",
                                     "suppression/missing-reason"])
def test_pipeline_checks_show_bad_and_good_examples(capsys, rule_id) -> None:
    assert main(["rules", "--explain", rule_id]) == 0
    text = capsys.readouterr().out
    bad, good = text.index("\nBad:\n"), text.index("\nGood:\n")
    assert bad < good
    # Each example is indented and has at least one line.
    assert text[bad + 6:].startswith("    ") and text[good + 7:].startswith("    ")


def test_an_unknown_id_is_an_error_not_a_traceback(capsys) -> None:
    assert main(["rules", "--explain", "suppression/nope"]) == 2
    err = capsys.readouterr().err
    assert "no such rule" in err and err.count("\n") == 1


# ------------------------------------------------------------------ anchors as GitHub makes them


def test_heading_anchors_follow_github() -> None:
    markdown = "\n".join([
        "# A `heading`",
        "## `[rules.<family>]`",
        "```",
        "# not a heading",
        "```",
        "### What it checks",
        "### What it checks",
        "## `` a`b `` <b>x</b> ##",
        "## `integrity/base-commit`",
        "#not a heading either",
        "````toml",
        "```",
        "## still code",
        "````",
        "## Ünïcode_ok",
    ])
    assert heading_anchors(markdown) == [
        ("A `heading`", "a-heading"),
        ("`[rules.<family>]`", "rulesfamily"),
        ("What it checks", "what-it-checks"),
        ("What it checks", "what-it-checks-1"),
        ("`` a`b `` <b>x</b>", "ab-x"),
        ("`integrity/base-commit`", "integritybase-commit"),
        ("Ünïcode_ok", "ünïcode_ok"),
    ]


def test_help_paths_point_at_each_checks_heading_on_its_page() -> None:
    families = discover()
    uris = help_paths(families)
    pages = rule_pages(families)
    assert set(uris) == {s.id for g in catalog(families) for s in g.checks}
    for group in catalog(families):
        anchors = [a for _, a in heading_anchors(pages[f"{group.id}.md"])]
        assert len(anchors) == len(set(anchors))
        for spec in group.checks:
            page, _, fragment = uris[spec.id].partition("#")
            assert page == f"{group.id}.md" and fragment in anchors, spec.id
            assert ("`" + spec.id + "`", fragment) in heading_anchors(pages[page])


def test_help_markdown_fences_cannot_be_closed_by_an_example() -> None:
    spec = CheckSpec("demo/x", Severity.MUST_FIX, "Demo", "What it does.", why="Because.",
                     bad="const s = ```\n````\nbad()", good="good()")
    text = help_markdown(CheckGroup("demo", "d", (spec,)), spec)
    assert "**What it checks.** What it does." in text and "**Why it matters.** Because." in text
    assert "`````\nconst s = ```\n````\nbad()\n`````" in text  # longer than any run inside
    assert "```\ngood()\n```" in text
    assert "Default severity: must-fix" in text and "Configuration" not in text


def test_help_markdown_says_when_a_check_is_locked() -> None:
    group = next(g for g in catalog(discover()) if g.id == "integrity")
    spec = group.check("integrity/base-commit")
    text = help_markdown(group, spec)
    assert "Severity: must-fix (fixed)" in text and "**Configuration.** Integrity checks can never be re-rated" in text
