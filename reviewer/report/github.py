"""`--format github`: workflow commands that annotate the pull request.

Everything is escaped per GitHub's rules, so no text from the patch can end
a command early, start another one (`::set-output`, `::add-mask`,
`::stop-commands`) or add a property.
"""

from __future__ import annotations

from reviewer.report.model import Finding, Report, Severity

COMMAND = {Severity.MUST_FIX: "error", Severity.SHOULD_FIX: "warning", Severity.CONSIDER: "notice"}
SUMMARY_LIMIT = 1024 * 1024 - 4096  # GitHub refuses step summaries over 1 MiB


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _command(f: Finding) -> str:
    props = []
    if f.location is not None:
        props += [f"file={escape_property(f.location.path)}", f"line={f.location.line}", f"endLine={f.location.end_line}"]
    props.append(f"title={escape_property(f'{f.rule}: {f.title}')}")
    message = f.message
    if f.failure_sequence:
        message += "\nFailure sequence: " + " → ".join(f.failure_sequence)
    for r in f.related:
        message += f"\nRelated: {r.path}:{r.line}-{r.end_line}" + (f" — {r.note}" if r.note else "")
    return f"::{COMMAND[f.severity]} {','.join(props)}::{escape_data(message)}"


def render(report: Report) -> str:
    lines = [_command(f) for f in report.findings]
    if report.delta is not None:
        for d in report.delta.resolved:
            where = (f" at {d.path}" + (f":{d.line}" if d.line is not None else "")) if d.path else ""
            lines.append(f"::notice title={escape_property('resolved: ' + d.rule)}::{escape_data(d.title + where)}")
    counts = ", ".join(f"{report.count(s)} {s.value}" for s in Severity)
    if report.pre_existing:
        # Not annotated: they sit on lines the patch did not touch.
        counts += f"; {len(report.pre_existing)} pre-existing outside the change, not counted"
    verdict = f"reviewer {report.tool_version}: {report.verdict.value} ({counts})"
    lines.append(("::error::" if report.verdict.value == "DO-NOT-MERGE" else "::notice::") + escape_data(verdict))
    return "\n".join(lines) + "\n"


def cap_summary(markdown: str, limit: int = SUMMARY_LIMIT) -> str:
    """Keep the job summary under GitHub's limit, saying so when it was cut.

    The verdict stays the last line even when the body is cut.
    """
    data = markdown.encode("utf-8")
    if len(data) <= limit:
        return markdown
    verdict = markdown.rstrip("\n").rsplit("\n", 1)[-1]
    note = (
        "\n\n> **Truncated:** this summary was cut to stay under GitHub's 1 MiB limit; "
        "the full report is in the SARIF and JSON outputs.\n\n" + verdict + "\n"
    )
    room = limit - len(note.encode("utf-8"))
    body = data[:room].decode("utf-8", "ignore")
    body = body[: body.rfind("\n")] if "\n" in body else body
    # A cut inside a code fence would swallow the note: close the open fence.
    open_fence = _open_fence(body)
    if open_fence:
        body += "\n" + open_fence
    return body + note


def _open_fence(markdown: str) -> str:
    """The backtick run of a fence left open at the end of `markdown`, or ""."""
    current = ""
    for line in markdown.splitlines():
        run = line[: len(line) - len(line.lstrip("`"))]
        if not current and len(run) >= 3:
            current = run
        elif current and set(line.strip()) == {"`"} and len(line.strip()) >= len(current):
            current = ""
    return current
