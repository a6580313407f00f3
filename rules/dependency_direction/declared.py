"""The layer graph a workspace declares: each package a layer, each declared workspace dependency an edge.

A monorepo already states its layering in its manifests: `packages/console`
lists `@acme/wire` under `dependencies` and not `@acme/agent`, so console's
runtime code may load wire and never agent. An import of a workspace package
the importer does not declare works only because the workspace links every
package beside every other; installed, bundled or built in dependency order,
it breaks, and it is exactly the edge a layering rule forbids.

This graph is used when reviewer.toml sets no `layers` and the default graph
(opencode's) names no package or file of the tree (`applies`), and `reviewer
init` proposes it as `layers`/`allowed` with `package.json:line` evidence.

Edges come from `dependencies`, `peerDependencies` and `optionalDependencies`
(a `devDependencies` entry serves tests and tools, not production code). The
base tree's manifests are read first; an edge a patch adds to a manifest is
taken only when it keeps the package graph acyclic: a patch may declare a new
dependency, not one that makes two layers depend on each other.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

from reviewer.engine.api import Evidence
from reviewer.rules.dependency_direction.layers import Layer, LayerGraph

if TYPE_CHECKING:
    from reviewer.engine.context import Production, TreeView

RUNTIME_FIELDS = ("dependencies", "peerDependencies", "optionalDependencies")
DEV_FIELD = "devDependencies"
ORIGIN = "the workspace's package.json dependencies"


@dataclass(frozen=True)
class Manifest:
    name: str
    path: str
    runtime: tuple[str, ...]  # every package name under a runtime field
    dev: tuple[str, ...]
    lines: dict[str, int]  # declared name -> line of its key in the manifest (the name's own line for "")


def _manifest(path: str, text: str | None) -> Manifest | None:
    try:
        data = json.loads(text) if text is not None else None
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str) or not data["name"]:
        return None

    def names(*fields: str) -> tuple[str, ...]:
        out: list[str] = []
        for key in fields:
            value = data.get(key)
            if isinstance(value, dict):
                out += [k for k in value if isinstance(k, str)]
        return tuple(sorted(set(out)))

    lines: dict[str, int] = {}
    keys = {data["name"], *names(*RUNTIME_FIELDS, DEV_FIELD)}
    for number, line in enumerate((text or "").splitlines(), 1):
        stripped = line.strip()
        # A line `"<key>":` names the key its leading string is, when written as json.dumps writes it:
        # read that one string instead of trying every key on every line (a manifest of a hundred
        # dependencies is a hundred lines).
        key = _leading_key(stripped)
        if key is not None and key in keys and key not in lines:
            lines[key] = number
        if "" not in lines and stripped.startswith('"name"'):
            lines[""] = number
    return Manifest(data["name"], path, names(*RUNTIME_FIELDS), names(DEV_FIELD), lines)


def _leading_key(stripped: str) -> str | None:
    """The key of a line that starts `"<key>":`, spelt exactly as `json.dumps(key)`, else None."""
    if not stripped.startswith('"'):
        return None
    try:
        key, end = json.decoder.scanstring(stripped, 1)
    except ValueError:
        return None
    return key if stripped[end:end + 1] == ":" and stripped[:end] == json.dumps(key) else None


def _manifests(tree: "TreeView", paths: Iterable[str], production: "Production") -> dict[str, Manifest]:
    """Package name -> manifest, for the production packages below the root (the root is the workspace)."""
    out: dict[str, Manifest] = {}
    for path in sorted(paths):
        if not path.endswith("/package.json") or "node_modules/" in path or production.why_not(path):
            continue
        found = _manifest(path, tree.text(path))
        if found is not None and found.name not in out:
            out[found.name] = found
    return out


def _reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            stack += sorted(edges.get(node, ()))
    return False


@dataclass(frozen=True)
class Declared:
    graph: LayerGraph
    evidence: tuple[Evidence, ...]
    manifests: dict[str, str]  # package -> its package.json


def declared_graph(base: "TreeView", production: "Production", patched: "TreeView | None" = None,
                   changed: Iterable[str] = ()) -> Declared | None:
    """The graph the manifests declare, or None when fewer than two workspace packages declare one.

    `patched`/`changed`: the patched tree and the manifest paths the patch changed (a review); a new
    package comes from its patched manifest, a new edge only when it closes no cycle.
    """
    packages = _manifests(base, base.paths(), production)
    later: dict[str, Manifest] = {}
    if patched is not None:
        for name, manifest in _manifests(patched, [p for p in changed if patched.exists(p)], production).items():
            if name not in packages:
                packages[name] = manifest
            else:
                later[name] = manifest
    if len(packages) < 2:
        return None
    edges: dict[str, set[str]] = {n: {d for d in m.runtime if d in packages and d != n} for n, m in packages.items()}
    why: dict[tuple[str, str], str] = {}
    for name, manifest in sorted(later.items()):
        if manifest.path != packages[name].path:
            continue  # another manifest reusing the name: the base's package stands
        for dep in manifest.runtime:
            if dep not in packages or dep == name or dep in edges[name]:
                continue
            if _reaches(edges, dep, name):
                why[(name, dep)] = (f"this patch declares it in {manifest.path}, but `{dep}` already depends on "
                                    f"`{name}`: the two packages would depend on each other")
            else:
                edges[name].add(dep)
    for name, manifest in packages.items():
        for dep in manifest.dev:
            if dep in packages and dep not in edges[name]:
                why.setdefault((name, dep), f"{manifest.path} declares it only under `devDependencies`, "
                                            "which production code is not installed with")
    # Innermost folders first: a file belongs to the deepest package holding it.
    order = sorted(packages, key=lambda n: (-posixpath.dirname(packages[n].path).count("/"), n))
    layers = tuple(Layer(n, (), (n,)) for n in order)
    graph = LayerGraph(layers, {n: frozenset(e) for n, e in edges.items() if e}, origin=ORIGIN, why=why)
    evidence: list[Evidence] = []
    for name in sorted(packages):
        manifest = packages[name]
        for dep in sorted(edges[name]):
            line = manifest.lines.get(dep, manifest.lines.get("", 1))
            evidence.append(Evidence(manifest.path, line, f"`{name}` declares `{dep}`"))
        if not edges[name]:
            evidence.append(Evidence(manifest.path, manifest.lines.get("", 1),
                                     f"`{name}` declares no workspace package"))
    return Declared(graph, tuple(evidence), {n: m.path for n, m in packages.items()})


def applies(layers: tuple[Layer, ...], package_names: Iterable[str]) -> bool:
    """Whether the default graph names a package of this workspace. Its path globs alone do not count:
    another code base's `packages/core/src` is not opencode's Core layer."""
    names = set(package_names)
    return any(p in names for layer in layers for p in layer.packages)
