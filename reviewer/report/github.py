"""`--format github`: workflow commands that annotate the pull request.

Everything is escaped per GitHub's rules, so no text from the patch can end
a command early, start another one (`::set-output`, `::add-mask`,
`::stop-commands`) or add a property.

A DO-NOT-MERGE always says why: every finding is an annotation, a cause no
finding carries (a family that errored on a parse error) gets its own error,
and the closing verdict line names every cause. Suppressions the patch adds
are annotated on the directive's line, honoured or refused.
"""

from __future__ import annotations

from reviewer.display import printable
from reviewer.engine.api import INTERNAL_ERROR
from reviewer.report.model import CheckStatus, Finding, InvariantStatus, Report, Severity, Verdict

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


def _cause_commands(report: Report) -> list[str]:
    """An error per cause of the verdict that no finding annotates already: a family
    that errored without an internal-error finding (a parse error over changed
    lines), a failed check without its finding."""
    annotated = {f.rule for f in report.findings}
    out = []
    for c in report.checks:
        if c.status is CheckStatus.FAIL and c.id not in annotated:
            title = f"{c.id}: integrity check failed"
            text = printable(f"integrity check {c.id} failed: {c.detail}")
            out.append(f"::error title={escape_property(title)}::{escape_data(text)}")
    for i in report.invariants:
        if i.status is InvariantStatus.ERROR and f"{i.id}/{INTERNAL_ERROR}" not in annotated:
            title = f"{i.id}: could not check its invariant"
            text = printable(f"rule family {i.id} could not be checked: {i.summary}")
            out.append(f"::error title={escape_property(title)}::{escape_data(text)}")
    return out


def _suppression_commands(report: Report) -> list[str]:
    """Every suppression the patch adds, on the directive's line: a warning when it
    silences a finding, a notice when it was refused (its finding is annotated as
    the error it still is)."""
    out = []
    for s in report.suppressed:
        if not s.added_by_patch:
            continue
        rule = s.finding.rule
        # The reason is the patch author's text: no terminal escape or bidi control reaches the log.
        reason = printable(s.reason)
        where = f"file={escape_property(s.path)},line={s.line},endLine={s.line}"
        if s.honoured:
            title = escape_property(f"suppression added by this patch: {rule}")
            text = f"suppression added by this patch silences {rule}: {reason}"
            out.append(f"::warning {where},title={title}::{escape_data(text)}")
        else:
            title = escape_property(f"suppression requested by this patch, not honoured: {rule}")
            text = (
                f"suppression requested by this patch for {rule} ({s.finding.severity.value}) was not honoured: "
                f"the base's configuration does not let a patch silence a {s.finding.severity.value} finding, "
                f"so it still counts. Reason given: {reason}"
            )
            out.append(f"::notice {where},title={title}::{escape_data(text)}")
    return out


def render(report: Report) -> str:
    lines = [_command(f) for f in report.findings]
    lines += _cause_commands(report)
    lines += _suppression_commands(report)
    if report.delta is not None:
        for d in report.delta.resolved:
            where = (f" at {d.path}" + (f":{d.line}" if d.line is not None else "")) if d.path else ""
            lines.append(f"::notice title={escape_property('resolved: ' + d.rule)}::{escape_data(d.title + where)}")
    counts = ", ".join(f"{report.count(s)} {s.value}" for s in Severity)
    if report.pre_existing:
        # Not annotated: they sit on lines the patch did not touch.
        counts += f"; {len(report.pre_existing)} pre-existing outside the change, not counted"
    verdict = f"reviewer {report.tool_version}: {report.verdict.value} ({counts})"
    if report.verdict is Verdict.DO_NOT_MERGE:
        causes = report.causes()
        # Fail closed even in wording: a DO-NOT-MERGE with no cause the model can name still says so.
        verdict += " because " + "; ".join(printable(c) for c in causes) if causes else " (no cause recorded)"
        lines.append("::error::" + escape_data(verdict))
    else:
        lines.append("::notice::" + escape_data(verdict))
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
    # A cut inside a folded block would hide the note (and the verdict) in it.
    body += "\n\n</details>" * _open_details(body)
    return body + note


def _open_details(markdown: str) -> int:
    """How many of the report's own `<details>` blocks are left open at the end of `markdown`.

    Only lines that are exactly our tags count, outside code fences: patch text
    never reaches a line start raw (the Markdown renderer escapes it).
    """
    depth, fence = 0, ""
    for line in markdown.splitlines():
        run = line[: len(line) - len(line.lstrip("`"))]
        if not fence and len(run) >= 3:
            fence = run
            continue
        if fence:
            if set(line.strip()) == {"`"} and len(line.strip()) >= len(fence):
                fence = ""
            continue
        if line.startswith("<details>"):
            depth += 1
        elif line == "</details>" and depth:
            depth -= 1
    return depth


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
