"""The binder: every name a module binds, in which scope, and what an identifier refers to.

One walk per module (memoized on its index) records each binding: `let`,
`const` and `var` declarators (destructuring included), parameters, function
and class declarations, catch parameters, imports, enums and namespaces,
each with the node whose scope holds it (a block, a function, the program).
`resolve` answers "which binding does this identifier mean" by scope, the
nearest first; names are compared as the language reads them (escapes
decoded: `cl\\u0065ar` is `clear`).

It resolves inside one module; what an import stands for across files is
`Program`'s (`definition`, `bound_value`).
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.module import Module

# Nodes that open a scope for `let`, `const`, `class` and block-level functions.
_BLOCKS = frozenset({"statement_block", "program", "switch_body", "for_statement", "for_in_statement", "class_body"})


def name_of(identifier: ts.Node) -> str:
    """The name an identifier node spells, escapes decoded."""
    return sx.identifier_name(sx.text(identifier))


@dataclass(frozen=True)
class Binding:
    """One name bound in a scope: `kind` is "let", "const", "var", "parameter", "function", "class",
    "catch", "import" or "other" (enum, namespace, import alias)."""

    name: str
    node: ts.Node  # the declared name
    scope: ts.Node  # the node whose scope holds it
    kind: str  # "let", "const", "var", "parameter", "function", "class", "catch", "import"
    value: ts.Node | None  # a variable's initializer


def bindings(module: Module) -> dict[str, list[Binding]]:
    """Every binding of the module by name, built by one walk the first time it is asked for."""
    memo = module.index.memo("binder")
    if "bindings" in memo:
        return memo["bindings"]
    out: dict[str, list[Binding]] = {}

    def add(name_node: ts.Node, scope: ts.Node, kind: str, value: ts.Node | None = None) -> None:
        for ident in pattern_names(name_node):
            out.setdefault(name_of(ident), []).append(Binding(name_of(ident), ident, scope, kind, value))

    stack = [module.root]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        kind = node.type
        if kind in ("lexical_declaration", "variable_declaration"):
            keyword = node.children[0].type if node.children else ""
            scope = block_of(module, node) if kind == "lexical_declaration" else function_scope_of(module, node)
            if scope is None:
                continue
            for declarator in node.named_children:
                if declarator.type != "variable_declarator":
                    continue
                name = sx.field(declarator, "name")
                if name is not None:
                    add(name, scope, keyword if keyword in ("let", "const") else "var", sx.field(declarator, "value"))
        elif kind == "for_in_statement" and sx.field(node, "kind") is not None:
            left = sx.field(node, "left")
            if left is not None:
                keyword = sx.text(sx.field(node, "kind"))
                add(left, node, "var" if keyword == "var" else "const")
        elif sx.is_function(node):
            parameters = sx.field(node, "parameters")
            if parameters is not None:
                for parameter in parameters.named_children:
                    pattern = sx.field(parameter, "pattern") or (
                        parameter if parameter.type in ("identifier", "object_pattern", "array_pattern") else None
                    )
                    if pattern is not None:
                        add(pattern, node, "parameter")
            single = sx.field(node, "parameter")  # `x => ..`
            if single is not None:
                add(single, node, "parameter")
            name = sx.field(node, "name")
            if name is not None and name.type == "identifier":
                if node.type in ("function_declaration", "generator_function_declaration"):
                    scope = block_of(module, node)
                    if scope is not None:
                        add(name, scope, "function")
                else:
                    add(name, node, "function")
        elif kind in ("class_declaration", "class", "abstract_class_declaration"):
            name = sx.field(node, "name")
            if name is not None:
                scope = block_of(module, node) if kind != "class" else node
                if scope is not None:
                    out.setdefault(name_of(name), []).append(Binding(name_of(name), name, scope, "class", None))
        elif kind == "catch_clause":
            parameter = sx.field(node, "parameter")
            if parameter is not None:
                add(parameter, node, "catch")
        elif kind == "import_specifier":
            local = sx.field(node, "alias") or sx.field(node, "name")  # `{ a as b }` binds `b` only
            if local is not None and local.type == "identifier":
                add(local, module.root, "import")
        elif kind in ("namespace_import", "import_clause"):
            for child in node.named_children:
                if child.type == "identifier":  # `* as N`, a default import
                    add(child, module.root, "import")
        elif kind in ("enum_declaration", "module", "internal_module", "import_alias"):
            name = sx.field(node, "name") or next((c for c in node.named_children if c.type == "identifier"), None)
            if name is not None and name.type == "identifier":
                scope = block_of(module, node)
                if scope is not None:
                    add(name, scope, "other")
    memo["bindings"] = out
    return out


def pattern_names(node: ts.Node) -> list[ts.Node]:
    """The names a binding pattern declares (`x`, `{ a, b: c = 1 }`, `[d, ...e]`)."""
    out: list[ts.Node] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("identifier", "shorthand_property_identifier_pattern"):
            out.append(current)
        elif current.type == "pair_pattern":
            value = sx.field(current, "value")
            if value is not None:
                stack.append(value)
        elif current.type in ("assignment_pattern", "object_assignment_pattern"):
            left = sx.field(current, "left") or (current.named_children[0] if current.named_children else None)
            if left is not None:
                stack.append(left)
        elif current.type in ("object_pattern", "array_pattern", "rest_pattern"):
            stack.extend(current.named_children)
    return out


def block_of(module: Module, node: ts.Node) -> ts.Node | None:
    for parent in module.index.ancestors(node):
        if parent.type in _BLOCKS or sx.is_function(parent):
            return parent
    return None


def function_scope_of(module: Module, node: ts.Node) -> ts.Node | None:
    for parent in module.index.ancestors(node):
        if sx.is_function(parent) or parent.type == "program":
            return parent
    return None


def resolve(module: Module, node: ts.Node) -> Binding | None:
    """The binding an identifier refers to: the one in the nearest scope around it that binds its
    name. None when no scope of this module does (a global), and in code that binds one name
    twice in one scope in ways that cannot both hold (`let x` beside `var x`: not valid code)."""
    return lookup(module, name_of(node), node)


def lookup(module: Module, name: str, at: ts.Node) -> Binding | None:
    """`resolve` for the name `name` as if written at `at`."""
    candidates = bindings(module).get(name, [])
    if not candidates:
        return None
    by_scope: dict[int, list[Binding]] = {}
    for binding in candidates:
        by_scope.setdefault(binding.scope.id, []).append(binding)
    for scope in (at, *module.index.ancestors(at)):
        found = by_scope.get(scope.id)
        if not found:
            continue
        # `var x` twice, or a function declared twice, is one binding; anything else is invalid code
        if len(found) != 1 and not all(b.kind in ("var", "function", "parameter") for b in found):
            return None
        return found[0]
    return None


def resolve_unshadowed(module: Module, node: ts.Node) -> Binding | None:
    """`resolve`, and None when the name is bound again anywhere inside that binding's scope
    (a shadow somewhere between: for questions where misreading the binding costs a finding)."""
    binding = resolve(module, node)
    if binding is None:
        return None
    candidates = bindings(module).get(binding.name, [])
    inside = [b for b in candidates if b is not binding and sx.contains(binding.scope, b.node)]
    return None if inside else binding


def this_owner(module: Module, node: ts.Node) -> ts.Node | None:
    """What `this` denotes at `node`: a non-static class member's instance (the class node),
    or the nearest non-arrow function's own receiver (that function); None at module level."""
    for parent in module.index.ancestors(node):
        if parent.type == "arrow_function":
            continue
        if parent.type == "method_definition":
            if any(c.type == "static" for c in parent.children):
                return parent
            continue
        if parent.type in ("public_field_definition", "field_definition"):
            if any(c.type == "static" for c in parent.children):
                return parent
            continue
        if parent.type == "class_body":
            continue
        if parent.type in ("class_declaration", "class", "abstract_class_declaration"):
            return parent
        if sx.is_function(parent):
            return parent
        if parent.type == "program":
            return None
    return None
