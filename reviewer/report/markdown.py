"""`--format markdown`: the report maintainers read, rendered from templates/report.md.j2.

Everything that comes from the patch (paths, code, messages that quote code)
is passed through filters that keep it from closing fences, injecting HTML,
pinging people or forging the verdict line.
"""

from __future__ import annotations

import functools
import re
from importlib import resources

import jinja2

from reviewer.report.model import CheckStatus, Delta, InvariantStatus, Report, Severity

_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_LONGEST_TICKS = re.compile(r"`+")
# Prose characters that start Markdown inline syntax: links and images (`[`,
# `]`), emphasis (`*`; `_` is handled apart), strikethrough, math, code. The
# backslash is one of them, so a backslash in the value cannot escape ours.
_INLINE_SYNTAX = re.compile(r"[\\`*\[\]~$]")
_UNDERSCORE = re.compile(r"_")
# GitHub links these in rendered text, where a backslash escape no longer
# exists, so a zero-width space goes in between instead.
_AUTOLINK_SCHEME = re.compile(r"://")
_AUTOLINK_WWW = re.compile(r"(?i)(www)(\.)")
_ISSUE_REF = re.compile(r"#(?=\d)")
_GH_REF = re.compile(r"(?i)(gh-)(?=\d)")
# What turns the first characters of a line into a block: heading, list,
# thematic break, setext underline, ordered list (`1.` / `1)`); `*`, `_`,
# `~` and backticks are escaped wherever they are, `>` becomes `&gt;`.
_BLOCK_START = re.compile(r"[#+=-]|(?P<number>\d{1,9})[.)]")
ZWSP = "\u200b"

_CHECK_ICON = {CheckStatus.PASS: "✅", CheckStatus.FAIL: "❌", CheckStatus.SKIP: "➖"}
_INVARIANT_ICON = {
    InvariantStatus.VERIFIED: "✅ verified",
    InvariantStatus.VIOLATED: "❌ violated",
    InvariantStatus.PRE_EXISTING: "⚠️ pre-existing",
    InvariantStatus.NOT_APPLICABLE: "➖ n/a",
    InvariantStatus.ERROR: "⛔ error",
}
_LANG = {".ts": "ts", ".tsx": "tsx", ".mts": "ts", ".cts": "ts", ".json": "json", ".sql": "sql", ".py": "python"}


def text(value: object) -> str:
    """Prose from findings, inert in GitHub-flavoured Markdown.

    Backtick-delimited spans stay code spans (rule messages quote code that
    way) and are rebuilt with `code()`, so they can only ever be code. In the
    prose between them nothing can become HTML, a link, an image, an
    autolink, an issue reference, a mention, emphasis or a block (heading,
    list, quote); line breaks are folded, so no value starts a new block.
    """
    s = " ".join(str(value).split())
    out = []
    for is_code, part in _split_code_spans(s):
        out.append(code(part) if is_code else _prose(part, at_line_start=not out))
    return "".join(out)


def _split_code_spans(s: str) -> list[tuple[bool, str]]:
    """(is_code, text) pieces, pairing backtick runs as CommonMark does.

    A run of n backticks opens a span closed by the next run of exactly n;
    an unmatched run is prose. Linear: each run's next run of equal length
    is found in one pass from the right.
    """
    runs = [(m.start(), m.end()) for m in _LONGEST_TICKS.finditer(s)]
    next_same: list[int | None] = [None] * len(runs)
    last_of_length: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        length = runs[i][1] - runs[i][0]
        next_same[i] = last_of_length.get(length)
        last_of_length[length] = i
    pieces: list[tuple[bool, str]] = []
    prose_from = 0
    i = 0
    while i < len(runs):
        j = next_same[i]
        if j is None:
            i += 1
            continue
        content = s[runs[i][1] : runs[j][0]]
        # A span of only spaces stays prose (its backticks escaped): code()
        # would fold it into an empty span, which Markdown reads as text.
        if content.strip():
            if runs[i][0] > prose_from:
                pieces.append((False, s[prose_from : runs[i][0]]))
            pieces.append((True, content))
            prose_from = runs[j][1]
        i = j + 1
    if prose_from < len(s):
        pieces.append((False, s[prose_from:]))
    return pieces


def _prose(s: str, at_line_start: bool) -> str:
    escaped = _escape_underscores(_INLINE_SYNTAX.sub(r"\\\g<0>", s))
    if at_line_start:
        escaped = _unblock(escaped)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = _MENTION.sub("@" + ZWSP, escaped)
    escaped = _AUTOLINK_SCHEME.sub(":" + ZWSP + "//", escaped)
    escaped = _AUTOLINK_WWW.sub(r"\1" + ZWSP + r"\2", escaped)
    escaped = _ISSUE_REF.sub("#" + ZWSP, escaped)
    return _GH_REF.sub(r"\1" + ZWSP, escaped)


def _unblock(s: str) -> str:
    """Escape the marker that would make a line starting with `s` a block.

    `>` needs nothing: it becomes `&gt;`, which never starts a quote.
    """
    match = _BLOCK_START.match(s)
    if match is None:
        return s
    if match["number"]:
        return match["number"] + "\\" + s[len(match["number"]) :]
    return "\\" + s


def _escape_underscores(s: str) -> str:
    """Escape every `_` but those between two letters or digits (`wake_attempts`),
    which can neither open nor close emphasis, so identifiers stay readable."""
    return _UNDERSCORE.sub(lambda m: "_" if _intraword(s, m.start()) else "\\_", s)


def _intraword(s: str, index: int) -> bool:
    return 0 < index < len(s) - 1 and s[index - 1].isalnum() and s[index + 1].isalnum()


def code(value: object) -> str:
    """Inline code span that no backtick run inside can close."""
    s = " ".join(str(value).split())
    longest = max((len(m) for m in _LONGEST_TICKS.findall(s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def cell(value: object) -> str:
    return text(value).replace("|", "\\|")


def fence(lines: list[str]) -> str:
    longest = max((len(m) for line in lines for m in _LONGEST_TICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def lang(path: str | None) -> str:
    if not path:
        return ""
    for ext, name in _LANG.items():
        if path.endswith(ext):
            return name
    return ""


def span(loc: object) -> str:
    path, line, end = loc.path, loc.line, loc.end_line  # type: ignore[attr-defined]
    return f"{path}:{line}" if end == line else f"{path}:{line}-{end}"


def short(hexdigest: str) -> str:
    return f"{hexdigest[:8]}…{hexdigest[-4:]}" if len(hexdigest) > 16 else hexdigest


def _template(name: str) -> str:
    return resources.files("reviewer.templates").joinpath(name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process: templates compile once."""
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_template),
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(text=text, code=code, cell=cell, span=span, short=short, lang=lang)
    env.globals.update(
        fence=fence, check_icon=_CHECK_ICON, invariant_icon=_INVARIANT_ICON, severities=list(Severity)
    )
    return env


def render(report: Report) -> str:
    body = environment().get_template("report.md.j2").render(r=report)
    # The verdict is appended here, not in the template, so nothing the
    # template interpolates can ever be the report's last line.
    return body.rstrip("\n") + "\n\n" + report.verdict.value + "\n"


def render_delta(delta: Delta) -> str:
    """The delta section alone, as `reviewer diff` prints it."""
    return environment().get_template("delta.md.j2").render(delta=delta)
