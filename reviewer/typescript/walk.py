"""One walk over a module: finds its functions, calls, roles, callbacks and member reads.

The walk is iterative (deeply nested Effect code would exhaust Python's
recursion limit) and pre-order, so lists come out in document order. It
fills a ModuleIndex (index.py); `build_index` is what `Module.index` runs once.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx
from reviewer.typescript.calls import function_of_value
from reviewer.typescript.handed import bind_target
from reviewer.typescript.literals import destructured
from reviewer.typescript.expressions import Call, Function, Owner
from reviewer.typescript.index import _NAMESPACES, ModuleIndex, Property, RoleRef
from reviewer.typescript.parse import node_lines
from reviewer.typescript.roles import Role



# Subtrees that hold no calls, functions or member reads worth indexing;
# skipping them roughly halves the walk over type-heavy Effect code.
_SKIP = frozenset(
    {
        "comment",
        "string",
        "number",
        "regex",
        "type_annotation",
        "type_arguments",
        "type_parameters",
        "interface_declaration",
        "type_alias_declaration",
        "import_statement",
        "property_identifier",
        "identifier",
        "this",
        "true",
        "false",
        "null",
        "undefined",
        "predefined_type",
        "type_identifier",
        "statement_identifier",
    }
)
_STATEMENT_ROLES = {"catch_clause": Role.FAILURE_HANDLER, "finally_clause": Role.FINALIZER}
# Arguments that stand for code written elsewhere (or returned by a call).
_REFERENCES = frozenset(
    {"identifier", "shorthand_property_identifier", "member_expression", "subscript_expression", "call_expression"}
)
# Initializers that make a `const` an alias of a name (not a value computed from it).
_ALIAS_VALUES = frozenset({"identifier", "member_expression"})
# Node types `_names_and_properties` reacts to.
_NAMING = frozenset(
    {
        "variable_declarator",
        "pair",
        "public_field_definition",
        "method_definition",
        "shorthand_property_identifier",
        "assignment_expression",
        "member_expression",
        "subscript_expression",
    }
)


@dataclass
class IndexSlot:
    """Where a module keeps its index (`built`), and the one a walk is filling (`building`)."""

    built: ModuleIndex | None = None
    building: ModuleIndex | None = None


def build_index(module: Owner, slot: IndexSlot) -> ModuleIndex:
    walker = _Walker(module)
    # Callee names are resolved during the walk, and resolving one may ask
    # the module where it is (`namespace` blocks): it asks the walk's index.
    slot.building = walker.index
    walker.index._walking = True
    try:
        return walker.run()
    finally:
        walker.index._walking = False
        walker.index._walk_namespace = None
        slot.building = None


class _Walker:
    def __init__(self, module: Owner) -> None:
        self.module = module
        self.table = module.program.roles
        self.opaque = self.table.combinators
        self.index = ModuleIndex(module)
        # Regions opened by an ancestor (a handler argument, a hook value) and
        # names given by an ancestor (declarator, property key), keyed by node id.
        self.regions: dict[int, list[Role]] = {}
        self.names: dict[int, str] = {}
        self.functions: list[Function] = []
        self.calls: list[Call] = []
        self.properties: list[Property] = []
        self.role_refs: list[tuple[ts.Node, Role, ts.Node]] = []
        self.counters: dict[int | None, int] = {}
        # Qualified callee (and chain level) per call node: a fluent chain's
        # receivers are named once, not once per later link.
        self.names_memo: dict[int, tuple[str | None, int]] = {}

    def run(self) -> ModuleIndex:
        # Frames are plain tuples (node, parent, depth, function, roles, case
        # label): this loop runs once per syntax node, so allocation cost
        # matters. The parent travels with the node because tree-sitter's own
        # `.parent` costs the node's depth.
        stack: list[
            tuple[ts.Node, ts.Node | None, int, Function | None, tuple[Role, ...], str | None, ts.Node | None]
        ] = [(self.module.root, None, 0, None, (), None, None)]
        # Locals: this loop is the hottest code of a review.
        regions, function_types, naming, skip = self.regions, sx.FUNCTION_TYPES, _NAMING, _SKIP
        index = self.index
        pop, push = stack.pop, stack.append
        deepest = 0
        while stack:
            node, parent, depth, function, roles, case, namespace = pop()
            if depth > deepest:
                deepest = depth
            if regions:
                for role in regions.pop(node.id, ()):
                    roles = _entering(role, roles)
            kind = node.type
            if kind in function_types:
                if kind == "method_definition" and self._is_hook_method(node, parent):
                    roles = _entering(Role.COMMIT_HOOK, roles)
                function = self._function(node, function, roles)
            elif kind == "call_expression":
                index._walk_namespace = namespace
                self._call(node, function, roles, case)
            elif kind in _NAMESPACES:
                index._namespace_outer[node.id] = namespace
                namespace = node
            elif kind == "switch_case":
                case = sx.string_value(sx.field(node, "value"))
                if case is not None and case in self.table.failure_cases:
                    roles = _entering(Role.FAILURE_HANDLER, roles)
            elif kind == "switch_default":
                case = None
            elif kind in _STATEMENT_ROLES:
                # `try { .. } catch { .. } finally { .. }`: the statement forms of a failure handler and
                # of a finalizer, as `Effect.catchAll` and `Effect.ensuring` are the combinator forms.
                roles = _entering(_STATEMENT_ROLES[kind], roles)
            if kind in naming:
                self._names_and_properties(node, parent, function)
            depth += 1
            for child in reversed(node.named_children):
                if child.type not in skip:
                    push((child, node, depth, function, roles, case, namespace))
        index.depth = deepest
        index.functions = tuple(self.functions)
        index.calls = tuple(self.calls)
        index.properties = tuple(self.properties)
        index.role_refs = tuple(RoleRef(node, role, index.call_at(call)) for node, role, call in self.role_refs)
        index._call_starts = [call._node.start_byte for call in self.calls]
        index.named_callees = self.names_memo
        return index

    # -- functions -----------------------------------------------------------
    def _is_hook_method(self, node: ts.Node, parent: ts.Node | None) -> bool:
        key = sx.property_key(sx.field(node, "name"))
        return parent is not None and parent.type == "object" and key in self.table.commit_hooks

    def _function(self, node: ts.Node, parent: Function | None, roles: tuple[Role, ...]) -> Function:
        name = self.names.get(node.id)
        if name is None and node.type in ("function_declaration", "generator_function_declaration", "method_definition"):
            name = sx.property_key(sx.field(node, "name"))
        if name is None and node.type in ("function_expression", "generator_function"):
            own = sx.field(node, "name")  # `function* named() {}`
            name = sx.text(own) if own is not None else None
        line, end_line = node_lines(node)
        function = Function(
            path=self.module.path,
            name=name,
            line=line,
            end_line=end_line,
            kind=sx.function_kind(node),
            local_role=roles[0] if roles else Role.ORDINARY,
            parent=parent,
            changed=self.module.program.changed(self.module.path, line, end_line),
            _node=node,
            _module=self.module,
        )
        if parent is not None and name and node.type in ("function_declaration", "generator_function_declaration"):
            self.index._locals.setdefault(parent._node.id, {})[name] = node
            self.index._bound.setdefault(parent._node.id, set()).add(name)
        self.index._bound[node.id] = _parameter_names(node)
        self.functions.append(function)
        self.index._functions_by_id[node.id] = function
        return function

    def _names_and_properties(self, node: ts.Node, parent: ts.Node | None, function: Function | None) -> None:
        kind = node.type
        if kind == "variable_declarator":
            name = sx.field(node, "name")
            self._alias(node, name, parent, function)
            if function is not None and name is not None:
                self.index._bound.setdefault(function._node.id, set()).update(_pattern_names(name))
                value = sx.field(node, "value")
                declaration = parent
                is_const = sx.is_const(declaration)
                if is_const and name.type == "identifier" and value is not None:
                    self.index._constants.setdefault(function._node.id, {})[sx.text(name)] = value
            target = function_of_value(sx.field(node, "value"), self.opaque)
            if name is not None and name.type == "identifier" and target is not None:
                awaited = sx.strip(sx.field(node, "value"))
                if awaited is None or awaited.type not in ("await_expression", "yield_expression"):
                    # `const rows = yield* query(() => ..)` names the rows, not the thunk that reads them
                    self.names.setdefault(target.id, sx.text(name))
                if function is not None:
                    self.index._locals.setdefault(function._node.id, {})[sx.text(name)] = target
        elif kind in ("pair", "public_field_definition"):
            key_node = sx.field(node, "key") if kind == "pair" else sx.field(node, "name")
            key = sx.property_key(key_node)
            value = sx.field(node, "value")
            if key is None or value is None:
                return
            target = function_of_value(value, self.opaque)
            if target is not None:
                self.names.setdefault(target.id, key)
            if kind == "pair" and parent is not None and parent.type == "object":
                self.properties.append(_property(key, node, value, parent))
                if key in self.table.commit_hooks:
                    self.regions.setdefault(value.id, []).append(Role.COMMIT_HOOK)
        elif kind == "method_definition":
            key = sx.property_key(sx.field(node, "name"))
            if key is not None and parent is not None and parent.type == "object":
                self.properties.append(_property(key, node, node, parent))
        elif kind == "shorthand_property_identifier":
            if parent is not None and parent.type == "object":
                self.properties.append(_property(sx.text(node), node, node, parent))
        elif kind == "assignment_expression":
            left = sx.strip(sx.field(node, "left"))
            target = function_of_value(sx.field(node, "right"), self.opaque)
            if left is not None and target is not None:
                split = sx.member_segments(left)
                if left.type == "identifier":
                    self.names.setdefault(target.id, sx.text(left))
                elif split is not None and split[1]:
                    self.names.setdefault(target.id, split[1][-1])
        elif kind == "member_expression":
            prop = sx.field(node, "property")
            if prop is not None:
                self.index._members.setdefault(sx.text(prop), []).append(node)
        elif kind == "subscript_expression":
            key = sx.string_value(sx.field(node, "index"))
            if key is not None:
                self.index._members.setdefault(key, []).append(node)

    def _alias(self, node: ts.Node, name: ts.Node | None, parent: ts.Node | None, function: Function | None) -> None:
        """Record `const E = Effect`, `const { release, clear: drop } = Claim`, `const f = [X.clear][0]` and
        `const f = X.clear.bind(null, db)` as aliases, so calls through them are named like calls of what
        they stand for (`E.fork` is `Effect.fork`, `f(claim)` is `X.clear`)."""
        value = cx.picked(sx.field(node, "value"))
        if name is not None and value is not None and value.type in ("object", "array") and sx.is_const(parent):
            # `const { go } = { go: X.clear }`, `const [go] = [X.clear]`: each name aliases its member
            key = function._node.id if function is not None else None
            for local, member in destructured(name, value):
                target = cx.picked(member)
                if target is not None and target.type in _ALIAS_VALUES:
                    self.index._aliases.setdefault(key, {})[local] = (target, None)
                    self.index._alias_names.add(local)
            return
        if value is not None and value.type == "call_expression":
            # `const drop = X.clear.bind(null, db)` (or `Function.prototype.bind.call(X.clear, null, db)`):
            # calling `drop` calls `X.clear`
            target = bind_target(self.module, value)
            if target is not None:
                value = target
        # `const locks = yield* Locks` is kept as the yield: module.alias_of decides whether its target is a tag.
        yielded = value is not None and value.type == "yield_expression" and sx.text(value).startswith("yield*")
        aliased = cx.picked(next(iter(sx.named(value)), None)) if yielded else value
        if name is None or aliased is None or aliased.type not in _ALIAS_VALUES or parent is None:
            return
        if not sx.is_const(parent):
            return
        key = function._node.id if function is not None else None
        table = self.index._aliases.setdefault(key, {})
        if name.type == "identifier":
            table[sx.text(name)] = (value, None)
            self.index._alias_names.add(sx.text(name))
        elif name.type == "object_pattern":
            for member in sx.named(name):
                if member.type == "shorthand_property_identifier_pattern":
                    local, prop = sx.text(member), sx.text(member)
                elif member.type == "pair_pattern" and sx.field(member, "value") is not None:
                    target = sx.field(member, "value")
                    if target is None or target.type != "identifier":
                        continue
                    local, prop = sx.text(target), sx.property_key(sx.field(member, "key"))
                    if prop is None:
                        continue
                else:
                    continue
                table[local] = (value, prop)
                self.index._alias_names.add(local)

    # -- calls and the regions they open --------------------------------------
    def _call(self, node: ts.Node, function: Function | None, roles: tuple[Role, ...], case: str | None) -> None:
        callee_node = sx.field(node, "function")
        callee = cx.call_name(self.module, node, self.names_memo)
        if callee is None:
            callee = cx.unnamed_callee(callee_node, self.module.normal_forms) if callee_node is not None else ""
        key = function._node.id if function is not None else None
        position = self.counters.get(key, 0)
        self.counters[key] = position + 1
        line, end_line = node_lines(node)
        call = Call(
            path=self.module.path,
            line=line,
            end_line=end_line,
            callee=callee,
            method=cx.last_segment(callee),
            enclosing=function,
            local_roles=roles,
            case_label=case,
            index=position,
            _node=node,
            _module=self.module,
        )
        self.calls.append(call)
        self.index._calls_by_id[node.id] = call
        self.index._calls_by_function.setdefault(key, []).append(call)
        self._open_regions(node, callee)

    def _open_regions(self, node: ts.Node, callee: str) -> None:
        table = self.table
        args = cx.arguments(node)
        selector = table.failure_handlers.get(callee)
        if selector is not None:
            self._mark(cx.select_arguments(args, selector), Role.FAILURE_HANDLER, node)
        selector = table.finalizers.get(callee)
        if selector is not None:
            self._mark(cx.select_arguments(args, selector), Role.FINALIZER, node)
        # `Effect.fork(eff)`, and curried `FiberSet.run(set)(eff)`
        if callee in table.forks or (callee.endswith("()") and callee[:-2] in table.forks):
            self._mark(args, Role.FORKED, node)
        subject, stages = cx.pipe_parts(self.module, node, callee)
        if subject is not None:
            fork_at = next((i for i, stage in enumerate(stages) if self._is_fork(stage)), None)
            if fork_at is not None:
                # Everything piped before the fork stage runs on the forked fiber.
                self._mark([subject, *stages[:fork_at]], Role.FORKED, node)

    def _is_fork(self, stage: ts.Node) -> bool:
        stage = sx.strip(stage)
        if stage is None:
            return False
        if stage.type == "call_expression":
            name = cx.call_name(self.module, stage, self.names_memo)
        else:
            name = cx.qualified_name(self.module, stage)
        return name is not None and name in self.table.forks

    def _mark(self, nodes: list[ts.Node], role: Role, call: ts.Node) -> None:
        for target in nodes:
            self.regions.setdefault(target.id, []).append(role)
            # Code passed by name gets its role where it is passed (references.py).
            inner = sx.strip(target)
            if inner is not None and inner.type == "arrow_function":
                body = sx.strip(sx.field(inner, "body"))  # `() => cleanup` returns the named effect
                inner = body if body is not None and body.type in ("identifier", "member_expression") else None
            if inner is not None and inner.type in _REFERENCES:
                self.role_refs.append((inner, role, call))


def _entering(role: Role, roles: tuple[Role, ...]) -> tuple[Role, ...]:
    """The roles inside a region of `role` opened within `roles`: each role once, innermost first.

    A role met again moves to the front instead of being repeated: a
    thousand nested handlers must not give each call a thousand-long tuple
    (`in` and the innermost role, all anyone asks, are unchanged).
    """
    if roles and roles[0] is role:
        return roles
    return (role, *(r for r in roles if r is not role))


def _property(key: str, node: ts.Node, value: ts.Node, owner: ts.Node) -> Property:
    return Property(key=key, node=node, value=value, owner=owner)


def _parameter_names(function: ts.Node) -> set[str]:
    single = sx.field(function, "parameter")  # `x => ..`
    if single is not None:
        return {sx.text(single)}
    params = sx.field(function, "parameters")
    names: set[str] = set()
    for param in sx.named(params) if params is not None else ():
        pattern = sx.field(param, "pattern")
        if pattern is not None:
            names |= _pattern_names(pattern)
    return names


def _pattern_names(pattern: ts.Node) -> set[str]:
    """Names a binding pattern introduces (`a`, `{ a, b: c }`, `[a, ...b]`)."""
    if pattern.type == "identifier":
        return {sx.text(pattern)}
    names: set[str] = set()
    stack = [pattern]
    while stack:
        node = stack.pop()
        if node.type in ("identifier", "shorthand_property_identifier_pattern"):
            names.add(sx.text(node))
            continue
        if node.type == "pair_pattern":
            value = sx.field(node, "value")
            if value is not None:
                stack.append(value)
            continue
        if node.type in ("object_assignment_pattern", "assignment_pattern"):
            left = sx.field(node, "left")
            if left is not None:
                stack.append(left)
            continue
        if node.type in ("type_annotation", "property_identifier"):
            continue
        stack.extend(node.named_children)
    return names
