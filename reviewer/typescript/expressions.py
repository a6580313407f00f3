"""The values rules see: expressions, calls, functions, callbacks, invocations.

Each wraps a tree-sitter node privately and answers questions about it; rules
never touch the node. Properties that need other files (callee qualification,
definitions) go through the owning Program, reached via the module.
"""

from __future__ import annotations

from dataclasses import dataclass, field as dc_field
from functools import cached_property
from typing import Callable, Hashable, Iterable, Mapping, Protocol

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import handed as hd
from reviewer.typescript import loaders, placement
from reviewer.typescript import syntax as sx
from reviewer.typescript.branches import exclusive
from reviewer.typescript.parse import node_lines
from reviewer.typescript.roles import Role, RoleTable
from reviewer.typescript.source import Definitions, Source
from reviewer.typescript.written import small_cached, written


class Facts(Definitions, Protocol):
    """What values ask of the whole program (Program has it): roles, and what the patch changed."""

    @property
    def roles(self) -> RoleTable: ...

    def changed(self, path: str, line: int, end_line: int) -> bool: ...

    def passed_roles(self, path: str, node: ts.Node) -> tuple[Role, ...]: ...

    def confined_roles(self, path: str, node: ts.Node) -> tuple[Role, ...]: ...


class Tables(Protocol):
    """One module's lookup tables as values use them (index.ModuleIndex has them)."""

    def parent(self, node: ts.Node) -> ts.Node | None: ...
    def ancestors(self, node: ts.Node) -> Iterable[ts.Node]: ...
    def call_at(self, node: ts.Node | None) -> "Call | None": ...
    def function_at(self, node: ts.Node | None) -> "Function | None": ...
    def enclosing_function(self, node: ts.Node) -> "Function | None": ...
    def local_function(self, function: "Function | None", name: str) -> "Function | None": ...
    def calls_of(self, function: "Function | None") -> tuple["Call", ...]: ...
    def calls_within(self, node: ts.Node) -> tuple["Call", ...]: ...
    def any_call(self, node: ts.Node, key: Hashable, test: "Callable[[Call], bool]") -> bool: ...
    def chain_of(self, call: "Call") -> tuple[tuple["Call", ...], int]: ...
    def chain_from(self, call: "Call") -> tuple["Call", ...]: ...
    def binds(self, function: "Function | None", name: str) -> bool: ...


class Owner(Source, Protocol):
    """The module a value belongs to, as values see it (module.Module has it)."""

    @property
    def index(self) -> Tables: ...

    @property
    def program(self) -> Facts: ...

    @property
    def requirers(self) -> frozenset[str]: ...

    @property
    def declarations(self) -> Mapping[str, ts.Node]: ...


