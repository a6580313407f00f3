"""Boolean flags a path sets, and the guards they switch off.

A failure path often records itself in a flag (`failed = true`,
`this.aborted = true`, `state.done = true`, directly or in a helper it calls),
and later code tests it (`if (!failed)`, `if (failed) return`, `if
(!hasFailed())` where `hasFailed` returns the flag, `failed === false`).
`flags_set(call)` names the flags set to a literal `true` on every path
through a call; `switched_off(later, flags, after)` says whether `later` runs
under a guard, tested after `after`, that is false whenever those flags are
true. Anything it cannot follow (a getter it cannot resolve, a flag written
with another value anywhere) is unknown: the guard is then taken to admit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.conditions import Atom, evaluate
from reviewer.typescript.endings import exits, statement_of
from reviewer.typescript.expressions import Call, Expr, Function, _parts
from reviewer.typescript.module import Module
from reviewer.typescript.statements import _STATEMENT_LISTS, _statements, guard_path

if TYPE_CHECKING:
    from reviewer.typescript.program import Program

# Getters and local constants followed at most this deep when deciding a test.
_MAX_DEPTH = 4
_EQUALITY = {"===": True, "==": True, "!==": False, "!=": False}


@dataclass(frozen=True)
class Flag:
    """A variable or property: `name` as written (`failed`, `this.failed`, `state.failed`),
    `scope` the id of the node declaring it (its function, or class for `this.`; None: module level)."""

    path: str
    scope: int | None
    name: str


# ------------------------------------------------------------------ naming a flag


def flag_of(expr: Expr) -> Flag | None:
    """The flag an identifier or member path (`x`, `this.x`, `obj.x`) names, else None."""
    return _flag_at(expr._module, expr._node)


def _flag_at(module: Module, node: ts.Node | None) -> Flag | None:
    node = sx.strip(node)
    if node is None:
        return None
    if node.type == "identifier":
        return Flag(module.path, _declaring_scope(module, node, sx.text(node)), sx.text(node))
    if node.type != "member_expression":
        return None
    name = sx.dotted_path(node)
    split = sx.member_segments(node)
    if name is None or split is None or split[0] is None:
        return None
    root = split[0]
    if root.type == "this":
        owner = next((a for a in module.index.ancestors(node) if a.type in ("class_declaration", "class")), None)
        return Flag(module.path, owner.id if owner is not None else None, name)
    return Flag(module.path, _declaring_scope(module, root, sx.text(root)), name)


def _declaring_scope(module: Module, node: ts.Node, name: str) -> int | None:
    """The function that declares `name` as seen from `node` (None: module level or undeclared)."""
    index = module.index
    function = index.enclosing_function(node)
    while function is not None:
        if name in index._bound.get(function._node.id, ()):
            return function._node.id
        function = function.parent
    return None


# ------------------------------------------------------------------ what a path sets


def flags_set(call: Call, until: Call | None = None) -> frozenset[Flag]:
    """Flags set to a literal `true` on every path through `call`, within its function.

    An assignment `flag = true` (or a call of a function whose body sets it
    unconditionally) in a statement before the call's statement, in its own
    block or an enclosing one, or after it in its own block with only
    expression statements between (and, given `until`, ending before it).
    """
    module, node = _parts(call)
    statement = statement_of(call)
    if statement is None:
        return frozenset()
    out: set[Flag] = set()
    current = statement._node
    for parent in module.index.ancestors(current):
        if sx.is_function(parent):
            break
        if parent.type in _STATEMENT_LISTS:
            statements = _statements(parent)
            position = next((i for i, s in enumerate(statements) if s.id == current.id), None)
            if position is not None:
                for before in statements[:position]:
                    out |= _sets_in_statement(module, before)
                if current.id == statement._node.id:  # the call's own block runs on after it
                    for after in statements[position + 1:]:
                        if after.type != "expression_statement":
                            break
                        if until is not None and after.end_byte > until._node.start_byte:
                            break
                        out |= _sets_in_statement(module, after)
        current = parent
    return frozenset(out)


def _sets_in_statement(module: Module, statement: ts.Node, follow: bool = True) -> set[Flag]:
    """`flag = true;` or `setter()` / `yield* setter()` / `await setter()` as a whole statement."""
    if statement.type != "expression_statement":
        return set()
    expression = sx.strip(next(iter(sx.named(statement)), None))
    while expression is not None and expression.type in ("yield_expression", "await_expression"):
        expression = sx.strip(next(iter(sx.named(expression)), None))
    if expression is None:
        return set()
    if expression.type == "assignment_expression":
        return _sets_in_expression(module, expression)
    if follow and expression.type == "call_expression":
        callee = sx.field(expression, "function")
        function = module.program.function_of(Expr(module, callee)) if callee is not None else None
        if function is not None:
            return _sets_unconditionally(function)
    return set()


def _sets_unconditionally(function: Function) -> set[Flag]:
    """Flags a function's body sets on every path: top-level statements before any that may leave it."""
    module, node = function._module, function._node
    body = sx.field(node, "body")
    if body is None:
        return set()
    if body.type != "statement_block":
        return _sets_in_expression(module, body)  # `() => (failed = true)`
    out: set[Flag] = set()
    for statement in _statements(body):
        if statement.type != "expression_statement":
            break
        out |= _sets_in_statement(module, statement, follow=False)
    return out


