"""Text a patch, a repository or a previous report controls is inert in every format.

A patch author writes suppression reasons, code a rule quotes, file names; a
previous report (`--previous`, `reviewer diff`) is a file anyone can hand
us. None of it may render as a link, an image, HTML, a mention, an issue
reference, emphasis or a heading, and a malformed previous report is refused
with one line naming the bad field, never an internal error.
"""

from __future__ import annotations

import html
import json
import re
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitrepo import make_change
from reviewer import review
from reviewer.cli import main
from reviewer.report.model import InvariantStatus, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Outcome
from reviewer.report.formats import renderer
from reviewer.report.markdown import text

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
SQL = (FIXTURES / "bounded-scan" / "_shared" / "packages" / "core" / "src" / "session" / "sql.ts").read_text()
SESSION = "packages/core/src/session"
MARKER = "<!-- reviewer:sticky-comment -->"
ZWSP = "\u200b"
HOSTILE = ("**Approved** ![x](https://evil.example/p.png) [link](https://evil.example) #1 GH-2 owner/repo#3 "
           "@someone <img src=x onerror=alert(1)> www.evil.example")
# The emphasis our own templates write; any other `*` outside code is live.
OUR_BOLD = re.compile(
    r"\*\*(Failure sequence:|Inputs proven:|Accepted by the base's|by a suppression this patch adds|Resolved|New|Still open|Since the previous review"
    r"|MERGE|DO-NOT-MERGE|Why DO-NOT-MERGE:|Must fix:|Not listed here"
    r"|\d+ suppressions? this patch adds(?: \(\d+ not honoured: (?:its finding still blocks|their findings still block)\))?:)\*\*"
)
# The only HTML our templates write: whole lines, fixed text.
OUR_HTML = re.compile(
    r"^(?:<details><summary>(?:Integrity checks \(\d+\)|Excerpt: (?:first \d+ of \d+ lines|\d+ lines?)"
    r"|Related locations \(\d+\))</summary>|</details>)$", re.M)
# What must never survive outside code in rendered Markdown.
LIVE = ("](", "![", "<img", "<", "https://", "http://", "www.", "@someone", "@admin", "#1", "GH-2", "**Approved**")


def _scan(comment: str = "") -> str:
    """An unbounded wake scan: bounded-scan/unbounded reports it on the `return` line."""
    return (
        'import { eq } from "drizzle-orm"\n'
        'import { Effect } from "effect"\n'
        'import { SessionInputTable as Inputs } from "./sql"\n'
        "\n"
        'export const waiting = Effect.fn("SessionInput.waiting")(function* (db: any) {\n'
        f"{comment}"
        "  return yield* db.select().from(Inputs).where(eq(Inputs.wake_pending, true)).all()\n"
        "})\n"
    )


def _change(tmp: Path, scan: str | None):
    base = {f"{SESSION}/sql.ts": SQL}
    patched = {**base, f"{SESSION}/input.ts": scan} if scan is not None else {**base, "README.md": "docs\n"}
    return make_change(tmp, base, patched)


def _review_args(repo, base: str, patch: Path) -> list[str]:
    return ["review", "--repo", str(repo.path), "--base", base, "--patch", str(patch), "--no-state"]


# -- a CommonMark reading of our output, to find what is outside code --------

_PUNCT = frozenset(string.punctuation)


def _outside_code(markdown: str) -> str:
    """The prose of `markdown`: fenced blocks and code spans removed, escapes kept as `\\x00`.

    Code spans pair as CommonMark pairs them: a backtick run that is not
    backslash-escaped opens, the next run of exactly its length closes.
    """
    prose_lines: list[str] = []
    fence = ""
    for line in markdown.replace(MARKER, "").splitlines():
        run = re.match(r"`{3,}|~{3,}", line)
        if fence:
            if run and run[0][0] == fence[0] and len(run[0]) >= len(fence) and not line[len(run[0]):].strip():
                fence = ""
            continue
        if run:
            fence = run[0]
            continue
        prose_lines.append(_line_outside_code(line))
    return "\n".join(prose_lines)


