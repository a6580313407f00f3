"""Judging one import site against the layer graph: a finding, a note, or nothing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from reviewer.report.model import Finding, Location
from reviewer.rules.dependency_direction.layers import LayerGraph
from reviewer.rules.dependency_direction.sites import TYPE_ONLY, TYPE_SPECIFIERS, Site
from reviewer.rules.dependency_direction.spec import TYPE_IMPORTS_CHECKED
from reviewer.rules.dependency_direction.workspace import FILE, PACKAGE, UNRESOLVED, Target, Workspace

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


@dataclass
class Tally:
    """What the summary says about the sites examined."""

    sites: int = 0
    crossing: int = 0  # imports of another layer, allowed
    type_only: int = 0  # type-only imports of a forbidden layer, allowed by `type_imports`
    violations: int = 0
    unresolved: int = 0


def _names(layers: tuple[str, ...]) -> str:
    return ", ".join(f"`{n}`" for n in layers) if layers else "no other layer"


def _target_layer(graph: LayerGraph, ws: Workspace, site: Site, target: Target) -> str | None:
    by_name = graph.of_package(site.specifier) if site.specifier and not site.specifier.startswith(".") else None
    if target.kind == FILE and target.path is not None:
        return graph.of_path(target.path, ws.folders) or by_name
    return by_name


def _where(target: Target) -> str:
    """Where the import leads, for messages: ` (packages/core/src/x.ts, by `exports` of …)`."""
    if target.path is None:
        return f" ({target.reason})" if target.reason else ""
    return f" ({target.path}, by {target.how})" if target.how else f" ({target.path})"


def _related(ctx: "ReviewContext", ws: Workspace, target: Target, layer: str) -> tuple[Location, ...]:
    if target.kind == FILE and target.path is not None and ctx.patched.exists(target.path):
        return (Location(target.path, 1, 1, f"the `{layer}` module the import loads"),)
    package = ws.packages.get(target.package) if target.package is not None else None
    if package is not None:
        return (Location(package.manifest, 1, 1, f"the `{layer}` package the import names"),)
    return ()


def _unresolved(ctx: "ReviewContext", site: Site, source: str, why: str, forbidden: tuple[str, ...]) -> Finding:
    shown = f"`{site.specifier}`" if site.specifier is not None else "a specifier computed at run time"
    loads = f"loads {shown}, which the reviewer could not resolve ({why})" if site.specifier is not None else (
        "loads a module named by a value computed at run time")
    return ctx.finding(
        "unresolved-import",
        title=f"Import of {shown} not placed in a layer",
        message=(
            f"`{site.written}` in `{source}` code {loads}; "
            f"`{source}` may not depend on {_names(forbidden)}, so check by hand that it loads none of them, "
            "or write a specifier the reviewer can resolve."
        ),
        location=Location(site.path, site.line, site.end_line),
        anchor=f"unresolved|{site.normalized}",
    )


def _violation(
    ctx: "ReviewContext", graph: LayerGraph, ws: Workspace, site: Site, source: str, layer: str, target: Target
) -> Finding:
    allowed = _names(graph.may_import(source))
    where = _where(target)
    location = Location(site.path, site.line, site.end_line)
    related = _related(ctx, ws, target, layer)
    anchor = f"{site.mode}|{source}->{layer}|{site.normalized}"
    if site.mode == TYPE_SPECIFIERS:
        return ctx.finding(
            "type-specifier-import",
            title=f"`{source}` loads `{layer}` through type-only specifiers",
            message=(
                f"`{site.written}` names only types, but with `verbatimModuleSyntax` the statement is kept as "
                f"an empty import and still loads `{site.specifier}`{where}, in layer `{layer}`, when this "
                f"`{source}` module loads; `{source}` may depend on {allowed}. "
                "Write `import type { … }` (`export type { … }`) so it is erased."
            ),
            location=location,
            related=related,
            failure_sequence=(
                f"TypeScript erases the `type` specifiers of `{site.written}` and keeps `import {{}} from "
                f"\"{site.specifier}\"`",
                f"loading the `{source}` module evaluates `{site.specifier}` and its imports from the `{layer}` layer",
                f"`{source}` now fails to load wherever `{layer}`'s code cannot run, although it uses none of it",
            ),
            anchor=anchor,
        )
    if site.mode == TYPE_ONLY:
        return ctx.finding(
            "type-import",
            title=f"`{source}` imports types of `{layer}`",
            message=(
                f"`{site.written}` imports types from `{site.specifier}`{where} in layer `{layer}`; "
                f"`type_imports = \"{TYPE_IMPORTS_CHECKED}\"` holds types to the layer graph too, and `{source}` may "
                f"depend on {allowed}. Move the type down into an allowed layer, or depend on one there."
            ),
            location=location,
            related=related,
            anchor=anchor,
        )
    verb = "re-exports" if site.kind == "export" else "loads"
    spec = f"`{site.specifier}`"
    kind = "" if site.kind in ("import", "export") else f" ({site.describe})"
    hint = " (or `import type` if only its types are needed)" if ctx.opts.type_imports != TYPE_IMPORTS_CHECKED else ""
    if graph.origin:
        return _undeclared(ctx, graph, site, source, layer, target, related, anchor, verb, kind, hint)
    return ctx.finding(
        "layer-violation",
        title=f"`{source}` depends on `{layer}` at run time",
        message=(
            f"`{site.written}`{kind} {verb} {spec}{where}, which is in layer `{layer}`, from "
            f"`{source}` code; the layer graph lets `{source}` depend on {allowed}, never `{layer}`. "
            f"Move what is needed into an allowed layer and import it from there{hint}."
        ),
        location=location,
        related=related,
        failure_sequence=(
            f"a consumer loads `{site.path}` (layer `{source}`)",
            f"line {site.line} {verb} {spec} and with it the `{layer}` layer's own module graph "
            "(its services, side effects and runtime-only dependencies)",
            f"`{source}` can no longer load or ship without `{layer}`: it breaks where `{layer}` cannot run "
            f"and whenever `{layer}` changes, and the packages may form a cycle",
        ),
        anchor=anchor,
    )


def _undeclared(ctx: "ReviewContext", graph: LayerGraph, site: Site, source: str, layer: str, target: Target,
                related: tuple[Location, ...], anchor: str, verb: str, kind: str, hint: str) -> Finding:
    """A layer violation against the graph the workspace's manifests declare (declared.py)."""
    why = graph.why.get((source, layer))
    declared = ", ".join(f"`{n}`" for n in graph.may_import(source)) or "none"
    return ctx.finding(
        "layer-violation",
        title=f"`{source}` loads `{layer}`, which its package.json does not declare",
        message=(
            f"`{site.written}`{kind} {verb} `{site.specifier}`{_where(target)}, the workspace package `{layer}`, "
            f"from `{source}` code; of the workspace's packages `{source}` declares {declared}, not `{layer}`"
            + (f" ({why})" if why else "") + ". With no layer graph in reviewer.toml, the dependencies each "
            "package.json declares are the graph. Import from a package it declares" + hint
            + ", or declare the dependency where that keeps the packages acyclic."
        ),
        location=Location(site.path, site.line, site.end_line),
        related=related,
        failure_sequence=(
            f"inside the workspace line {site.line} resolves only because every package is linked beside every other",
            f"`{source}` is installed, bundled or built on its own, or before `{layer}` (dependency order "
            "follows the manifests)",
            f"loading `{site.path}` fails to resolve `{site.specifier}`, or drags `{layer}`'s module graph "
            f"into `{source}` unseen by every tool that reads the manifests",
        ),
        anchor=anchor,
    )


def judge(ctx: "ReviewContext", graph: LayerGraph, ws: Workspace, source: str, site: Site, tally: Tally) -> Finding | None:
    """The finding or note for one site of a file in layer `source`, or None when it follows the graph."""
    tally.sites += 1
    forbidden = graph.forbidden_from(source)
    if site.specifier is None:
        if not forbidden:
            return None
        tally.unresolved += 1
        return _unresolved(ctx, site, source, "the specifier is computed at run time", forbidden)
    target = ws.resolve(site.path, site.specifier)
    layer = _target_layer(graph, ws, site, target)
    if layer is None:
        could_cross = target.kind == UNRESOLVED or (
            target.kind == PACKAGE and target.package is not None
            and graph.overlaps_folder(ws.packages[target.package].folder)
        )
        if not could_cross or not forbidden:
            return None
        tally.unresolved += 1
        return _unresolved(ctx, site, source, target.reason, forbidden)
    if graph.allowed(source, layer):
        tally.crossing += layer != source
        return None
    if site.mode == TYPE_ONLY and ctx.opts.type_imports != TYPE_IMPORTS_CHECKED:
        tally.type_only += 1
        return None
    tally.violations += 1
    return _violation(ctx, graph, ws, site, source, layer, target)

