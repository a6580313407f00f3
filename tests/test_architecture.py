"""The tree keeps the shape docs/development.md describes.

Read from the sources with `ast`, never by importing them: modules small
enough to read whole, no import cycles at run time, and rule families that
reach the TypeScript model and the engine only through their public faces.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 600
MODEL = "reviewer.typescript"
MODEL_MAX_LINES = 500
# Where each installed package lives in the checkout (pyproject.toml's package-dir).
PACKAGE_ROOTS = {"reviewer": ROOT / "reviewer", "reviewer.rules": ROOT / "rules"}


def _modules() -> dict[str, Path]:
    """Every module of the installed `reviewer` package, by dotted name."""
    found: dict[str, Path] = {}
    for package, root in PACKAGE_ROOTS.items():
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if package == "reviewer" and name.startswith("reviewer.rules"):
                continue
            found[name] = path
    return found


MODULES = _modules()


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(name: str, path: Path, type_checking: bool = False) -> set[str]:
    """The `reviewer` modules `name` imports at run time (inside functions too), and with
    `type_checking` also those it imports for annotations only (under TYPE_CHECKING)."""
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking(node) and not type_checking:
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            # `from pkg import submodule` needs the submodule, not a name of
            # pkg/__init__.py; any other name is read from the package itself.
            for alias in node.names:
                out.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in out if m in MODULES and m != name}


def _graph(type_checking: bool = False) -> dict[str, set[str]]:
    # Importing `a.b.c` runs `a/b/__init__.py` first, but that is no edge of
    # its own: a package that re-exports its children is not in a cycle with
    # them unless a child imports a name from the package.
    return {name: _imports(name, path, type_checking) for name, path in MODULES.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of `graph`, or None (iterative depth-first search)."""
    state: dict[str, int] = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                stack.append((child, iter(sorted(graph[child]))))
                path.append(child)
    return None


def test_the_module_list_is_complete() -> None:
    """The walk finds the pipeline's stages and every family (a broken walk would pass everything below)."""
    for stage in ("inputs", "gate", "change", "engine", "report", "state", "typescript"):
        assert f"reviewer.{stage}" in MODULES, stage
    assert "reviewer.engine.api" in MODULES and "reviewer.rules._effect" in MODULES
    assert len([m for m in MODULES if m.startswith("reviewer.rules.")]) >= 5


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_are_small_enough_to_read_whole(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines (at most {MAX_LINES})"


def test_no_import_cycles_at_run_time() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, " -> ".join(cycle or [])


def test_the_model_has_layers_even_for_annotations() -> None:
    """reviewer/typescript/ reads bottom-up (syntax, names, expressions, index, module, the
    resolver interface, analyses, Program): no cycle even counting TYPE_CHECKING imports, so
    each layer can be read, tested and replaced without the ones above it."""
    graph = {m: {i for i in imports if i.startswith(MODEL)} for m, imports in _graph(type_checking=True).items() if m.startswith(MODEL)}
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or [])


@pytest.mark.parametrize("name", sorted(m for m in MODULES if m.startswith(MODEL)))
def test_model_modules_are_at_most_500_lines(name: str) -> None:
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MODEL_MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines (at most {MODEL_MAX_LINES})"


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _from_modules(path: Path) -> set[str]:
    """The modules named in `from X import ...` / `import X` statements (not the imported names)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from reviewer.engine import globs` names the module reviewer.engine.globs.
            out.update(f"{node.module}.{a.name}" for a in node.names) if node.module == "reviewer.engine" else out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return out


def test_rules_reach_the_model_and_the_engine_through_their_public_faces() -> None:
    """A family imports `reviewer.typescript` (never one of its modules) and the
    rule API (never the engine's internals), so both can be reorganised freely."""
    allowed_engine = {"reviewer.engine.api", "reviewer.engine.globs", "reviewer.engine.context", "reviewer.engine.template"}
    for name, path in MODULES.items():
        if not name.startswith("reviewer.rules."):
            continue
        for imported in _from_modules(path):
            assert not imported.startswith("reviewer.typescript."), f"{name} imports {imported}"
            if imported.startswith("reviewer.engine"):
                assert imported in allowed_engine, f"{name} imports {imported}"


def test_every_package_ships_in_the_wheel() -> None:
    """A package missing from pyproject.toml works in the editable install and
    is absent from the wheel: every package directory must be listed."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {name for name, path in MODULES.items() if path.name == "__init__.py"}
    assert packages <= listed, sorted(packages - listed)


def test_every_source_compiles_without_warnings() -> None:
    """An invalid escape in a docstring (`\\``) is a DeprecationWarning today and a SyntaxError tomorrow."""
    import warnings

    sources = sorted([*(ROOT / "reviewer").rglob("*.py"), *(ROOT / "rules").rglob("*.py"), *(ROOT / "bench").glob("*.py")])
    assert sources
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path in sources:
            compile(path.read_text(encoding="utf-8"), str(path), "exec")
