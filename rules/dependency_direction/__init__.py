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
(`judge`), and here the family on the engine's template and its basis.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from reviewer.engine.api import Family, Proposal
from reviewer.engine.template import Reading, Template
from reviewer.text import plural
from reviewer.report.model import Finding
from reviewer.rules.dependency_direction.judge import Tally, judge
from reviewer.rules.dependency_direction.declared import applies, declared_graph
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
    from reviewer.engine.context import Corpus, ReviewContext

# Words an ERROR region must hold for it to hide an import site.
_IMPORT_WORDS = ("import", "export", "require")


@dataclass
class Run:
    """One run's state: the layer graph, the workspace, the layer of each reviewed file, the tally."""

    ctx: "ReviewContext"
    graph: LayerGraph
    workspace: Workspace
    changed: tuple[str, ...] = ()
    layers: dict[str, str] = field(default_factory=dict)  # reviewed path -> its layer
    tally: Tally = field(default_factory=Tally)


def _is_default(options: Mapping[str, Any]) -> bool:
    """reviewer.toml sets neither `layers` nor `allowed` (or sets them to the defaults)."""
    return all(tuple(options.get(o.name, o.default)) == tuple(o.default) for o in OPTIONS
               if o.name in ("layers", "allowed"))


def _graph(ctx: "ReviewContext", workspace: Workspace) -> LayerGraph:
    """The configured graph; when reviewer.toml sets none and the defaults name no package of this
    workspace, the graph its manifests declare (declared.py); else the defaults, which then hold nothing."""
    graph = parse_graph(ctx.opts.layers, ctx.opts.allowed)
    if not _is_default(ctx.options) or applies(graph.layers, workspace.packages):
        return graph
    manifests = [f.path for f in ctx.changeset.files if f.path.endswith("package.json")]
    declared = declared_graph(ctx.base, ctx.production, ctx.patched, manifests)
    return declared.graph if declared is not None else graph


def _start(ctx: "ReviewContext") -> Run:
    if ctx.opts.type_imports not in (TYPE_IMPORTS_ALLOWED, TYPE_IMPORTS_CHECKED):
        raise LayerConfigError(
            f"type_imports must be {TYPE_IMPORTS_ALLOWED!r} or {TYPE_IMPORTS_CHECKED!r}, not {ctx.opts.type_imports!r}"
        )
    workspace = Workspace(ctx)
    return Run(ctx, _graph(ctx, workspace), workspace)


def _layered(run: Run) -> tuple[str, ...]:
    """The changed source files that belong to a layer (a file in none has no edge to judge). A layer
    owning its packages' folders owns their production files: a package's tests may load its devDependencies."""
    globbed = {layer.name for layer in run.graph.layers if layer.paths}
    for path in run.ctx.changeset.source_paths():
        layer = run.graph.of_path(path, run.workspace.folders)
        if layer is not None and (layer in globbed or not run.ctx.production.why_not(path)):
            run.layers[path] = layer
    return tuple(sorted(run.layers))


def _nothing(ctx: "ReviewContext") -> str:
    graph = _graph(ctx, Workspace(ctx))
    if graph.origin:
        return f"no changed production file of a workspace package ({len(graph.layers)} declare {graph.origin})"
    shown = "; ".join(f"{layer.name}: {', '.join(layer.paths + layer.packages)}" for layer in graph.layers)
    if _is_default(ctx.options):
        return (f"no changed TypeScript file in a layer; reviewer.toml sets no layer graph, the default one "
                f"({shown}) names no package here, and no workspace of two or more packages declares one")
    return f"no changed TypeScript file in a layer ({shown})"


def _sites(run: Run) -> Iterator[Finding]:
    """Every import site of each layered file, judged against the graph (scope keeps the changed ones)."""
    ctx = run.ctx
    for path in run.changed:
        module = ctx.program.module(path)
        if module is None:
            continue
        for site in sites(module, ctx.program.fold):
            found = judge(ctx, run.graph, run.workspace, run.layers[path], site, run.tally)
            if found is not None:
                yield found


def _proved(run: Run, findings: tuple[Finding, ...]) -> str:
    t, layers = run.tally, [run.layers[p] for p in run.changed]
    parts = [f"{plural(t.sites, 'import site')} in {plural(len(layers), 'changed file')} of layer(s) "
             + ", ".join(sorted(set(layers)))]
    if run.graph.origin:
        parts[0] += f" (the layer graph is {run.graph.origin}: reviewer.toml sets none)"
    if t.crossing:
        parts.append(f"{t.crossing} cross to another layer along allowed edges")
    if t.type_only:
        parts.append(f"{plural(t.type_only, 'type-only import')} of a forbidden layer (allowed: erased at run time)")
    if t.violations:
        parts.append(f"{plural(t.violations, 'import')} against the layer graph")
    if t.unresolved:
        parts.append(f"{t.unresolved} not resolved to a layer")
    return "; ".join(parts)


def _infer(corpus: "Corpus") -> tuple[Proposal, ...]:
    """For `reviewer init`: the graph the review would use, as `layers`/`allowed` entries with evidence."""
    declared = declared_graph(corpus.tree, corpus.production) if _is_default(corpus.options) else None
    if declared is None or applies(parse_graph(corpus.opts.layers, corpus.opts.allowed).layers,
                                   declared.manifests):
        return ()
    graph = declared.graph
    layers = tuple(f"{layer.name}: {layer.name}" for layer in sorted(graph.layers, key=lambda la: la.name))
    # Every package gets an entry, `x -> x` (itself only) when it declares none: an `allowed` left to the
    # defaults would name opencode's layers.
    allowed = tuple(f"{name} -> {', '.join(sorted(graph.edges.get(name, ()))) or name}"
                    for name in sorted(layer.name for layer in graph.layers))
    looked = "workspace packages (package.json files below the root) and the workspace packages they declare"
    return (Proposal("layers", layers, declared.evidence, looked), Proposal("allowed", allowed, declared.evidence, looked))


TEMPLATE = Template(
    reading=Reading(
        idioms="import",
        unchecked="imports (checked against the layer graph)",
        region_title="Unparsed region with an import in a layered file",
        tokens=lambda opts: _IMPORT_WORDS,
        paths=_layered,
        understood=understood_errors,
        notes_without_idioms=False,
    ),
    nothing=_nothing,
    start=_start,
    checks=(_sites,),
    # A layered file without any import still was looked at: its imports are none.
    examined=lambda run: run.tally.sites or len(run.changed),
    proved=_proved,
    phrases=None,  # the basis counts the imports against the graph itself
)


FAMILY = Family(
    id=FAMILY_ID,
    summary="Runtime imports (static, re-exports, dynamic import(), require()) follow the configured layer graph.",
    checks=CHECKS,
    run=TEMPLATE.run,
    options=OPTIONS,
    infer=_infer,
)
