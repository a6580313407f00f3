"""What a call may run besides its callee: the branches of a conditional callee, and the
functions it is handed as values.

`(hard ? X.clear : X.release)(db, claim)` runs either branch;
`Effect.forEach(claims, X.clear)` and `claims.map(X.clear.bind(null, db))` run
`X.clear` once per element. `Call.runs` (expressions.py) is every such name, and
the question a rule asks when it asks "does this call release?".
"""

from __future__ import annotations

import re

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.calls import arguments, invoker, qualified_name
from reviewer.typescript.literals import picked
from reviewer.typescript.source import Names

def callee_branches(call: ts.Node) -> list[ts.Node]:
    """The branches of a conditional callee (`(c ? f : g)(..)`, `(f || g)(..)`, `(f ?? g)(..)`), nested
    ones flattened; [] when the callee is not conditional."""
    callee = sx.strip(sx.field(call, "function"))
    if callee is None or callee.type not in ("ternary_expression", "binary_expression"):
        return []
    out: list[ts.Node] = []
    stack = [callee]
    while stack and len(out) < 16:
        node = sx.strip(stack.pop())
        if node is None:
            continue
        if node.type == "ternary_expression":
            stack += [n for n in (sx.field(node, "alternative"), sx.field(node, "consequence")) if n is not None]
        elif node.type == "binary_expression" and sx.text(sx.field(node, "operator")) in ("||", "&&", "??"):
            stack += [n for n in (sx.field(node, "right"), sx.field(node, "left")) if n is not None]
        else:
            out.append(node)
    return out if len(out) > 1 or callee.type == "ternary_expression" else []


# Callees that take function values to show or keep them, never to run them.
_KEEPS = re.compile(r"(?:^|\.)(?:log\w*|console\.\w+|set|add|push)$")


def alternatives(module: Names, call: ts.Node) -> list[str]:
    """Each branch's name of a conditional callee (`(c ? X.clear : X.release)(..)`); else []."""
    return [name for n in callee_branches(call) if (name := qualified_name(module, n))]


def function_value_name(module: Names, node: ts.Node | None) -> str | None:
    """The name of the function an expression is as a value: `X.clear`, `X.clear.bind(null, db)`,
    `[X.clear][0]`; None for a call's result, an inline function, or anything without a name."""
    node = picked(node)
    if node is not None and node.type == "call_expression":
        way = invoker(sx.field(node, "function"))
        if way is None or way[1] != "bind":
            return None  # a call's result, not a function value the reviewer can name
        node = picked(way[0])
    if node is None or node.type not in ("identifier", "member_expression", "subscript_expression"):
        return None
    name = qualified_name(module, node)
    return name if name and "(" not in name else None


def handed_functions(module: Names, call: ts.Node) -> list[str]:
    """Names of the functions a call is handed as values, which it may run (`Effect.forEach(xs, X.clear)`,
    `xs.map(X.clear.bind(null, db))`, `pipe(x, f)`); inline functions are not here (their calls are
    calls of the file), nor arguments of callees that only show or keep them (`Effect.log`, `map.set`)."""
    out = [name for arg in arguments(call) if (name := function_value_name(module, arg)) is not None]
    if out:
        callee = qualified_name(module, sx.field(call, "function"))
        if callee is not None and _KEEPS.search(callee):
            return []
    return out
