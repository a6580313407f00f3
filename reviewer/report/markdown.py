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

from reviewer.text import plural
from reviewer.report.model import (
    AcceptedFinding, CheckStatus, Delta, Finding, InvariantResult, InvariantStatus, Links, Location, Report, Severity,
    SuppressedFinding,
)

_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
# Markdown line endings; a value is folded onto one line so it can start no block.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Whitespace other than space and tab: folded to a space like a line break.
_OTHER_SPACE = re.compile(r"[^\S \t]")
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
    way) and are rebuilt with `code()`, so they can only ever be code, and
    their content is kept as written (spaces included). In the prose between
    them nothing can become HTML, a link, an image, an autolink, an issue
    reference, a mention, emphasis or a block (heading, list, quote); line
    breaks are folded, so no value starts a new block.
    """
    s = _OTHER_SPACE.sub(" ", _LINE_BREAK.sub(" ", str(value))).strip(" \t")
    out = []
    for is_code, part in _split_code_spans(s):
        if is_code:
            out.append(code(_span_content(part)))
        else:
            out.append(_prose(_fold(part), at_line_start=not out))
    return "".join(out)


def _fold(s: str) -> str:
    """Whitespace runs as one space, keeping a space at either edge (it separates prose from code)."""
    if not s.strip():
        return " " if s else ""
    return (" " if s[0].isspace() else "") + " ".join(s.split()) + (" " if s[-1].isspace() else "")


def _span_content(s: str) -> str:
    """What CommonMark shows of a span's content: one space stripped from each
    side when both have one (`` ` a ` `` is `a`)."""
    return s[1:-1] if len(s) > 2 and s[0] == " " and s[-1] == " " else s


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
    """Inline code span showing `value` exactly, which no backtick run inside can close.

    Only line breaks become spaces (a span cannot hold one, and it could end
    a table row or list item); other whitespace is kept as written. HTML
    entities are never used: inside a span `&lt;` would show literally.
    CommonMark strips one space from each side of a span when both sides
    have one, and a span may not start or end with a backtick next to its
    delimiters, so a pad of one space goes on both sides then.
    """
    s = _OTHER_SPACE.sub(" ", _LINE_BREAK.sub(" ", str(value)))
    longest = max((len(m) for m in _LONGEST_TICKS.findall(s)), default=0)
    ticks = "`" * (longest + 1)
    padded = s.startswith("`") or s.endswith("`") or (s.startswith(" ") and s.endswith(" ") and s.strip(" ") != "")
    pad = " " if padded else ""
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



# -- links ---------------------------------------------------------------------

# What may stay raw in a link destination we write: unreserved and reserved URL
# characters that neither end a Markdown destination nor mean anything to it.
# Parentheses, angle brackets, brackets, spaces, backslashes, quotes,
# backticks and `&` (an entity reference) are percent-encoded.
_URL_RAW = re.compile(r"[A-Za-z0-9\-._~:/?#@!$'*+,;=%]")
_WEB_URL = re.compile(r"https?://[A-Za-z0-9]")


def safe_url(url: str) -> str | None:
    """`url` as a Markdown link destination nothing in it can end, or None if not a web URL."""
    if not _WEB_URL.match(url):
        return None
    return "".join(ch if _URL_RAW.fullmatch(ch) else "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in url)


def where(loc: Location, links: Links | None, clip: int | None = None) -> str:
    """A `path:line` code span, a permalink to the reviewed commit when the repository is known.

    The link text stays a code span, so the path (which the patch chooses)
    can be neither link syntax nor a second link. `clip` shortens the text
    only; the link still opens the whole path.
    """
    path = loc.path if clip is None or len(loc.path) <= clip else loc.path[:clip] + "…"
    label = code(span(Location(path, loc.line, loc.end_line)))
    url = safe_url(links.blob(loc.path, loc.line, loc.end_line)) if links is not None else None
    return f"[{label}]({url})" if url else label


def suppression_site(s: SuppressedFinding) -> Location:
    return Location(s.path, s.line, s.line)


# -- the parts both the report and the comment open with ----------------------


def counts(report: Report) -> str:
    out = ", ".join(f"{report.count(sev)} {sev.value}" for sev in Severity)
    if report.pre_existing:
        out += f", {len(report.pre_existing)} pre-existing (outside the change, not counted)"
    return out


def banner(report: Report) -> str:
    """One line a maintainer reads first: verdict, counts, what was reviewed."""
    coverage = report.coverage
    # A MERGE no family examined anything for is no green light: it says nothing was checked.
    icon = "⛔" if report.verdict.value != "MERGE" else ("✅" if coverage.examined else "⚪")
    reviewed = f"head {code(report.head[:12])}" if report.head else f"patch {code(report.patch.sha256[:12])}"
    return (f"> {icon} **{report.verdict.value}** — {counts(report)} · {coverage.line()} · base "
            f"{code(report.base[:12])} · {reviewed} · {plural(report.patch.files, 'file')}")


def causes(report: Report) -> list[str]:
    """Each reason for DO-NOT-MERGE as inert Markdown prose."""
    return [text(c) for c in report.causes()]


def refused_reason(s: SuppressedFinding) -> str:
    return (f"suppression requested by this patch — not honoured: {s.finding.severity.value} findings cannot be "
            "silenced by the patch that adds the suppression")


def refused_by_finding(report: Report) -> dict[str, SuppressedFinding]:
    """Refused suppression requests by the id of the finding they name (the finding still blocks)."""
    return {s.finding.id: s for s in report.suppressed if not s.honoured}


def invariant_status(inv: InvariantResult) -> str:
    """The status cell: an invariant whose findings were silenced never reads as plainly verified."""
    silenced = f"🔇 suppressed ({inv.suppressed})"
    owned = f"☑️ accepted ({inv.accepted})"
    if inv.status is InvariantStatus.VERIFIED and (inv.suppressed or inv.accepted):
        return ", ".join(x for x, n in ((silenced, inv.suppressed), (owned, inv.accepted)) if n)
    shown = _INVARIANT_ICON[inv.status] + (f" ({len(inv.findings)})" if inv.findings else "")
    return shown + (f", {silenced}" if inv.suppressed else "") + (f", {owned}" if inv.accepted else "")


# Evidence longer than this, and more related locations than this, is folded
# into <details>: the first screen shows what is wrong, the rest on request.
EXCERPT_INLINE = 8
RELATED_INLINE = 3


def inputs_line(report: Report) -> str:
    """The integrity table in one line, for when every check passed (or was skipped)."""
    skipped = [c.id.split("/", 1)[1] for c in report.checks if c.status is CheckStatus.SKIP]
    passed = len(report.checks) - len(skipped)
    line = (f"base {code(report.base[:12])} exists · patch sha256 {code(report.patch.sha256[:12])} · "
            f"{plural(report.patch.files, 'file')}, +{report.patch.added} −{report.patch.removed} · "
            f"{passed} of {len(report.checks)} checks passed")
    return line + (f", skipped: {', '.join(skipped)}" if skipped else "")


def impact_label(report: Report, finding: Finding) -> str:
    return f"impact: {report.impact(finding).label}"


def expired_by_finding(report: Report) -> dict[str, AcceptedFinding]:
    """Acceptances past their date, by the id of the finding they named (it blocks again)."""
    return {a.finding.id: a for a in report.expired}


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
        fence=fence, check_icon=_CHECK_ICON, severities=list(Severity), plural=plural, where=where,
        banner=banner, causes=causes, invariant_status=invariant_status, suppression_site=suppression_site,
        refused_reason=refused_reason, refused_by_finding=refused_by_finding, inputs_line=inputs_line,
        impact_label=impact_label, expired_by_finding=expired_by_finding, check_fail=CheckStatus.FAIL,
        excerpt_inline=EXCERPT_INLINE, related_inline=RELATED_INLINE,
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
