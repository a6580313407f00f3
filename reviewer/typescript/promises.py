"""Plain promise code: the `try` a call fails into, whether its `catch` lets the failure on, and
whether a call's promise is awaited.

Plain async code handles a failed `await` with `try { .. } catch (err) { .. }`
rather than a combinator: a call written in a `try` block (of the same
function: a nested callback's failure goes wherever that callback's caller
sends it) fails into that statement's `catch` clause. The clause lets the
failure on when it holds a `throw` of its own (not in a nested function) or
rejects a promise (`reject(err)`, `return Promise.reject(err)`); one that does
neither turns every failure, whatever its class, into going on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from reviewer.typescript import syntax as sx
from reviewer.typescript.parse import node_lines

if TYPE_CHECKING:
    import tree_sitter as ts

    from reviewer.typescript.expressions import Call, Expr, Function
    from reviewer.typescript.module import Module

# Calls that hand a failure on to whoever waits for the promise.
_REJECTS = frozenset({"reject", "Promise.reject"})


@dataclass(frozen=True)
class Catch:
    """The `catch` clause a call fails into (see the module docstring)."""

    path: str
    line: int  # the `catch` keyword's line
    end_line: int
    param: str | None  # the caught error's name (`catch (err)`), None for `catch { .. }` or a pattern
    passes_on: bool  # the clause throws or rejects somewhere (not in a nested function)


def catching(call: "Call", within_finally: bool = False) -> Catch | None:
    """The catch clause of the innermost `try` whose block holds `call` in the same function, if any;
    with `within_finally`, only one inside the `finally` block holding the call (a failure caught
    outside it has already skipped the rest of that block)."""
    index = call._module.index
    child = call._node
    for parent in index.ancestors(call._node):
        if sx.is_function(parent) or (within_finally and parent.type == "finally_clause"):
            return None
        if parent.type == "try_statement" and sx.field(parent, "body") == child:
            handler = sx.field(parent, "handler")
            if handler is None:  # `try { .. } finally { .. }`: the failure goes on past the finally
                child = parent
                continue
            line, end_line = node_lines(handler)
            name = sx.field(handler, "parameter")
            param = sx.text(name) if name is not None and name.type == "identifier" else None
            return Catch(call.path, line, end_line, param, _passes_on(handler))
        child = parent
    return None


def _passes_on(clause: "ts.Node") -> bool:
    for node in _own_nodes(clause):
        if node.type == "throw_statement":
            return True
        if node.type == "call_expression":
            callee = sx.dotted_path(sx.field(node, "function"))
            if callee in _REJECTS:
                return True
    return False


def _own_nodes(root: "ts.Node") -> Iterator["ts.Node"]:
    """The nodes under `root`, nested functions left out (their code runs when they are called)."""
    stack = list(reversed(sx.named(root)))
    while stack:
        node = stack.pop()
        if sx.is_function(node):
            continue
        yield node
        stack.extend(reversed(sx.named(node)))


def fails(fn: "Function", fail_names: frozenset[str]) -> bool:
    """Does the function's own code ever throw, reject, or call one of `fail_names` (`Effect.fail`)?"""
    body = sx.field(fn._node, "body")
    if body is None:
        return False
    for node in _own_nodes(body):
        if node.type == "throw_statement":
            return True
        if node.type == "call_expression":
            callee = sx.dotted_path(sx.field(node, "function"))
            if callee in _REJECTS or callee in fail_names:
                return True
    return False


_WRAPPERS = frozenset({"parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression"})


def awaited(call: "Call") -> bool:
    """Is the promise of the call's whole chain (`f(..).then(..)`) awaited where it is written?"""
    index = call._module.index
    node = call._node
    for parent in index.ancestors(call._node):
        if parent.type == "await_expression":
            return True
        if parent.type in _WRAPPERS or (parent.type == "member_expression" and sx.field(parent, "object") == node):
            node = parent
            continue
        if parent.type == "call_expression" and sx.field(parent, "function") == node:
            node = parent  # `.then(..)` continues the chain
            continue
        return False
    return False


def finally_blocks(module: "Module") -> tuple["Expr", ...]:
    """The `finally { .. }` blocks of a file, in document order: the statement form of a finalizer
    (`Effect.ensuring`), code that runs however the `try` ends."""
    from reviewer.typescript.expressions import Expr

    out: list[Expr] = []
    stack = [module.root]
    while stack:
        node = stack.pop()
        if node.type == "finally_clause":
            body = sx.field(node, "body")
            if body is not None:
                out.append(Expr(module, body))
        stack.extend(reversed(sx.named(node)))
    return tuple(out)
