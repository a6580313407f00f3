"""Scans by role: a multi-row read reached from a recovery entry point is a scan, whatever its table.

Configured tables name the scans a maintainer knows about; a restart path
that lists every suspended row of some other table is the same defect. A
*recovery entry point* is a function (or an object property holding one)
whose name matches the `recovery_entries` pattern, in a changed scan-path
file or in a scan-path file that imports one. Its calls are followed `max_helper_depth` deep: to the definition the
model resolves, else, for `x.m()` on a value the model cannot follow (a
service taken from a context), to functions named `m` in the modules the
caller imports. Every select chain in a reached function is judged like a
configured scan: only whether it is bounded (a limit, one row, one entity);
fairness needs an attempts column such a table may not have.
"""

from __future__ import annotations

import dataclasses
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from reviewer.change.changeset import is_typescript
from reviewer.engine import globs
from reviewer.engine.api import Options
from reviewer.report.model import Finding, Location
from reviewer.rules.bounded_scan.chains import Query, queries
from reviewer.rules.bounded_scan.select import check_select

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Call, Function, Module, Program

# Only these say whether a read is bounded; order and attempts are for configured tables.
_BOUND_CHECKS = ("bounded-scan/unbounded", "bounded-scan/bound-too-large", "bounded-scan/unresolved-bound")


@dataclass(frozen=True)
class Reach:
    """How a recovery entry point reaches a function: the entry, then each call taken."""

    entry: "Function"
    calls: tuple["Call", ...]

    def related(self) -> tuple[Location, ...]:
        first = Location(self.entry.path, self.entry.line, self.entry.line,
                         f"recovery entry point `{self.entry.name}` (runs at start-up or restart)")
        hops = tuple(Location(c.path, c.line, c.end_line, f"`{c.callee_text}` leads to the scan") for c in self.calls)
        return (first, *hops)


def importers(ctx: "ReviewContext", modules: list["Module"], opts: Options) -> list["Module"]:
    """Unchanged scan-path modules that import a changed one: their entry points may reach
    a helper the patch changed (the restart code untouched, its scan loosened)."""
    changed = {m.path for m in modules}
    stems = {posixpath.splitext(posixpath.basename(p))[0] for p in changed}
    found: set[str] = set()
    for pattern in opts.scan_paths:
        for path in ctx.patched.paths(globs.literal_prefix(pattern)):
            if path not in changed and is_typescript(path) and globs.matches(path, (pattern,)):
                found.add(path)
    out: list["Module"] = []
    for path in sorted(found):
        text = ctx.patched.text(path) or ""
        # Cheap first: a file that never spells a changed file's name cannot import it.
        if not any(stem in text for stem in stems):
            continue
        module = ctx.program.module(path)
        if module is not None and any(imp.module in changed for imp in module.imports.values()):
            out.append(module)
    return out


def entry_points(modules: list["Module"], opts: Options) -> list["Function"]:
    """Functions of the given modules whose name says they recover or resume work."""
    pattern = opts.recovery_entries
    found = [fn for m in modules for fn in m.functions() if fn.name and pattern.search(fn.name)]
    return sorted(found, key=lambda f: (f.path, f.line))


def _candidates(program: "Program", call: "Call") -> list["Function"]:
    """What a call may run: the model's definition, else same-named functions of the caller's imports."""
    if call.callee_text:
        definition = program.definition(call.path, call.callee_text)
        if definition is not None:
            return [definition]
    method = call.method
    module = program.module(call.path)
    if not method or module is None or call.receiver is None:
        return []
    out: list["Function"] = []
    for path in sorted({imp.module for imp in module.imports.values() if imp.module}):
        target = program.module(path)
        if target is not None:
            out += [fn for fn in target.functions() if fn.name == method]
    return out


def reached(program: "Program", entry: "Function", depth: int) -> Iterator[tuple["Function", Reach]]:
    """Every function `entry` reaches within `depth` calls (itself first), each once, breadth first."""
    seen = {id(entry)}
    frontier = [(entry, Reach(entry, ()))]
    yield entry, Reach(entry, ())
    for _ in range(depth):
        following: list[tuple["Function", Reach]] = []
        for fn, how in frontier:
            for call in fn.all_calls:
                for target in _candidates(program, call):
                    if id(target) in seen:
                        continue
                    seen.add(id(target))
                    step = (target, Reach(how.entry, (*how.calls, call)))
                    following.append(step)
                    yield step
        frontier = following


def _inside(query: Query, fn: "Function") -> bool:
    return query.path == fn.path and fn.line <= query.line and query.end_line <= fn.end_line


def _with_table(ctx: "ReviewContext", opts: Options, table: str) -> Options:
    """The options with `table` added to the scanned tables, so columns of it resolve."""
    values = {**ctx.options, "tables": [*opts.tables, table]}
    return Options(ctx.family.options, values)


def role_scans(ctx: "ReviewContext", modules: list["Module"], opts: Options) -> tuple[list[Finding], int, int]:
    """(findings, recovery entry points, scans they reach) for the changed scan-path modules.

    Reads over configured tables are left to the main run, which judges them whole.
    """
    program = ctx.program
    entries = entry_points([*modules, *importers(ctx, modules, opts)], opts)
    findings: list[Finding] = []
    judged: set[tuple[str, int]] = set()
    for entry in entries:
        for fn, how in reached(program, entry, opts.max_helper_depth):
            module = program.module(fn.path)
            if module is None:
                continue
            for query in queries(module, opts, any_table=True):
                key = (query.path, query.line)
                if query.kind != "select" or not _inside(query, fn) or key in judged or query.table in opts.tables:
                    continue
                judged.add(key)
                result = check_select(ctx, module, query, _with_table(ctx, opts, query.table))
                findings += [_reached(f, how) for f in result.findings if f.rule in _BOUND_CHECKS]
    return findings, len(entries), len(judged)


def _reached(finding: Finding, how: Reach) -> Finding:
    message = (
        f"{finding.message} It is a scan by its role: recovery entry point `{how.entry.name}` "
        f"({how.entry.path}:{how.entry.line}) reaches it, so it runs over every matching row at restart."
    )
    return dataclasses.replace(finding, message=message, related=(*how.related(), *finding.related))
