"""The binder: bindings by scope, and what an identifier refers to (escapes decoded, shadows honoured)."""

from __future__ import annotations

import textwrap

from reviewer.typescript import Program
from reviewer.typescript import binder


def _module(source: str):
    return Program({"m.ts": textwrap.dedent(source)}.get).module("m.ts")


def _references(module, name: str):
    """Every identifier node spelling `name` (escapes decoded), in source order."""
    out, stack = [], [module.root]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type == "identifier" and binder.name_of(node) == name:
            out.append(node)
    return out


def test_an_identifier_means_the_nearest_binding_and_escapes_are_the_same_name() -> None:
    module = _module(
        """
        const clear = 1
        function f(clear) { return cl\\u0065ar }
        function g() { { let \\u{63}lear = 2; use(clear) } return clear }
        """
    )
    refs = _references(module, "clear")
    kinds = [(r.text.decode(), (b := binder.resolve(module, r)) and b.kind) for r in refs]
    # declaration, parameter, its use, the block's let, its use, then g's own read of the top-level const
    assert [k for _, k in kinds] == ["const", "parameter", "parameter", "let", "let", "const"]
    assert kinds[2][0] == "cl\\u0065ar" and kinds[3][0] == "\\u{63}lear"


def test_destructuring_catch_and_imports_bind_names() -> None:
    module = _module(
        """
        import { a as b } from "./x"
        const { c, d: [e, ...f] = [] } = make()
        try { run() } catch (err) { log(err) }
        """
    )
    table = binder.bindings(module)
    assert {name: [x.kind for x in found] for name, found in table.items()} == {
        "b": ["import"], "c": ["const"], "e": ["const"], "f": ["const"], "err": ["catch"],
    }


def test_a_shadow_changes_only_the_reads_inside_it() -> None:
    module = _module(
        """
        let x = 1
        function f() {
          const read = () => x
          function g(x) { return x }
          var x2 = x
          return read
        }
        """
    )
    refs = _references(module, "x")  # let, read's x, g's parameter, g's read, x2's initializer
    assert [binder.resolve(module, r).kind for r in refs] == ["let", "let", "parameter", "parameter", "let"]
    # Asked conservatively, the top-level binding is shadowed inside its scope: no answer.
    assert binder.resolve_unshadowed(module, refs[1]) is None
    assert binder.resolve_unshadowed(module, refs[3]).kind == "parameter"
