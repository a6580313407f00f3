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
(`select`, `attempts`, `cas`), and here the family on the engine's template: its state, its checks over
the changed files, and its basis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import Family, Options
from reviewer.engine.template import Reading, Template
from reviewer.text import plural
from reviewer.rules.bounded_scan.attempts import check_attempts
from reviewer.rules.bounded_scan.cas import check_cas
from reviewer.rules.bounded_scan.chains import Query, identity, queries
from reviewer.rules.bounded_scan.roles import importers, role_scans
from reviewer.rules.bounded_scan.select import check_select
from reviewer.rules.bounded_scan.vocabulary import HINTS, infer
from reviewer.rules.bounded_scan.spec import CHECKS, FAMILY_ID, OPTIONS, in_scan_paths

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module


# ---------------------------------------------------------------- run


@dataclass
class _Tally:
    """What the summary says: every scan of the changed scan-path files, changed or not."""

    bounded: list[tuple[str, str | None]] = field(default_factory=list)  # (bound text, fair column)
    unbounded: int = 0
    unresolved: int = 0
    pinned: int = 0
    cas: int = 0
    cas_bad: int = 0
    changed: int = 0
    unchanged_issues: int = 0
    attempts_bumped: int = 0


@dataclass
class Run:
    """One run's state: the changed scan-path files, the queries already judged, what was counted."""

    ctx: "ReviewContext"
    changed: tuple[str, ...] = ()
    tally: _Tally = field(default_factory=_Tally)
    judged: set[tuple] = field(default_factory=set)  # identities of the queries judged so far
    importers: list["Module"] = field(default_factory=list)  # scan-path files importing a changed one
    callers: frozenset[str] = frozenset()  # where a builder opened in a changed file may be finished
    blocking: int = 0  # findings reported (examined, even when no query changed)
    entries: int = 0  # recovery entry points and repeated code found
    role_reads: int = 0  # reads of other tables they reach


def _summary(t: _Tally, opts: Options) -> str:
    """One line of what was proven, e.g. `3 scans, each .limit(BATCH_SIZE = 100), ordered by wake_attempts`."""
    parts: list[str] = []
    if t.bounded:
        n = len(t.bounded)
        bounds = sorted({b for b, _ in t.bounded})
        if len(bounds) == 1:
            text = f"{plural(n, 'scan')}, {'each ' if n > 1 else ''}.limit({bounds[0]})"
        else:
            text = f"{plural(n, 'scan')}, limits " + ", ".join(f".limit({b})" for b in bounds)
        fair = [c for _, c in t.bounded if c]
        columns = " or ".join(sorted(set(fair)))
        if fair:
            text += f", {'' if len(fair) == n else f'{len(fair)} '}ordered by {columns}"
        if t.attempts_bumped:
            text += f", attempts incremented by {plural(t.attempts_bumped, 'processor')}"
        parts.append(text)
    if t.unbounded:
        parts.append(f"{plural(t.unbounded, 'scan')} without .limit")
    if t.unresolved:
        parts.append(f"{plural(t.unresolved, 'scan')} whose bound could not be followed")
    if t.cas:
        if t.cas_bad:
            parts.append(f"{plural(t.cas, 'CAS wake')}, {t.cas - t.cas_bad} excluding settled rows")
        else:
            parts.append(f"{plural(t.cas, 'CAS wake')} {'excludes' if t.cas == 1 else 'exclude'} settled rows")
    if t.pinned:
        not_scan = "a scan" if t.pinned == 1 else "scans"
        parts.append(f"{plural(t.pinned, 'query')} pinned to one entity (not {not_scan})")
    if t.unchanged_issues:
        parts.append(f"{plural(t.unchanged_issues, 'pre-existing issue')} in unchanged queries")
    head = "; ".join(parts)
    return (head + " " if head else "") + f"(bound {opts.bound}; {plural(t.changed, 'changed query')})"


def _prepare(run: Run) -> None:
    ctx = run.ctx
    modules = [m for m in (ctx.program.module(p) for p in run.changed) if m is not None]
    run.importers = importers(ctx, modules, ctx.opts)
    # Where a builder opened in a changed file may be finished: the changed scan-path files and
    # the scan-path files that import one of them (their queries are judged whole, located there).
    run.callers = frozenset([m.path for m in modules] + [m.path for m in run.importers])


