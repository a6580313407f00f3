"""The documentation stays true: generated pages are current, links resolve, and
each page covers what the code it describes actually has."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from reviewer.engine.explain import GENERATED, REGENERATE, explain, main as explain_main, rule_pages, write_rule_pages
from reviewer.engine.registry import catalog, discover

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
RULE_DOCS = DOCS / "rules"
EXCERPT_START, EXCERPT_END = "<!-- report-excerpt:start -->", "<!-- report-excerpt:end -->"
ELISION = "[…]"


def _markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


# ------------------------------------------------------------------ generated rules reference


def test_rule_pages_are_current() -> None:
    """docs/rules/ is exactly what the registry generates: no stale, missing or hand-edited page."""
    expected = rule_pages(discover())
    actual = {p.name: p.read_text(encoding="utf-8") for p in RULE_DOCS.glob("*.md")}
    how = f"regenerate with: .venv/bin/python -m {REGENERATE.removeprefix('python -m ')}"
    assert sorted(actual) == sorted(expected), how
    stale = [name for name in expected if actual[name] != expected[name]]
    assert not stale, f"{stale} out of date; {how}"


def test_every_group_of_the_catalog_has_a_page() -> None:
    pages = rule_pages(discover())
    for group in catalog(discover()):
        page = pages[f"{group.id}.md"]
        assert page.startswith(GENERATED)
        for spec in group.checks:
            assert f"`{spec.id}`" in page and spec.summary in page, spec.id
            assert f"{group.id}.md#{spec.id.replace('/', '-')}" in pages["README.md"], spec.id


def test_write_docs_command_regenerates_and_prunes(tmp_path: Path, capsys) -> None:
    """`python -m reviewer.engine.explain --write-docs DIR` writes every page, removes generated pages
    of groups that no longer exist, and never touches a page written by hand."""
    (tmp_path / "gone-family.md").write_text(GENERATED + "\n\n# `gone-family`\n", encoding="utf-8")
    (tmp_path / "notes.md").write_text("# written by hand\n", encoding="utf-8")
    assert explain_main(["--write-docs", str(tmp_path)]) == 0
    written = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.glob("*.md")}
    assert written.pop("notes.md") == "# written by hand\n"
    assert written == rule_pages(discover())
    assert str(tmp_path / "README.md") in capsys.readouterr().out
    assert [p.name for p in write_rule_pages(tmp_path, discover())] == list(rule_pages(discover()))


def test_every_check_explains_itself_with_examples() -> None:
    for group in catalog(discover()):
        assert group.summary
        for spec in group.checks:
            assert spec.title and spec.summary and spec.why, spec.id
            if spec.severity.value != "consider":
                assert spec.bad and spec.good, spec.id
            text = explain(discover(), spec.id)
            assert spec.id in text and "Why it matters" in text


# ------------------------------------------------------------------ README is the front door


def test_readme_is_a_short_front_door() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 300
    assert "rules-reference:start" not in text, "the rules reference lives in docs/rules/"
    # The two quick-start commands, and the Makefile targets they run.
    assert "make demo" in text and "make test" in text
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    for page in ("docs/usage.md", "docs/report-format.md", "docs/configuration.md", "docs/rules/README.md",
                 "docs/github-action.md", "docs/development.md", "SECURITY.md", "bench/README.md"):
        assert f"]({page})" in text, page


def test_readme_excerpt_is_from_the_real_demo_report(tmp_path: Path) -> None:
    """Every line of the README's excerpt is a line of what `reviewer demo` prints, in order."""
    from reviewer.cli import main

    out = tmp_path / "report.md"
    assert main(["demo", "--format", f"markdown={out}"]) == 1
    report = out.read_text(encoding="utf-8").split("\n")
    text = README.read_text(encoding="utf-8")
    block = text[text.index(EXCERPT_START) + len(EXCERPT_START): text.index(EXCERPT_END)].strip("\n").split("\n")
    assert block[0] == "````markdown" and block[-1] == "````"
    excerpt = block[1:-1]
    assert len([ln for ln in excerpt if ln.strip()]) >= 20
    position = 0
    for line in excerpt:
        if line == ELISION:
            continue
        assert line in report[position:], f"not in the demo report (or out of order): {line!r}"
        position = report.index(line, position) + 1
    assert excerpt[-1] == report[-2] == "DO-NOT-MERGE"