class Expr:
    """An expression (or any syntax node) of one file.

    `kind` is the tree-sitter node type, `line`/`end_line` 1-based and inclusive.
    """

    def __init__(self, module: Owner, node: ts.Node) -> None:
        self._module = module
        self._node = node
        self.path: str = module.path
        self.kind: str = node.type
        self.line, self.end_line = node_lines(node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Expr({self.kind} {self.path}:{self.line} {self.normalized[:60]!r})"

    @property
    def _key(self) -> tuple[str, int, int, str]:
        return (self.path, self._node.start_byte, self._node.end_byte, self.kind)

    @property
    def span(self) -> tuple[str, int, int]:
        """(path, start byte, end byte): where it is, finer than lines (two calls on one line differ)."""
        return (self.path, self._node.start_byte, self._node.end_byte)

    @property
    def text(self) -> str:
        """The source as written."""
        return small_cached(self, "_text", lambda: sx.text(self._node))

    @property
    def normalized(self) -> str:
        """The source with comments dropped and whitespace collapsed (reformatting does not change it)."""
        return small_cached(self, "_normalized", lambda: sx.normalized(self._node, self._module.normal_forms))

    @cached_property
    def written(self) -> str:
        """The source as written, folded onto one line and cut around `…` when long (written.py): what a
        message quotes. Never for matching or anchors: reformatting changes it (use `normalized`)."""
        return written(self._node)

    @property
    def string_value(self) -> str | None:
        """The value of a string literal or a template without substitutions (through parentheses and casts)."""
        return sx.string_value(self._node)

    @property
    def number_value(self) -> int | float | None:
        """The value of a numeric literal or a negated one; no folding (see `Program.fold`)."""
        return sx.number_value(self._node)

    @property
    def identifier(self) -> str | None:
        """The name of a bare identifier (through parentheses and casts), else None."""
        node = sx.strip(self._node)
        if node is not None and node.type in ("identifier", "shorthand_property_identifier"):
            return sx.text(node)
        return None

    @property
    def member_path(self) -> str | None:
        """`A.b.c` as written, for identifier-rooted member expressions (and bare identifiers)."""
        return sx.dotted_path(self._node)

    @cached_property
    def qualified(self) -> str | None:
        """Import-resolved name of a reference (`E.forkScoped` -> `Effect.forkScoped`)."""
        return cx.qualified_name(self._module, self._node)

    @property
    def call(self) -> "Call | None":
        """The Call this expression is (through parentheses and casts), else None."""
        node = sx.strip(self._node)
        if node is None or node.type != "call_expression":
            return None
        return self._module.index.call_at(node)

    @property
    def function(self) -> "Function | None":
        """The function this expression is (or wraps, e.g. `Effect.fn(..)(function* ..)`)."""
        target = cx.function_of_value(self._node, self._module.program.roles.combinators)
        return self._module.index.function_at(target) if target is not None else None

    @cached_property
    def props(self) -> tuple[tuple[str, "Expr"], ...]:
        """(key, value) of each member of an object literal, in order: pairs, methods, shorthands.

        Spreads and computed keys that are not strings are left out; () when not an object literal.
        """
        return tuple((key, Expr(self._module, value)) for key, value in sx.object_members(self._node))

    def prop(self, name: str) -> "Expr | None":
        """The value of the first member `name` of an object literal (see `props`), else None."""
        return next((value for key, value in self.props if key == name), None)

    @property
    def elements(self) -> tuple["Expr", ...]:
        """Elements of an array literal."""
        node = sx.strip(self._node)
        if node is None or node.type != "array":
            return ()
        return tuple(Expr(self._module, child) for child in sx.named(node))

    @property
    def changed(self) -> bool:
        """Whether the patch added a line inside this expression."""
        return self._module.program.changed(self.path, self.line, self.end_line)

    @property
    def enclosing_function(self) -> "Function | None":
        """The innermost function strictly around this expression; None at module level."""
        return self._module.index.enclosing_function(self._node)

    @property
    def calls(self) -> tuple["Call", ...]:
        """Every call inside this expression (itself included), in document order."""
        return self._module.index.calls_within(self._node)

    def any_call(self, key: "Hashable", test: "Callable[[Call], bool]") -> bool:
        """`any(test(c) for c in self.calls)`, where `key` names `test` for the whole module.

        For large expressions every call of the module is tested once per key,
        then each question is a lookup: asking it of each of a thousand nested
        handlers costs the module's size, not its size times the nesting.
        `test` must depend on the call alone.
        """
        return self._module.index.any_call(self._node, key, test)


@dataclass(frozen=True, eq=False)
class Function:
    """A function of one file: declaration, expression, arrow, generator or method (class methods too).

    `name` is how it is bound (declarator, property key, assigned member's last segment, or its own
    name), None when anonymous; `local_role` is the innermost region it is written in, `role` the
    innermost one it runs in (a function passed by name to a handler combinator runs as a handler);
    `parent` the function around it; `changed` whether the patch added a line inside it.
    """

    path: str
    name: str | None
    line: int
    end_line: int
    kind: str  # "function" | "arrow" | "generator" | "method"
    local_role: Role
    parent: "Function | None"
    changed: bool
    _node: ts.Node = dc_field(repr=False)
    _module: Owner = dc_field(repr=False)

    def __repr__(self) -> str:
        return f"Function({self.name or '<anonymous>'} {self.kind} {self.path}:{self.line}-{self.end_line})"

    @cached_property
    def role(self) -> Role:
        """The innermost region the function runs in: where it is written, else where it is passed by name."""
        if self.local_role is not Role.ORDINARY:
            return self.local_role
        passed = self._module.program.passed_roles(self.path, self._node)
        return passed[0] if passed else Role.ORDINARY

    @cached_property
    def calls(self) -> tuple["Call", ...]:
        """The calls directly in this function, in document order; not those of nested functions (see `all_calls`)."""
        return self._module.index.calls_of(self)

    @property
    def all_calls(self) -> tuple["Call", ...]:
        """Every call in this function, nested functions included (a slice of the module's calls, not kept:
        asked for each of thousands of nested functions, kept copies would add up to their nesting squared)."""
        return self._module.index.calls_within(self._node)

    @property
    def body_text_normalized(self) -> str:
        """The body's source, comments dropped and whitespace collapsed (the whole function when bodiless)."""
        body = sx.field(self._node, "body")
        node = body if body is not None else self._node
        return small_cached(self, "_body_normalized", lambda: sx.normalized(node, self._module.normal_forms))

    @property
    def expr(self) -> Expr:
        """This function as an Expr."""
        return Expr(self._module, self._node)

    @property
    def params(self) -> tuple[str, ...]:
        """Parameter names as written (destructured ones by their source text)."""
        params = sx.field(self._node, "parameters")
        if params is None:
            single = sx.field(self._node, "parameter")  # `x => ..`
            return (sx.text(single),) if single is not None else ()
        out = []
        for param in sx.named(params):
            pattern = sx.field(param, "pattern") or param
            out.append(sx.text(pattern))
        return tuple(out)

    def local_function(self, name: str) -> "Function | None":
        """A function bound to `name` in this body or an enclosing one."""
        return self._module.index.local_function(self, name)


@dataclass(frozen=True, eq=False)
class Call:
    """One call expression (`new X()` is not one).

    `callee` is the import-resolved dotted name (`E.fork` -> `Effect.fork`; fluent links keep `()`:
    `db.select().from`), or the normalized source when the callee has no name; `method` its last
    segment; `local_roles` the regions written around it in its file, innermost first; `roles`
    those and the regions its code is passed into by name (references.py); `case_label` the string
    label of the `case` it sits in; `index` its position among the calls of its enclosing function.
    """

    path: str
    line: int
    end_line: int
    callee: str
    method: str
    enclosing: Function | None
    local_roles: tuple[Role, ...]  # the regions written around the call, innermost first, each role once
    case_label: str | None
    index: int
    _node: ts.Node = dc_field(repr=False)
    _module: Owner = dc_field(repr=False)

    def __repr__(self) -> str:
        return f"Call({self.callee} {self.path}:{self.line})"

    @property
    def roles(self) -> tuple[Role, ...]:
        """The regions the call runs in, innermost first, each role once: those written around it, then
        those its code is passed into by name (`Effect.catchAll(onFailure)` makes `onFailure`'s calls
        run as a failure handler)."""
        local = self.local_roles
        passed = self._module.program.passed_roles(self.path, self._node)
        return (*local, *(role for role in passed if role not in local)) if passed else local

    @property
    def span(self) -> tuple[str, int, int]:
        """(path, start byte, end byte) of the call expression."""
        return (self.path, self._node.start_byte, self._node.end_byte)

    @property
    def confined_roles(self) -> tuple[Role, ...]:
        """The regions the call runs in wherever it runs: those written around it, and those its code is
        passed into by name when every use of that name is in the role (confine.py). Rules that exempt
        code in a role (a release in a finalizer) ask this, not `roles`."""
        local = self.local_roles
        passed = self._module.program.confined_roles(self.path, self._node)
        return (*local, *(role for role in passed if role not in local)) if passed else local

    @property
    def role(self) -> Role:  # the innermost role the call runs in (`roles[0]`), ORDINARY outside every region
        return self.roles[0] if self.roles else Role.ORDINARY

    @cached_property
    def callee_text(self) -> str:
        """The callee as written, whitespace and comments collapsed (cut around `…` past 4,096 characters)."""
        node = self._node.child_by_field_name("function")
        return sx.bounded_normal(node, self._module.normal_forms, cx._MAX_NAME) if node is not None else ""

    @property
    def text(self) -> str:
        """The call's source as written."""
        return small_cached(self, "_text", lambda: sx.text(self._node))

    @property
    def normalized(self) -> str:
        """The call's source, comments dropped and whitespace collapsed."""
        return small_cached(self, "_normalized", lambda: sx.normalized(self._node, self._module.normal_forms))

    @cached_property
    def written(self) -> str:
        """The call's source as a message quotes it (see `Expr.written`); never for matching or anchors."""
        return written(self._node)

    @cached_property
    def callee_written(self) -> str:
        """The callee as a message quotes it (see `Expr.written`); `callee_text` is for lookups."""
        node = self._node.child_by_field_name("function")
        return written(node) if node is not None else ""

    @property
    def changed(self) -> bool:
        """Whether the patch added a line inside this call."""
        return self._module.program.changed(self.path, self.line, self.end_line)

    @property
    def expr(self) -> Expr:
        """This call as an Expr."""
        return Expr(self._module, self._node)

    @cached_property
    def args(self) -> tuple[Expr, ...]:
        """The argument expressions, in order; () for a tagged template."""
        return tuple(Expr(self._module, arg) for arg in cx.invoked_arguments(self._module, self._node))

    @property
    def callee_expr(self) -> Expr | None:
        """The callee as an expression (`recv.m` in `recv.m(..)`, `f` in `f(..)`), for Program.function_of."""
        node = sx.field(self._node, "function")
        return Expr(self._module, node) if node is not None else None

    @cached_property
    def runs(self) -> tuple[str, ...]:
        """Every name the call may run: callee, conditional branches, functions handed to it (handed.py)."""
        return (self.callee, *hd.alternatives(self._module, self._node), *hd.handed_functions(self._module, self._node))

    @property
    def receiver(self) -> Expr | None:
        """The object of a method call (`recv` in `recv.m(..)`), None for a plain function call."""
        node = cx.receiver(self._node)
        return Expr(self._module, node) if node is not None else None

    @property
    def chain(self) -> tuple["Call", ...]:
        """The fluent chain this call belongs to, innermost first (one tuple shared by its members)."""
        return self._module.index.chain_of(self)[0]

    @property
    def chain_position(self) -> int:
        """This call's index in `chain`."""
        return self._module.index.chain_of(self)[1]

    @property
    def chain_from_here(self) -> tuple["Call", ...]:
        """`chain[chain_position:]`: this call and the links applied to its value, found walking outward only
        (asked of every link of a long chain, the links below each one are not walked again)."""
        return self._module.index.chain_from(self)

    @cached_property
    def pipe_stages(self) -> tuple[Expr, ...]:
        """The stages of `x.pipe(a, b)` or `pipe(x, a, b)` (`pipe` or `Function.pipe`); () for any other call."""
        _, stages = cx.pipe_parts(self._module, self._node, self.callee)
        return tuple(Expr(self._module, stage) for stage in stages)

    @cached_property
    def piped_into(self) -> tuple[Expr, ...]:
        """Stages of every pipe applied to this call's value (directly or later in its chain)."""
        stages: list[Expr] = []
        index = self._module.index
        chain, position = index.chain_of(self)
        for later in chain[position + 1 :]:
            if later.method == "pipe":
                stages.extend(later.pipe_stages)
        # `pipe(thisCall, a, b)` and `pipe(thisCall.x().y(), a, b)`
        top = chain[-1]._node if chain else self._node
        parent = index.parent(top)
        if parent is not None and parent.type == "arguments":
            outer = index.parent(parent)
            host = index.call_at(outer) if outer is not None else None
            if host is not None and host.callee in cx.PIPE_FUNCTIONS and host.args and host.args[0]._node == top:
                stages.extend(host.pipe_stages)
        return tuple(stages)

    @property
    def loads(self) -> tuple[str, str | None] | None:
        """("import" | "require", the specifier or None) when this call loads a module (loaders.loader)."""
        found = loaders.loader(self._module, self._node, self._module.requirers)
        if found is not None and self.callee == "require" and (
            "require" in self._module.declarations or self._module.index.binds(self.enclosing, "require")
        ):
            return None  # a function of the program's own named `require`
        return found

    @property
    def host(self) -> "Call | None":
        """The call this call's value is an argument of (`H(this, ..)`, `H(yield* this)`)."""
        return self._module.index.call_at(placement.host(self._node, self._module.index.parent))

    @property
    def thunk_host(self) -> "Call | None":
        """The call taking a function that returns this call's value (`Effect.suspend(() => this)`)."""
        return self._module.index.call_at(placement.thunk_host(self._node, self._module.index.parent))

    @property
    def element_host(self) -> "Call | None":
        """The call taking a collection holding this call's value (`H([.., this])`, `H({ k: this })`)."""
        return self._module.index.call_at(placement.element_host(self._node, self._module.index.parent))

    @property
    def collection_name(self) -> str | None:
        """The `const` a collection holding this call's value is bound to (`const alts = [this, ..]`)."""
        return placement.collection_name(self._node, self._module.index.parent)

    @cached_property
    def binding(self) -> tuple[str, str | None]:
        """What becomes of this call's value, after the rest of its chain and pipes (placement.binding)."""
        index = self._module.index  # the callee name of the call at a node, None where none is
        return placement.binding(self._node, index.parent, lambda node: getattr(index.call_at(node), "callee", None))

    @cached_property
    def statement_index(self) -> tuple[int, ...]:
        """The call's position among statements, outermost first, up to the enclosing function (placement.statement_index)."""
        stop = self.enclosing._node if self.enclosing is not None else None
        return placement.statement_index(self._node, self._module.index.ancestors(self._node), stop)

    def precedes(self, other: "Call", within: Function | None = None) -> bool:
        """This call runs before `other` on every path that is obvious from source order.

        Both calls are in the same enclosing function (or, given `within`, both
        lexically inside that function, e.g. one in a nested `Effect.gen`), this
        call ends before `other` starts, and they are not on mutually exclusive
        branches (if/else, ternary, different switch cases).
        """
        if self.path != other.path or self is other:
            return False
        if within is None:
            if self.enclosing is not other.enclosing:
                return False
        elif within.path != self.path or not (
            sx.contains(within._node, self._node) and sx.contains(within._node, other._node)
        ):
            return False
        if self._node.end_byte > other._node.start_byte:
            return False
        return not exclusive(self._module.index, self._node, other._node)


def _parts(expr: Expr | Call) -> tuple[Owner, ts.Node]:
    return expr._module, expr._node
