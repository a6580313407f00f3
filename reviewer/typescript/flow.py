"""Values that continue through a local `const`: where a call's result is read again, and what reads it.

    const once = Claim.renew(db, claim)                      // built here
    const loop = once.pipe(Effect.repeat(every))             // repeated in the next statement
    const beat = yield* Effect.forkScoped(loop)              // forked in a third

`later_uses(call)` gives the reads of `once` after its declaration (in the
block that declares it, not where a nested function rebinds the name);
`consumer(expr)` says which call takes a read as its subject: the `.pipe`
call it is the receiver of, the `pipe(x, ..)` it opens, or the call it is
the first argument of. A `let`, a destructuring or an assignment is not
followed: its value may change between the two places.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex

# Parents a value passes through unchanged on its way to a consumer.
_WRAPPERS = frozenset(
    {"parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression", "yield_expression", "await_expression"}
)
_SCOPES = frozenset({"statement_block", "program", "switch_case", "switch_default"})
_MAX_USES = 16


def later_uses(call: Call) -> tuple[Expr, ...]:
    """Reads of the `const` the call's whole expression is bound to, after the declaration, in document order."""
    usage, name = call.binding
    if usage != "bound" or name is None or not name.isidentifier():
        return ()
    index = call._module.index
    declarator = index.nearest(call._node, "declarator", _is_declarator)
    if declarator is None:
        return ()
    # Every link of a chain is bound to the same declarator: its reads are found once.
    memo = index.memo("flow.later-uses")
    known = memo.get((declarator.id, name))
    if known is None:
        known = memo[(declarator.id, name)] = _later_uses(index, declarator, name)
    return known


def _later_uses(index: "ModuleIndex", declarator: ts.Node, name: str) -> tuple[Expr, ...]:
    if declarator is None or declarator.type != "variable_declarator" or sx.text(sx.field(declarator, "name")) != name:
        return ()
    declaration = index.parent(declarator)
    if not sx.is_const(declaration):
        return ()
    scope = index.nearest(declaration, "scope", _is_scope)
    if scope is None:
        return ()
    return tuple(index.expr(node) for node in _reads(index, scope, name, declarator.end_byte))


def name_reads(index: "ModuleIndex", binding: ts.Node) -> list[ts.Node] | None:
    """Reads of the name a `const` declarator or a function declaration binds, after it, in the block
    that declares it (rebinding functions and blocks skipped); None for anything else or past _MAX_USES."""
    if binding.type == "variable_declarator":
        declaration = index.parent(binding)
        if not sx.is_const(declaration):
            return None
        name_node = sx.field(binding, "name")
        holder = declaration
    elif binding.type in ("function_declaration", "generator_function_declaration"):
        name_node = sx.field(binding, "name")
        holder = binding
    else:
        return None
    if name_node is None or name_node.type != "identifier" or holder is None:
        return None
    scope = index.nearest(holder, "scope", _is_scope)
    if scope is None:
        return None
    # A function declaration is hoisted: it may be read anywhere in its block.
    after = binding.end_byte if binding.type == "variable_declarator" else scope.start_byte
    reads = _reads(index, scope, sx.text(name_node), after)
    return None if len(reads) >= _MAX_USES else [r for r in reads if r != name_node]


def delegated(expr: Expr) -> bool:
    """The value is delegated to with `yield*` (`yield* exit` re-raises the failure an Exit or an Either holds)."""
    index = expr._module.index
    parent = index.parent(expr._node)
    while parent is not None and parent.type in _WRAPPERS and parent.type != "yield_expression":
        parent = index.parent(parent)
    return parent is not None and parent.type == "yield_expression" and sx.text(parent).startswith("yield*")


def consumer(expr: Expr) -> Call | None:
    """The call that takes this value as its subject: `x.pipe(..)`, `pipe(x, ..)` or `H(x, ..)`."""
    index = expr._module.index
    node = expr._node
    parent = index.parent(node)
    while parent is not None and parent.type in _WRAPPERS:
        node, parent = parent, index.parent(parent)
    if parent is None:
        return None
    if parent.type == "member_expression" and sx.field(parent, "object") == node:
        grand = index.parent(parent)
        if grand is not None and grand.type == "call_expression" and sx.field(grand, "function") == parent:
            if sx.text(sx.field(parent, "property")) == "pipe":
                return index.call_at(grand)
        return None
    if parent.type == "arguments" and sx.named(parent) and sx.named(parent)[0] == node:
        return index.call_at(index.parent(parent))
    return None


def _reads(index: "ModuleIndex", scope: ts.Node, name: str, after: int) -> list[ts.Node]:
    """Identifiers spelled `name` inside `scope` from byte `after` on that read the binding declared
    there: not its declaration, not inside a function that rebinds the name or a block that
    redeclares it. A walk of the scope (callers remember the answer per declaration)."""
    out: list[ts.Node] = []
    stack = [child for child in reversed(scope.named_children) if child.end_byte > after]
    while stack and len(out) < _MAX_USES:
        node = stack.pop()
        if node.end_byte <= after:
            continue
        kind = node.type
        if kind == "identifier":
            if node.start_byte >= after and sx.text(node) == name and not _declares(index, node):
                out.append(node)
            continue
        if kind in sx.FUNCTION_TYPES and name in index._bound.get(node.id, ()):
            continue  # rebinds the name: its reads are of another value
        if kind == "statement_block" and _redeclares(node, name):
            continue
        stack.extend(reversed(node.named_children))
    return out


def _redeclares(block: ts.Node, name: str) -> bool:
    """Whether a nested block declares its own `name` (its reads are of that one)."""
    for statement in block.named_children:
        if statement.type in ("lexical_declaration", "variable_declaration"):
            for declarator in statement.named_children:
                if declarator.type == "variable_declarator" and sx.text(sx.field(declarator, "name")) == name:
                    return True
    return False


def _declares(index: "ModuleIndex", node: ts.Node) -> bool:
    parent = index.parent(node)
    return parent is not None and parent.type == "variable_declarator" and sx.field(parent, "name") == node


def _is_declarator(node: ts.Node) -> bool:
    return node.type == "variable_declarator" or node.type in sx.FUNCTION_TYPES


def _is_scope(node: ts.Node) -> bool:
    return node.type in _SCOPES