def test_readme_and_usage_list_every_command_and_format() -> None:
    import argparse

    from reviewer.cli import FORMATS, build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    usage = (DOCS / "usage.md").read_text(encoding="utf-8")
    readme = README.read_text(encoding="utf-8")
    for command in sub.choices:
        assert f"reviewer {command}" in readme and f"reviewer {command}" in usage, command
        assert f"| `{command}` |" in usage, command
    for fmt in FORMATS:
        assert f"`{fmt}`" in readme and f"`{fmt}`" in usage, fmt


# ------------------------------------------------------------------ links


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (HTML tags dropped, code spans kept
    as written) in lower case, punctuation dropped, spaces to dashes."""
    parts = re.split(r"(`+[^`]*`+)", heading)
    text = "".join(part if part.startswith("`") else re.sub(r"<[^>]+>", "", part) for part in parts)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def _outside_code(text: str) -> list[str]:
    """The lines of `text` outside fenced code blocks, with inline code spans removed."""
    lines, fence = [], ""
    for line in text.split("\n"):
        run = re.match(r"\s*(`{3,})", line)
        if fence:
            if run and line.strip() == run.group(1) and len(run.group(1)) >= len(fence):
                fence = ""
            continue
        if run:
            fence = run.group(1)
            continue
        lines.append(re.sub(r"(`+).*?\1", "", line))
    return lines


def _headings_with_code(path: Path) -> list[str]:
    fence, out = "", []
    for line in path.read_text(encoding="utf-8").split("\n"):
        run = re.match(r"\s*(`{3,})", line)
        if fence:
            if run and line.strip() == run.group(1) and len(run.group(1)) >= len(fence):
                fence = ""
            continue
        if run:
            fence = run.group(1)
        elif line.startswith("#"):
            out.append(line)
    return out


def _links(path: Path) -> list[str]:
    targets = []
    for line in _outside_code(path.read_text(encoding="utf-8")):
        targets += re.findall(r"\]\(([^)\s]+)\)", line)
    return targets


def _broken_links(page: Path) -> list[str]:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path_part, _, fragment = target.partition("#")
        resolved = (page.parent / path_part).resolve() if path_part else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors_of(resolved):
            broken.append(f"{target}: no such anchor")
    return broken


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    """Every relative link of README.md and docs/ names a file that exists, and an anchor it has."""
    assert not _broken_links(page)


def _anchors_of(path: Path) -> set[str]:
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', path.read_text(encoding="utf-8")))
    seen: dict[str, int] = {}
    for heading in _headings_with_code(path):
        slug = _slug(heading.lstrip("#"))
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_link_checker_is_not_vacuous(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# A `heading`\n\n[ok](#a-heading) [gone](missing.md) [bad anchor](#nowhere) [web](https://example.invalid)\n"
        "```\n[in code](also-missing.md)\n```\n`[in a span](missing-too.md)`\n",
        encoding="utf-8",
    )
    assert _broken_links(page) == ["missing.md: no such file", "#nowhere: no such anchor"]
    links = [t for page in _markdown_files() for t in _links(page)]
    assert len(links) > 100 and any("#" in t for t in links)
    assert "configuration.md#rulesfamily" in links  # an anchor built from a heading with code in it
    assert "rulesfamily" in _anchors_of(DOCS / "configuration.md")
    assert "json-report-reviewer-report1" in _anchors_of(DOCS / "report-format.md")


# ------------------------------------------------------------------ each page covers its subject


def _schema_names(node: object, names: set[str], values: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                names.update(value)
            if key == "enum":
                values.update(v for v in value if isinstance(v, str))
            if key == "const" and isinstance(value, str):
                values.add(value)
            _schema_names(value, names, values)
    elif isinstance(node, list):
        for item in node:
            _schema_names(item, names, values)


def test_report_format_documents_every_schema_field_and_value() -> None:
    from reviewer.schemas import report_schema

    doc = (DOCS / "report-format.md").read_text(encoding="utf-8")
    names: set[str] = set()
    values: set[str] = set()
    _schema_names(report_schema(), names, values)
    assert {"verdict", "failure_sequence", "merge_base", "added_by_patch", "still_open"} <= names
    missing = sorted(n for n in names if f"`{n}`" not in doc)
    assert not missing, f"fields of the schema not described in docs/report-format.md: {missing}"
    # Enumerated values may appear quoted as JSON strings or bare.
    missing_values = sorted(v for v in values if f"`{v}`" not in doc and f'`"{v}"`' not in doc)
    assert not missing_values, f"values of the schema not described in docs/report-format.md: {missing_values}"
    assert "](../reviewer/schemas/report.schema.json)" in doc


def test_configuration_documents_every_table_and_limit() -> None:
    from reviewer.inputs.config import _TABLES
    from reviewer.gate.limits import Limits

    doc = (DOCS / "configuration.md").read_text(encoding="utf-8")
    for table in _TABLES.values():
        assert f"`{table}`" in doc, table
    for limit in fields(Limits):
        default = limit.default
        shown = f"`{int(default)}`" if isinstance(default, float) and default.is_integer() else f"`{default}`"
        assert re.search(rf"\| `{limit.name}` \| {re.escape(shown)}", doc), f"[limits] {limit.name} = {default}"
    for family in discover():
        assert f"(rules/{family.id}.md#options)" in doc, family.id
    for option in ("--config", "--expect-prev-id", "--base"):
        assert f"`{option}" in doc, option


def test_github_action_doc_covers_the_action() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    doc = (DOCS / "github-action.md").read_text(encoding="utf-8")
    for name in [*action["inputs"], *action["outputs"]]:
        assert f"| `{name}` |" in doc, name
    for step in action["runs"]["steps"]:
        if "uses" in step:
            assert step["uses"] in doc, step["uses"]
    (workflow,) = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", doc, re.S) if "jobs:" in b]
    triggers = workflow.get("on") or workflow.get(True)
    assert "pull_request" in triggers and "pull_request_target" not in triggers
    assert workflow["permissions"]["contents"] == "read"


def test_every_test_security_md_cites_exists() -> None:
    """SECURITY.md maps each promise to its tests: a renamed or deleted test must not leave a promise unbacked."""
    security = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    tests_dir = ROOT / "tests"
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


def test_options_shown_on_each_page_are_the_defaults() -> None:
    """The TOML block of a family's page parses, and is exactly its built-in options."""
    import tomllib

    def plain(value):
        return [plain(v) for v in value] if isinstance(value, (list, tuple)) else value

    pages = rule_pages(discover())
    for family in discover():
        blocks = re.findall(r"```toml\n(.*?)\n```", pages[f"{family.id}.md"], re.S)
        if not family.defaults:
            assert not blocks, family.id
            continue
        (block,) = blocks
        shown = tomllib.loads(block)["rules"][family.id]
        assert shown == {k: plain(v) for k, v in family.defaults.items()}, family.id


