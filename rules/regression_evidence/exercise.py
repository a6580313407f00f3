"""Whether a test the patch changed exercises a piece of production code.

"Exercises" (the family's definition): the test imports the module holding the
code, directly or through one re-export (`export * as N from`, `export { x } from`,
`export * from`), and refers to the top-level declaration around the code (calls
it, or hands it over as in `Effect.provide(Module.layer)`), or to another
declaration of that module whose body reaches it (`Program.reaches`). A test
that imports only a neighbour (the executor, with a test-local `Effect.never`
run in place of the runner) does not exercise the runner's code. Code outside
every declaration runs when the module is imported, so importing it is enough.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reviewer.typescript import Call, Expr, Module, Program, mentions_name, strings_in

from reviewer.rules.regression_evidence.packages import Resolver

# At most this many declarations a test refers to are followed with `reaches`
# per module: a test calling dozens of a module's functions is examined for the
# first ones, and the verdict says "not shown" only after they were all tried.
MAX_FOLLOWED = 24
# How many modules a test may load before "can it load this module at all" is answered "cannot tell".
MAX_LOADED = 400
_SOURCE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")


@dataclass(frozen=True)
class Binding:
    """A name a test binds to a production module: the module itself (`member` "") or one declaration."""

    local: str
    member: str
    specifier: str


@dataclass
class Verdict:
    """What the changed tests show about one target."""

    exercised_by: tuple[str, str] | None = None  # (test path, how: "calls `make`")
    importing: list[str] = field(default_factory=list)  # tests that import the module without reaching the code
    # A test that loads the module only through other modules (or an entry point it spawns), or whose
    # loaded modules were too many to follow: (test path, "indirect" | "too-many").
    loading: tuple[str, str] | None = None


class Exercise:
    """Answers `verdict(path, line)` over the tests the patch changed; memoised per module and declaration."""

    def __init__(self, program: Program, resolver: Resolver, tests: tuple[str, ...], max_depth: int) -> None:
        self.program = program
        self.resolver = resolver
        self.tests = tests
        self.max_depth = max_depth
        self._resolved: dict[str, list[tuple[str, str, str | None]]] = {}  # test -> (local, specifier, path)
        self._refs: dict[tuple[str, str], dict[str, str]] = {}
        self._reach: dict[tuple[str, str, frozenset[str]], bool] = {}
        self._closures: dict[str, frozenset[str] | None] = {}

    # -- imports -----------------------------------------------------------------
    def imports(self, test: str) -> list[tuple[str, str, str | None]]:
        """(local name, specifier, resolved path or None) for every import of a test."""
        if test not in self._resolved:
            module = self.program.module(test)
            out = []
            if module is not None:
                for imp in module.imports.values():
                    path = imp.module or self.resolver.resolve(test, imp.specifier)
                    out.append((imp.local, imp.specifier, path))
            self._resolved[test] = out
        return self._resolved[test]

    def unresolved(self, test: str) -> list[str]:
        """Workspace package specifiers of a test that resolve to no file (a blind spot, said out loud)."""
        return sorted({spec for _, spec, path in self.imports(test) if path is None and self.resolver.is_workspace(spec)})

    def bindings(self, test: str, production: str) -> list[Binding]:
        module = self.program.module(test)
        target = self.program.module(production)
        if module is None or target is None:
            return []
        out = []
        for imp in module.imports.values():
            path = imp.module or self.resolver.resolve(test, imp.specifier)
            if path is None:
                continue
            member = _member(self.program, path, imp.imported, production, target)
            if member is not None:
                out.append(Binding(imp.local, member, imp.specifier))
        return out

    # -- references ----------------------------------------------------------------
    def references(self, test: str, production: str) -> dict[str, str]:
        """Declarations of `production` a test refers to -> how (for the message)."""
        key = (test, production)
        if key in self._refs:
            return self._refs[key]
        found: dict[str, str] = {}
        module = self.program.module(test)
        target = self.program.module(production)
        bindings = self.bindings(test, production)
        if module is not None and target is not None and bindings:
            heads = sorted({name.split(".", 1)[0] for name in target.declarations})
            for binding in bindings:
                _refer(self.program, module, binding, heads, found)
        self._refs[key] = found
        return found

    # -- the verdict ---------------------------------------------------------------------
    def verdict(self, production: str, line: int, end_line: int) -> Verdict:
        verdict = Verdict()
        target = self.program.module(production)
        if target is None:
            return verdict
        around = frozenset(declarations_around(target, line, end_line))
        for test in self.tests:
            if test == production:
                continue
            if not self.bindings(test, production):
                continue
            refs = self.references(test, production)
            if not around:
                verdict.exercised_by = (test, "imports the module, whose top-level code holds it")
                return verdict
            direct = next((r for r in refs if _overlaps(r, around)), None)
            if direct is not None:
                verdict.exercised_by = (test, refs[direct])
                return verdict
            for name in list(refs)[:MAX_FOLLOWED]:
                if self._reaches(production, name, around):
                    verdict.exercised_by = (test, f"{refs[name]}, which reaches it")
                    return verdict
            verdict.importing.append(test)
        if not verdict.importing:
            for test in self.tests:
                loads = self.loads(test, production)
                if loads is not None:
                    verdict.loading = (test, loads)
                    break
        return verdict

    def loads(self, test: str, production: str) -> str | None:
        """Whether a test may load `production` at all: "indirect" when it is among the modules the test's
        imports (and the repository files its strings name, such as an entry point it spawns) load in turn,
        "too-many" when those are more than MAX_LOADED, None when the test cannot load it."""
        closure = self._closure(test)
        if closure is None:
            return "too-many"
        return "indirect" if production in closure else None

    def _closure(self, test: str) -> frozenset[str] | None:
        if test in self._closures:
            return self._closures[test]
        module = self.program.module(test)
        start = [p for _, _, p in self.imports(test) if p is not None]
        if module is not None:
            for value in strings_in(Expr(module, module.root)):
                if "/" in value and value.endswith(_SOURCE_SUFFIXES) and not value.startswith(("/", "@")):
                    start.append(self.resolver.resolve(test, value if value.startswith(".") else "./" + value) or "")
        seen: set[str] = set()
        queue = [p for p in start if p]
        result: frozenset[str] | None = None
        while queue:
            path = queue.pop()
            if path in seen:
                continue
            seen.add(path)
            if len(seen) > MAX_LOADED:
                break
            loaded = self.program.module(path)
            if loaded is None:
                continue
            for imp in loaded.imports.values():
                target = imp.module or self.resolver.resolve(path, imp.specifier)
                if target is not None and target not in seen:
                    queue.append(target)
            queue.extend(m for m in loaded.star_exports if m not in seen)
            queue.extend(e.module for e in loaded.exports.values() if e.module is not None and e.module not in seen)
        else:
            result = frozenset(seen)
        self._closures[test] = result
        return result

    def _reaches(self, production: str, name: str, around: frozenset[str]) -> bool:
        key = (production, name, around)
        if key not in self._reach:
            fn = self.program.function(production, name) or self.program.definition(production, name)
            module = self.program.module(production)
            names = set(around)
            if module is not None and module.namespace:
                names |= {f"{module.namespace}.{d}" for d in around}
            self._reach[key] = bool(fn is not None and self.program.reaches(fn, sorted(names), self.max_depth))
        return self._reach[key]


def _member(program: Program, path: str, imported: str, production: str, target: Module) -> str | None:
    """What an import of `imported` from `path` binds of `production`: "" for the module, a declaration
    name, or None when it binds nothing of it. Follows one re-export."""
    if path == production:
        if imported in ("*",) or (target.namespace is not None and imported == target.namespace):
            return ""
        return imported
    hop = program.module(path)
    if hop is None:
        return None
    export = hop.exports.get(imported)
    if export is not None and export.module == production:
        if export.kind == "namespace":
            return ""
        if export.kind == "reexport":
            return "" if export.target == target.namespace else export.target
        return None
    if export is None and production in hop.star_exports and imported in target.exports:
        return "" if imported == target.namespace else imported
    return None


def _refer(program: Program, module: Module, binding: Binding, heads: list[str], found: dict[str, str]) -> None:
    """Record the declarations a test reaches through one binding (calls first, then other reads)."""
    local = binding.local
    for call in module.calls():
        name = _through(call.callee.replace("()", ""), local, binding.member)
        if name is not None:
            shown = local + name[len(binding.member):].split(".")[0] if binding.member else f"{local}.{name.split('.')[0]}"
            found.setdefault(name, f"calls `{shown}`")
    if binding.member:
        if binding.member not in found and any(mentions_name(c, local) for c in module.calls()):
            found[binding.member] = f"passes `{local}`"
        return
    for head in heads:
        if head in found:
            continue
        for invocation in program.invocations(head, module.path):
            path = invocation.expr.member_path or ""
            if path == f"{local}.{head}" or path.startswith(f"{local}.{head}."):
                found[head] = f"uses `{invocation.expr.written}`"
                break


def _through(callee: str, local: str, member: str) -> str | None:
    """The declaration a callee names through a binding, or None."""
    if member:
        if callee == local or callee.startswith(local + "."):
            return member + callee[len(local):]
        return None
    if callee.startswith(local + "."):
        return callee[len(local) + 1:]
    return None


def declarations_around(module: Module, line: int, end_line: int) -> list[str]:
    out = []
    for name in module.declarations:
        lines = module.declaration_lines(name)
        if lines is not None and lines[0] <= line and end_line <= lines[1]:
            out.append(name)
    return out


def _overlaps(ref: str, around: frozenset[str]) -> bool:
    return any(ref == d or ref.startswith(d + ".") or d.startswith(ref + ".") for d in around)


def first_test_case(module: Module, names: tuple[str, ...], locals_: tuple[str, ...]) -> Call | None:
    """The changed test case of a file to point at: one that names the production module if any, else the first."""
    cases = [c for c in module.calls() if c.callee in names and c.changed]
    # Only outermost cases: `it` nested in `describe` is itself a case, `describe` is not in `names`.
    for case in cases:
        if any(mentions_name(case, local) for local in locals_):
            return case
    return cases[0] if cases else None