def _line_outside_code(s: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in _PUNCT:
            out.append("\x00")
            i += 2
            continue
        if s[i] != "`":
            out.append(s[i])
            i += 1
            continue
        end = i
        while end < len(s) and s[end] == "`":
            end += 1
        close = _closing_run(s, end, end - i)
        if close is None:
            out.append(s[i:end])
            i = end
        else:
            out.append(" CODE ")
            i = close + (end - i)
    return "".join(out)


def _closing_run(s: str, start: int, length: int) -> int | None:
    k = start
    while k < len(s):
        if s[k] != "`":
            k += 1
            continue
        m = k
        while m < len(s) and s[m] == "`":
            m += 1
        if m - k == length:
            return k
        k = m
    return None


def _code_spans(line: str) -> list[str]:
    spans = []
    for m in re.finditer(r"(?<![`\\])(`+)(?!`)(.+?)(?<!`)\1(?!`)", line):
        content = m[2]
        spans.append(content[1:-1] if content.startswith(" ") and content.endswith(" ") and content.strip() else content)
    return spans


def assert_inert(markdown: str) -> None:
    prose = OUR_HTML.sub("", _outside_code(markdown))
    for live in LIVE:
        assert live not in prose, f"{live!r} is live in: {next(l for l in prose.splitlines() if live in l)!r}"
    for line in prose.splitlines():
        # Left unescaped, these would open a link, emphasis, strikethrough or math.
        assert not re.search(r"[\[\]~$*]", OUR_BOLD.sub("", line)), line
        assert not re.search(r"@[A-Za-z0-9_-]|#\d|(?i:gh-\d)|://|(?i:www\.)", line), line
        for m in re.finditer("_", line):  # `_` stays unescaped only inside a word
            assert line[m.start() - 1 : m.start()].isalnum() and line[m.end() : m.end() + 1].isalnum(), line


# -- suppression reasons ------------------------------------------------------


def test_a_hostile_suppression_reason_is_a_code_span_in_markdown_and_comment(tmp_path, capsys) -> None:
    scan = _scan(f"  // reviewer-ignore: bounded-scan/unbounded -- {HOSTILE}\n")
    repo, base, patch, _ = _change(tmp_path, scan)
    md, comment, js = tmp_path / "r.md", tmp_path / "c.md", tmp_path / "r.json"
    args = _review_args(repo, base, patch) + ["--format", f"markdown={md}", "--format", f"comment={comment}",
                                              "--format", f"json={js}"]
    # A must-fix the patch tries to silence itself: the request is refused and still blocks.
    assert main(args) == 1, capsys.readouterr().err
    report = json.loads(js.read_text())
    assert [(s["rule"], s["reason"], s["added_by_patch"], s["honoured"]) for s in report["suppressed"]] == [
        ("bounded-scan/unbounded", HOSTILE, True, False)]
    for rendered in (md.read_text(), comment.read_text()):
        assert_inert(rendered)
        # The report says so under the finding and in its list of refused requests; the comment once.
        lines = [l for l in rendered.splitlines() if "Approved" in l]
        assert len(lines) == (1 if rendered.startswith(MARKER) else 2)
        for line in lines:
            assert "not honoured" in line and HOSTILE in _code_spans(line)  # shown whole, as code


# -- prose a rule quotes from the patch ---------------------------------------

QUOTED = [
    f"# FLAG heading {HOSTILE}",
    "- FLAG list item __strong__ ~~struck~~ $math$",
    "1. FLAG ordered",
    "> FLAG quote <!-- comment --> &amp; &#64;someone",
    "[x]: https://evil.example/defined FLAG",
    "FLAG `code <img src=x>` and ``a ` b`` then \\`not code` ``` fence \\",
    "=== FLAG",
]


def _quoting_family() -> Family:
    """A rule whose title and message quote the patched line, as real rules quote code."""

    def run(ctx) -> Outcome:
        found = []
        for f in ctx.changeset.files:
            for n, line in enumerate((f.patched_text or "").splitlines(), start=1):
                if "FLAG" in line:
                    found.append(ctx.finding("quote", title=line, message=line, location=Location(f.path, n, n),
                                             anchor=str(n), failure_sequence=(line, line)))
        return Outcome("quoted", tuple(found), examined=1)

    return Family("quoting", "q", (CheckSpec("quoting/quote", Severity.MUST_FIX, "q", "quotes"),), run)


def test_patch_text_a_rule_quotes_is_inert_and_still_readable(tmp_path) -> None:
    repo, base, patch, _ = make_change(tmp_path, {"a.md": "x\n"}, {"a.md": "x\n" + "\n".join(QUOTED) + "\n"})
    report = review.run(review.Request(repo=str(repo.path), base=base, patch=str(patch)), families=(_quoting_family(),)).report
    assert len(report.findings) == len(QUOTED)
    for fmt in ("markdown", "comment"):
        rendered = renderer(fmt)(report)
        assert_inert(rendered)
        assert rendered.startswith(MARKER if fmt == "comment" else "> ⛔ **DO-NOT-MERGE** — ")
        assert rendered.splitlines()[-1] == "DO-NOT-MERGE"
    markdown = renderer("markdown")(report)
    for quoted in QUOTED:
        # The message is on a line of its own: nothing in it may start a block there.
        line = next(l for l in markdown.splitlines() if l.startswith(text(quoted)))
        assert not re.match(r"[#>+=-]|\d+[.)]|\[|`{3}|~{3}|\*|_", line), line
    # `code` a rule quotes stays code, its content shown as written.
    assert "`code <img src=x>`" in markdown and "``a ` b``" in markdown


_ATOMS = ["`", "``", "\\", "[", "]", "(", ")", "!", "*", "_", "~", "$", "#", "@", "<", ">", "&", ":", "/", ".", "-",
          "+", "=", "|", "1", "a", "Z", "é", " ", "\n", "www.", "WWW.", "https://", "GH-", "gh-", "#12", "@admin",
          "<img src=x>", "![x](y)", "[l](https://e)", "&lt;", "&#64;"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_ATOMS), max_size=24))
