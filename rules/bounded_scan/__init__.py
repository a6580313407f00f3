"""bounded-scan: recovery and wake scans stay bounded and fair (DESIGN.md family 4).

A *scan* is a drizzle select chain (`db.select(..).from(T)...`) over a
configured table that reads across entities. Every scan in a scan path must
carry `.limit(N)` with N at most the bound, must order by the durable attempts
column (or a cursor) so failed/no-op rows sink behind fresh work, and the
function that processes it must bump that column on its failure path. A
compare-and-swap wake (`update(T).set({ wake_pending: false })`) must exclude
settled rows in its `where`.

This package: the declarations (`spec`), the chains and their names
(`chains`), where clauses and raw SQL (`where`), one module per check
(`select`, `attempts`, `cas`), and here the run over the changed files and
its summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.change.changeset import is_source
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import Family, Options, Outcome
from reviewer.typescript import error_scope, words_on_lines
from reviewer.rules.bounded_scan.attempts import check_attempts
from reviewer.rules.bounded_scan.cas import check_cas
from reviewer.rules.bounded_scan.chains import Query, identity, loc, queries
from reviewer.rules.bounded_scan.roles import importers, role_scans
from reviewer.rules.bounded_scan.select import check_select
from reviewer.rules.bounded_scan.vocabulary import HINTS, infer
from reviewer.rules.bounded_scan.spec import CHECKS, FAMILY_ID, OPTIONS, in_scan_paths

if TYPE_CHECKING:
    from reviewer.change.changeset import ChangedFile
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module, Program


# ---------------------------------------------------------------- run


@dataclass
class _Tally:
    """What the summary says: every scan of the changed scan-path files, changed or not."""

    bounded: list[tuple[str, str | None]]  # (bound text, fair column)
    unbounded: int = 0
    unresolved: int = 0
    pinned: int = 0
    cas: int = 0
    cas_bad: int = 0
    changed: int = 0
    unchanged_issues: int = 0
    attempts_bumped: int = 0


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _summary(t: _Tally, opts: Options) -> str:
    """One line of what was proven, e.g. `3 scans, each .limit(BATCH_SIZE = 100), ordered by wake_attempts`."""
    parts: list[str] = []
    if t.bounded:
        n = len(t.bounded)
        bounds = sorted({b for b, _ in t.bounded})
        if len(bounds) == 1:
            text = f"{_plural(n, 'scan')}, {'each ' if n > 1 else ''}.limit({bounds[0]})"
        else:
            text = f"{_plural(n, 'scan')}, limits " + ", ".join(f".limit({b})" for b in bounds)
        fair = [c for _, c in t.bounded if c]
        columns = " or ".join(sorted(set(fair)))
        if fair:
            text += f", {'' if len(fair) == n else f'{len(fair)} '}ordered by {columns}"
        if t.attempts_bumped:
            text += f", attempts incremented by {_plural(t.attempts_bumped, 'processor')}"
        parts.append(text)
    if t.unbounded:
        parts.append(f"{_plural(t.unbounded, 'scan')} without .limit")
    if t.unresolved:
        parts.append(f"{_plural(t.unresolved, 'scan')} whose bound could not be followed")
    if t.cas:
        if t.cas_bad:
            parts.append(f"{_plural(t.cas, 'CAS wake')}, {t.cas - t.cas_bad} excluding settled rows")
        else:
            parts.append(f"{_plural(t.cas, 'CAS wake')} {'excludes' if t.cas == 1 else 'exclude'} settled rows")
    if t.pinned:
        not_scan = "a scan" if t.pinned == 1 else "scans"
        parts.append(f"{_plural(t.pinned, 'query', 'queries')} pinned to one entity (not {not_scan})")
    if t.unchanged_issues:
        parts.append(f"{_plural(t.unchanged_issues, 'pre-existing issue')} in unchanged queries")
    return "; ".join(parts) + f" (bound {opts.bound}; {_plural(t.changed, 'changed query', 'changed queries')})"


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    files = sorted(
        (
            f
            for f in ctx.changeset.files
            if f.status.value != "deleted"
            and f.patched_text is not None
            and is_source(f.path)
            and in_scan_paths(f.path, opts)
        ),
        key=lambda f: f.path,
    )
    if not files:
        return Outcome("no changed TypeScript file in the scan paths")
    program = ctx.program
    tally = _Tally([])
    findings: list[Finding] = []
    notes: list[Finding] = []
    modules: list["Module"] = [m for m in (program.module(cf.path) for cf in files) if m is not None]
    # Where a builder opened in a changed file may be finished: the changed scan-path files and
    # the scan-path files that import one of them (their queries are judged whole, located there).
    callers = frozenset([m.path for m in modules] + [m.path for m in importers(ctx, modules, opts)])
    judged: set[tuple] = set()
    for cf in files:
        module = program.module(cf.path)
        if module is None:
            continue
        found = [
            q for q in queries(module, opts, callers=callers)
            if in_scan_paths(q.path, opts) and identity(q) not in judged
        ]
        judged.update(identity(q) for q in found)
        changed_here = [
            loc(q, "a changed query of this file") for q in found if q.path == cf.path and cf.touches(q.line, q.end_line)
        ]
        error = _parse_error(ctx, cf, module, opts, notes, changed_here)
        if error is not None:
            return Outcome(error, unreadable=error)
        for query in found:
            touched = _touched(ctx, query)
            tally.changed += touched
            if query.kind == "update":
                is_cas, finding = check_cas(ctx, module, query, opts)
                tally.cas += is_cas
                tally.cas_bad += finding is not None
                _keep(findings, tally, finding, touched)
                continue
            result = check_select(ctx, module, query, opts)
            if result.kind == "pinned":
                tally.pinned += 1
            elif result.kind == "unbounded":
                tally.unbounded += 1
            elif result.kind == "unresolved":
                tally.unresolved += 1
            elif result.kind == "bounded":
                tally.bounded.append((result.bound_text, result.fair_column))
            for finding in result.findings:
                _keep(findings, tally, finding, touched)
            if result.fair_column in opts.attempts_columns:
                # Judged on its own change scope: a changed helper can break an unchanged scan.
                status, attempts = check_attempts(ctx, query, result.fair_column, opts)
                tally.attempts_bumped += status == "bumped"
                if attempts is not None:
                    findings.append(attempts)
    findings += _through_imports(ctx, importers(ctx, modules, opts), callers, judged, tally)
    # Judged whole, changed or not: scope decides what is the patch's and what is pre-existing.
    by_role, entries, role_reads = role_scans(ctx, modules, opts)
    findings += by_role
    roles = (f"; {_plural(entries, 'origin')} (recovery entry points, repeated code) reaching "
             f"{_plural(role_reads, 'read')} of other tables") if role_reads else ""
    if not tally.changed and not findings and not entries:
        summary = ("no changed scan or wake CAS over " + "/".join(sorted(opts.tables))
                   + ", and no recovery entry point (`recovery_entries`) or repeated code (`repeat_drivers`, "
                   "loops) in a changed scan-path file")
        return Outcome(summary, tuple(notes))
    examined = tally.changed + role_reads + entries
    return Outcome(_summary(tally, opts) + roles, tuple(findings + notes), examined=examined or len(findings))


def _through_imports(
    ctx: "ReviewContext", modules: list["Module"], callers: frozenset[str], judged: set[tuple], tally: "_Tally"
) -> list[Finding]:
    """Scans of unchanged files that the change reaches through an import (the
    bound's constant raised in the file it comes from). Only what a changed line
    makes wrong is reported: the rest of an unchanged file is not this patch's."""
    opts = ctx.opts
    out: list[Finding] = []
    for module in modules:
        for query in queries(module, opts, callers=callers):
            if query.kind == "update" or identity(query) in judged or not in_scan_paths(query.path, opts):
                continue
            judged.add(identity(query))
            result = check_select(ctx, module, query, opts)
            reached = [f for f in result.findings if f.severity is not Severity.CONSIDER
                       and any(_touches(ctx, r) for r in f.related)]
            tally.changed += bool(reached)
            out += reached
    return out


def _touches(ctx: "ReviewContext", loc: Location) -> bool:
    changed = ctx.changeset.file(loc.path)
    return changed is not None and changed.touches(loc.line, loc.end_line)


def _touched(ctx: "ReviewContext", query: Query) -> bool:
    """The patch added a line where the query is finished or in a chain it continues."""
    for path, line, end_line in query.spans:
        changed = ctx.changeset.file(path)
        if changed is not None and changed.touches(line, end_line):
            return True
    return False


def _keep(findings: list[Finding], tally: _Tally, finding: Finding | None, touched: bool) -> None:
    if finding is None:
        return
    # Reported either way: scope decides what is the patch's, and an issue in
    # an unchanged query is shown as pre-existing (or counted by --scope all).
    if touched or finding.severity is not Severity.CONSIDER:
        findings.append(finding)
    if not touched and finding.severity is not Severity.CONSIDER:
        tally.unchanged_issues += 1


def _names_a_table(program: "Program", module: "Module", opts: Options) -> bool:
    """The module declares, imports or reads (`Ns.T`) a scanned table in its parsed code."""
    if any(table in module.declarations for table in opts.tables):
        return True
    if any(imp.imported in opts.tables for imp in module.imports.values()):
        return True
    return any(program.invocations(table, module.path) for table in sorted(opts.tables))


def _parse_error(
    ctx: "ReviewContext",
    cf: "ChangedFile",
    module: "Module | None",
    opts: Options,
    notes: list[Finding],
    changed_here: list[Location],
) -> str | None:
    """An ERROR region over changed lines fails the family; elsewhere it is a note.

    The note points at the changed queries of the file as related locations:
    they are why the untouched region matters to this review.
    """
    regions = ctx.program.parse_errors(cf.path)
    if not regions or module is None:
        return None
    # A table named only inside a broken declaration is invisible to the
    # parsed model: read the words of what each region may have broken too.
    if not _names_a_table(ctx.program, module, opts) and not any(
        set(opts.tables) & words_on_lines(module, *error_scope(module, start, end)) for start, end in regions
    ):
        return None
    for start, end in sorted(regions):
        if cf.touches(start, end):
            return (
                f"{cf.path}:{start}-{end} does not parse (tree-sitter ERROR) inside changed lines; "
                "scans there cannot be checked"
            )
    for start, end in sorted(regions):
        notes.append(
            ctx.finding(
                "parse-error",
                title="Unparsed region in a scanned file",
                message=(
                    f"{cf.path}:{start}-{end} did not parse; queries inside it were not checked. "
                    "The region is outside the patch's changes."
                ),
                location=Location(cf.path, start, end),
                related=tuple(changed_here),
                anchor=f"parse-error|{module.path}|{start}",
            )
        )
    return None


FAMILY = Family(
    id=FAMILY_ID,
    summary="Recovery and wake scans stay bounded (.limit <= bound) and fair (attempts-ordered, attempts bumped); CAS wakes skip settled rows.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