def _changed_files(run: Run) -> Iterator[Finding]:
    """Every query of the changed scan-path files: selects (bound, fairness, attempts) and CAS wakes."""
    ctx, opts, tally = run.ctx, run.ctx.opts, run.tally
    for path in run.changed:
        module = ctx.program.module(path)
        if module is None:
            continue
        found = [
            q for q in queries(module, opts, callers=run.callers)
            if in_scan_paths(q.path, opts) and identity(q) not in run.judged
        ]
        run.judged.update(identity(q) for q in found)
        for query in found:
            touched = _touched(ctx, query)
            tally.changed += touched
            if query.kind == "update":
                is_cas, finding = check_cas(ctx, module, query, opts)
                tally.cas += is_cas
                tally.cas_bad += finding is not None
                yield from _kept(run, finding, touched)
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
                yield from _kept(run, finding, touched)
            if result.fair_column in opts.attempts_columns:
                # Judged on its own change scope: a changed helper can break an unchanged scan.
                status, attempts = check_attempts(ctx, query, result.fair_column, opts)
                tally.attempts_bumped += status == "bumped"
                if attempts is not None:
                    run.blocking += 1
                    yield attempts


def _through_imports(run: Run) -> Iterator[Finding]:
    """Scans of unchanged files that the change reaches through an import (the
    bound's constant raised in the file it comes from). Only what a changed line
    makes wrong is reported: the rest of an unchanged file is not this patch's."""
    ctx, opts = run.ctx, run.ctx.opts
    for module in run.importers:
        for query in queries(module, opts, callers=run.callers):
            if query.kind == "update" or identity(query) in run.judged or not in_scan_paths(query.path, opts):
                continue
            run.judged.add(identity(query))
            result = check_select(ctx, module, query, opts)
            reached = [f for f in result.findings if f.severity is not Severity.CONSIDER
                       and any(_touches(ctx, r) for r in f.related)]
            run.tally.changed += bool(reached)
            run.blocking += len(reached)
            yield from reached


def _by_role(run: Run) -> Iterator[Finding]:
    """Reads of other tables reached from recovery entry points and repeated code, judged whole:
    scope decides what is the patch's and what is pre-existing."""
    modules = [m for m in (run.ctx.program.module(p) for p in run.changed) if m is not None]
    found, run.entries, run.role_reads = role_scans(run.ctx, modules, run.ctx.opts)
    run.blocking += len(found)
    return iter(found)


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


def _kept(run: Run, finding: Finding | None, touched: bool) -> Iterator[Finding]:
    if finding is None:
        return
    # Reported either way: scope decides what is the patch's, and an issue in
    # an unchanged query is shown as pre-existing (or counted by --scope all).
    if touched or finding.severity is not Severity.CONSIDER:
        run.blocking += 1
        yield finding
    if not touched and finding.severity is not Severity.CONSIDER:
        run.tally.unchanged_issues += 1


def _names_a_table(ctx: "ReviewContext", module: "Module") -> bool:
    """The module declares, imports or reads (`Ns.T`) a scanned table in its parsed code: an
    unparsed region of it may hide a scan whatever its own words."""
    tables = ctx.opts.tables
    if any(table in module.declarations for table in tables):
        return True
    if any(imp.imported in tables for imp in module.imports.values()):
        return True
    return any(ctx.program.invocations(table, module.path) for table in sorted(tables))


def _unexamined(run: Run, findings: tuple[Finding, ...]) -> str:
    if run.entries:
        # Origins alone are no examination: "0 changed queries" is never a verified scan.
        return (f"{plural(run.entries, 'origin')} (recovery entry points, repeated code) in the change, "
                "but no changed query and no multi-row read reached from them: no query to judge")
    return ("no changed scan or wake CAS over " + "/".join(sorted(run.ctx.opts.tables))
            + ", and no recovery entry point (`recovery_entries`) or repeated code (`repeat_drivers`, "
            "loops) in a changed scan-path file")


def _proved(run: Run, findings: tuple[Finding, ...]) -> str:
    roles = (f"; {plural(run.entries, 'origin')} (recovery entry points, repeated code) reaching "
             f"{plural(run.role_reads, 'read')} of other tables") if run.role_reads else ""
    return _summary(run.tally, run.ctx.opts) + roles


TEMPLATE = Template(
    reading=Reading(
        idioms="scan",
        unchecked="queries",
        region_title="Unparsed region in a scanned file",
        tokens=lambda opts: opts.tables,
        within="paths",
        inspects=_names_a_table,
        notes_without_idioms=False,
    ),
    nothing="no changed production TypeScript file",
    start=Run,
    prepare=_prepare,
    checks=(_changed_files, _through_imports, _by_role),
    examined=lambda run: (run.tally.changed + run.role_reads) or run.blocking,
    unexamined=_unexamined,
    proved=_proved,
    phrases=None,  # the basis counts the unbounded and unresolved scans itself
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="Recovery and wake scans stay bounded (.limit <= bound) and fair (attempts-ordered, attempts bumped); CAS wakes skip settled rows.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    infer=infer,
    infer_hints=HINTS,
)