def test_text_filter_output_has_no_live_markdown(atoms: list[str]) -> None:
    rendered = text("".join(atoms))
    assert "\n" not in rendered
    prose = _line_outside_code(rendered)
    assert not re.search(r"[\[\]*~$<`]|://|(?i:www\.)|@[A-Za-z0-9_-]|#\d|(?i:gh-\d)", prose), (rendered, prose)
    for m in re.finditer("_", prose):  # an unescaped `_` only inside a word, where it cannot emphasise
        assert 0 < m.start() < len(prose) - 1 and prose[m.start() - 1].isalnum() and prose[m.start() + 1].isalnum()
    assert not re.match(r"[#>+=-]|\d{1,9}[.)]", rendered)


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from([a for a in _ATOMS if "`" not in a]), max_size=24))
def test_text_filter_changes_how_prose_is_written_not_what_it_says(atoms: list[str]) -> None:
    value = "".join(atoms)
    rendered = text(value)
    # What a reader sees: escapes resolved, entities decoded, zero-width spaces invisible.
    seen = html.unescape(re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", rendered)).replace(ZWSP, "")
    assert seen == " ".join(value.split())


# -- previous reports ---------------------------------------------------------


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """Reports of two real reviews, made once: old has one must-fix finding, new none."""
    tmp = tmp_path_factory.mktemp("reports")
    old_repo, old_base, old_patch, _ = _change(tmp / "old", _scan())
    new_repo, new_base, new_patch, _ = _change(tmp / "new", None)
    old, new = tmp / "old.json", tmp / "new.json"
    assert main(_review_args(old_repo, old_base, old_patch) + ["--format", f"json={old}"]) == 1
    assert main(_review_args(new_repo, new_base, new_patch) + ["--format", f"json={new}"]) == 0
    blocking = [f["rule"] for f in json.loads(old.read_text())["findings"] if f["severity"] == "must-fix"]
    assert blocking == ["bounded-scan/unbounded"]
    return old.read_text(), new, (new_repo, new_base, new_patch)


@pytest.fixture
def two_reports(reviewed, tmp_path, capsys):
    """(old.json, new.json, the new review's inputs); old.json is this test's own copy to rewrite."""
    old_text, new, inputs = reviewed
    old = tmp_path / "old.json"
    old.write_text(old_text)
    capsys.readouterr()
    return old, new, inputs


def _rewrite(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def _set(*keys, value):
    def change(data):
        target = data
        for key in keys[:-1]:
            target = target[key]
        target[keys[-1]] = value
    return change


def _delete(*keys):
    def change(data):
        target = data
        for key in keys[:-1]:
            target = target[key]
        del target[keys[-1]]
    return change


@pytest.mark.parametrize(("change", "message"), [
    (_set("findings", 0, value="a finding as a string"), "findings[0] must be an object"),
    (_set("findings", 0, "line", value=[7]), "findings[0].line must be an integer or null"),
    (_set("findings", 0, "line", value=True), "findings[0].line must be an integer or null"),
    (_set("findings", 0, "title", value=7), "findings[0].title must be a string"),
    (lambda d: d["findings"].insert(1, None), "findings[1] must be an object"),
    (_delete("findings", 0, "id"), "findings[0].id is missing"),
    (_set("findings", 0, "rule", value={"x": 1}), "findings[0].rule must be a non-empty string"),
    (_set("findings", 0, "path", value=3), "findings[0].path must be a string or null"),
    (_set("findings", 0, "severity", value="<img src=x onerror=alert(1)> @admin"),
     "findings[0].severity must be one of must-fix, should-fix, consider"),
    (_set("findings", value={"0": {}}), "findings must be a list"),
    (_set("patch", "sha256", value=None), "patch.sha256 must be 64 lowercase hex digits"),
    (_set("patch", "name", value=["v5.patch"]), "patch.name must be a string"),
    (_set("patch", value="v5.patch"), "patch must be an object"),
    (_delete("base"), "base is missing"),
    (_set("base", value="<img src=x onerror=alert(1)>"), "base must be a 40-hex commit id"),
])
def test_a_malformed_previous_report_is_refused_naming_the_field(two_reports, capsys, change, message) -> None:
    old, new, _ = two_reports
    _rewrite(old, change)
    assert main(["diff", str(old), str(new)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"reviewer: {old}: {message}\n"


def test_a_malformed_previous_report_is_refused_before_a_review(two_reports, capsys) -> None:
    old, _, (repo, base, patch) = two_reports
    _rewrite(old, _set("findings", 0, "line", value=[7]))
    assert main(_review_args(repo, base, patch) + ["--previous", str(old)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"reviewer: {old}: findings[0].line must be an integer or null\n"


def test_not_a_report_at_all_is_refused(tmp_path, two_reports, capsys) -> None:
    _, new, _ = two_reports
    for content in ("[]", '{"schema": "reviewer-report/2"}', "[" * 100_000, '{"schema": ' + "9" * 5000 + "}", "{"):
        bad = tmp_path / "bad.json"
        bad.write_text(content)
        assert main(["diff", str(bad), str(new)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"reviewer: {bad}: not a ") and err.count("\n") == 1 and "internal error" not in err


HOSTILE_FIELD = "<img src=x onerror=alert(1)> @admin ![x](https://evil.example/p.png) #1"


def _hostile_previous(data: dict) -> None:
    finding = data["findings"][0]
    finding["title"] = HOSTILE_FIELD + "\n::set-output name=x::y"
    finding["rule"] = HOSTILE_FIELD
    finding["path"] = HOSTILE_FIELD + ".ts"
    data["patch"]["name"] = HOSTILE_FIELD


def test_a_hostile_but_well_formed_previous_report_renders_inert(two_reports, capsys) -> None:
    old, new, (repo, base, patch) = two_reports
    _rewrite(old, _hostile_previous)
    assert main(["diff", str(old), str(new)]) == 0
    diff = capsys.readouterr().out
    assert "**Resolved**" in diff and "(must-fix)" in diff
    assert_inert(diff)
    for fmt in ("markdown", "comment"):
        assert main(_review_args(repo, base, patch) + ["--previous", str(old), "--format", fmt]) == 0
        rendered = capsys.readouterr().out
        assert "resolved" in rendered.lower() and "onerror" in rendered  # listed, as text or code
        assert_inert(rendered)
    assert main(_review_args(repo, base, patch) + ["--previous", str(old), "--format", "github"]) == 0
    # The test repository has no lease API, so lease-renewal adds its idioms-not-found note.
    lines = [line for line in capsys.readouterr().out.splitlines() if "idioms-not-found" not in line]
    # The verdict first, then one notice per resolved finding: the title's
    # newline could not start a `::set-output` command of its own.
    resolved = len([f for f in json.loads(Path(old).read_text())["findings"] if f["severity"] != "consider"])
    assert len(lines) == resolved + 1 and lines[1].startswith("::notice title=resolved%3A <img src=x onerror=alert(1)> @admin")
    assert all(line.startswith("::notice title=resolved%3A ") for line in lines[1:])
    assert "%0A::set-output" in lines[1] and lines[0].startswith("::notice title=reviewer%3A MERGE::reviewer")