# ------------------------------------------------------------------ samples quoted from the tool's output

CUT = "…"


def _quoted(sample: object, real: object, where: str = "$") -> None:
    """`sample`, a trimmed copy of `real` as a page quotes it, says nothing `real` does not:
    every key it shows is real and in the same order, every value equal, a string with `…`
    is the real one with parts cut out, a list is a prefix (a lone `…` item: more were cut)."""
    if isinstance(sample, dict):
        assert isinstance(real, dict), where
        assert all(k in real for k in sample), f"{where}: keys {sorted(set(sample) - set(real))} are not in the report"
        order = [k for k in real if k in sample]
        assert list(sample) == order, f"{where}: keys out of order: {list(sample)} (the report: {order})"
        for key, value in sample.items():
            _quoted(value, real[key], f"{where}.{key}")
    elif isinstance(sample, list):
        assert isinstance(real, list), where
        items = sample[:-1] if sample and sample[-1] == CUT else sample
        assert len(items) <= len(real) and (items is not sample or len(items) == len(real)), f"{where}: length"
        for n, value in enumerate(items):
            _quoted(value, real[n], f"{where}[{n}]")
    elif isinstance(sample, str) and CUT in sample and sample != real:
        position = 0
        for part in sample.split(CUT):
            found = real.find(part, position) if isinstance(real, str) else -1
            assert found >= 0, f"{where}: {sample!r} is not {real!r} with parts cut"
            position = found + len(part)
    else:
        assert sample == real, f"{where}: the page says {sample!r}, the report says {real!r}"


