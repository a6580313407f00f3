"""Boolean flags a failure path sets, and the guards they switch off.

A failure path may record itself in a flag and later code test it:

    let failed = false                    // or a class field read as `this.failed`
    ...
    failed = true                         // before the failure publish, same function
    yield* events.publish(Step.Failed, ..)
    ...
    if (!failed) yield* events.publish(Step.Ended, ..)

Only that narrow shape counts, and anything else is unknown (the guard is then
taken to admit, so the finding stays):

- a flag is a local variable declared with `let` inside a function (resolved
  by block scope, and declared nowhere else in its scope), or a `this.<name>`
  property of a class instance;
- it is set by an expression statement `flag = true` that comes before the
  failure publish, in the publish's own block or an enclosing one, within the
  same function (for a failure helper: before the publish inside the helper);
  a setter function called instead, or an assignment after the publish, does
  not count;
- it is written nowhere (in its scope, or for a property in any file read)
  with anything but `= true`; for `this.<name>` also no bracket writes, no
  `Object.assign` and the like, and `this` never handed out;
- a getter in the guard is followed only through the model's `function_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import tree_sitter as ts

from reviewer.typescript import binder
from reviewer.typescript import syntax as sx
from reviewer.typescript.conditions import Atom, evaluate
from reviewer.typescript.endings import exits, statement_of
from reviewer.typescript.expressions import Call, Expr, _parts
from reviewer.typescript.module import Module
from reviewer.typescript.statements import _STATEMENT_LISTS, _statements, guard_path
from reviewer.typescript.resolver import Resolver


# Getters and local constants followed at most this deep when deciding a test.
_MAX_DEPTH = 4
_EQUALITY = {"===": True, "==": True, "!==": False, "!=": False}

# Wrappers between a pattern's name and the assignment that writes it.
_PATTERN_WRAPPERS = frozenset(
    {
        "array_pattern",
        "object_pattern",
        "pair_pattern",
        "assignment_pattern",
        "object_assignment_pattern",
        "rest_pattern",
        "array",
        "object",
        "pair",
        "spread_element",
        "parenthesized_expression",
        "non_null_expression",
        "as_expression",
        "satisfies_expression",
        "type_assertion",
    }
)
# Calls that may write any property of their arguments.
_OBJECT_WRITERS = frozenset(
    {
        "Object.assign",
        "Object.defineProperty",
        "Object.defineProperties",
        "Object.setPrototypeOf",
        "Reflect.set",
        "Reflect.defineProperty",
        "Reflect.deleteProperty",
        "Reflect.setPrototypeOf",
    }
)


@dataclass(frozen=True)
class Flag:
    """A `let` variable (`name` as written, `scope` the id of the node declaring it) or a
    `this.<name>` property (`name` is `this.x`, `scope` the id of the class, or of the
    function whose own `this` it is)."""

    path: str
    scope: int
    name: str


# ------------------------------------------------------------------ naming a flag


def flag_of(expr: Expr) -> Flag | None:
    """The flag an identifier (`x`, a `let` local) or `this.x` names, else None."""
    return _flag_at(expr._module, expr._node)


def _flag_at(module: Module, node: ts.Node | None) -> Flag | None:
    node = sx.strip(node)
    if node is None:
        return None
    if node.type == "identifier":
        declaration = binder.resolve_unshadowed(module, node)
        if declaration is None or declaration.kind != "let" or declaration.node.type != "identifier":
            return None
        if declaration.scope.type == "program" or module.index.enclosing_function(declaration.node) is None:
            return None  # a module-level variable: not a local of an enclosing function
        return Flag(module.path, declaration.scope.id, binder.name_of(node))
    if node.type != "member_expression":
        return None
    target = sx.field(node, "object")
    prop = sx.field(node, "property")
    if target is None or target.type != "this" or prop is None or prop.type != "property_identifier":
        return None
    owner = binder.this_owner(module, target)
    if owner is None:
        return None
    return Flag(module.path, owner.id, f"this.{sx.text(prop)}")


# ------------------------------------------------------------------ what a path sets


def flags_set(call: Call) -> frozenset[Flag]:
    """Flags set to a literal `true` before `call` on every path to it, within its function:
    a statement `flag = true;` before the call's statement, in its own block or an enclosing one."""
    module, _ = _parts(call)
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
                    flag = _set_by(module, before)
                    if flag is not None:
                        out.add(flag)
        current = parent
    return frozenset(out)


def _set_by(module: Module, statement: ts.Node) -> Flag | None:
    """The flag a statement `flag = true;` sets (only that: no setter call, no `yield*` around it)."""
    if statement.type != "expression_statement":
        return None
    expression = sx.strip(next(iter(sx.named(statement)), None))
    if expression is None or expression.type != "assignment_expression":
        return None
    left = sx.field(expression, "left")
    value = sx.strip(sx.field(expression, "right"))
    if left is None or value is None or value.type != "true":
        return None
    if left.type not in ("identifier", "member_expression"):
        return None
    return _flag_at(module, left)


# ------------------------------------------------------------------ what a guard then says


def switched_off(later: Call, flags: Iterable[Flag], after: Call, paths: Iterable[str]) -> bool:
    """`later` cannot run after `after` once `flags` are true: a guard on it,
    tested after `after` ends, is false whenever they are.

    Flags written anywhere with anything but `= true` are not trusted (see
    `_reset`). Getters (`hasFailed()`) are followed through `function_of` only,
    to what every one of their exits returns; local constants (`const ok =
    !failed`) only when declared after `after`.
    """
    program = later._module.program
    scope = tuple(sorted(set(paths) | {later.path}))
    trusted = frozenset(f for f in flags if not _reset(program, f, scope))
    if not trusted:
        return False
    end = after._node.end_byte
    world = _World(trusted, after)
    for guard in guard_path(later):
        tested = guard.subject if guard.subject is not None else guard.test
        if tested.path != after.path or tested._node.start_byte < end:
            continue  # tested before the flag was set: its answer says nothing about the flag
        if not guard.admits(world.decide):
            return True
    return False


