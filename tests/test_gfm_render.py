"""The Markdown report and the pull-request comment as GitHub renders them.

cmark-gfm (GitHub's own Markdown renderer, through `cmarkgfm`) turns our
output into HTML with GitHub's extensions, and an HTML parser reads that
back: tables have their rows and columns, code spans hold exactly the code,
`<details>` blocks are balanced and hold what they fold, failure sequences
are Mermaid blocks, locations are links to the reviewed commit, and nothing
a patch controls becomes a link, a mention, a heading or HTML. Raw HTML is
let through (GitHub sanitises it later), so any tag a patch smuggled in
would show up here.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

# A test dependency (pyproject's `test` extra): missing, these tests fail rather than skip.
import cmarkgfm
import pytest
from cmarkgfm.cmark import Options
from hypothesis import given, settings
from hypothesis import strategies as st

from gitrepo import make_change, sample_repo
from reviewer import review
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.formats import renderer
from reviewer.report.markdown import ZWSP, code, span
from reviewer.report.model import Links, Location, PullRequest, Report, Severity

EXTENSIONS = ["table", "strikethrough", "autolink", "tagfilter"]
VOID = frozenset({"br", "hr", "img", "input", "wbr", "meta", "link", "source"})
# Every element our output may produce; anything else came from somewhere else.
OURS = frozenset({"p", "h1", "h2", "h3", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "ul", "ol", "li",
                  "strong", "blockquote", "details", "summary", "a", "hr"})
REPO_URL = "https://github.com/octo/repo"
HEAD = "c0ffee" + "0" * 34
RUN_URL = "https://github.com/octo/repo/actions/runs/42"


# -- an HTML reading of the rendered Markdown ---------------------------------


@dataclass
class El:
    tag: str
    attrs: dict[str, str | None]
    children: list[El | str] = field(default_factory=list)

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def all(self, tag: str) -> list[El]:
        found = []
        for c in self.children:
            if isinstance(c, El):
                if c.tag == tag:
                    found.append(c)
                found += c.all(tag)
        return found

    def elements(self) -> list[El]:
        return [c for c in self.children if isinstance(c, El)]

    def prose(self) -> list[str]:
        """Text nodes outside code: where a mention, reference or autolink would be live."""
        out: list[str] = []
        for c in self.children:
            if isinstance(c, str):
                out.append(c)
            elif c.tag not in ("code", "pre"):
                out += c.prose()
        return out


class _Tree(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = El("root", {})
        self.stack = [self.root]
        self.comments: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        el = El(tag, dict(attrs))
        self.stack[-1].children.append(el)
        if tag not in VOID:
            self.stack.append(el)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        assert self.stack[-1].tag == tag, f"</{tag}> closes <{self.stack[-1].tag}>"
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


def gfm(markdown: str) -> str:
    return cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG, extensions=EXTENSIONS)


def parse(markdown: str) -> tuple[El, list[str]]:
    tree = _Tree()
    tree.feed(gfm(markdown))
    tree.close()
    assert tree.stack == [tree.root], f"unclosed: {[e.tag for e in tree.stack[1:]]}"
    return tree.root, tree.comments


def table_rows(table: El) -> tuple[list[str], list[list[El]]]:
    (thead,) = table.all("thead")
    header = [th.text() for th in thead.all("th")]
    bodies = table.all("tbody")
    rows = [tr.all("td") for tr in bodies[0].all("tr")] if bodies else []
    return header, rows


def assert_only_our_markup(root: El, hrefs: set[str]) -> None:
    """No element, link, mention, reference or autolink the patch could have made."""
    tags = {el.tag for el in _descendants(root)}
    assert tags <= OURS, tags - OURS
    for a in root.all("a"):
        assert a.attrs.get("href") in hrefs, a.attrs
    for chunk in root.prose():
        assert not re.search(r"@[A-Za-z0-9_-]|#\d|(?i:gh-\d)|://|(?i:www\.)", chunk), chunk


def _descendants(el: El) -> list[El]:
    out = []
    for c in el.elements():
        out.append(c)
        out += _descendants(c)
    return out


def code_texts(root: El) -> list[str]:
    return [c.text() for c in root.all("code")]


# -- the demo ------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Report:
    git_dir, base, patches = sample_repo(tmp_path_factory.mktemp("sample"))
    return review.run(review.Request(repo=str(git_dir), base=base, patch=str(patches["v5"]))).report


def test_demo_report_tables_have_their_rows_and_columns(demo) -> None:
    root, _ = parse(renderer("markdown")(demo))
    inputs, invariants, files = root.all("table")
    header, rows = table_rows(inputs)
    assert header == ["input", "value", "check"] and len(rows) == len(demo.checks)
    assert all(len(r) == 3 for r in rows)
    header, rows = table_rows(invariants)
    assert header == ["invariant", "status", "basis"]
    assert [r[0].text() for r in rows] == [i.id for i in demo.invariants]
    assert [r[1].text() for r in rows] == [f"❌ violated ({len(i.findings)})" for i in demo.invariants]
    header, rows = table_rows(files)
    assert header == ["file", "status", "+/−"]
    assert [r[0].text() for r in rows] == [f.path for f in demo.files]


def test_demo_report_code_is_exact_and_never_entity_escaped(demo) -> None:
    root, _ = parse(renderer("markdown")(demo))
    codes = code_texts(root)
    for f in demo.findings:
        assert span(f.location) in codes
        for rel in f.related:
            assert span(rel) in codes
    for text in codes:
        # Decoded once by the parser: an entity left here was escaped twice.
        assert not re.search(r"&(?:lt|gt|amp|quot|#\d+);", text), text
    # An excerpt is the patched file's lines, byte for byte.
    excerpts = [pre.text() for pre in root.all("pre") if pre.attrs.get("lang") in ("ts", "json")]
    for f in demo.findings:
        assert "".join(line + "\n" for _, line in demo.excerpts[f.id]) in excerpts


def test_demo_report_details_are_balanced_and_fold_what_they_say(demo) -> None:
    md = renderer("markdown")(demo)
    assert md.count("<details>") == md.count("</details>") > 0
    root, _ = parse(md)  # parse() fails on any unbalanced element
    details = root.all("details")
    summaries = []
    for d in details:
        first, *rest = d.elements()
        assert first.tag == "summary" and rest, d
        summaries.append(first.text())
        if first.text() == "Integrity checks (7)":
            (table,) = rest  # every check passed: the table folds behind the one-line summary
            assert table.tag == "table"
        elif first.text().startswith("Excerpt: "):
            assert rest[0].tag == "pre" and rest[0].attrs.get("lang") in ("ts", "json")
        else:
            assert re.fullmatch(r"Related locations \(\d+\)", first.text()) and rest[0].tag == "ul"
    assert summaries[0] == "Integrity checks (7)"
    assert "Excerpt: first 12 of 14 lines" in summaries and "Related locations (5)" in summaries


def test_demo_report_lists_each_failure_sequence_in_order(demo) -> None:
    """A one-lifeline diagram said no more than the text and took a third of the report:
    each failure sequence is a numbered list of its steps, and nothing is drawn."""
    md = renderer("markdown")(demo)
    assert "```mermaid" not in md
    root, _ = parse(md)
    lists = root.all("ol")
    with_sequence = [f for f in demo.findings if f.failure_sequence]
    assert len(lists) == len(with_sequence) == demo.count(Severity.MUST_FIX)
    for f, ol in zip(with_sequence, lists):
        assert [li.text() for li in ol.all("li")] == [" ".join(_as_read(step).split()) for step in f.failure_sequence]


def _as_read(step: str) -> str:
    """A step as it reads rendered: code spans without their backticks."""
    return re.sub(r"`([^`]+)`", r"\1", step)


def test_demo_report_and_comment_have_only_our_markup(demo) -> None:
    for fmt in ("markdown", "comment"):
        root, comments = parse(renderer(fmt)(demo))
        assert_only_our_markup(root, hrefs=set())
        assert comments == ([" reviewer:sticky-comment "] if fmt == "comment" else [])


def test_demo_comment_leads_with_the_banner_and_why(demo) -> None:
    root, _ = parse(renderer("comment")(demo))
    blockquote, why, causes = root.elements()[:3]
    assert blockquote.tag == "blockquote" and blockquote.text().strip() == (
        f"⛔ DO-NOT-MERGE — 13 must-fix, 1 should-fix, 0 consider · 9 of 9 families examined the change · base {demo.base[:12]} · patch b853ebc32ba7 · 13 files")
    lines = [li.text() for li in causes.all("li")]
    assert why.text() == "Why DO-NOT-MERGE:" and len(lines) == 4 and lines[-1] == "8 more must-fix findings"
    # What to fix first leads: the claim released while the old run still executes.
    assert lines[0] == ("interruptedCommit releases the claim before the run's finalizers finish at "
                        "packages/core/src/session/runner/llm.ts:44 (two owners of one run)")
    assert root.elements()[-1].text() == "DO-NOT-MERGE"


# -- a hostile patch, with links ----------------------------------------------

# Everything that could end a link destination or text, open another link, or run script.
PATH = "src/we ird (1)<x>[y]`z`#h?q&amp;)](javascript:alert(1)).ts"
PATH_URL = "src/we%20ird%20%281%29%3Cx%3E%5By%5D%60z%60%23h%3Fq%26amp%3B%29%5D%28javascript%3Aalert%281%29%29.ts"
TEMPLATE_LITERAL = "`${x}`"
SPACED = "size > 100  ?  100 : size || 1"
SOURCE = "".join(f"const v{n} = {TEMPLATE_LITERAL} // <b>@someone</b> ``` </details>\n" for n in range(1, 15))
STEPS = (
    "a; b #1 %%{init: {}}%% with `code; here`",
    "end",
    "A-->>B: x ->> y\nNote over A: injected",
    "``` </details> <script>alert(1)</script> &lt;",
    f"{TEMPLATE_LITERAL} wrap:nowrap: @someone",
)
HOSTILE = "**Approved** [link](https://evil.example) #1 @someone <img src=x> www.evil.example"


def _hostile_family() -> Family:
    def run(ctx) -> Outcome:
        finding = ctx.finding(
            "x", title=f"Title {HOSTILE}",
            message=f"Quoted `` {TEMPLATE_LITERAL} `` and `{SPACED}` and {HOSTILE} <details>",
            location=Location(PATH, 2, 14),
            related=tuple(Location(PATH, n, n, f"note {n} {HOSTILE}") for n in range(1, 6)),
            failure_sequence=STEPS, anchor="a")
        return Outcome(f"summary | {HOSTILE}", (finding,), examined=1)

    return Family("hostile", "h", (CheckSpec("hostile/x", Severity.MUST_FIX, "t", "s"),), run)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Report:
    tmp = tmp_path_factory.mktemp("hostile")
    repo, base, patch, _ = make_change(tmp, {"README.md": "x\n"}, {PATH: SOURCE})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)),
                        families=(_hostile_family(),)).report
    pr = PullRequest("main", "feature", base, HEAD, base, number=7, head_branch="feature")
    return dataclasses.replace(report, links=Links(REPO_URL, HEAD, RUN_URL), pull_request=pr)


def _blob(first: int, last: int) -> str:
    anchor = f"#L{first}" if first == last else f"#L{first}-L{last}"
    return f"{REPO_URL}/blob/{HEAD}/{PATH_URL}{anchor}"


def test_every_location_is_a_permalink_whose_text_is_the_path(hostile) -> None:
    root, _ = parse(renderer("markdown")(hostile))
    links = [(a.attrs["href"], a.text()) for a in root.all("a")]
    expected = [(_blob(2, 14), f"{PATH}:2-14")] + [(_blob(n, n), f"{PATH}:{n}") for n in range(1, 6)]
    assert links == expected
    for a in root.all("a"):
        (inner,) = a.elements()
        assert inner.tag == "code"  # the link text is the path as code, nothing else


def test_the_comment_links_its_locations_and_the_job_summary(hostile) -> None:
    root, _ = parse(renderer("comment")(hostile))
    links = [(a.attrs["href"], a.text()) for a in root.all("a")]
    assert links == [(_blob(2, 14), f"{PATH}:2-14"), (RUN_URL, "job summary")]
    banner = root.elements()[0].text()
    assert f"head {HEAD[:12]}" in banner and "patch" not in banner


def test_hostile_text_renders_inert_with_code_as_written(hostile) -> None:
    md = renderer("markdown")(hostile)
    root, _ = parse(md)
    hrefs = {_blob(2, 14)} | {_blob(n, n) for n in range(1, 6)}
    assert_only_our_markup(root, hrefs)
    assert [h.text() for h in root.all("h1")] == [f"Review of {hostile.patch.name}"]
    assert [h.text() for h in root.all("h2")] == ["Invariants", "MUST-FIX", "SHOULD-FIX", "CONSIDER", "Changed files"]
    assert len(root.all("h3")) == 1
    codes = code_texts(root)
    assert TEMPLATE_LITERAL in codes and SPACED in codes  # template literal whole, spaces kept
    # The invariant's summary stays in its cell: the `|` it carries splits nothing.
    _, rows = table_rows(root.all("table")[1])
    assert [len(r) for r in rows] == [3] and rows[0][2].text().startswith("summary | **Approved**")
    # The excerpt is folded (14 lines) and exact; what it quotes cannot close the fence or the <details>.
    (excerpt,) = [pre for pre in root.all("pre") if pre.attrs.get("lang") == "ts"]
    assert excerpt.text() == "".join(SOURCE.splitlines(keepends=True)[1:13])
    # Five related locations are folded too.
    summaries = [s.text() for s in root.all("summary")]
    assert summaries == ["Integrity checks (7)", "Excerpt: first 12 of 13 lines", "Related locations (5)"]
    assert_only_our_markup(parse(renderer("comment")(hostile))[0], {_blob(2, 14), RUN_URL})


def test_failure_steps_cannot_break_out_of_their_list(hostile) -> None:
    root, _ = parse(renderer("markdown")(hostile))
    (ol,) = root.all("ol")
    items = ol.all("li")
    # One item per step: a newline in a step started no item, block or heading of its own.
    assert len(items) == len(STEPS)
    for step, li in zip(STEPS, items):
        assert li.text().replace(ZWSP, "") == " ".join(_as_read(step).replace("\n", " ").split())


# -- code spans ----------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`ab <>&|\\*_[]()#@ \t$~!")), min_size=1, max_size=20))
def test_a_code_span_renders_exactly_its_content(value: str) -> None:
    """Inline and in a table cell, `code()` shows the value as written, never entity-escaped."""
    (p,) = parse(code(value))[0].elements()
    (span_el,) = p.elements()
    assert span_el.tag == "code" and span_el.text() == value and p.text() == value
    table = "| a |\n|---|\n| " + code(value).replace("|", "\\|") + " |\n"
    _, rows = table_rows(parse(table)[0].all("table")[0])
    (cell,) = rows[0]
    assert [c.tag for c in cell.elements()] == ["code"] and cell.text() == value


def test_plurals_and_empty_sections_read_as_sentences(hostile) -> None:
    one = dataclasses.replace(hostile, files=(), invariants=())
    root, _ = parse(renderer("markdown")(one))
    assert len(root.all("table")) == 1  # only the inputs: no table without rows
    paragraphs = [p.text() for p in root.all("p")]
    assert "No rule family ran: only the inputs were checked." in paragraphs
    assert "No file changed." in paragraphs
    banner = root.elements()[0].text()
    assert "1 must-fix, 0 should-fix, 0 consider" in banner and banner.strip().endswith("· 1 file")
    (why,) = [li.text() for li in root.elements()[2].all("li")]
    assert why.startswith("Title **Approved**") and why.endswith(".ts:2 (hygiene)")


def test_link_destinations_from_configuration_cannot_break_out_either(hostile) -> None:
    """`--link-base` and the run URL come from the environment; they are written as safely as paths."""
    odd = dataclasses.replace(hostile, links=Links("https://example.com/a b)(<c>`", HEAD, "javascript:alert(1)"))
    root, _ = parse(renderer("markdown")(odd))
    hrefs = [a.attrs["href"] for a in root.all("a")]
    assert len(hrefs) == 6
    assert all(h.startswith(f"https://example.com/a%20b%29%28%3Cc%3E%60/blob/{HEAD}/{PATH_URL}#L") for h in hrefs)
    comment, _ = parse(renderer("comment")(odd))
    # Not a web URL: the job summary is named, not linked.
    assert [a.attrs["href"] for a in comment.all("a")] == [hrefs[0]]
    assert comment.elements()[-2].text() == "The full report is in the job summary."
