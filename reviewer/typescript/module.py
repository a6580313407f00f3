"""One parsed file: its imports, exports, top-level declarations and namespace.

The header (everything at module scope) is read eagerly because import
resolution of *other* files needs it; the call/function index is built lazily
the first time a rule asks for calls or functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Mapping

import tree_sitter as ts

from reviewer.typescript import calls
from reviewer.typescript import loaders
from reviewer.typescript import syntax as sx
from reviewer.typescript import walk
from reviewer.typescript.calls import function_of_value
from reviewer.typescript.expressions import Facts
from reviewer.typescript.services import yielded_tag

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex
    from reviewer.typescript.expressions import Call, Expr, Function


@dataclass(frozen=True)
class Import:
    """One name a module-scope `import` binds (`import()` and `require()` are not read).

    `imported` is "*" for `import * as N`, "default", or the exported name; `module` the resolved
    repository path (see Program.resolve), None for packages and missing files.
    """

    local: str
    specifier: str
    module: str | None  # resolved repository path; None for packages or missing files
    imported: str  # "*" for a namespace import, "default", or the exported name


@dataclass(frozen=True)
class Export:
    """How a module makes `name` visible: a local binding, a re-export or a namespace."""

    kind: str  # "local" | "reexport" | "namespace"
    target: str  # local binding (local), imported name (reexport), "" (namespace)
    module: str | None  # source module of reexport/namespace


@dataclass(frozen=True)
class Module:
    """One parsed TypeScript file: its imports, exports and top-level declarations.

    `namespace` is the name the file exports itself under (`export * as N from "./self"`), else None;
    `has_errors` whether tree-sitter had to recover from a syntax error. Calls and functions are
    indexed on first use.
    """

    path: str
    text: str
    namespace: str | None
    imports: Mapping[str, Import]
    has_errors: bool
    exports: Mapping[str, Export] = dc_field(repr=False)
    star_exports: tuple[str, ...] = dc_field(repr=False)
    # Top-level bindings by (possibly dotted) name -> the node holding the value:
    # `const A = <value>`, `function f`, object-literal members as "A.b",
    # namespace members as "N.f", enum members as "E.M".
    declarations: Mapping[str, ts.Node] = dc_field(repr=False, compare=False)
    exported: frozenset[str] = dc_field(repr=False)
    root: ts.Node = dc_field(repr=False, compare=False)
    program: Facts = dc_field(repr=False, compare=False)
    # Top-level names bound to `createRequire(..)`: calling one loads a module.
    requirers: frozenset[str] = dc_field(default=frozenset(), repr=False)
    _slot: walk.IndexSlot = dc_field(default_factory=walk.IndexSlot, repr=False, compare=False)

    def declaration_lines(self, name: str) -> tuple[int, int] | None:
        """1-based (first, last) line of the top-level declaration of `name`, or None when this file declares none."""
        node = self.declarations.get(name)
        return (node.start_point[0] + 1, node.end_point[0] + 1) if node is not None else None

    @property
    def index(self) -> "ModuleIndex":
        """The module's call/function index, built by one walk the first time it is asked for.

        Package-internal lookups behind the model's values (call at a node, parents,
        enclosing function, chains, local bindings); rules use `calls()`/`functions()`.
        """
        slot = self._slot
        if slot.built is None:
            slot.built = walk.build_index(self, slot)
        return slot.built

    @property
    def _tables(self) -> "ModuleIndex":
        """The index, or while the walk building it names callees, the one it is filling."""
        slot = self._slot
        return slot.built or slot.building or self.index

    @cached_property
    def dependencies(self) -> frozenset[str]:
        """The repository files this module loads: what it imports (`require` and `import()` at
        top level included), re-exports (`export { a } from`, `export * as N from`) and `export *`s."""
        found = {i.module for i in self.imports.values()} | {e.module for e in self.exports.values()}
        return frozenset(p for p in found | set(self.star_exports) if p)

    @cached_property
    def normal_forms(self) -> sx.NormalForms:
        """`syntax.normalized` of any node of this module's tree, by slicing."""
        return sx.NormalForms(self.root)

    @cached_property
    def has_namespace_blocks(self) -> bool:
        """`namespace N { .. }` at top level (the pre-ESM opencode style)."""
        return any(node.type in ("internal_module", "module") for node in self.declarations.values())

    def scoped_declaration(self, at: ts.Node, name: str) -> str | None:
        """`N.name` when `name` is used inside `namespace N { }` that declares it."""
        if not self.has_namespace_blocks:
            return None
        # While the index is being built, the walk itself knows where it is.
        index = self._tables
        prefixes = index.namespace_labels(at)
        # innermost namespace first: inside `namespace A { namespace B { f() } }`
        # try A.B.f, then A.f
        outer_first = list(reversed(prefixes))
        for depth in range(len(outer_first), 0, -1):
            path = ".".join([*outer_first[:depth], name])
            if path in self.declarations:
                return path
        return None

    def alias_of(self, at: ts.Node, name: str, depth: int = 0, member: bool = False) -> str | None:
        """The import-resolved name a `const` alias used at `at` stands for (`const E = Effect`,
        `const { release } = Claim`), when what it aliases is an import or a top-level declaration
        of this file (a parameter's property is a runtime value, not a name). With `member`, a service
        taken from its tag too: `const locks = yield* Locks` makes `locks.renew` `Locks.renew`."""
        index = self._tables
        if name not in index._alias_names and name not in self.declarations:
            return None  # the common case, asked for every call: no upward walk
        scope = index.enclosing_function(at)
        found = index.alias(scope, name)
        if found is None:
            if index.binds(scope, name):
                return None  # a parameter or variable of that name hides the top-level one
            node = self.declarations.get(name)
            stripped = sx.strip(node) if node is not None else None
            if stripped is None or stripped.type not in ("identifier", "member_expression"):
                return None
            found = (stripped, None)
        value, prop = found
        if value.type == "yield_expression" and (value := yielded_tag(self.program, self, value, member or prop)) is None:
            return None
        path = sx.dotted_path(value)
        head = path.split(".", 1)[0] if path is not None else None
        if head is None or head == name or not (head in self.imports or head in self.declarations):
            return None
        qualified = calls.qualified_name(self, value, depth=depth + _ALIAS_HOP)  # each hop spends depth: cycles end
        if qualified is None:
            return None
        return f"{qualified}.{prop}" if prop is not None else qualified

    def calls(self) -> tuple["Call", ...]:
        """Every call expression of the file, in document order (pre-order: outer before inner).

        `new X()` is not a call; a tagged template (tag`..`) is.
        """
        return self.index.calls

    def functions(self) -> tuple["Function", ...]:
        """Every function of the file (declarations, expressions, arrows, generators, methods), in document order."""
        return self.index.functions

    def constant(self, name: str) -> "Expr | None":
        """The value expression of top-level `name` (dotted for object/namespace/enum members), unless a function.

        This file's declarations only: imports are not followed (see `Program.value`, `Program.definition`).
        """
        node = self.declarations.get(name)
        if node is None or sx.is_function(node):
            return None
        return self.index.expr(node)

    def declared_function(self, name: str) -> "Function | None":
        """The function a top-level binding denotes (`const f = Effect.fn(..)(function* ..)`)."""
        node = self.declarations.get(name)
        if node is None:
            return None
        target = function_of_value(node, self.program.roles.combinators)
        return self.index.function_at(target) if target is not None else None


