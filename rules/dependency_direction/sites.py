"""The import sites of one file: every place it makes another module load.

Static sites are the module-scope `import` / `export … from` statements and
`import x = require("…")`; dynamic sites are calls anywhere that load a module (`Call.loads`: `import("…")`,
`require("…")`, `import.meta.require("…")`, `createRequire(import.meta.url)("…")`
and a name bound to `createRequire(..)`). Ambient blocks (`declare module "x" {}`)
hold types only and are not read.

The model's `Module.imports` keeps the names an import binds but not where
the statement is, whether it is `import type`, side-effect imports or the
specifier of a re-export, so the statements are read here from the module's
top-level syntax (`Module.root`, attribute reads only: no tree-sitter import).
This is the `Module.import_statements` query proposed for reviewer.typescript
in the family's hand-over; once the model has it, this module shrinks to the
dynamic sites.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from reviewer.typescript import Expr

if TYPE_CHECKING:
    from reviewer.typescript import Module

RUNTIME = "runtime"
TYPE_ONLY = "type"  # `import type`, `export type`: erased
TYPE_SPECIFIERS = "type-specifiers"  # `import { type A }`: the clause is erased, the statement is not


@dataclass(frozen=True)
class Site:
    """One place a file loads another module."""

    path: str
    kind: str  # "import", "export", "import-require", "dynamic-import", "require"
    specifier: str | None  # None: computed at run time
    mode: str  # RUNTIME, TYPE_ONLY or TYPE_SPECIFIERS
    line: int
    end_line: int
    written: str  # the statement or call as written, for messages
    normalized: str  # reformatting-proof text, for anchors
    changed: bool

    @property
    def describe(self) -> str:
        return {
            "import": "import",
            "export": "re-export",
            "import-require": "`import = require()`",
            "dynamic-import": "dynamic `import()`",
            "require": "`require()`",
        }[self.kind]


def _kinds(node: Any) -> list[str]:
    return [child.type for child in node.children]


def _string_child(module: "Module", node: Any) -> str | None:
    for child in node.children:
        if child.type == "string":
            return Expr(module, child).string_value
    return None


def _all_specifiers_typed(container: Any, specifier_type: str) -> bool:
    """`{ type A, type B }`: every specifier carries its own `type` marker (and there is one at least)."""
    specs = [c for c in container.children if c.type == specifier_type]
    return bool(specs) and all("type" in _kinds(spec) for spec in specs)


def _import_mode(node: Any) -> str:
    kinds = _kinds(node)
    if "type" in kinds:
        return TYPE_ONLY
    clause = next((c for c in node.children if c.type == "import_clause"), None)
    if clause is None:
        return RUNTIME  # `import "x"` or `import x = require("x")`
    parts = [c for c in clause.children if c.is_named]
    if len(parts) == 1 and parts[0].type == "named_imports" and _all_specifiers_typed(parts[0], "import_specifier"):
        return TYPE_SPECIFIERS
    return RUNTIME


def _export_mode(node: Any) -> str:
    for child in node.children:
        if child.type == "type":
            return TYPE_ONLY
        # `export type * from "x"` parses as an ERROR node holding the lone `type` keyword.
        if child.type == "ERROR" and [c.type for c in child.children] == ["type"]:
            return TYPE_ONLY
    clause = next((c for c in node.children if c.type == "export_clause"), None)
    if clause is not None and _all_specifiers_typed(clause, "export_specifier"):
        return TYPE_SPECIFIERS
    return RUNTIME


def understood_errors(module: "Module") -> frozenset[int]:
    """Lines of ERROR regions this reader understands (`export type * from`): not parse errors to the family."""
    lines: set[int] = set()
    for node in module.root.children:
        if node.type == "export_statement" and _export_mode(node) == TYPE_ONLY:
            for child in node.children:
                if child.type == "ERROR":
                    lines.add(child.start_point[0] + 1)
    return frozenset(lines)


def _static(module: "Module", node: Any) -> Site | None:
    if node.type == "import_statement":
        require = next((c for c in node.children if c.type == "import_require_clause"), None)
        if require is not None:
            kind, specifier = "import-require", _string_child(module, require)
            mode = TYPE_ONLY if "type" in _kinds(node) else RUNTIME
        else:
            kind, specifier, mode = "import", _string_child(module, node), _import_mode(node)
    elif node.type == "export_statement" and "from" in _kinds(node):
        kind, specifier, mode = "export", _string_child(module, node), _export_mode(node)
    else:
        return None
    expr = Expr(module, node)
    return Site(module.path, kind, specifier, mode, expr.line, expr.end_line, expr.written, expr.normalized,
                expr.changed)


def sites(module: "Module", fold: "Callable[[Expr], object] | None" = None) -> list[Site]:
    """Every import site of the file, in document order. A computed specifier that folds to a
    constant (`require("@a/" + "b")`, `import(CORS)` with `const CORS = ".."`) is that constant."""
    found = [site for node in module.root.children if (site := _static(module, node)) is not None]
    for call in module.calls():
        loads = call.loads
        if loads is None or not call.args:
            continue
        specifier = loads[1]
        if specifier is None and fold is not None:
            folded = fold(call.args[0])
            specifier = folded if isinstance(folded, str) else None
        found.append(Site(
            module.path,
            "dynamic-import" if loads[0] == "import" else "require",
            specifier,
            RUNTIME,
            call.line,
            call.end_line,
            call.written,
            call.normalized,
            call.changed,
        ))
    return sorted(found, key=lambda s: (s.line, s.end_line))
