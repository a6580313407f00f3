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

from reviewer.model import CheckStatus, Delta, InvariantStatus, Report, Severity

_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")
_LONGEST_TICKS = re.compile(r"`+")

_CHECK_ICON = {CheckStatus.PASS: "✅", CheckStatus.FAIL: "❌", CheckStatus.SKIP: "➖"}
_INVARIANT_ICON = {
    InvariantStatus.VERIFIED: "✅ verified",
    InvariantStatus.VIOLATED: "❌ violated",
    InvariantStatus.NOT_APPLICABLE: "➖ n/a",
    InvariantStatus.ERROR: "⛔ error",
}
_LANG = {".ts": "ts", ".tsx": "tsx", ".mts": "ts", ".cts": "ts", ".json": "json", ".sql": "sql", ".py": "python"}


def text(value: object) -> str:
    """Prose from findings: no HTML, no mentions, no line breaks that start new blocks."""
    s = str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MENTION.sub("@\u200b", s)
    return " ".join(s.split())


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
