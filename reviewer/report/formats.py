"""The output formats: one name, one renderer module each."""

from __future__ import annotations

from typing import Callable

from reviewer.report.model import Report

FORMATS = ("markdown", "json", "sarif", "github", "comment")


def renderer(fmt: str) -> Callable[[Report], str]:
    # Imported lazily so `reviewer --help` never loads Jinja2.
    if fmt == "markdown":
        from reviewer.report.markdown import render
    elif fmt == "json":
        from reviewer.report.json_format import render
    elif fmt == "sarif":
        from reviewer.report.sarif import render
    elif fmt == "github":
        from reviewer.report.github import render
    elif fmt == "comment":
        from reviewer.report.comment import render
    else:
        raise KeyError(fmt)
    return render
