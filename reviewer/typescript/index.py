"""One walk over a module: its functions, calls, roles, callbacks and member reads.

The walk is iterative (deeply nested Effect code would exhaust Python's
recursion limit) and pre-order, so lists come out in document order.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx
from reviewer.typescript.model import Call, Expr, Function
from reviewer.typescript.module import function_of_value
from reviewer.typescript.parse import node_lines
from reviewer.typescript.roles import Role

if TYPE_CHECKING:
    from reviewer.typescript.module import Module


@dataclass(frozen=True)
class Property:
    """An object-literal member: `key: value`, `key() {..}` or shorthand `{ key }`."""

    key: str
    node: ts.Node  # the pair / method_definition / shorthand node
    value: ts.Node
    owner: ts.Node  # the object literal


class ModuleIndex:
    def __init__(self, module: "Module") -> None:
        self.module = module
        self.functions: tuple[Function, ...] = ()
        self.calls: tuple[Call, ...] = ()
        self.properties: tuple[Property, ...] = ()
        self._functions_by_id: dict[int, Function] = {}
        self._calls_by_id: dict[int, Call] = {}
        self._calls_by_function: dict[int | None, list[Call]] = {}
        self._members: dict[str, list[ts.Node]] = {}
        self._locals: dict[int, dict[str, ts.Node]] = {}
        # Every name a function binds (parameters, variables): these shadow
        # module-level and imported names of the same spelling.
        self._bound: dict[int, set[str]] = {}
        # `const NAME = value` inside functions, for folding `limit(BATCH)`.
        self._constants: dict[int, dict[str, ts.Node]] = {}
        self._call_starts: list[int] = []
        # Deepest nesting the walk met; past DEEP, parents come from a map (below).
        self.depth = 0
        self._parents: dict[int, ts.Node] | None = None
        # Path-compressed answers of upward walks, keyed by node id (see _nearest).
        self._enclosing: dict[int, Function | None] = {}
        self._nearest_memos: dict[str, dict[int, ts.Node | None]] = {}
        self._scope_memos: dict[tuple[str, str], dict[int, Any]] = {}
        self._passing: dict[Hashable, list[int]] = {}  # see any_call
        self.reach_memos: dict[Hashable, Any] = {}  # Program.reaches, per question
        # Fluent chains, shared by every member whose own chain is the same
        # (see chain_of), and each member's position in it.
        self._chains: dict[int, tuple[tuple[Call, ...], int]] = {}
        # Each namespace block's enclosing one (None at top level), and while
        # the walk runs, the block around the node it is at.
        self._namespace_outer: dict[int, ts.Node | None] = {}
        self._walking = False
        self._walk_namespace: ts.Node | None = None

    # -- lookups -----------------------------------------------------------
    def expr(self, node: ts.Node) -> Expr:
        return Expr(self.module, node)

    def function_at(self, node: ts.Node | None) -> Function | None:
        return self._functions_by_id.get(node.id) if node is not None else None

    def call_at(self, node: ts.Node | None) -> Call | None:
        return self._calls_by_id.get(node.id) if node is not None else None

    def calls_of(self, function: Function | None) -> tuple[Call, ...]:
        key = function._node.id if function is not None else None
        return tuple(self._calls_by_function.get(key, ()))

    def calls_within(self, node: ts.Node) -> tuple[Call, ...]:
        """Calls inside `node` (itself included), in document order.

        Calls are in document order, so those starting inside the node are
        one run of `calls`; of them only an enclosing call that starts at
        the same byte (`function () {}.bind(x)()`) ends outside it.
        """
        start, stop = self.call_span(node)
        return self.calls[start:stop]

    def call_span(self, node: ts.Node) -> tuple[int, int]:
        """`calls[start:stop]` are the calls inside `node` (itself included)."""
        calls, end = self.calls, node.end_byte
        start = bisect.bisect_left(self._call_starts, node.start_byte)
        stop = bisect.bisect_left(self._call_starts, end, lo=start)
        # Syntax nests, and calls are in pre-order: any call of the run that
        # ends outside the node encloses it, so it comes first.
        while start < stop and calls[start]._node.end_byte > end:
            start += 1
        return start, stop

    def any_call(self, node: ts.Node, key: Hashable, test: "Callable[[Call], bool]") -> bool:
        """Whether a call inside `node` passes `test`; `key` names `test` within this module.

        A few calls are tested directly. Past _DIRECT_CALLS every call of the
        module is tested once for that key and the answer is a bisection:
        rules ask this of every handler, and handlers nest.
        """
        start, stop = self.call_span(node)
        if stop - start <= _DIRECT_CALLS:
            return any(test(call) for call in self.calls[start:stop])
        passing = self._passing.get(key)
        if passing is None:
            passing = self._passing[key] = [i for i, call in enumerate(self.calls) if test(call)]
        at = bisect.bisect_left(passing, start)
        return at < len(passing) and passing[at] < stop

    # -- parents ---------------------------------------------------------------
    def parent(self, node: ts.Node) -> ts.Node | None:
        """`node.parent`, in constant time however deep the tree.

        tree-sitter finds a parent by descending from the root, so one
        `.parent` costs the node's depth and a walk to the root its square:
        on a 20,000-link fluent chain that is seconds per node. Trees no
        deeper than DEEP keep asking tree-sitter (no memory spent); deeper
        ones build a child -> parent map once, in one cursor walk.
        """
        if self.depth <= DEEP:
            return node.parent
        parents = self._parents
        if parents is None:
            parents = self._parents = _parent_map(self.module.root)
        return parents.get(node.id)

    def ancestors(self, node: ts.Node) -> Iterator[ts.Node]:
        parent = self.parent(node)
        while parent is not None:
            yield parent
            parent = self.parent(parent)

    def enclosing_function(self, node: ts.Node) -> Function | None:
        """The innermost function strictly around `node`.

        Path-compressed: every node passed on the way up remembers the
        answer, so asking for every node of a deep nest costs its size, not
        its size times its depth.
        """
        memo, functions = self._enclosing, self._functions_by_id
        passed: list[int] = []
        found: Function | None = None
        current = self.parent(node)
        while current is not None:
            key = current.id
            if key in memo:
                found = memo[key]
                break
            found = functions.get(key)
            if found is not None:
                break
            passed.append(key)
            current = self.parent(current)
        for key in passed:
            memo[key] = found
        return found

    def nearest(self, node: ts.Node, purpose: str, stop: "Callable[[ts.Node], bool]") -> ts.Node | None:
        """The nearest proper ancestor of `node` for which `stop` holds, else None.

        `stop` must depend on the ancestor alone (not on how it was reached),
        so answers can be shared: each `purpose` names one `stop` and keeps
        its own path-compressed memo.
        """
        memo = self._nearest_memos.setdefault(purpose, {})
        passed: list[int] = []
        found: ts.Node | None = None
        current = self.parent(node)
        while current is not None:
            key = current.id
            if key in memo:
                found = memo[key]
                break
            if stop(current):
                found = current
                break
            passed.append(key)
            current = self.parent(current)
        for key in passed:
            memo[key] = found
        return found

    def chain_from(self, call: Call) -> tuple[Call, ...]:
        """`chain_of(call)`'s chain from `call` on, walking only outward when it is not known."""
        known = self._chains.get(call._node.id)
        if known is not None:
            return known[0][known[1] :]
        out = [call]
        node = cx.outer_chain_call(call._node, self.parent)
        while node is not None:
            found = self.call_at(node)
            if found is not None:
                out.append(found)
            node = cx.outer_chain_call(node, self.parent)
        return tuple(out)

    def namespace_labels(self, at: ts.Node) -> list[str]:
        """Names of the `namespace N { }` blocks around `at`, innermost first (at most MAX_NAMESPACES)."""
        if self._walking:
            namespace = self._walk_namespace
        else:
            namespace = self.nearest(at, "namespace", _is_namespace)
        labels: list[str] = []
        while namespace is not None and len(labels) < MAX_NAMESPACES:
            label = sx.field(namespace, "name")
            if label is not None:
                labels.append(sx.text(label))
            if namespace.id in self._namespace_outer:
                namespace = self._namespace_outer[namespace.id]
            else:
                namespace = self.nearest(namespace, "namespace", _is_namespace)
        return labels

    # -- fluent chains ----------------------------------------------------------
    def chain_of(self, call: Call) -> tuple[tuple[Call, ...], int]:
        """(the fluent chain `call` belongs to, innermost first; its position in it).

        Computed once per chain: every member whose own chain would be the
        same list gets the same tuple. A member's chain is the links below it
        followed through receivers and the links above it followed through
        outer calls; the two directions differ only around wrappers (`as T`,
        a parenthesised callee), and only members on the wrong side of such a
        link compute a chain of their own.
        """
        known = self._chains.get(call._node.id)
        if known is not None:
            return known
        nodes = cx.chain_nodes(call._node, self.parent)
        members = [(node, self.call_at(node)) for node in nodes]
        chain = tuple(c for _, c in members if c is not None)
        own = next(i for i, (node, _) in enumerate(members) if node == call._node)
        # Links between consecutive nodes: seen from below (the outer call's
        # receiver is the inner one) and from above (the inner call's outer
        # chain call is the outer one).
        count = len(nodes)
        down = [cx.receiver_call(nodes[i + 1]) == nodes[i] for i in range(count - 1)]
        up = [cx.outer_chain_call(nodes[i], self.parent) == nodes[i + 1] for i in range(count - 1)]
        # Member p shares the list when every link below it is seen from below
        # and every link above it from above.
        shares_below = [True] * count
        for i in range(1, count):
            shares_below[i] = shares_below[i - 1] and down[i - 1]
        shares_above = [True] * count
        for i in range(count - 2, -1, -1):
            shares_above[i] = shares_above[i + 1] and up[i]
        position = 0
        mine = (chain, len(chain))
        for i, (node, member) in enumerate(members):
            if member is None:
                continue
            if i == own:
                mine = (chain, position)
            if shares_below[i] and shares_above[i]:
                self._chains[node.id] = (chain, position)
            position += 1
        if not (shares_below[own] and shares_above[own]) and len(chain) <= _KEPT_CHAIN:
            # A chain of its own (a cast hides this link from the others) is kept
            # only when short: one per link of a long cast chain would add up to
            # the chain's length squared.
            self._chains[call._node.id] = mine
        return mine

    def member_reads(self, prop: str) -> tuple[ts.Node, ...]:
        return tuple(self._members.get(prop, ()))

    def binds(self, function: Function | None, name: str) -> bool:
        """`name` is a parameter or variable of `function` or an enclosing one."""
        bound = self._bound
        return self._scoped("binds", function, name, lambda key: True if name in bound.get(key, ()) else None) or False

    def local_constant(self, function: Function | None, name: str) -> ts.Node | None:
        """The value of `const name = ..` in `function` or an enclosing one."""
        constants = self._constants
        return self._scoped("constant", function, name, lambda key: constants.get(key, {}).get(name))

    def local_function(self, function: Function | None, name: str) -> Function | None:
        locals_ = self._locals
        target = self._scoped("function", function, name, lambda key: locals_.get(key, {}).get(name))
        return self.function_at(target) if target is not None else None

    def _scoped(self, kind: str, function: Function | None, name: str, own: "Callable[[int], Any]") -> Any:
        """The first answer `own` gives for `function` or an enclosing function, innermost first.

        Path-compressed per (kind, name): asked from each of thousands of
        nested functions (a hook whose body nests Effect.gen blocks), the
        walks out add up to the nesting once, not once per function.
        """
        memo = self._scope_memos.setdefault((kind, name), {})
        passed: list[int] = []
        found = None
        current = function
        while current is not None:
            key = current._node.id
            if key in memo:
                found = memo[key]
                break
            found = own(key)
            if found is not None:
                break
            passed.append(key)
            current = current.parent
        if not self._walking:  # the tables are complete only once the walk is done
            for key in passed:
                memo[key] = found
        return found


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


