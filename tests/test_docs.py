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


def test_every_test_security_md_cites_exists() -> None:
    """SECURITY.md maps each promise to its tests: a renamed or deleted test must not leave a promise unbacked."""
    import re

    security = (README.parent / "SECURITY.md").read_text(encoding="utf-8")
    tests_dir = README.parent / "tests"
    cited = re.findall(r"`(test_[a-z_]+\.py)((?:::test_[A-Za-z0-9_]+)?)`|`::(test_[A-Za-z0-9_]+)`", security)
    current_file = None
    missing = []
    for file, func, bare in cited:
        if file:
            current_file = file
            if not (tests_dir / file).exists():
                missing.append(file)
        name = (func or "").lstrip(":") or bare
        if name and current_file and f"def {name}(" not in (tests_dir / current_file).read_text(encoding="utf-8"):
            missing.append(f"{current_file}::{name}")
    assert len(cited) > 40
    assert not missing, missing
