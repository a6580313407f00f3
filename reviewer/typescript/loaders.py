"""What loads a module at run time: `import("x")`, `require("x")`, `import.meta.require("x")`,
`module.require("x")`, node's `createRequire(..)` and the `require` it makes, read on nodes."""

from __future__ import annotations

from typing import Callable, Container

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx
from reviewer.typescript.source import Names


def loader(
    module: Names | None,
    call: ts.Node,
    requirers: Container[str] = (),
    makes: "Callable[[ts.Node], bool] | None" = None,
) -> tuple[str, str | None] | None:
    """("import" | "require", the specifier or None when computed) when `call` loads a module:
    `import("x")`, `require("x")`, `import.meta.require("x")`, `createRequire(import.meta.url)("x")`,
    or a name in `requirers` (bound to `createRequire(..)`) called; None for any other call.
    `makes` tells a call of `createRequire` (default: `makes_require` in `module`)."""
    callee = sx.strip(sx.field(call, "function"))
    if callee is None:
        return None
    args = cx.arguments(call)
    specifier = sx.string_value(args[0]) if args else None
    if callee.type == "import":
        return ("import", specifier)
    if callee.type == "identifier":
        name = sx.identifier_name(sx.text(callee))
        return ("require", specifier) if name == "require" or name in requirers else None
    if callee.type == "member_expression" and sx.text(sx.field(callee, "property")) == "require":
        # the property first: normalising a long fluent callee costs its length
        target = sx.field(callee, "object")
        if target is not None and target.type in ("meta_property", "member_expression") and sx.normalized(target) == "import.meta":
            return ("require", specifier)
        if target is not None and target.type == "identifier" and sx.text(target) == "module":
            return ("require", specifier)  # CommonJS `module.require("x")`
    makes_one = makes if makes is not None else (lambda node: module is not None and makes_require(module, node))
    return ("require", specifier) if makes_one(callee) else None


def makes_require(module: Names, node: ts.Node | None) -> bool:
    """`node` is a call of node's `createRequire` (however imported): its value is a `require`."""
    node = sx.strip(node)
    if node is None or node.type != "call_expression":
        return False
    name = cx.qualified_name(module, sx.field(node, "function"))
    return name is not None and cx.last_segment(name) == "createRequire"
