"""`reviewer rules --explain ID`: what a rule checks, why, a bad and a good example.

Also the rules reference built from the same registry: docs/rules/ (one page per
family or built-in group, `python -m reviewer.engine.explain --write-docs docs/rules`)
and `reviewer rules --markdown`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from reviewer.errors import ReviewerError
from reviewer.engine.api import CheckGroup, CheckSpec, Family
from reviewer.engine.registry import catalog


def _vocab_mark(option) -> str:
    """Vocabulary options say so: left unset, they may be inferred from the base tree (docs/configuration.md)."""
    return "; vocabulary: inferred from the base tree when unset and the defaults name nothing there" if option.vocabulary else ""

def explain(families: tuple[Family, ...], rule_id: str) -> str:
    """What `rule_id` (a family, a built-in group such as `integrity`, or any check) is, why, with examples."""
    groups = catalog(families)
    for group in groups:
        if rule_id == group.id:
            lines = [f"{group.id}: {group.summary}", "", "Checks:"]
            lines += [f"  {s.id:<48} {s.severity.value:<10} {s.summary}" for s in group.checks]
            if group.family is not None and group.family.options:
                lines += ["", f"Options ([rules.{group.id}] in reviewer.toml):"]
                for option in group.family.options:
                    lines += [f"  {option.name} = {_toml_value(option.default)}",
                              f"      {option.description} ({option.kind.value}{_vocab_mark(option)})"]
            if group.locked:
                lines += ["", f"Configuration: {group.locked}."]
            return "\n".join(lines) + "\n"
        spec = group.check(rule_id)
        if spec is not None:
            out = [f"{spec.id} ({spec.severity.value})", "", spec.title, "", f"What it checks: {spec.summary}"]
            if spec.impact is not None:
                out += ["", f"Impact when merged: {spec.impact.label} (findings are ordered by it)"]
            if spec.why:
                out += ["", f"Why it matters: {spec.why}"]
            if spec.bad:
                out += ["", "Bad:", *("    " + ln for ln in spec.bad.strip("\n").splitlines())]
            if spec.good:
                out += ["", "Good:", *("    " + ln for ln in spec.good.strip("\n").splitlines())]
            locked = group.locked_for(spec.id)
            if locked:
                out += ["", f"Configuration: {locked}."]
            return "\n".join(out) + "\n"
    known = sorted([g.id for g in groups] + [s.id for g in groups for s in g.checks])
    raise ReviewerError(f"--explain {rule_id!r}: no such rule (try `reviewer rules`; known: {', '.join(known[:8])}...)")


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # A JSON string is a valid TOML basic string (same escapes, \uXXXX included).
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return str(value)


# ------------------------------------------------------------------ the rules reference (docs/rules/)

GENERATED = "<!-- Generated from the rule registry by `python -m reviewer.engine.explain --write-docs docs/rules`. Do not edit. -->"
REGENERATE = "python -m reviewer.engine.explain --write-docs docs/rules"
INDEX = "README.md"


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in `text`, so an example cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def _block(text: str, lang: str = "") -> list[str]:
    body = text.strip("\n")
    fence = _fence(body)
    return [fence + lang, body, fence]


def anchor(rule_id: str) -> str:
    """The HTML anchor of a check on its page (unique across the whole reference)."""
    return rule_id.replace("/", "-")


def _page_name(group: CheckGroup) -> str:
    return f"{group.id}.md"


def group_page(group: CheckGroup, level: int = 1) -> str:
    """One group's page: the family (or built-in group), its options, then each check Ruff-style."""
    h = "#" * level
    kind = "Built-in checks" if group.builtin else "Rule family"
    out = [f"{h} `{group.id}`", "", f"{kind}. {group.summary}", ""]
    out += ["| check | default severity | reports |", "|---|---|---|"]
    out += [f"| [`{s.id}`](#{anchor(s.id)}) | {s.severity.value} | {_cell(s.title)} |" for s in group.checks]
    out += [""]
    family = group.family
    if family is not None and family.options:
        out += [f"{h}# Options", "",
                f"Set under `[rules.{group.id}]` in `reviewer.toml` (see [configuration](../configuration.md)); "
                "unknown keys and values of the wrong kind are an error. The defaults describe the opencode idioms:", ""]
        toml = [f"[rules.{group.id}]"]
        for option in family.options:
            toml += [f"# {option.description} ({option.kind.value}{_vocab_mark(option)})",
                     f"{option.name} = {_toml_value(option.default)}"]
        out += _block("\n".join(toml), "toml")
        out += [""]
    if group.locked:
        out += [f"{h}# Configuration", "", f"These {_lock_sentence(group.locked)}", ""]
    for spec in group.checks:
        locked = group.locked or group.locked_for(spec.id)
        severity = f"Severity: {spec.severity.value} (fixed)" if locked else f"Default severity: {spec.severity.value}"
        impact = f" Impact: {spec.impact.label}." if spec.impact is not None else ""
        out += [f'<a id="{anchor(spec.id)}"></a>', "", f"{h}# `{spec.id}`", "", f"**{spec.title}.** {severity}.{impact}", ""]
        out += [f"{h}## What it checks", "", spec.summary, ""]
        if spec.why:
            out += [f"{h}## Why it matters", "", spec.why, ""]
        if spec.bad or spec.good:
            out += [f"{h}## Example", ""]
            if spec.bad:
                out += ["Bad:", "", *_block(spec.bad), ""]
            if spec.good:
                out += ["Good:", "", *_block(spec.good), ""]
        if locked and not group.locked:
            out += [f"{h}## Configuration", "", f"This check {_lock_sentence(locked)}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def _lock_sentence(reason: str) -> str:
    """'integrity checks can never be ...: why' read as the end of a sentence starting 'These'/'This check'."""
    _, _, rest = reason.partition(" can never ")
    return f"can never {rest}." if rest else f"{reason}."


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rules_index(groups: tuple[CheckGroup, ...]) -> str:
    """docs/rules/README.md: every group and check, linking to its page."""
    out = [GENERATED, "", "# Rules reference", "",
           "Every check a report can name, by group: the rule families (one module each under `rules/`), "
           "then the checks the pipeline raises itself. `reviewer rules` prints the same list, "
           "`reviewer rules --explain ID` one entry of it. Severities are the defaults; "
           "[configuration](../configuration.md) says how to re-rate or disable a family's checks.", ""]
    out += ["| group | checks | what it guards |", "|---|---|---|"]
    out += [f"| [`{g.id}`]({_page_name(g)}) | {len(g.checks)} | {_cell(g.summary)} |" for g in groups]
    out += ["", "## Every check", "", "| check | default severity | reports |", "|---|---|---|"]
    out += [f"| [`{s.id}`]({_page_name(g)}#{anchor(s.id)}) | {s.severity.value} | {_cell(s.title)} |" for g in groups for s in g.checks]
    return "\n".join(out) + "\n"


def _page_text(group: CheckGroup) -> str:
    return GENERATED + "\n\n" + group_page(group)


def rule_pages(families: tuple[Family, ...]) -> dict[str, str]:
    """docs/rules/ as it must be: file name -> content, the index and one page per group of the catalog."""
    groups = catalog(families)
    pages = {INDEX: rules_index(groups)}
    pages.update({_page_name(g): _page_text(g) for g in groups})
    return pages


# ------------------------------------------------------------------ sections of the reference (SARIF helpUri)

_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_HTML_TAG = re.compile(r"<[^>]*>")
_HEADING = re.compile(r"#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")


def _heading_text(source: str) -> str:
    """A heading's text as GitHub renders it: code spans keep their content, HTML tags vanish."""
    out, last = [], 0
    for match in _CODE_SPAN.finditer(source):
        out.append(_HTML_TAG.sub("", source[last:match.start()]))
        body = match.group(2)
        # CommonMark drops one space each side when both are there (`` `x` ``).
        out.append(body[1:-1] if len(body) > 2 and body[0] == body[-1] == " " and body.strip() else body)
        last = match.end()
    out.append(_HTML_TAG.sub("", source[last:]))
    return "".join(out).strip()


def _slug(text: str) -> str:
    """GitHub's heading id: lower case, everything but letters, digits, marks, `-`, `_`
    and spaces dropped, each space a dash (github-slugger)."""
    import unicodedata

    kept = "".join(ch for ch in text.lower()
                   if ch in "-_ " or unicodedata.category(ch)[0] in "LNM")
    return kept.replace(" ", "-")


def heading_anchors(markdown: str) -> list[tuple[str, str]]:
    """(heading source, anchor) for every ATX heading outside code fences, in order,
    with GitHub's `-1`, `-2` suffixes for repeated slugs."""
    seen: dict[str, int] = {}
    out: list[tuple[str, str]] = []
    fence = ""
    for line in markdown.split("\n"):
        run = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if fence:
            if run and line.strip() == run.group(1) and run.group(1)[0] == fence[0] and len(run.group(1)) >= len(fence):
                fence = ""
            continue
        if run:
            fence = run.group(1)
            continue
        match = _HEADING.match(line)
        if match is None:
            continue
        base = _slug(_heading_text(match.group(1)))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.append((match.group(1), base if count == 0 else f"{base}-{count}"))
    return out


def help_paths(families: tuple[Family, ...]) -> dict[str, str]:
    """Check id -> `<page>.md#<anchor>`, its section in the rules reference relative to
    docs/rules/, the anchor taken from the heading its generated page gives it. Where
    docs/rules/ is published is not known here (reviewer/report/sarif.py `rule_docs_base`)."""
    uris: dict[str, str] = {}
    for group in catalog(families):
        anchors: dict[str, str] = {}
        for source, anchor_id in heading_anchors(_page_text(group)):
            anchors.setdefault(source, anchor_id)
        for spec in group.checks:
            uris[spec.id] = f"{_page_name(group)}#{anchors[f'`{spec.id}`']}"
    return uris


def help_markdown(group: CheckGroup, spec: CheckSpec) -> str:
    """What `reviewer rules --explain` says of `spec`, as Markdown (SARIF `help.markdown`)."""
    locked = group.locked_for(spec.id)
    severity = f"Severity: {spec.severity.value} (fixed)" if locked else f"Default severity: {spec.severity.value}"
    out = [f"**{spec.title}.** {severity}.", "", f"**What it checks.** {spec.summary}"]
    if spec.why:
        out += ["", f"**Why it matters.** {spec.why}"]
    if spec.bad:
        out += ["", "Bad:", "", *_block(spec.bad)]
    if spec.good:
        out += ["", "Good:", "", *_block(spec.good)]
    if locked:
        out += ["", f"**Configuration.** {locked[0].upper()}{locked[1:]}."]
    return "\n".join(out) + "\n"


def write_rule_pages(directory: str | Path, families: tuple[Family, ...]) -> list[Path]:
    """Write docs/rules/ and remove generated pages of groups that no longer exist; returns the files written."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    pages = rule_pages(families)
    for stale in sorted(root.glob("*.md")):
        if stale.name not in pages and stale.read_text(encoding="utf-8").startswith(GENERATED):
            stale.unlink()
    written = []
    for name, text in pages.items():
        path = root / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def reference(families: tuple[Family, ...]) -> str:
    """The whole rules reference in one Markdown document (`reviewer rules --markdown`)."""
    return "\n".join(group_page(g, level=2) for g in catalog(families))


def main(argv: list[str] | None = None) -> int:
    """`python -m reviewer.engine.explain --write-docs DIR`: regenerate the rules reference pages."""
    import argparse

    from reviewer.engine.registry import discover

    parser = argparse.ArgumentParser(prog="python -m reviewer.engine.explain", description=main.__doc__)
    parser.add_argument("--write-docs", metavar="DIR", required=True, help="directory of the rule pages (docs/rules)")
    args = parser.parse_args(argv)
    for path in write_rule_pages(args.write_docs, discover()):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
