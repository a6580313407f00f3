"""The README's rules reference is generated from the registry and must stay current."""

from __future__ import annotations

from pathlib import Path

from reviewer.explain import explain, reference
from reviewer.registry import discover

README = Path(__file__).resolve().parent.parent / "README.md"
START, END = "<!-- rules-reference:start -->\n", "<!-- rules-reference:end -->"


def test_readme_rules_reference_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index(START) + len(START): text.index(END)]
    assert section == reference(discover()), "regenerate with: reviewer rules --markdown"


def test_every_check_explains_itself_with_examples() -> None:
    for family in discover():
        assert family.summary
        for spec in family.checks:
            assert spec.title and spec.summary and spec.why, spec.id
            if spec.severity.value != "consider":
                assert spec.bad and spec.good, spec.id
            text = explain(discover(), spec.id)
            assert spec.id in text and "Why it matters" in text
