"""`--format github`: workflow commands that annotate the pull request.

Everything is escaped per GitHub's rules, so no text from the patch can end
a command early, start another one (`::set-output`, `::add-mask`,
`::stop-commands`) or add a property.

A DO-NOT-MERGE always says why: the first annotation is the verdict with its
causes (what to fix first), every finding is an annotation, and a cause no
finding carries (a family that errored on a parse error) gets its own error. Suppressions the patch adds are annotated on the
directive's line, honoured or refused.

GitHub shows at most 10 annotations of each level (error, warning, notice)
per step and drops the rest without a word, so each level is capped here:
past the cap, one annotation of that level names how many more there are
and what they are, and the job summary and SARIF hold all of them. The
verdict is first, so no cap can drop it.
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
    # Families that could not check for one reason (the patch could not be rebuilt) are one error, not nine.
    by_reason: dict[str, list[str]] = {}
    for i in report.invariants:
        if i.status is InvariantStatus.ERROR and f"{i.id}/{INTERNAL_ERROR}" not in annotated:
            by_reason.setdefault(i.summary, []).append(i.id)
    for summary, ids in by_reason.items():
        who = ids[0] if len(ids) == 1 else f"{len(ids)} rule families"
        title = f"{who}: could not check its invariant" if len(ids) == 1 else f"{who} could not check their invariants"
        named = f"rule family {ids[0]}" if len(ids) == 1 else f"{len(ids)} rule families ({', '.join(ids)})"
        text = printable(f"{named} could not be checked: {summary}")
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


# GitHub's cap per level per step (docs: "Workflow commands", annotation limits).
ANNOTATIONS_PER_LEVEL = 10


def _verdict(report: Report) -> str:
    counts = ", ".join(f"{report.count(s)} {s.value}" for s in Severity)
    if report.pre_existing:
        # Not annotated: they sit on lines the patch did not touch.
        counts += f"; {len(report.pre_existing)} pre-existing outside the change, not counted"
    if report.accepted:
        counts += f"; {len(report.accepted)} accepted by the base's reviewer.toml, not counted"
    verdict = f"reviewer {report.tool_version}: {report.verdict.value} ({counts})"
    if report.verdict is Verdict.DO_NOT_MERGE:
        causes = report.causes()
        # Fail closed even in wording: a DO-NOT-MERGE with no cause the model can name still says so.
        verdict += " because " + "; ".join(printable(c) for c in causes) if causes else " (no cause recorded)"
    return verdict


def _level(command: str) -> str:
    return command[2:].split(" ", 1)[0].split("::", 1)[0]


def _capped(verdict: str, commands: list[str]) -> list[str]:
    """The verdict, then `commands` in order with at most ANNOTATIONS_PER_LEVEL of
    each level in all; the last slot of a full level says what was left out."""
    room = {level: ANNOTATIONS_PER_LEVEL for level in ("error", "warning", "notice")}
    room[_level(verdict)] -= 1
    by_level: dict[str, list[str]] = {}
    for c in commands:
        by_level.setdefault(_level(c), []).append(c)
    dropped = {level: mine[room[level] - 1 :] for level, mine in by_level.items() if len(mine) > room[level]}
    gone = {id(c) for rest in dropped.values() for c in rest}
    out = [verdict]
    for c in commands:
        if id(c) not in gone:
            out.append(c)
        elif c is dropped[_level(c)][0]:
            rest = dropped[_level(c)]
            named = "; ".join(_title(x) for x in rest)
            text = (f"{len(rest)} more {_level(c)} annotations are not shown here (GitHub shows "
                    f"{ANNOTATIONS_PER_LEVEL} per level per step); the job summary and the SARIF upload list all "
                    f"of them: {named}")
            out.append(f"::{_level(c)} title={escape_property(f'reviewer: {len(rest)} more')}::{escape_data(text)}")
    return out


def _title(command: str) -> str:
    """What an annotation is about, for the overflow line: its title and file:line."""
    head = command.split("::", 2)[1]
    props = dict(p.split("=", 1) for p in head.split(" ", 1)[1].split(",") if "=" in p) if " " in head else {}
    unescape = lambda v: v.replace("%2C", ",").replace("%3A", ":").replace("%0A", " ").replace("%0D", " ").replace("%25", "%")  # noqa: E731
    where = f" at {unescape(props['file'])}:{props.get('line', '')}" if "file" in props else ""
    return unescape(props.get("title", "annotation")) + where


def render(report: Report) -> str:
    verdict = _verdict(report)
    level = "error" if report.verdict is Verdict.DO_NOT_MERGE else "notice"
    first = f"::{level} title={escape_property('reviewer: ' + report.verdict.value)}::{escape_data(verdict)}"
    commands = [_command(f) for f in report.findings]
    commands += _cause_commands(report)
    commands += _suppression_commands(report)
    if report.delta is not None:
        for d in report.delta.resolved:
            where = (f" at {d.path}" + (f":{d.line}" if d.line is not None else "")) if d.path else ""
            commands.append(f"::notice title={escape_property('resolved: ' + d.rule)}::{escape_data(d.title + where)}")
    return "\n".join(_capped(first, commands)) + "\n"


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