def _sets_in_expression(module: Module, node: ts.Node) -> set[Flag]:
    expression = sx.strip(node)
    if expression is None or expression.type != "assignment_expression":
        return set()
    value = sx.strip(sx.field(expression, "right"))
    flag = _flag_at(module, sx.field(expression, "left"))
    return {flag} if flag is not None and value is not None and value.type == "true" else set()


# ------------------------------------------------------------------ what a guard then says


def switched_off(later: Call, flags: Iterable[Flag], after: Call, paths: Iterable[str]) -> bool:
    """`later` cannot run after `after` once `flags` are true: a guard on it,
    tested after `after` ends, is false whenever they are.

    Flags written with any other value than `true` (outside their declaration)
    in `paths` or their own file are not trusted. Getters (`hasFailed()`,
    `obj.isDone()`) are followed to what every one of their exits returns,
    found as local or imported functions, else by name among the functions and
    object members of `paths`; local constants (`const ok = !failed`) only when
    declared after `after`.
    """
    program = later._module.program
    scope = tuple(sorted(set(paths) | {later.path}))
    trusted = frozenset(f for f in flags if not _reset(program, f, scope))
    if not trusted:
        return False
    end = after._node.end_byte
    world = _World(trusted, after, scope)
    for guard in guard_path(later):
        tested = guard.subject if guard.subject is not None else guard.test
        if tested.path != after.path or tested._node.start_byte < end:
            continue  # tested before the flag was set: its answer says nothing about the flag
        if not guard.admits(world.decide):
            return True
    return False


