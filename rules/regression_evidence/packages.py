"""Workspace package names to repository paths: `@opencode-ai/core/session/input` -> `packages/core/src/session/input.ts`.

The model resolves relative specifiers only; opencode's tests import production
code by its workspace package name through the `exports` map of the package's
`package.json`. This reads those maps from the patched tree (once per review,
in the Program's memo) and resolves a specifier the way Node does for the
cases the code base uses: an exact subpath key, or one `*` pattern (the longest
matching prefix wins); a conditional target takes `bun`, `import`, `node` or
`default`, in that order. A package without `exports` resolves a subpath under
its directory, then under `src/`.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from reviewer.typescript import Program

_CONDITIONS = ("bun", "import", "node", "default")
_SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True)
class Package:
    name: str
    directory: str  # "" for the repository root
    exports: Any  # the parsed `exports` field, None when absent


def read_packages(paths: tuple[str, ...], text: Callable[[str], str | None]) -> dict[str, Package]:
    """Every `package.json` of the tree outside `node_modules` that names a package."""
    found: dict[str, Package] = {}
    for path in paths:
        if not (path == "package.json" or path.endswith("/package.json")) or "node_modules/" in path:
            continue
        try:
            data = json.loads(text(path) or "")
        except ValueError:
            continue
        name = data.get("name") if isinstance(data, dict) else None
        if isinstance(name, str) and name and name not in found:
            found[name] = Package(name, posixpath.dirname(path), data.get("exports"))
    return found


class Resolver:
    """Specifiers to repository paths: relative ones through the model, package names through `exports`."""

    def __init__(self, program: Program, packages: Mapping[str, Package], exists: Callable[[str], bool]) -> None:
        self._program = program
        self._packages = packages
        self._exists = exists

    def is_workspace(self, specifier: str) -> bool:
        """Does the specifier name a package of this repository (so failing to resolve it is a blind spot)?"""
        return self._package_of(specifier) is not None

    def resolve(self, from_path: str, specifier: str) -> str | None:
        if specifier.startswith("."):
            return self._program.resolve(from_path, specifier)
        found = self._package_of(specifier)
        if found is None:
            return None
        package, sub = found
        target = _export_target(package.exports, sub) if package.exports is not None else None
        if target is not None:
            return self._file(posixpath.normpath(posixpath.join(package.directory, target)))
        if package.exports is not None:
            return None  # an exports map hides every subpath it does not list
        rest = sub[2:] if sub != "." else "index"
        for base in (rest, f"src/{rest}"):
            path = self._file(posixpath.normpath(posixpath.join(package.directory, base)))
            if path is not None:
                return path
        return None

    def _package_of(self, specifier: str) -> tuple[Package, str] | None:
        for name, package in self._packages.items():
            if specifier == name:
                return package, "."
            if specifier.startswith(name + "/"):
                return package, "./" + specifier[len(name) + 1:]
        return None

    def _file(self, path: str) -> str | None:
        stem, ext = posixpath.splitext(path)
        candidates = [path] if ext in _SOURCE_SUFFIXES else []
        if ext in (".js", ".mjs", ".cjs", ".jsx"):
            candidates += [stem + ".ts", stem + ".tsx"]
        candidates += [path + ".ts", path + ".tsx", path + "/index.ts", path + "/index.tsx"]
        return next((c for c in candidates if self._exists(c)), None)


def _export_target(exports: Any, sub: str) -> str | None:
    """The file an `exports` field maps subpath `sub` ("." or "./x/y") to, or None."""
    if isinstance(exports, str) or (isinstance(exports, dict) and not any(k.startswith(".") for k in exports)):
        return _condition(exports) if sub == "." else None
    if not isinstance(exports, dict):
        return None
    if sub in exports:
        return _condition(exports[sub])
    best: tuple[int, str] | None = None
    for key, value in exports.items():
        if key.count("*") != 1:
            continue
        prefix, suffix = key.split("*")
        if sub.startswith(prefix) and sub.endswith(suffix) and len(sub) >= len(prefix) + len(suffix):
            if best is None or len(prefix) > best[0]:
                star = sub[len(prefix): len(sub) - len(suffix)]
                target = _condition(value)
                if target is not None:
                    best = (len(prefix), target.replace("*", star))
    return best[1] if best is not None else None


def _condition(value: Any, depth: int = 0) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and depth < 8:
        for condition in _CONDITIONS:
            if condition in value:
                found = _condition(value[condition], depth + 1)
                if found is not None:
                    return found
    return None
