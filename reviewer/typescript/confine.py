"""Whether code passed into a role runs *only* in that role.

A role by reference (references.py) says where code may run. Some rules
need more: a release is safe only if it runs nowhere but in a finalizer.
Code handed to `Effect.ensuring` by name and also run in straight-line code
(`yield* cleanup`, `handBack()`, `hooks.done()`) runs mid-run too, so a
hostile patch could otherwise make a mid-run release look like a finalizer.

Confined means every use of the code is proven to be in the role:

- a `const` or a function declaration: every read of its name is handed to
  a combinator of the role, sits inside a region of the role (`cleanup.pipe(
  Effect.orDie)` inside `ensuring`, `() => cleanup` inside `onExit`), or is
  an argument to a function whose parameter is itself confined; calls from
  the changed files too;
- a function a curried call returns: every call of the outer function is
  such a use;
- an argument written at a call site: the parameter it binds is confined.

Anything else (an object's or class's member, a name read through a copy)
is not proven, so it is not confined: rules that exempt code in a role fail
closed, while rules that look for violations inside a role still see it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.builders import callers_of
from reviewer.typescript.expressions import Expr, Function
from reviewer.typescript.flow import name_reads
from reviewer.typescript.roles import Role
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex
    from reviewer.typescript.module import Module

# Reads of a name pass it to these many parameters in a row before confinement gives up.
_MAX_PARAMETER_HOPS = 3

# The start bytes of the nodes a module passes to combinators of a role.
PassedNodes = Callable[[str, Role], frozenset[int]]


def confined(program: Resolver, target: Expr, role: Role, passed: PassedNodes) -> bool:
    index = target._module.index
    node = target._node
    parent = index.parent(node)
    if parent is not None and parent.type == "variable_declarator" and sx.field(parent, "value") == node:
        return _binding_confined(program, target._module, parent, role, passed, 0)
    if node.type in ("function_declaration", "generator_function_declaration"):
        return _binding_confined(program, target._module, node, role, passed, 0)
    if parent is not None and parent.type == "arguments":
        return _argument_confined(program, target._module, node, role, passed, 0)
    function = index.function_at(node)
    outer = function.parent if function is not None else None
    if outer is not None and _returned_by(index, node, outer):
        return _calls_confined(program, outer, role, passed, 0)
    return False


def _binding_confined(
    program: Resolver, module: "Module", binding: ts.Node, role: Role, passed: PassedNodes, hops: int
) -> bool:
    reads = name_reads(module.index, binding)
    if reads is None:
        return False
    if not all(_use_confined(program, module, read, role, passed, hops) for read in reads):
        return False
    function = module.index.function_at(_function_value(binding))
    if function is None or not function.name:
        return True
    # An exported helper may be called from the changed files too.
    return all(role in call.local_roles for call in callers_of(program, function, program.changed_lines)
               if call.path != module.path)


def _calls_confined(program: Resolver, outer: Function, role: Role, passed: PassedNodes, hops: int) -> bool:
    """Every call of `outer` (whose result is the code) is itself a confined use."""
    if not outer.name:
        return False
    calls = callers_of(program, outer, program.changed_lines)
    return bool(calls) and all(_use_confined(program, c._module, c._node, role, passed, hops) for c in calls)


def _use_confined(program: Resolver, module: "Module", use: ts.Node, role: Role, passed: PassedNodes, hops: int) -> bool:
    """A read (or a call producing the code) that hands it to the role, runs it in the role, or passes it on
    to a parameter that is confined."""
    if use.start_byte in passed(module.path, role):
        return True
    index = module.index
    if _in_region(index, use, role):
        return True
    parent = index.parent(use)
    if parent is not None and parent.type == "call_expression" and sx.field(parent, "function") == use:
        return False  # called here, outside every region of the role
    if parent is not None and parent.type == "arguments":
        return _argument_confined(program, module, use, role, passed, hops)
    if parent is not None and parent.type == "variable_declarator" and sx.field(parent, "value") == use:
        # `const onDone = cleanup(db, claim)`: confined when that name is
        return hops < _MAX_PARAMETER_HOPS and _binding_confined(program, module, parent, role, passed, hops + 1)
    return False


def _argument_confined(
    program: Resolver, module: "Module", argument: ts.Node, role: Role, passed: PassedNodes, hops: int
) -> bool:
    """An argument binds a parameter of the function called: confined when that parameter is."""
    if hops >= _MAX_PARAMETER_HOPS:
        return False
    index = module.index
    arguments = index.parent(argument)
    host = index.call_at(index.parent(arguments)) if arguments is not None else None
    callee = host.callee_expr if host is not None else None
    function = program.function_of(callee) if callee is not None else None
    if function is None or arguments is None:
        return False
    position = next((i for i, a in enumerate(sx.named(arguments)) if a == argument), None)
    if position is None or position >= len(function.params):
        return False
    name = function.params[position]
    if not name.isidentifier():
        return False
    reads = _parameter_reads(function, name)
    return reads is not None and all(
        _use_confined(program, function._module, read, role, passed, hops + 1) for read in reads
    )


def _parameter_reads(function: Function, name: str) -> list[ts.Node] | None:
    """Reads of a parameter in the function's body (nested functions that rebind it skipped)."""
    index = function._module.index
    body = sx.field(function._node, "body")
    if body is None:
        return None
    out: list[ts.Node] = []
    stack = [body]
    while stack:
        node = stack.pop()
        if node.type == "identifier":
            if sx.text(node) == name:
                out.append(node)
            continue
        if node.type in sx.FUNCTION_TYPES and name in index._bound.get(node.id, ()):
            continue
        stack.extend(node.named_children)
    return out if len(out) <= 16 else None


def _in_region(index: "ModuleIndex", node: ts.Node, role: Role) -> bool:
    """Whether `node` sits in a region of `role` written in its own function (the nearest call or the
    function itself carries the role)."""
    parent = index.parent(node)
    while parent is not None and parent.type not in sx.FUNCTION_TYPES:
        if parent.type == "call_expression":
            call = index.call_at(parent)
            if call is not None and role in call.local_roles:
                return True
        parent = index.parent(parent)
    function = index.function_at(parent) if parent is not None else None
    return function is not None and function.local_role is role


def _function_value(binding: ts.Node) -> ts.Node | None:
    if binding.type == "variable_declarator":
        return sx.strip(sx.field(binding, "value"))
    return binding


def _returned_by(index: "ModuleIndex", node: ts.Node, outer: Function) -> bool:
    parent = index.parent(node)
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression"):
        parent = index.parent(parent)
    if parent is None:
        return False
    if parent.type == "return_statement":
        return index.enclosing_function(parent) is outer
    return parent == outer._node and sx.field(outer._node, "body") == node
