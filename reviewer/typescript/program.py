"""The cross-file view: loading modules lazily, resolving names, answering queries."""

from __future__ import annotations

import bisect
import posixpath
from types import MappingProxyType
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Mapping

import tree_sitter as ts

from reviewer.change.changeset import SOURCE_SUFFIXES
from reviewer.typescript import binder
from reviewer.typescript import calls as cx
from reviewer.typescript import handed as hd
from reviewer.typescript import reach
from reviewer.typescript import syntax as sx
from reviewer.typescript.expressions import Call, Expr, Function
from reviewer.typescript.module import Module, read_module
from reviewer.typescript.parse import Parsers, SharedTrees, dialect, error_regions, node_lines
from reviewer.typescript.callbacks import Callback, Invocation
from reviewer.typescript.members import member_function
from reviewer.typescript.references import PassedRoles, Unresolved
from reviewer.typescript.resolution import Resolution
from reviewer.typescript.resolver import Hops
from reviewer.typescript.roles import DEFAULT_ROLES, Role, RoleTable
from reviewer.typescript.schedules import Pace
from reviewer.typescript.values import Folder, Value

if TYPE_CHECKING:
    from reviewer.typescript.index import ModuleIndex

_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx", ".ts"), ".mjs": (".mts",), ".cjs": (".cts",)}