class _World:
    """Decides atoms in the world right after `after`, with `flags` true."""

    def __init__(self, flags: frozenset[Flag], after: Call, paths: tuple[str, ...]) -> None:
        self.flags = flags
        self.after = after
        self.paths = paths
        self.depth = 0

    def decide(self, atom: Atom) -> bool | None:
        if self.depth > _MAX_DEPTH:
            return None
        self.depth += 1
        try:
            return self._decide(atom)
        finally:
            self.depth -= 1

    def _decide(self, atom: Atom) -> bool | None:
        if atom.operator in _EQUALITY and atom.right is not None:
            for side, other in ((atom.left, atom.right), (atom.right, atom.left)):
                literal = _boolean(side)
                if literal is not None:
                    value = evaluate(other, self.decide)
                    return None if value is None else (value == literal) == _EQUALITY[atom.operator]
            return None
        if atom.operator:
            return None
        literal = _boolean(atom.left)
        if literal is not None:
            return literal
        node = sx.strip(atom.left._node)
        if node is None:
            return None
        if node.type == "call_expression":
            arguments = sx.field(node, "arguments")
            if arguments is None or sx.named(arguments):
                return None  # a tagged template, or a call whose answer may depend on its arguments
            return self._getter(atom.left._module, node)
        flag = flag_of(atom.left)
        if flag is not None and flag in self.flags:
            return True
        if node.type == "identifier":
            return self._constant(atom.left, sx.text(node))
        return None

    def _constant(self, expr: Expr, name: str) -> bool | None:
        """`const ok = ...` evaluated after `after` (an earlier one may hold the flag's old value)."""
        module = expr._module
        value = module.index.local_constant(expr.enclosing_function, name)
        if value is None or module.path != self.after.path or value.start_byte < self.after._node.end_byte:
            return None
        return evaluate(Expr(module, value), self.decide)

    def _getter(self, module: Module, call: ts.Node) -> bool | None:
        """What a call without arguments returns: the same answer from every exit of every candidate."""
        callee = sx.field(call, "function")
        if callee is None:
            return None
        candidates = _functions_named(module, callee, self.paths)
        answers: set[bool | None] = set()
        for function in candidates:
            for way in exits(function):
                if way.kind not in ("return", "expression") or way.value is None:
                    return None
                answers.add(evaluate(way.value, self.decide))
        if len(answers) != 1:
            return None
        return answers.pop()


def _boolean(expr: Expr) -> bool | None:
    node = sx.strip(expr._node)
    if node is not None and node.type in ("true", "false"):
        return node.type == "true"
    return None


def _functions_named(module: Module, callee: ts.Node, paths: tuple[str, ...]) -> list[Function]:
    """The function a callee denotes (local or imported), else every function or object member of
    `paths` with its last name (`publisher.hasFailed` -> members `hasFailed`)."""
    program = module.program
    found = program.function_of(Expr(module, callee))
    if found is not None:
        return [found]
    name = sx.property_key(sx.field(callee, "property")) if callee.type == "member_expression" else sx.text(callee)
    if not name:
        return []
    out: dict[int, Function] = {}
    for member in program.callbacks(name, paths):
        if member.function is None:
            return []  # a member we cannot read: no answer
        out[id(member.function)] = member.function
    for path in paths:
        other = program.module(path)
        if other is None:
            continue
        for function in other.functions():
            if function.name == name and function.kind == "method":
                out[id(function)] = function
        declared = other.declared_function(name)
        if declared is not None:
            out[id(declared)] = declared
    return list(out.values())


# ------------------------------------------------------------------ resets


def _reset(program: "Program", flag: Flag, paths: tuple[str, ...]) -> bool:
    """`flag` is written with something other than `true` somewhere it could be: its own file
    (a variable), or any file of `paths` (a property, by its last name)."""
    member = "." in flag.name
    last = flag.name.rsplit(".", 1)[-1]
    where = (flag.path, *paths) if member else (flag.path,)
    for path in dict.fromkeys(where):
        module = program.module(path)
        if module is None:
            continue
        for left, is_true in _writes(module):
            if is_true:
                continue
            if member:
                if left.type == "member_expression" and sx.text(sx.field(left, "property") or left) == last:
                    return True
            elif _flag_at(module, left) == flag:
                return True
    return False


def _writes(module: Module) -> list[tuple[ts.Node, bool]]:
    """Every assignment's target in the module, and whether the value is a literal `true` (memoized)."""
    memo = module.index.__dict__.get("_flag_writes")
    if memo is not None:
        return memo
    out: list[tuple[ts.Node, bool]] = []
    stack = [module.root]
    while stack:
        node = stack.pop()
        if node.type in ("assignment_expression", "augmented_assignment_expression"):
            left = sx.strip(sx.field(node, "left"))
            value = sx.strip(sx.field(node, "right"))
            if left is not None:
                out.append((left, node.type == "assignment_expression" and value is not None and value.type == "true"))
        elif node.type == "update_expression":
            argument = sx.strip(sx.field(node, "argument"))
            if argument is not None:
                out.append((argument, False))
        stack.extend(node.named_children)
    module.index.__dict__["_flag_writes"] = out
    return out


