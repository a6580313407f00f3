"""The configured layer graph: which layer a file or a package belongs to, and which edges are allowed.

Configuration is two lists of strings (`layers`, `allowed`; see spec.py). A
malformed entry raises `LayerConfigError`: the family then fails closed
(`error`) naming the entry, instead of judging with half a graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from reviewer.engine.globs import matches


class LayerConfigError(ValueError):
    pass


@dataclass(frozen=True)
class Layer:
    name: str
    paths: tuple[str, ...]  # path globs of the layer's files
    packages: tuple[str, ...]  # package names; each covers its subpaths


@dataclass(frozen=True)
class LayerGraph:
    layers: tuple[Layer, ...]
    edges: dict[str, frozenset[str]]  # importing layer -> layers it may import (itself excluded)
    origin: str = ""  # where the graph comes from when not configured (declared.py)
    # (importing layer, imported layer) -> why a forbidden edge is forbidden, beyond the graph itself
    why: Mapping[tuple[str, str], str] = field(default_factory=dict)

    def names(self) -> tuple[str, ...]:
        return tuple(layer.name for layer in self.layers)

    def of_path(self, path: str, package_dirs: dict[str, str]) -> str | None:
        """The layer whose path globs hold `path`; for a layer without globs, whose packages' directory does.

        `package_dirs` maps workspace package names to their directories (`packages/core`).
        """
        for layer in self.layers:
            if layer.paths:
                if matches(path, layer.paths):
                    return layer.name
                continue
            for package in layer.packages:
                folder = package_dirs.get(package)
                if folder is not None and (path.startswith(folder + "/") or folder == ""):
                    return layer.name
        return None

    def of_package(self, specifier: str) -> str | None:
        """The layer naming the package `specifier` imports (`@opencode-ai/core/session` -> core)."""
        for layer in self.layers:
            for package in layer.packages:
                if specifier == package or specifier.startswith(package + "/"):
                    return layer.name
        return None

    def allowed(self, source: str, target: str) -> bool:
        return source == target or target in self.edges.get(source, frozenset())

    def forbidden_from(self, source: str) -> tuple[str, ...]:
        """The layers `source` may not import: non-empty means an unknown target could cross the graph."""
        return tuple(n for n in self.names() if not self.allowed(source, n))

    def may_import(self, source: str) -> tuple[str, ...]:
        return tuple(sorted(self.edges.get(source, frozenset())))

    def overlaps_folder(self, folder: str) -> bool:
        """Whether some layer's files may live under `folder` (a package whose subpath did not resolve)."""
        prefix = folder + "/" if folder else ""
        for layer in self.layers:
            for glob in layer.paths:
                head = glob.split("*", 1)[0]
                if head.startswith(prefix) or prefix.startswith(head):
                    return True
        return False


def _is_path_glob(member: str) -> bool:
    return "/" in member and not member.startswith("@")


def parse_graph(layers: tuple[str, ...], allowed: tuple[str, ...]) -> LayerGraph:
    parsed: list[Layer] = []
    seen: set[str] = set()
    for entry in layers:
        name, sep, rest = entry.partition(":")
        name = name.strip()
        members = [m.strip() for m in rest.split(",") if m.strip()]
        if not sep or not name or not members:
            raise LayerConfigError(f"layers entry {entry!r} is not `<layer>: <glob or package>, ...`")
        if name in seen:
            raise LayerConfigError(f"layer {name!r} is declared twice in `layers`")
        seen.add(name)
        paths = tuple(m for m in members if _is_path_glob(m))
        packages = tuple(m for m in members if not _is_path_glob(m))
        parsed.append(Layer(name, paths, packages))
    edges: dict[str, frozenset[str]] = {}
    for entry in allowed:
        source, sep, rest = entry.partition("->")
        source = source.strip()
        targets = [t.strip() for t in rest.split(",") if t.strip()]
        if not sep or not source:
            raise LayerConfigError(f"allowed entry {entry!r} is not `<layer> -> <layer>, ...`")
        unknown = [n for n in [source, *targets] if n not in seen]
        if unknown:
            raise LayerConfigError(f"allowed entry {entry!r} names undeclared layer(s): {', '.join(unknown)}")
        edges[source] = edges.get(source, frozenset()) | frozenset(t for t in targets if t != source)
    return LayerGraph(tuple(parsed), edges)
