"""Roles given by reference: a handler, finalizer or forked effect passed by name.

The walk gives a role to code written inside a combinator's argument
(`Effect.catchAll((e) => ..)`). Code written elsewhere and passed by name
runs in the same role, so the role comes from where it is passed, not from
where it is written:

    const onFailure = (e: Failure) => SessionStore.fail(id, e)
    work.pipe(Effect.catchAll(onFailure))        // onFailure's body is a failure handler
    const cleanup = Claim.release(db, claim)
    work.pipe(Effect.ensuring(cleanup))          // `Claim.release(..)` runs as a finalizer
    Effect.catchAll(handle(ctx))                 // the function `handle` returns is the handler

A reference resolves to a function (local, top-level, imported, an Effect
wrapper's body, a method of an object, factory or class: see members.py),
to the initializer of the `const` it names, or, for a call, to the functions
its callee returns. The passing sites read are those of the file itself and
of every file the patch changed: an unchanged file that passes a handler
defined in another unchanged file gives it no role here.

A reference that cannot be followed (a parameter, a property of a runtime
object) is kept as `Unresolved`, so rules can say what they could not check;
a library value (`Effect.void`, `console.error`) is not user code and is
neither resolved nor reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import tree_sitter as ts

from reviewer.typescript import syntax as sx
from reviewer.typescript.builders import callers_of
from reviewer.typescript.expressions import Expr, Function
from reviewer.typescript.literals import picked
from reviewer.typescript.confine import confined
from reviewer.typescript.members import returns
from reviewer.typescript.parse import node_lines
from reviewer.typescript.roles import Role
from reviewer.typescript.written import written
from reviewer.typescript.resolver import Resolver

if TYPE_CHECKING:
    from reviewer.typescript.index import RoleRef
    from reviewer.typescript.module import Module


@dataclass(frozen=True)
class Unresolved:
    """A reference passed to a role combinator whose code the model could not find."""

    path: str
    line: int
    end_line: int
    text: str  # the reference, normalized (matching, anchors)
    written: str  # the reference as a message quotes it (written.py)
    role: Role
    combinator: str  # the callee it was passed to
    changed: bool  # whether the patch added a line of the passing call


@dataclass(frozen=True)
class _Region:
    path: str
    start: int
    end: int
    roles: tuple[Role, ...]  # the role given, then the roles around the passing site
    confined: bool  # the code runs nowhere but in the role given (confine.py)


class PassedRoles:
    """The regions each file's code runs in because it is passed by name, computed once per file."""

    def __init__(self, program: Resolver) -> None:
        self._program = program
        self._shared: dict[str, list[_Region]] | None = None
        self._own: dict[str, tuple[_Region, ...]] = {}
        self._unresolved: dict[str, tuple[Unresolved, ...]] = {}

    def extra(self, path: str, node: ts.Node, confined: bool = False) -> tuple[Role, ...]:
        """Roles a node of `path` runs in by reference, innermost first; with `confined`, only those
        it runs in wherever it runs."""
        # Asked for every call a rule looks at (not kept on the call: a cache per call costs more
        # memory than a lookup here, where most files have no region at all).
        candidates = self._regions(path)
        if not candidates:
            return ()
        regions = [
            r for r in candidates if r.start <= node.start_byte and node.end_byte <= r.end and (r.confined or not confined)
        ]
        if not regions:
            return ()
        regions.sort(key=lambda r: r.end - r.start)
        out: list[Role] = []
        for region in regions:
            out.extend(role for role in region.roles if role not in out)
        return tuple(out)

    def unresolved(self, path: str) -> tuple[Unresolved, ...]:
        """References passed to role combinators in `path` that could not be followed."""
        self._own_regions(path)
        return self._unresolved.get(path, ())

    def _regions(self, path: str) -> "tuple[_Region, ...] | list[_Region]":
        shared = self._shared
        if shared is None:
            shared = self._shared = self._from_changed()
        own = self._own_regions(path)
        more = shared.get(path)
        return [*own, *more] if more else own

    def _own_regions(self, path: str) -> tuple[_Region, ...]:
        if path not in self._own:
            regions: list[_Region] = []
            lost: list[Unresolved] = []
            module = self._program.module(path)
            if module is not None:
                for ref in module.index.role_refs:
                    found = self._resolve(module, ref)
                    if found is None:
                        lost.append(_unresolved(module, ref))
                        continue
                    regions.extend(r for r in found if r.path == path)
            self._own[path] = tuple(regions)
            self._unresolved[path] = tuple(lost)
        return self._own[path]

    def _from_changed(self) -> dict[str, list[_Region]]:
        """Regions the changed files give to code in other files."""
        out: dict[str, list[_Region]] = {}
        program = self._program
        for path in sorted(program.changed_lines):
            module = program.module(path)
            if module is None:
                continue
            for ref in module.index.role_refs:
                for region in self._resolve(module, ref) or ():
                    if region.path != path:
                        out.setdefault(region.path, []).append(region)
        return out

    def _resolve(self, module: "Module", ref: "RoleRef") -> list[_Region] | None:
        """The regions `ref` gives; None when it names user code the model cannot follow."""
        around = ref.call.local_roles if ref.call is not None else ()
        roles = (ref.role, *(r for r in around if r is not ref.role))
        targets = _targets(self._program, module, ref.node, 0)
        if targets is None:
            return None
        return [
            _Region(
                target._module.path,
                target._node.start_byte,
                target._node.end_byte,
                roles,
                confined(self._program, target, ref.role, self._passed_nodes),
            )
            for target in targets
        ]

    def _passed_nodes(self, path: str, role: Role) -> frozenset[int]:
        """Start bytes of the nodes `path` hands to combinators of `role` (remembered per file)."""
        memo = self._program.memo("references.passed-nodes")
        key = (path, role)
        known = memo.get(key)
        if known is None:
            module = self._program.module(path)
            refs = module.index.role_refs if module is not None else ()
            known = memo[key] = frozenset(r.node.start_byte for r in refs if r.role is role)
        return known


