"""Cross-file names: what a module-level name of a file stands for, through imports, re-exports,
`export *` barrels, namespaces (`export * as N from`) and a module that exports itself as one.

Within a file, which binding an identifier means is the binder's (`binder.py`) and the index's
(scopes of functions); this layer answers from a file's top level, across files, and everything
that resolves a name across files (`Program.definition`, `bound_value`, callee names) goes
through it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import tree_sitter as ts

from reviewer.typescript.module import Module

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_MAX_RESOLVE = 32  # hops through re-exports before giving up (cycles, absurd chains)


@dataclass(frozen=True)
class _Namespace:
    """A module seen as a value (`import * as N`, `export * as N from`)."""

    path: str


@dataclass(frozen=True)
class _Binding:
    """A top-level (possibly dotted) declaration of a module."""

    path: str
    name: str


_Symbol = _Namespace | _Binding


class Resolution:
    """Names across the files of one Program; `module(path)` parses on demand."""

    def __init__(self, module: Callable[[str], Module | None]) -> None:
        self._module = module

    def qualified_head(self, module: Module, name: str) -> str:
        """How the first segment of a reference is reported (see Call.callee): an import's name in its
        module's namespace (`Claim.clear` -> `SessionExecutionClaim.clear`), a package's last segment."""
        imp = module.imports.get(name)
        if imp is None:
            if module.namespace and name in module.exported and name in module.declarations:
                return f"{module.namespace}.{name}"
            return name
        if imp.module is None:
            if imp.imported == "*":
                if not imp.specifier.startswith("."):
                    # `import * as E from "effect/Effect"` reads as `Effect`
                    last = imp.specifier.rstrip("/").rsplit("/", 1)[-1]
                    if _IDENTIFIER.match(last):
                        return last
                return name
            if imp.imported == "default":
                return name
            # `import { ignore } from "effect/Effect"` is `Effect.ignore`: a module of a package
            # named for what it exports (Effect's `effect/Effect`, `effect/Schedule`)
            last = imp.specifier.rstrip("/").rsplit("/", 1)[-1] if "/" in imp.specifier else ""
            if _IDENTIFIER.match(last) and last[:1].isupper() and imp.imported != last:
                return f"{last}.{imp.imported}"
            return imp.imported
        symbol = self._resolve_local(module.path, name, set())
        if isinstance(symbol, _Namespace):
            target = self._module(symbol.path)
            if target is not None and target.namespace:
                return target.namespace
        elif isinstance(symbol, _Binding):
            target = self._module(symbol.path)
            if target is not None and target.namespace and symbol.name != target.namespace:
                return f"{target.namespace}.{symbol.name}"
            return symbol.name
        if imp.imported in ("*", "default"):
            return name
        return imp.imported

    def _resolve_local(self, path: str, name: str, seen: set[tuple[str, str]]) -> _Symbol | None:
        module = self._module(path)
        if module is None or len(seen) > _MAX_RESOLVE:
            return None
        if name in module.declarations:
            return _Binding(path, name)
        imp = module.imports.get(name)
        if imp is not None:
            if imp.module is None:
                return None
            if imp.imported == "*":
                return _Namespace(imp.module)
            return self._resolve_export(imp.module, imp.imported, seen)
        if name == module.namespace:
            return _Namespace(path)
        return None

    def _resolve_export(self, path: str, name: str, seen: set[tuple[str, str]]) -> _Symbol | None:
        if (path, name) in seen or len(seen) > _MAX_RESOLVE:
            return None
        seen.add((path, name))
        module = self._module(path)
        if module is None:
            return None
        export = module.exports.get(name)
        if export is not None:
            if export.kind == "local":
                return self._resolve_local(path, export.target, seen)
            if export.kind == "namespace":
                return _Namespace(export.module) if export.module is not None else None
            return self._resolve_export(export.module, export.target, seen) if export.module else None
        if name in module.exported and name in module.declarations:
            return _Binding(path, name)
        for star in module.star_exports:
            found = self._resolve_export(star, name, seen)
            if found is not None:
                return found
        return None

    def symbol(self, path: str, dotted: str) -> _Symbol | None:
        """What `dotted` names at the top level of `path`: a declaration or a module as a namespace."""
        parts = dotted.split(".")
        seen: set[tuple[str, str]] = set()
        symbol = self._resolve_local(path, parts[0], seen)
        for part in parts[1:]:
            if isinstance(symbol, _Namespace):
                symbol = self._resolve_export(symbol.path, part, seen)
            elif isinstance(symbol, _Binding):
                module = self._module(symbol.path)
                member = f"{symbol.name}.{part}"
                symbol = _Binding(symbol.path, member) if module and member in module.declarations else None
            else:
                return None
        return symbol

    def binding(self, module: Module, dotted: str) -> tuple[Module, ts.Node] | None:
        """The (module, value node) of the top-level declaration `dotted` names from `module`."""
        symbol = self.symbol(module.path, dotted)
        if not isinstance(symbol, _Binding):
            return None
        target = self._module(symbol.path)
        node = target.declarations.get(symbol.name) if target is not None else None
        return (target, node) if target is not None and node is not None else None

    def binding_path(self, path: str, dotted: str) -> tuple[Module, str, ts.Node] | None:
        """`binding`, from a path, with the name declared there."""
        symbol = self.symbol(path, dotted)
        if not isinstance(symbol, _Binding):
            return None
        module = self._module(symbol.path)
        node = module.declarations.get(symbol.name) if module is not None else None
        return (module, symbol.name, node) if module is not None and node is not None else None
