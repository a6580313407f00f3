"""Spreads and `const` collections: the elements of an array and the members of an object that
code names instead of writing inline (`.orderBy(...ORDER)`, `and(...conditions)`, `.limit(opts.limit)`).

Only what source decides is followed: an array or object literal written inline, a `const`
bound to one (innermost scope first, then top level, through imports: `Program.bound_value`), a
spread of one, a member of one (`opts.limit`, `Limits.page.size`), and for arrays a call of a
plain helper whose every result is one array literal (`fairOrder()`). Where resolution stops it
says so instead of guessing: a spread it cannot follow (a parameter, a `let`, a call of anything
else) is kept in the result as the `spread_element` itself.

A collection the code changes after building it is not read at all: an array on which any
`push`/`unshift`/`splice`/... is called, or an object whose member is assigned
(`opts.limit = n`) or that is passed first to `Object.assign`, anywhere in the file that declares
it (by name: a same-named variable elsewhere in that file counts too, which errs towards
"unknown"). Element writes by index (`a[0] = x`) are not seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.endings import exits
from reviewer.typescript.expressions import Call, Expr
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.module import Module

# Names, helper calls and spreads followed from one question (cycles, absurd nesting).
_MAX_DEPTH = 8
# Elements or members one question returns at most (generated tables are not sort keys).
_MAX_ITEMS = 256
_NAMES = frozenset({"identifier", "member_expression", "shorthand_property_identifier"})
_ARRAY_MUTATORS = ("push", "unshift", "splice", "pop", "shift", "sort", "reverse", "fill", "copyWithin")

Member = tuple["str | None", Expr]


def spread_elements(program: Resolver, items: Iterable[Expr], depth: int = _MAX_DEPTH) -> tuple[Expr, ...]:
    """`items` (arguments or array elements) with each `...x` replaced by the elements of the array
    `x` denotes (see `elements_of`); a spread that does not resolve stays as the `spread_element`."""
    out: list[Expr] = []
    for item in items:
        if len(out) >= _MAX_ITEMS:
            break
        if item.kind != "spread_element":
            out.append(item)
            continue
        inner = _spread_argument(item)
        elements = elements_of(program, inner, depth - 1) if inner is not None and depth > 0 else None
        out.extend(elements if elements is not None else (item,))
    return tuple(out[:_MAX_ITEMS])


def copied_from(expr: Expr) -> tuple[Expr, ...]:
    """The collections `expr` copies whole: each `...x` of an array literal (`[...held, ...pending]`,
    also as the receiver of a chain: `[...held].filter(..)`), the argument of `Array.from(x)`, or
    `expr` itself when it is a bare name."""
    node = sx.strip(expr._node)
    if node is None:
        return ()
    if node.type == "identifier":
        return (expr,)
    while node is not None and node.type == "call_expression":  # `[...held].filter(..)`, `Array.from(held)`
        callee = sx.field(node, "function")
        arguments = sx.named(sx.field(node, "arguments")) if sx.field(node, "arguments") is not None else []
        if callee is not None and sx.text(callee) == "Array.from":
            return (Expr(expr._module, arguments[0]),) if arguments else ()
        node = sx.strip(sx.field(callee, "object")) if callee is not None and callee.type == "member_expression" else None
    if node is None or node.type != "array":
        return ()
    out = []
    for item in sx.named(node):
        inner = sx.named(item) if item.type == "spread_element" else []
        if inner:
            out.append(Expr(expr._module, inner[0]))
    return tuple(out)


def arguments_of(program: Resolver, call: Call) -> tuple[Expr, ...]:
    """A call's arguments with spreads of `const` arrays flattened: `orderBy(...ORDER, asc(T.id))`."""
    args = call.args
    if not any(arg.kind == "spread_element" for arg in args):
        return args
    return spread_elements(program, args)


def elements_of(program: Resolver, expr: Expr, depth: int = _MAX_DEPTH) -> tuple[Expr, ...] | None:
    """The elements of the array literal `expr` is or denotes, spreads flattened; None when it is not one
    the model can read (a parameter, a `let`, a mutated array, a call of anything but a plain helper
    returning one array literal)."""
    return _remembered(expr, "array", depth, lambda: _elements(program, expr, depth))