def _targets(program: Resolver, module: "Module", node: ts.Node, hops: int) -> list[Expr] | None:
    """The code a reference passed to a combinator stands for; None when it is user code not followed."""
    if hops > program.roles.max_hops:
        return None
    chosen = picked(node)
    if chosen is not None and chosen != node and chosen.type != "subscript_expression":
        return _targets(program, module, chosen, hops + 1)  # `[cleanup][0]`: the element it picks
    expr = module.index.expr(node)
    if node.type == "call_expression":
        # Written inline, a call's own code already carries the role; what is
        # left to find is a function it returns (a curried handler), and the
        # named effects it is built from (`cleanup.pipe(Effect.orDie)`,
        # `Effect.orDie(cleanup)`), which run where it runs.
        callee = sx.field(node, "function")
        fn = program.function_of(module.index.expr(callee)) if callee is not None else None
        out = [r.expr for r in returned_functions(fn)] if fn is not None else []
        for subject in _subjects(node):
            out.extend(_targets(program, module, subject, hops + 1) or ())
        return out
    if node.type in ("arrow_function", "function_expression", "object", "array"):
        return [expr]  # an argument written inline at a call site (see _arguments)
    fn = program.function_of(expr)
    if fn is not None:
        return [fn.expr]
    value = program.bound_value(expr)
    if value is not None:
        inner = sx.strip(value._node)
        if inner is not None and inner.type == "call_expression":
            return [value, *(_targets(program, value._module, inner, hops + 1) or ())]
        if inner is not None and inner.type == "object":
            # `Effect.catchTags(table)` with `const table = { LLMError: endAnyway }`: each handler it names
            out = [value]
            for member in sx.named(inner):
                named = sx.strip(sx.field(member, "value")) if member.type == "pair" else member
                if named is not None and named.type in _REFERENCE_TYPES:
                    out.extend(_targets(program, value._module, named, hops + 1) or ())
            return out
        return [value]
    passed = _arguments(program, module, node, hops)
    if passed is not None:
        return passed
    return None if _user_code(program, module, node) else []