def build_index(module: "Module") -> ModuleIndex:
    walker = _Walker(module)
    # Callee names are resolved during the walk, and resolving one may ask
    # the module where it is (`namespace` blocks): it asks the walk's index.
    module.__dict__["_indexing"] = walker.index
    walker.index._walking = True
    try:
        return walker.run()
    finally:
        walker.index._walking = False
        walker.index._walk_namespace = None
        module.__dict__.pop("_indexing", None)


# Enclosing `namespace` blocks looked at when resolving a name (deeper ones
# are generated code; each level costs a lookup per reference).
MAX_NAMESPACES = 32
_NAMESPACES = frozenset({"internal_module", "module"})


def _is_namespace(node: ts.Node) -> bool:
    return node.type in _NAMESPACES


class _Walker:
    def __init__(self, module: "Module") -> None:
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
        index._call_starts = [call._node.start_byte for call in self.calls]
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
            role=roles[0] if roles else Role.ORDINARY,
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
            if function is not None and name is not None:
                self.index._bound.setdefault(function._node.id, set()).update(_pattern_names(name))
                value = sx.field(node, "value")
                declaration = parent
                is_const = declaration is not None and sx.text(sx.field(declaration, "kind")) == "const"
                if is_const and name.type == "identifier" and value is not None:
                    self.index._constants.setdefault(function._node.id, {})[sx.text(name)] = value
            target = function_of_value(sx.field(node, "value"), self.opaque)
            if name is not None and name.type == "identifier" and target is not None:
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
            roles=roles,
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
            self._mark(cx.select_arguments(args, selector), Role.FAILURE_HANDLER)
        selector = table.finalizers.get(callee)
        if selector is not None:
            self._mark(cx.select_arguments(args, selector), Role.FINALIZER)
        # `Effect.fork(eff)`, and curried `FiberSet.run(set)(eff)`
        if callee in table.forks or (callee.endswith("()") and callee[:-2] in table.forks):
            self._mark(args, Role.FORKED)
        subject, stages = cx.pipe_parts(self.module, node, callee)
        if subject is not None:
            fork_at = next((i for i, stage in enumerate(stages) if self._is_fork(stage)), None)
            if fork_at is not None:
                # Everything piped before the fork stage runs on the forked fiber.
                self._mark([subject, *stages[:fork_at]], Role.FORKED)

    def _is_fork(self, stage: ts.Node) -> bool:
        stage = sx.strip(stage)
        if stage is None:
            return False
        if stage.type == "call_expression":
            name = cx.call_name(self.module, stage, self.names_memo)
        else:
            name = cx.qualified_name(self.module, stage)
        return name is not None and name in self.table.forks

    def _mark(self, nodes: list[ts.Node], role: Role) -> None:
        for target in nodes:
            self.regions.setdefault(target.id, []).append(role)


# Chains that no other link shares are remembered up to this length (see chain_of).
_KEPT_CHAIN = 64

# any_call tests up to this many calls directly, more through a per-module table.
_DIRECT_CALLS = 64

# Trees deeper than this get a parent map (ModuleIndex.parent). Real modules
# nest a few dozen levels; a tree-sitter `.parent` at this depth is still cheap.
DEEP = 200


def _parent_map(root: ts.Node) -> dict[int, ts.Node]:
    """Every node's parent by node id, in one cursor walk (which keeps its own path)."""
    parents: dict[int, ts.Node] = {}
    cursor = root.walk()
    path = [root]  # path[-1] is the cursor's node
    while True:
        if cursor.goto_first_child():
            node = cursor.node
            parents[node.id] = path[-1]
            path.append(node)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return parents
            path.pop()
        path.pop()
        node = cursor.node
        parents[node.id] = path[-1]
        path.append(node)


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