def _elements(program: Resolver, expr: Expr, depth: int) -> tuple[Expr, ...] | None:
    literal = _literal(program, expr, "array", depth)
    if literal is None:
        return None
    return spread_elements(program, literal.elements, depth - 1)


def members_of(program: Resolver, expr: Expr, depth: int = _MAX_DEPTH) -> tuple[Member, ...] | None:
    """(key, value) of each member of the object literal `expr` is or denotes, in source order, spreads
    of readable objects flattened in place. A spread that does not resolve, or a computed key that is not a
    string, is kept as (None, that member): it may set any key. None when not an object the model reads."""
    return _remembered(expr, "object", depth, lambda: _members(program, expr, depth))


def _members(program: Resolver, expr: Expr, depth: int) -> tuple[Member, ...] | None:
    literal = _literal(program, expr, "object", depth)
    if literal is None:
        return None
    module, node = literal._module, sx.strip(literal._node)
    out: list[Member] = []
    for member in sx.named(node):
        if len(out) >= _MAX_ITEMS:
            out.append((None, Expr(module, member)))  # the rest is unread: it may set any key
            break
        if member.type == "pair":
            key = sx.property_key(sx.field(member, "key"))
            value = sx.field(member, "value")
            if value is not None:
                out.append((key, Expr(module, value) if key is not None else Expr(module, member)))
        elif member.type == "shorthand_property_identifier":
            out.append((sx.text(member), Expr(module, member)))
        elif member.type == "method_definition":
            key = sx.property_key(sx.field(member, "name"))
            out.append((key, Expr(module, member)))
        elif member.type == "spread_element":
            spread = Expr(module, member)
            inner = _spread_argument(spread)
            nested = members_of(program, inner, depth - 1) if inner is not None and depth > 0 else None
            out.extend(nested if nested is not None else ((None, spread),))
    return tuple(out)


def member_of(program: Resolver, expr: Expr, name: str, depth: int = _MAX_DEPTH) -> Expr | None:
    """The value member `name` has in the object `expr` denotes, the last one written winning as in
    JavaScript; the `spread_element` (or computed member) when one written after it, or instead of it,
    may set it; None when the object cannot be read or has no such member."""
    members = members_of(program, expr, depth)
    if members is None:
        return None
    for key, value in reversed(members):
        if key == name:
            return _shorthand_value(program, value)
        if key is None:
            return value
    return None


def property_value(program: Resolver, expr: Expr, depth: int = _MAX_DEPTH) -> Expr | None:
    """What a property read (`opts.limit`, `Limits.page.size`, `opts["limit"]`) stands for when its object
    is an object literal the model reads (see `member_of`, whose answers it shares: a `spread_element`
    means the member may come from a spread it cannot follow); None otherwise."""
    node = sx.strip(expr._node)
    if node is None or depth <= 0:
        return None
    module = expr._module
    if node.type == "member_expression":
        key_node = sx.field(node, "property")
        key = sx.text(key_node) if key_node is not None and key_node.type == "property_identifier" else None
    elif node.type == "subscript_expression":
        key = sx.string_value(sx.field(node, "index"))
    else:
        return None
    target = sx.field(node, "object")
    if key is None or target is None:
        return None
    return member_of(program, Expr(module, target), key, depth - 1)


# ---------------------------------------------------------------- resolution

# Per module: (node id, kind, depth) -> the flattened collection. Spreading one `const` many times
# (or nesting such spreads) costs one resolution of it, not one per spread.


def _remembered(expr: Expr, kind: str, depth: int, compute: "Callable[[], object]") -> "Any":
    memo = expr._module.index.memo("collections.resolved")
    key = (expr._node.id, kind, depth)
    if key not in memo:
        memo[key] = compute()
    return memo[key]



def _spread_argument(spread: Expr) -> Expr | None:
    inner = sx.named(spread._node)
    return Expr(spread._module, inner[0]) if inner else None


def _shorthand_value(program: Resolver, value: Expr) -> Expr:
    """`{ limit }` stands for the value of the name `limit` when it is a `const` the model follows."""
    if value.kind != "shorthand_property_identifier":
        return value
    bound = program.bound_value(value)
    return bound if bound is not None else value