# Object members that name a handler instead of writing it (`{ LLMError: onLLM }`, `{ Timeout }`).
_REFERENCE_TYPES = frozenset({"identifier", "shorthand_property_identifier", "member_expression", "call_expression"})


def _subjects(call: ts.Node) -> list[ts.Node]:
    """Names an effect expression is built from: the root of `x.pipe(..)`/`x.a().b()` and a data-first
    call's first argument when it is a name (`Effect.orDie(cleanup)`)."""
    out: list[ts.Node] = []
    node: ts.Node | None = call
    while node is not None and node.type == "call_expression":
        args = sx.named(sx.field(node, "arguments")) if sx.field(node, "arguments") is not None else []
        first = sx.strip(args[0]) if args else None
        if first is not None and first.type == "identifier":
            out.append(first)
        callee = sx.strip(sx.field(node, "function"))
        node = sx.strip(sx.field(callee, "object")) if callee is not None and callee.type == "member_expression" else None
    if node is not None and node.type == "identifier":
        out.append(node)
    return out


def _arguments(program: Resolver, module: "Module", node: ts.Node, hops: int) -> list[Expr] | None:
    """For a parameter of a named function: what its call sites (in the file and the changed files) pass.

    `const guarded = (work, cleanup) => work.pipe(Effect.ensuring(cleanup))`
    called as `guarded(run, Claim.release(db, c))` hands that release over as
    the finalizer. None when the name is no parameter, the function has no
    call site read here, or one of them passes what cannot be followed.
    """
    if node.type != "identifier":
        return None
    name = sx.text(node)
    fn = module.index.enclosing_function(node)
    while fn is not None and name not in fn.params:
        if name in module.index._bound.get(fn._node.id, ()):
            return None  # a local variable that is not a const: its value is not written once
        fn = fn.parent
    if fn is None or not fn.name:
        return None
    position = fn.params.index(name)
    out: list[Expr] = []
    sites = 0
    for call in callers_of(program, fn, program.changed_lines):
        args = call.args
        if position >= len(args) or any(a.kind == "spread_element" for a in args[: position + 1]):
            return None
        arg = args[position]
        inner = sx.strip(arg._node)
        if inner is None:
            return None
        found = _targets(program, arg._module, inner, hops + 1)
        if found is None:
            return None
        sites += 1
        out.append(arg)  # the argument's own calls run in the role too
        out.extend(found)
    return out if sites else None


def returned_functions(fn: Function) -> Iterator[Function]:
    """Functions `fn` returns as written: an arrow's function body, or `return <function>` in its own body."""
    index = fn._module.index
    for value in returns(fn):
        stripped = sx.strip(value)
        found = index.function_at(stripped) if stripped is not None and sx.is_function(stripped) else None
        if found is not None:
            yield found


def _user_code(program: Resolver, module: "Module", node: ts.Node) -> bool:
    """Whether a reference names the repository's own code (so failing to follow it is a blind spot).

    Package imports (`Effect.void`) and globals (`console.error`) are
    library values: not following them loses nothing the rules check.
    """
    path = sx.dotted_path(node)
    if path is None:
        return True  # `handlers[kind]`, `new X().y`: code the model does not follow
    head = path.split(".", 1)[0]
    if head == "this":
        return True
    scope = module.index.enclosing_function(node)
    if module.index.binds(scope, head):
        return True  # a parameter or local variable
    imp = module.imports.get(head)
    if imp is not None:
        return imp.module is not None or imp.specifier.startswith(".")
    return head in module.declarations or module.scoped_declaration(node, head) is not None


def _unresolved(module: "Module", ref: "RoleRef") -> Unresolved:
    line, end_line = node_lines(ref.node)
    call = ref.call
    changed = call.changed if call is not None else module.program.changed(module.path, line, end_line)
    return Unresolved(
        path=module.path,
        line=line,
        end_line=end_line,
        text=sx.normalized(ref.node, module.normal_forms),
        written=written(ref.node),
        role=ref.role,
        combinator=call.callee if call is not None else "",
        changed=changed,
    )
