"""The lookup tables of one module: its functions, calls, properties and member reads.

`walk.py` fills a ModuleIndex in one walk over the module; afterwards it
answers where things are (the call at a node, the calls inside a node, the
function around a node, a node's parent) and keeps the path-compressed memos
that make upward walks and fluent chains cost a module's size, not size times
depth. Package-internal: rules reach it only through the model's values.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Iterator

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, Function, Owner
from reviewer.typescript.roles import Role



@dataclass(frozen=True)
class Property:
    """An object-literal member: `key: value`, `key() {..}` or shorthand `{ key }`."""

    key: str
    node: ts.Node  # the pair / method_definition / shorthand node
    value: ts.Node
    owner: ts.Node  # the object literal


@dataclass(frozen=True)
class RoleRef:
    """A name (or a call) passed where a role combinator expects code: `Effect.catchAll(onFailure)`."""

    node: ts.Node  # the argument, parentheses and casts stripped
    role: Role
    call: Call | None  # the combinator call


class ModuleIndex:
    def __init__(self, module: Owner) -> None:
        self.module = module
        self.functions: tuple[Function, ...] = ()
        self.calls: tuple[Call, ...] = ()
        self.properties: tuple[Property, ...] = ()
        self.role_refs: tuple[RoleRef, ...] = ()
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
        # `const E = Effect`, `const { release } = Claim`: per function (None: top
        # level), the name's (object, property) path; property None for a plain alias.
        self._aliases: dict[int | None, dict[str, tuple[ts.Node, str | None]]] = {}
        self._alias_names: set[str] = set()
        self._call_starts: list[int] = []
        # The walk's callee names and chain levels per call node id (calls.call_name's memo): how
        # deep a callee's chain goes is known for every call without walking down it again.
        self.named_callees: dict[int, tuple[str | None, int]] = {}
        # Deepest nesting the walk met; past DEEP, parents come from a map (below).
        self.depth = 0
        self._parents: dict[int, ts.Node] | None = None
        # Path-compressed answers of upward walks, keyed by node id (see _nearest).
        self._enclosing: dict[int, Function | None] = {}
        self._nearest_memos: dict[str, dict[int, ts.Node | None]] = {}
        self._scope_memos: dict[tuple[str, str], dict[int, Any]] = {}
        self._passing: dict[Hashable, list[int]] = {}  # see any_call
        self.reach_memos: dict[Hashable, Any] = {}  # Program.reaches, per question
        self._memos: dict[str, dict[Any, Any]] = {}  # see memo
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

    def memo(self, name: str) -> dict[Any, Any]:
        """A table a query keeps about this module, by the query's name (it lives as long as the module)."""
        table = self._memos.get(name)
        if table is None:
            table = self._memos[name] = {}
        return table

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

    def alias(self, function: Function | None, name: str) -> tuple[ts.Node, str | None] | None:
        """What a `const` alias `name` seen from `function` stands for; None when it is no alias or is
        shadowed by a parameter or variable of a nearer function."""
        if name not in self._alias_names:
            return None
        current = function
        while current is not None:
            key = current._node.id
            found = self._aliases.get(key, {}).get(name)
            if found is not None:
                return found
            if name in self._bound.get(key, ()):
                return None
            current = current.parent
        return self._aliases.get(None, {}).get(name)

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


# Enclosing `namespace` blocks looked at when resolving a name (deeper ones
# are generated code; each level costs a lookup per reference).
MAX_NAMESPACES = 32
_NAMESPACES = frozenset({"internal_module", "module"})


def _is_namespace(node: ts.Node) -> bool:
    return node.type in _NAMESPACES


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