def _literal(program: Resolver, expr: Expr, kind: str, depth: int) -> Expr | None:
    """The `kind` literal (`array` / `object`) `expr` is, or denotes through names, members and helpers."""
    for _ in range(depth):
        node = sx.strip(expr._node)
        if node is None:
            return None
        if node.type == kind:
            return Expr(expr._module, node)
        if node.type in _NAMES or node.type == "subscript_expression":
            value = _named_value(program, expr, kind)
        elif node.type == "call_expression" and kind == "array":
            value = _helper_result(program, expr)
        else:
            return None
        if value is None:
            return None
        expr = value
    return None


def _named_value(program: Resolver, expr: Expr, kind: str) -> Expr | None:
    """The initializer of the `const` a name denotes (or the member of an object it reads), unless mutated."""
    value = program.bound_value(expr) if expr.kind != "subscript_expression" else None
    if value is None:
        value = property_value(program, expr)
        return value if value is not None and value.kind != "spread_element" else None
    declared = _const_name(value)
    if declared is None:
        return None
    return None if _mutated(value._module, declared, kind) else value


def _const_name(value: Expr) -> str | None:
    """The name a `const` declarator binds `value` to; None for a `let`/`var` or a destructuring.
    A member of a top-level object (`Limits.page`) is named by its top-level object."""
    index = value._module.index
    node = value._node
    parent = index.parent(node)
    while parent is not None and parent.type in ("pair", "object"):
        node, parent = parent, index.parent(parent)
    if parent is None or parent.type != "variable_declarator" or sx.field(parent, "value") != node:
        return None
    name = sx.field(parent, "name")
    declaration = index.parent(parent)
    if name is None or name.type != "identifier" or declaration is None:
        return None
    constant = sx.is_const(declaration)
    return sx.text(name) if constant else None


def _helper_result(program: Resolver, expr: Expr) -> Expr | None:
    """The one value a plain helper returns (`const fairOrder = () => [..]`), when `expr` calls one."""
    call = expr.call
    callee = call.callee_expr if call is not None else None
    function = program.function_of(callee) if callee is not None else None
    if function is None or function.kind not in ("arrow", "function") or _is_async(function._node):
        return None
    found = exits(function)
    if len(found) != 1 or found[0].kind not in ("return", "expression") or found[0].value is None:
        return None
    return found[0].value


def _is_async(node: ts.Node) -> bool:
    return any(child.type == "async" for child in node.children)


# Per module: (name, kind) -> whether the file changes the collection so named.
def _mutated(module: "Module", name: str, kind: str) -> bool:
    memo = module.index.memo("collections.mutated")
    key = (name, kind)
    if key not in memo:
        memo[key] = _array_mutated(module, name) if kind == "array" else _object_mutated(module, name)
    return memo[key]


def _object_of(read: ts.Node) -> str | None:
    target = sx.strip(sx.field(read, "object"))
    return sx.text(target) if target is not None and target.type == "identifier" else None


def _array_mutated(module: "Module", name: str) -> bool:
    index = module.index
    return any(_object_of(read) == name for prop in _ARRAY_MUTATORS for read in index.member_reads(prop))


def _object_mutated(module: "Module", name: str) -> bool:
    """`name.k = v` / `name.k += v` for any `k`, `delete name.k`, or `Object.assign(name, ..)` in the file."""
    index = module.index
    for call in module.calls():
        if call.callee == "Object.assign" and call.args and call.args[0].identifier == name:
            return True
    # Member writes are found among the member reads the index already holds (no table of its own:
    # one per file of a large review added up to hundreds of megabytes).
    for parent in (node for nodes in index._members.values() for node in nodes):
        target = sx.field(parent, "object")
        if target is None or target.type != "identifier" or sx.text(target) != name:
            continue
        outer = index.parent(parent)
        if outer is None:
            continue
        if outer.type in ("assignment_expression", "augmented_assignment_expression") and sx.field(outer, "left") == parent:
            return True
        if outer.type == "unary_expression" and sx.text(sx.field(outer, "operator")) == "delete":
            return True
    return False