class Program:
    """The TypeScript files of one tree, parsed on demand, and queries across them.

    `source(path)` supplies file text (None when absent) so the model never
    touches a work tree: the review loads blobs from git. `changed_lines` marks
    the lines a patch added, which `changed` on every value reports.
    """

    def __init__(
        self,
        source: Callable[[str], str | None],
        changed_lines: Mapping[str, Iterable[int]] | None = None,
        roles: RoleTable = DEFAULT_ROLES,
        exists: Callable[[str], bool] | None = None,
        shared_trees: SharedTrees | None = None,
    ) -> None:
        self._source = source
        # Whether a path exists without reading it (a tree listing); an import
        # of `./logo.png` must not make us read, or fail to read, that file.
        self._exists = exists if exists is not None else (lambda path: self._text(path) is not None)
        self.changed_lines: Mapping[str, frozenset[int]] = MappingProxyType(
            {path: frozenset(lines) for path, lines in (changed_lines or {}).items()}
        )
        self.changed_paths = frozenset(self.changed_lines)
        self.roles = roles
        self._parsers = Parsers(shared_trees)
        self._texts: dict[str, str | None] = {}
        self._modules: dict[str, Module | None] = {}
        self._errors: dict[str, tuple[tuple[int, int], ...]] = {}
        self._names = Resolution(self.module)
        self._folder = Folder(self.lookup_scoped)
        self._sorted_changed: dict[str, list[int]] = {}
        self._passed = PassedRoles(self)
        self.member_hops = Hops(roles.max_hops)  # members.py: nesting of member resolutions in progress
        self._memos: dict[str, dict] = {}  # see memo

    def memo(self, name: str) -> dict:
        """A table a query (or a rule) keeps about this tree, by its name: it lives as long as the Program."""
        table = self._memos.get(name)
        if table is None:
            table = self._memos[name] = {}
        return table

    # -- files ------------------------------------------------------------------
    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = self._source(path)
        return self._texts[path]

    def module(self, path: str) -> Module | None:
        """The parsed Module at `path` (cached), or None when `path` is not TypeScript or JavaScript
        (`.ts`/`.mts`/`.cts`/`.tsx`, `.js`/`.mjs`/`.cjs`/`.jsx`) or `source(path)` has no text. Parse errors do not make it None (see `parse_errors`).
        """
        if path in self._modules:
            return self._modules[path]
        grammar = dialect(path)
        text = self._text(path) if grammar is not None else None
        module = None
        if grammar is not None and text is not None:
            # surrogatepass: text decoded leniently upstream must still parse, not raise
            tree = self._parsers.parse(grammar, text.encode("utf-8", "surrogatepass"))
            module = read_module(path, text, tree, self, self.resolve)
            self._errors[path] = error_regions(tree)
        self._modules[path] = module
        return module

    def resolve(self, from_path: str, specifier: str) -> str | None:
        """The repository path an import `specifier` written in `from_path` names, or None.

        Relative specifiers only (`./a`, `./a.js` -> `a.ts` else `a.js`, `./dir` -> `dir/index.ts`); package names,
        tsconfig `paths`/`baseUrl` aliases and paths above the repository root give None.
        """
        if not specifier.startswith("."):
            return None  # bare specifiers are packages, outside the repository's source
        base = posixpath.normpath(posixpath.join(posixpath.dirname(from_path), specifier))
        if base == ".." or base.startswith("../"):
            return None
        if base == ".":
            base = ""
        stem, ext = posixpath.splitext(base)
        candidates = [stem + replacement for replacement in _JS_TO_TS.get(ext, ())]
        prefix = base + "/" if base else ""
        candidates += [base + ".ts", base + ".tsx", prefix + "index.ts", prefix + "index.tsx"]
        candidates += [base + ".js", base + ".mjs", base + ".jsx", base + ".cjs", prefix + "index.js", prefix + "index.mjs"]
        if ext:
            candidates.append(base)
        return next((c for c in candidates if c and self._present(c)), None)

    def _present(self, path: str) -> bool:
        return self._text(path) is not None if path.endswith(SOURCE_SUFFIXES) else self._exists(path)

    def parse_errors(self, path: str) -> tuple[tuple[int, int], ...]:
        """Line ranges (1-based, inclusive) of the outermost ERROR nodes and MISSING tokens of `path`;
        () when the file is clean or is not parsed.
        """
        self.module(path)
        return self._errors.get(path, ())

    def changed(self, path: str, line: int, end_line: int) -> bool:
        """Whether the patch added any line in `line`..`end_line` of `path` (removed lines do not count)."""
        # Asked for every function and call: a bisect into the sorted changed
        # lines, not a scan of the range or of the set.
        lines = self._sorted_changed.get(path)
        if lines is None:
            lines = self._sorted_changed[path] = sorted(self.changed_lines.get(path, ()))
        at = bisect.bisect_left(lines, line)
        return at < len(lines) and lines[at] <= end_line

    def _modules_of(self, paths: str | Iterable[str]) -> Iterator[Module]:
        for path in sorted({paths} if isinstance(paths, str) else set(paths)):
            module = self.module(path)
            if module is not None:
                yield module

    # -- names --------------------------------------------------------------------
    def qualified_head(self, module: Module, name: str) -> str:
        """How the first segment of a reference is reported (see Call.callee)."""
        return self._names.qualified_head(module, name)

    def binding(self, module: Module, dotted: str) -> tuple[Module, ts.Node] | None:
        """The (module, value node) of the top-level declaration `dotted` names from `module`'s top level."""
        return self._names.binding(module, dotted)

    def lookup_scoped(self, module: Module, dotted: str, at: ts.Node) -> tuple[Module, ts.Node] | None:
        """Like `Resolution.binding`, seen from `at`: a local `const` wins, and a
        parameter of an enclosing function hides module-level names."""
        index = module.index
        scope = index.enclosing_function(at)
        head = dotted.split(".", 1)[0]
        if scope is not None:
            if "." not in dotted:
                local = index.local_constant(scope, dotted)
                if local is not None:
                    return (module, local)
            if index.binds(scope, head):
                return None
        return self._names.binding(module, dotted)

    # -- functions ------------------------------------------------------------------
    def function(self, path: str, name: str) -> Function | None:
        """The function bound to top-level `name` in `path` (dotted for object/namespace members).

        Only that file's own declarations; classes and their methods are not declarations; aliases are not followed.
        """
        module = self.module(path)
        return module.declared_function(name) if module is not None else None

    def definition(self, from_path: str, local_name: str) -> Function | None:
        """The function `local_name` (dotted allowed) names as seen from `from_path`'s top level.

        Follows relative imports, re-exports and aliases (`export const clear = release`); locals and package
        imports are not seen (see `function_of` for an expression inside a function).
        """
        return self._definition(from_path, local_name, 0)

    def _definition(self, from_path: str, local_name: str, depth: int) -> Function | None:
        found = self._names.binding_path(from_path, local_name)
        if found is None or depth > 8:
            return None
        module, name, node = found
        function = module.declared_function(name)
        if function is not None:
            return function
        alias = sx.dotted_path(node)  # `export const clear = release`
        return self._definition(module.path, alias, depth + 1) if alias and alias != local_name else None

    def function_of(self, expr: Expr) -> Function | None:
        """The function an expression denotes: inline, wrapped (`Effect.fn(..)(..)`),
        a local binding (`const commit = () => ..`) or an imported one."""
        inline = expr.function
        if inline is not None:
            return inline
        dotted = expr.member_path
        if dotted is None:
            return None
        return self.scoped_definition(expr._module, expr.enclosing_function, dotted, expr._node)

    def scoped_definition(self, module: Module, scope: Function | None, dotted: str, at: ts.Node) -> Function | None:
        """Resolve `dotted` as seen from `at` inside `scope`: local functions first;
        a parameter or local variable shadows module and imported names; inside
        `namespace N { }` a bare name may be the namespace's member `N.name`."""
        head, _, rest = dotted.partition(".")
        index = module.index
        if not rest:
            local = index.local_function(scope, dotted)
            if local is not None:
                return local
        if index.binds(scope, head):
            return member_function(self, module, at, dotted) if rest else None
        member = module.scoped_declaration(at, head)
        if member is not None:
            return self.definition(module.path, f"{member}.{rest}" if rest else member)
        found = self.definition(module.path, dotted)
        if found is None and rest:
            found = member_function(self, module, at, dotted)  # `store.release`, `this.drop`, `Svc.run`
        return found

    # -- queries --------------------------------------------------------------------
    def calls(self, names: str | Iterable[str], paths: str | Iterable[str]) -> list[Call]:
        """Calls in `paths` whose `callee` is one of `names` exactly, by path then document order.

        Callees are named through imports only: a local alias (`const E = Effect; E.fork(x)`) keeps its own
        name, and a parameter that shadows an import is still named as the import.
        """
        wanted = {names} if isinstance(names, str) else set(names)
        return [call for module in self._modules_of(paths) for call in module.calls() if call.callee in wanted]

    def callbacks(self, prop: str, paths: str | Iterable[str]) -> list[Callback]:
        """Object-literal members named `prop` in `paths` (`prop: v`, `prop() {}`, `{ prop }`).

        Class fields and assignments (`x.prop = ..`) are not callbacks; `function` is resolved by `function_of`.
        """
        out: list[Callback] = []
        for module in self._modules_of(paths):
            index = module.index
            for member in index.properties:
                if member.key != prop:
                    continue
                value = Expr(module, member.value)
                line, end_line = node_lines(member.node)
                out.append(
                    Callback(
                        prop=prop,
                        path=module.path,
                        line=line,
                        end_line=end_line,
                        value=value,
                        function=self.function_of(value),
                        owner=Expr(module, member.owner),
                    )
                )
        return out

    def invocations(self, prop: str, paths: str | Iterable[str]) -> list[Invocation]:
        """Reads of `x.prop` / `x["prop"]` in `paths` (not assignments to it), with the call around each.

        Destructuring (`const { prop } = x`) is not a read; `call` is the innermost call holding the read, not
        necessarily a call of `prop` itself.
        """
        out: list[Invocation] = []
        for module in self._modules_of(paths):
            index = module.index
            for node in index.member_reads(prop):
                parent = index.parent(node)
                if parent is not None and parent.type in ("assignment_expression", "augmented_assignment_expression"):
                    if sx.field(parent, "left") == node:
                        continue  # `x.prop = ..` defines, it does not invoke
                line, end_line = node_lines(node)
                out.append(
                    Invocation(
                        prop=prop,
                        path=module.path,
                        line=line,
                        end_line=end_line,
                        expr=Expr(module, node),
                        enclosing=index.enclosing_function(node),
                        call=index.call_at(_host_call(index, node)),
                    )
                )
        return out

    def value(self, path: str, identifier: str) -> Value | None:
        """The folded constant of the top-level binding `identifier` (dotted allowed) in `path`, through imports.

        Literals, arithmetic, string concatenation, a few `Math` functions and Duration conversions; None otherwise
        and for bindings local to a function (see `fold`).
        """
        module = self.module(path)
        found = self._names.binding(module, identifier) if module is not None else None
        if found is None:
            return None
        target_module, node = found
        return self._folder.value(target_module, node)

    def bound_value(self, expr: Expr) -> Expr | None:
        """What a name written in code stands for: the initializer of the local `const` it names
        (innermost scope first), or of the top-level binding, through imports; None for anything
        else (a parameter, a `let`, a property of a runtime object, a name it cannot follow)."""
        dotted = expr.member_path
        if dotted is None:
            return None
        found = self.lookup_scoped(expr._module, dotted, expr._node)
        if found is None:
            return None
        module, node = found
        return module.index.expr(node)

    def bound_at(self, call: Call, name: str) -> Expr | None:
        """The initializer of the `const` (or top-level binding) `name` as seen where `call` is written."""
        found = self.lookup_scoped(call._module, name, call._node)
        if found is None:
            return None
        module, node = found
        return module.index.expr(node)

    def declared_at(self, expr: Expr, name: str) -> Expr | None:
        """The declared name of the binding `name` (of any kind: `let`, parameter, import) as seen
        where `expr` is written; None for a name no scope of its file binds (a global)."""
        found = self._binding_at(expr, name)
        return expr._module.index.expr(found.node) if found is not None else None

    def initializer_at(self, expr: Expr, name: str) -> Expr | None:
        """The initializer of the variable `name` (a `let` too) as seen where `expr` is written."""
        found = self._binding_at(expr, name)
        return expr._module.index.expr(found.value) if found is not None and found.value is not None else None

    def _binding_at(self, expr: Expr, name: str) -> "binder.Binding | None":
        module = expr._module
        return binder.lookup(module, name, expr._node) if isinstance(module, Module) else None

    def fold(self, expr: Expr) -> Value | None:
        """The constant value of an arbitrary expression, if it folds."""
        return self._folder.value(expr._module, expr._node)

    def fold_sources(self, expr: Expr) -> list[Expr]:
        """The initializers folding `expr` read, across files (`const BATCH = PAGE`, then `PAGE`'s):
        a patch that changes any of them changes the value, wherever `expr` is written."""
        _, trace = self._folder.traced(expr._module, expr._node)
        out: list[Expr] = []
        for source, node in trace:
            module = self.module(source.path)
            value = module.index.expr(node) if module is not None else None
            if value is not None and value not in out:
                out.append(value)
        return out

    def pace(self, expr: Expr) -> "Pace | None":
        """How the schedule `expr` denotes recurs (its longest delay, whether it may stop), or None
        when it cannot be read (values.py)."""
        return self._folder.pace(expr._module, expr._node)

    def duration_ms(self, expr: Expr) -> float | None:
        """The milliseconds an Effect DurationInput expression stands for, or None when it does not fold.

        Numbers (ms), bigints (ns), `"5 seconds"`, `Duration.seconds(5)` and friends, `Duration.infinity`;
        for a schedule, the longest delay it can leave between two runs: `Schedule.spaced/fixed(d)`,
        combinators (`union`, `intersect`, `jittered`, `exponential` (unbounded) …) and `.pipe`/`pipe`
        stages, as values.py's docstring lists; constants are followed like `fold`.
        """
        return self._folder.duration_ms(expr._module, expr._node)

    # -- roles given by reference ------------------------------------------------------
    def role_arguments(self, call: Call, role: Role) -> tuple[Expr, ...]:
        """The arguments the role table says run in `role` when `call` is a combinator of it
        (`Effect.catchAll(h)`: h; `Effect.catchTags({ A: a })`: a; `Effect.fork(e)`: e); () otherwise."""
        table = self.roles
        if role is Role.FORKED:
            nodes = cx.arguments(call._node) if call.callee in table.forks else []
        else:
            selectors = table.failure_handlers if role is Role.FAILURE_HANDLER else table.finalizers
            selector = selectors.get(call.callee) if role in (Role.FAILURE_HANDLER, Role.FINALIZER) else None
            nodes = cx.select_arguments(cx.arguments(call._node), selector) if selector is not None else []
        return tuple(Expr(call._module, node) for node in nodes)

    def handed_to_finalize(self, call: Call) -> tuple[str, ...]:
        """The functions handed to `call` in a slot that runs as a finalizer, by name
        (`Effect.addFinalizer(X.clear.bind(null, db, claim))`): they run in the run's final cleanup."""
        slots = self.role_arguments(call, Role.FINALIZER)
        named = [name for e in slots for name in hd.function_value_names(call._module, e._node)]
        return tuple(named + hd.handed_to_finalize(call._module, call._node))

    def passed_roles(self, path: str, node: ts.Node) -> tuple[Role, ...]:
        """Roles code at `node` of `path` runs in because it is passed by name (see references.py)."""
        return self._passed.extra(path, node)

    def confined_roles(self, path: str, node: ts.Node) -> tuple[Role, ...]:
        """Roles passed by name that code at `node` runs in wherever it runs (see confine.py)."""
        return self._passed.extra(path, node, confined=True)

    def unresolved_references(self, paths: str | Iterable[str]) -> list[Unresolved]:
        """Names passed to handler, finalizer or fork combinators in `paths` whose code could not be found
        (a parameter, a property of a runtime object): their bodies were not checked in that role."""
        return [ref for module in self._modules_of(paths) for ref in self._passed.unresolved(module.path)]

    # -- reachability -----------------------------------------------------------------
    def reaches(
        self, start: Function | Expr, target: str | Iterable[str], max_depth: int = 4
    ) -> list[tuple[Call, ...]]:
        """Call paths from `start` to a call whose `callee` is in `target`, each ending at that call.

        Enters callee definitions (`definition`, locals first; methods of objects, factories' results and
        class instances: members.py), functions passed by name as arguments, and commit hooks named in the
        changed files for an opaque `hooks.commit()`; at most `max_depth` hops and 256 paths.
        """
        return reach.reaches(self, start, target, max_depth)


def _host_call(index: "ModuleIndex", node: ts.Node) -> ts.Node | None:
    """The innermost call whose callee or arguments contain `node`, within its function."""
    found = index.nearest(node, "host-call", _call_or_function)
    return found if found is not None and found.type == "call_expression" else None


def _call_or_function(node: ts.Node) -> bool:
    return node.type == "call_expression" or node.type in sx.FUNCTION_TYPES
