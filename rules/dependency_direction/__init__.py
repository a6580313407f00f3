"""dependency-direction: runtime imports follow the configured layer graph.

Every changed TypeScript file that belongs to a layer (`layers`: path globs
and package names) has each of its import sites judged: static imports,
re-exports, `import = require()`, dynamic `import("x")` and `require("x")`.
The specifier is resolved (relative paths, tsconfig `paths`, package
`imports`, workspace package names and their `exports` maps) to a file or a
package, hence a layer; an edge the graph does not allow (`allowed`) is a
violation. `import type` / `export type` vanish at run time and are allowed
unless `type_imports = "checked"`; `import { type A }` is not erased whole and
is reported apart. An import the reviewer cannot resolve from a file whose
layer has forbidden neighbours is a `consider` note, never silence.

Every site of a changed layered file is judged; the engine's scope keeps the
ones on changed lines (the rest are shown as pre-existing).

This package: the declarations (`spec`), the graph (`layers`), resolution
(`workspace`), the sites of a file (`sites`), the verdict on one site
(`judge`), and here the run over the changed files and its summary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reviewer.change.changeset import is_source
from reviewer.engine.api import Family, Outcome
from reviewer.report.model import Finding, Location
from reviewer.typescript import error_scope, words_on_lines
from reviewer.rules.dependency_direction.judge import Tally, judge
from reviewer.rules.dependency_direction.layers import LayerConfigError, LayerGraph, parse_graph
from reviewer.rules.dependency_direction.sites import sites, understood_errors
from reviewer.rules.dependency_direction.spec import (
    CHECKS,
    FAMILY_ID,
    OPTIONS,
    TYPE_IMPORTS_ALLOWED,
    TYPE_IMPORTS_CHECKED,
)
from reviewer.rules.dependency_direction.workspace import Workspace

if TYPE_CHECKING:
    from reviewer.change.changeset import ChangedFile
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module

# Words an ERROR region must hold for it to hide an import site.
_IMPORT_WORDS = frozenset({"import", "export", "require"})


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural or word + 's')}"


def _graph(ctx: "ReviewContext") -> LayerGraph:
    if ctx.opts.type_imports not in (TYPE_IMPORTS_ALLOWED, TYPE_IMPORTS_CHECKED):
        raise LayerConfigError(
            f"type_imports must be {TYPE_IMPORTS_ALLOWED!r} or {TYPE_IMPORTS_CHECKED!r}, not {ctx.opts.type_imports!r}"
        )
    return parse_graph(ctx.opts.layers, ctx.opts.allowed)


def _parse_errors(ctx: "ReviewContext", cf: "ChangedFile", module: "Module", notes: list[Finding]) -> str | None:
    """An ERROR region that may hide an import: over changed lines the family cannot judge; elsewhere a note."""
    understood = understood_errors(module)
    for start, end in sorted(ctx.program.parse_errors(cf.path)):
        if start == end and start in understood:
            continue
        first, last = error_scope(module, start, end)
        if not _IMPORT_WORDS & words_on_lines(module, first, last):
            continue
        if cf.touches(start, end):
            return f"{cf.path}:{start}-{end} does not parse (tree-sitter ERROR) inside changed lines and may hold an import"
        notes.append(ctx.finding(
            "parse-error",
            title="Unparsed region with an import in a layered file",
            message=(
                f"{cf.path}:{start}-{end} did not parse; an import inside it was not checked against the layer "
                "graph. The region is outside the patch's changes."
            ),
            location=Location(cf.path, start, end),
            anchor=f"parse-error|{cf.path}|{start}",
        ))
    return None


def _summary(t: Tally, layers: list[str]) -> str:
    parts = [f"{_plural(t.sites, 'import site')} in {_plural(len(layers), 'changed file')} of layer(s) "
             + ", ".join(sorted(set(layers)))]
    if t.crossing:
        parts.append(f"{t.crossing} cross to another layer along allowed edges")
    if t.type_only:
        parts.append(f"{_plural(t.type_only, 'type-only import')} of a forbidden layer (allowed: erased at run time)")
    if t.violations:
        parts.append(f"{_plural(t.violations, 'import')} against the layer graph")
    if t.unresolved:
        parts.append(f"{t.unresolved} not resolved to a layer")
    return "; ".join(parts)


def run(ctx: "ReviewContext") -> Outcome:
    graph = _graph(ctx)
    ws = Workspace(ctx)
    files = [
        (f, layer)
        for f in sorted(ctx.changeset.files, key=lambda f: f.path)
        if f.status.value != "deleted" and f.patched_text is not None and is_source(f.path)
        and (layer := graph.of_path(f.path, ws.folders)) is not None
    ]
    if not files:
        shown = "; ".join(
            f"{layer.name}: {', '.join(layer.paths + layer.packages)}" for layer in graph.layers
        )
        return Outcome(f"no changed TypeScript file in a layer ({shown})")
    tally = Tally()
    findings: list[Finding] = []
    for cf, layer in files:
        module = ctx.program.module(cf.path)
        if module is None:
            continue
        unreadable = _parse_errors(ctx, cf, module, findings)
        if unreadable:
            return Outcome(unreadable, unreadable=unreadable)
        for site in sites(module, ctx.program.fold):
            found = judge(ctx, graph, ws, layer, site, tally)
            if found is not None:
                findings.append(found)
    summary = _summary(tally, [layer for _, layer in files])
    # A layered file without any import still was looked at: its imports are none.
    return Outcome(summary, tuple(findings), examined=tally.sites or len(files))


FAMILY = Family(
    id=FAMILY_ID,
    summary="Runtime imports (static, re-exports, dynamic import(), require()) follow the configured layer graph.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