# Depth of qualified_name one alias hop costs (its limit, 64, stops alias chains after 8).
_ALIAS_HOP = 8
# Nesting of `namespace` blocks read for declarations (see _Header._namespace).
_MAX_NAMESPACE_DEPTH = 32


def read_module(
    path: str,
    text: str,
    tree: ts.Tree,
    program: Facts,
    resolve: Callable[[str, str], str | None],
) -> Module:
    header = _Header(path, resolve)
    header.read(tree.root_node)
    return Module(
        path=path,
        text=text,
        namespace=header.namespace,
        imports=MappingProxyType(header.imports),
        has_errors=tree.root_node.has_error,
        exports=MappingProxyType(header.exports),
        star_exports=tuple(header.stars),
        declarations=MappingProxyType(header.declarations),
        exported=frozenset(header.exported),
        root=tree.root_node,
        program=program,
        requirers=frozenset(header.requirers),
    )


class _Header:
    """Accumulates the module-scope facts of one file while reading it once."""

    def __init__(self, path: str, resolve: Callable[[str, str], str | None]) -> None:
        self.path = path
        self.resolve = resolve
        self.namespace: str | None = None
        self.imports: dict[str, Import] = {}
        self.exports: dict[str, Export] = {}
        self.stars: list[str] = []
        self.declarations: dict[str, ts.Node] = {}
        self.exported: set[str] = set()
        self.requirers: set[str] = set()  # top-level names bound to `createRequire(..)`
        # Statements still to read, next one last: namespace bodies and
        # ambient blocks are queued, not recursed into (`namespace N {` can
        # nest as deep as a file is long), in the order recursion would read them.
        self._pending: list[tuple[ts.Node, str, bool]] = []

    def read(self, root: ts.Node) -> None:
        self._later(sx.named(root), "", False)
        while self._pending:
            node, prefix, exported = self._pending.pop()
            self.statement(node, prefix, exported)

    def _later(self, statements: list[ts.Node], prefix: str, exported: bool) -> None:
        self._pending.extend((node, prefix, exported) for node in reversed(statements))

    def statement(self, node: ts.Node, prefix: str, exported: bool) -> None:
        kind = node.type
        if kind == "import_statement" and not prefix:
            self._import(node)
        elif kind == "export_statement":
            self._export(node, prefix)
        elif kind in ("lexical_declaration", "variable_declaration"):
            for declarator in sx.named(node):
                if declarator.type == "variable_declarator":
                    self._declarator(declarator, prefix, exported)
        elif kind in ("function_declaration", "generator_function_declaration", "class_declaration", "abstract_class_declaration"):
            name = sx.field(node, "name")
            if name is not None:
                self._declare(prefix + sx.text(name), node, exported)
        elif kind == "expression_statement":
            inner = sx.named(node)
            if inner and inner[0].type in ("internal_module", "module"):
                self._namespace(inner[0], prefix, exported)
        elif kind in ("internal_module", "module"):
            self._namespace(node, prefix, exported)
        elif kind == "enum_declaration":
            self._enum(node, prefix, exported)
        elif kind == "ambient_declaration":
            self._later(sx.named(node), prefix, exported)

    def _declare(self, name: str, value: ts.Node, exported: bool) -> None:
        self.declarations.setdefault(name, value)
        if exported:
            self.exported.add(name)

    def _declarator(self, node: ts.Node, prefix: str, exported: bool) -> None:
        name = sx.field(node, "name")
        value = sx.field(node, "value")
        if name is None or value is None:
            return
        if not prefix and self._loaded(name, value):
            return
        if name.type != "identifier":
            return
        full = prefix + sx.text(name)
        self._declare(full, value, exported)
        self._members(full, value, depth=0)

    def _loaded(self, name: ts.Node, value: ts.Node) -> bool:
        """`const X = require("./x")`, `const { a, b: c } = await import("./x")`, `createRequire(..)`'s
        `require` and `import.meta.require` bind names of another module, as an `import` would."""
        inner = sx.strip(value)
        while inner is not None and inner.type == "await_expression":
            inner = sx.strip(sx.named(inner)[0]) if sx.named(inner) else None
        if name.type == "identifier" and inner is not None and inner.type == "identifier" \
                and sx.identifier_name(sx.text(inner)) in ({"require"} | self.requirers):
            self.requirers.add(sx.identifier_name(sx.text(name)))  # `const load = require`
            return False
        member = None  # `require("./claim").SessionExecutionClaim`: one export of the loaded module
        if inner is not None and inner.type == "member_expression":
            member = sx.property_key(sx.field(inner, "property"))
            inner = sx.strip(sx.field(inner, "object"))
        if inner is None or inner.type != "call_expression":
            return False
        if name.type == "identifier" and member is None and self._makes_require(inner):
            self.requirers.add(sx.identifier_name(sx.text(name)))
            return False  # still a declaration of its own
        loaded = loaders.loader(None, inner, self.requirers, self._makes_require)
        if loaded is None or loaded[1] is None:
            return False
        specifier = loaded[1]
        target = self.resolve(self.path, specifier)
        if name.type == "identifier":
            local = sx.identifier_name(sx.text(name))
            self.imports.setdefault(local, Import(local, specifier, target, member or "*"))
            return True
        if member is not None:
            return False
        if name.type != "object_pattern":
            return False
        for member in sx.named(name):
            if member.type == "shorthand_property_identifier_pattern":
                local = sx.identifier_name(sx.text(member))
                self.imports.setdefault(local, Import(local, specifier, target, local))
            elif member.type == "pair_pattern":
                key, bound = sx.property_key(sx.field(member, "key")), sx.field(member, "value")
                if key is not None and bound is not None and bound.type == "identifier":
                    local = sx.identifier_name(sx.text(bound))
                    self.imports.setdefault(local, Import(local, specifier, target, key))
        return True

    def _makes_require(self, node: ts.Node | None) -> bool:
        """A call of `createRequire` imported from node's `module` (named, or through its namespace),
        read from the imports seen so far (the names of the whole program are not known yet)."""
        node = sx.strip(node)
        if node is None or node.type != "call_expression":
            return False
        callee = sx.strip(sx.field(node, "function"))
        path = sx.dotted_path(callee) if callee is not None else None
        if path is None:
            return False
        head, _, rest = path.partition(".")
        imported = self.imports.get(head)
        if imported is None or imported.specifier not in ("module", "node:module"):
            return False
        return (not rest and imported.imported == "createRequire") or (rest == "createRequire" and imported.imported in ("*", "default"))

    def _members(self, owner: str, value: ts.Node, depth: int) -> None:
        """Register `owner.key` for object-literal members, so `Cfg.LIMIT` and
        `hooks.commit` resolve like any other binding."""
        value = sx.strip(value)
        if value is None or value.type != "object" or depth > 4:
            return
        for member in sx.named(value):
            if member.type == "pair":
                key = sx.property_key(sx.field(member, "key"))
                inner = sx.field(member, "value")
                if key is not None and inner is not None:
                    self.declarations.setdefault(f"{owner}.{key}", inner)
                    self._members(f"{owner}.{key}", inner, depth + 1)
            elif member.type == "method_definition":
                key = sx.property_key(sx.field(member, "name"))
                if key is not None:
                    self.declarations.setdefault(f"{owner}.{key}", member)

    def _namespace(self, node: ts.Node, prefix: str, exported: bool) -> None:
        name = sx.field(node, "name")
        body = sx.field(node, "body")
        if name is None or body is None:
            return
        full = prefix + sx.text(name)
        self._declare(full, node, exported)
        # Deeper blocks are generated code: their members would be declared
        # under names as long as the nesting (the file's size squared in all).
        if full.count(".") < _MAX_NAMESPACE_DEPTH:
            self._later(sx.named(body), full + ".", False)

    def _enum(self, node: ts.Node, prefix: str, exported: bool) -> None:
        name = sx.field(node, "name")
        body = sx.field(node, "body")
        if name is None or body is None:
            return
        full = prefix + sx.text(name)
        self._declare(full, node, exported)
        for member in sx.named(body):
            if member.type == "enum_assignment":
                key = sx.property_key(sx.field(member, "name"))
                value = sx.field(member, "value")
                if key is not None and value is not None:
                    self.declarations.setdefault(f"{full}.{key}", value)

    def _import(self, node: ts.Node) -> None:
        required = next((c for c in sx.named(node) if c.type == "import_require_clause"), None)
        if required is not None:  # `import x = require("./x")`
            parts = sx.named(required)
            ident = next((c for c in parts if c.type == "identifier"), None)
            source = next((v for c in parts if (v := sx.string_value(c)) is not None), None)
            if ident is not None and source is not None:
                self._bind(sx.text(ident), source, self.resolve(self.path, source), "*")
            return
        source = sx.string_value(sx.field(node, "source"))
        if source is None:
            return
        module = self.resolve(self.path, source)
        for clause in sx.named(node):
            if clause.type != "import_clause":
                continue
            for part in sx.named(clause):
                if part.type == "identifier":
                    self._bind(sx.text(part), source, module, "default")
                elif part.type == "namespace_import":
                    ident = next((c for c in sx.named(part) if c.type == "identifier"), None)
                    if ident is not None:
                        self._bind(sx.text(ident), source, module, "*")
                elif part.type == "named_imports":
                    for spec in sx.named(part):
                        if spec.type != "import_specifier":
                            continue
                        imported = sx.property_key(sx.field(spec, "name"))
                        alias = sx.field(spec, "alias")
                        local = sx.text(alias) if alias is not None else imported
                        if imported is not None and local:
                            self._bind(local, source, module, imported)

    def _bind(self, local: str, specifier: str, module: str | None, imported: str) -> None:
        self.imports[local] = Import(local=local, specifier=specifier, module=module, imported=imported)

    def _export(self, node: ts.Node, prefix: str) -> None:
        declaration = sx.field(node, "declaration")
        if declaration is not None:
            self.statement(declaration, prefix, exported=True)
            if not prefix:
                for name in self._declared_names(declaration):
                    self.exports[name] = Export("local", name, None)
            return
        source_node = sx.field(node, "source")
        source = sx.string_value(source_node) if source_node is not None else None
        module = self.resolve(self.path, source) if source is not None else None
        children = sx.named(node)
        clause = next((c for c in children if c.type == "export_clause"), None)
        namespace = next((c for c in children if c.type == "namespace_export"), None)
        if prefix:
            return  # re-exports inside `namespace N {}` are not worth modelling
        if namespace is not None and source is not None:
            ident = next((c for c in sx.named(namespace) if c.type in ("identifier", "string")), None)
            name = sx.property_key(ident) if ident is not None else None
            if name:
                self.exports[name] = Export("namespace", "", module)
                if module == self.path:
                    self.namespace = name
            return
        if clause is not None:
            for spec in sx.named(clause):
                if spec.type != "export_specifier":
                    continue
                inner = sx.property_key(sx.field(spec, "name"))
                alias = sx.field(spec, "alias")
                outer = sx.property_key(alias) if alias is not None else inner
                if inner is None or outer is None:
                    continue
                if source is not None:
                    self.exports[outer] = Export("reexport", inner, module)
                else:
                    self.exports[outer] = Export("local", inner, None)
                    self.exported.add(inner)
            return
        if source is not None:
            if module is not None and not node.has_error:  # `export type * from` parses as ERROR
                self.stars.append(module)
            return
        value = sx.field(node, "value")
        if value is not None and any(c.type == "default" for c in node.children):
            if value.type == "identifier":
                self.exports["default"] = Export("local", sx.text(value), None)
            else:
                self.declarations.setdefault("default", value)
                self.exports["default"] = Export("local", "default", None)

    @staticmethod
    def _declared_names(node: ts.Node) -> list[str]:
        if node.type in ("lexical_declaration", "variable_declaration"):
            names = []
            for declarator in sx.named(node):
                name = sx.field(declarator, "name")
                if declarator.type == "variable_declarator" and name is not None and name.type == "identifier":
                    names.append(sx.text(name))
            return names
        name = sx.field(node, "name")
        if name is None and node.type == "expression_statement":
            inner = sx.named(node)
            name = sx.field(inner[0], "name") if inner else None
        return [sx.text(name)] if name is not None else []