def _json_block(page: Path, opening: str) -> object:
    import json

    text = page.read_text(encoding="utf-8")
    start = text.index(opening)
    body = text[start: text.index("```", start)]
    return json.loads("\n".join(line.strip() for line in body.splitlines()))


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory) -> tuple[Path, Path]:
    from reviewer.cli import main

    out = tmp_path_factory.mktemp("demo")
    v5, v6 = out / "v5.json", out / "v6.json"
    assert main(["demo", "--format", f"json={v5}"]) == 1
    assert main(["demo", "--patch-name", "v6", "--format", f"json={v6}"]) == 0
    return v5, v6


def test_report_format_json_sample_is_the_real_demo_report(demo_json) -> None:
    import json

    sample = _json_block(DOCS / "report-format.md", '{\n  "schema": "reviewer-report/1"')
    real = json.loads(demo_json[0].read_text(encoding="utf-8"))
    assert list(sample) == list(real)  # every top-level key, in order
    # The page quotes one invariant and one finding: the real ones of the same id come first.
    for key in ("findings", "invariants"):
        shown = [item["id"] for item in sample[key] if item != CUT]
        real[key] = [*(item for i in shown for item in real[key] if item["id"] == i),
                     *(item for item in real[key] if item["id"] not in shown)]
    _quoted(sample, real)


def test_usage_delta_sample_is_what_reviewer_diff_prints(demo_json, capsys) -> None:
    import json

    from reviewer.cli import main

    capsys.readouterr()
    assert main(["diff", str(demo_json[0]), str(demo_json[1]), "--format", "json"]) == 0
    real = json.loads(capsys.readouterr().out)
    _quoted(_json_block(DOCS / "usage.md", '{"schema": "reviewer-delta/1"'), real)


def test_sample_checker_is_not_vacuous() -> None:
    real = {"a": 1, "b": ["x-long", "y"], "c": "abcdef"}
    _quoted({"a": 1, "b": ["x-…", CUT], "c": "ab…ef"}, real)
    for wrong in ({"a": 2}, {"b": ["y"]}, {"c": "ab…zz"}, {"b": ["x-long"]}, {"d": 1}, {"c": "abcdef", "a": 1}):
        with pytest.raises(AssertionError):
            _quoted(wrong, real)


def test_the_families_the_docs_list_are_the_families_that_run() -> None:
    ids = sorted(f.id for f in discover())
    readme = README.read_text(encoding="utf-8")
    table = readme[readme.index("## Invariant families"): readme.index("## Usage")]
    assert sorted(re.findall(r"^\| \[`([a-z-]+)`\]\(docs/rules/\1\.md\)", table, re.M)) == ids
    report_format = (DOCS / "report-format.md").read_text(encoding="utf-8")
    row = next(line for line in report_format.splitlines() if line.startswith("| `id` | string | the rule family: "))
    assert re.findall(r"`([a-z-]+)`", row.split("the rule family: ", 1)[1]) == ids