class _World:
    """Decides atoms in the world right after `after`, with `flags` true."""

    def __init__(self, flags: frozenset[Flag], after: Call) -> None:
        self.flags = flags
        self.after = after
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
            return self._constant(atom.left._module, node)
        return None

    def _constant(self, module: Module, node: ts.Node) -> bool | None:
        """`const ok = ...` declared after `after` (an earlier one may hold the flag's old value)."""
        declaration = binder.resolve_unshadowed(module, node)
        if declaration is None or declaration.kind != "const" or declaration.node.type != "identifier":
            return None
        value = declaration.value
        if value is None or module.path != self.after.path or value.start_byte < self.after._node.end_byte:
            return None
        return evaluate(Expr(module, value), self.decide)

    def _getter(self, module: Module, call: ts.Node) -> bool | None:
        """What a call without arguments returns, when the model resolves the callee to one
        function: the same answer from every exit. No search by name."""
        callee = sx.field(call, "function")
        if callee is None:
            return None
        function = module.program.function_of(Expr(module, callee))
        if function is None:
            return None
        answers: set[bool | None] = set()
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


# ------------------------------------------------------------------ resets


def _reset(program: Resolver, flag: Flag, paths: tuple[str, ...]) -> bool:
    """`flag` may hold something other than `true` after it is set, or cannot be followed."""
    module = program.module(flag.path)
    if module is None:
        return True
    if flag.name.startswith("this."):
        return _property_reset(program, module, flag, paths)
    return _variable_reset(module, flag)


def _variable_reset(module: Module, flag: Flag) -> bool:
    """Any write to the variable other than `flag = true` (its declaration aside): `= x`,
    `||=`, `++`, a destructuring target, a `for (flag of ..)` head."""
    scope = next((d.scope for d in binder.bindings(module).get(flag.name, []) if d.scope.id == flag.scope), None)
    if scope is None:
        return True
    stack = [scope]
    while stack:
        node = stack.pop()
        stack.extend(node.named_children)
        if node.type not in ("identifier", "shorthand_property_identifier_pattern") or binder.name_of(node) != flag.name:
            continue
        if any(d.node.id == node.id for d in binder.bindings(module).get(flag.name, [])):
            continue
        if _write_kind(module, node) == "other":
            return True
    return False


def _write_kind(module: Module, node: ts.Node) -> str | None:
    """How `node` (a name or member) is written: None (read), "true" (`node = true`), "other"."""
    child = node
    for parent in module.index.ancestors(node):
        if parent.type == "assignment_expression":
            if sx.field(parent, "left") is not None and sx.field(parent, "left").id == child.id:
                value = sx.strip(sx.field(parent, "right"))
                plain = child.id == node.id and value is not None and value.type == "true"
                return "true" if plain else "other"
            return None
        if parent.type in ("augmented_assignment_expression", "for_in_statement"):
            left = sx.field(parent, "left")
            return "other" if left is not None and left.id == child.id else None
        if parent.type == "update_expression":
            return "other"
        if parent.type == "unary_expression" and parent.children and parent.children[0].type == "delete":
            return "other"
        if parent.type not in _PATTERN_WRAPPERS:
            return None
        child = parent
    return None


def _property_reset(program: Resolver, module: Module, flag: Flag, paths: tuple[str, ...]) -> bool:
    """For `this.x`: a write of anything but `true` to any `.x` or to a bracket key that may be
    `x`, in any file read; in the flag's file also a call that writes properties
    (`Object.assign`, ...) or the same `this` handed out (`const self = this`, `reset(this)`),
    other than as the receiver argument of `Effect.gen(this, ..)`."""
    name = flag.name.split(".", 1)[1]
    for path in dict.fromkeys((flag.path, *paths)):
        other = program.module(path)
        if other is None:
            continue
        stack = [other.root]
        while stack:
            node = stack.pop()
            stack.extend(node.named_children)
            if node.type == "member_expression":
                prop = sx.field(node, "property")
                if prop is None or sx.text(prop) != name:
                    continue
                if _write_kind(other, node) == "other":
                    return True
            elif node.type == "subscript_expression":
                key = sx.strip(sx.field(node, "index"))
                literal = sx.string_value(key) if key is not None and key.type == "string" else None
                if key is not None and key.type == "number":
                    continue
                if literal is not None and literal != name:
                    continue
                if _write_kind(other, node) is not None:
                    return True
            elif node.type == "call_expression" and other is module:
                callee = sx.field(node, "function")
                if callee is not None and sx.dotted_path(callee) in _OBJECT_WRITERS:
                    return True
            elif node.type == "this" and other is module:
                owner = binder.this_owner(module, node)
                if (owner is None or owner.id == flag.scope) and not _this_as_receiver(module, node):
                    return True
    return False


def _this_as_receiver(module: Module, node: ts.Node) -> bool:
    """`this.x` (a member read or write), or `Effect.gen(this, ..)`'s first argument."""
    parent = module.index.parent(node)
    if parent is None:
        return False
    if parent.type == "member_expression" and sx.field(parent, "object") is not None and sx.field(parent, "object").id == node.id:
        return True
    if parent.type == "arguments":
        call = module.index.parent(parent)
        callee = sx.field(call, "function") if call is not None else None
        first = next(iter(sx.named(parent)), None)
        return callee is not None and sx.dotted_path(callee) == "Effect.gen" and first is not None and first.id == node.id
    return False
