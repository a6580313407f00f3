"""Where an import specifier leads: a repository file, a workspace package, an outside package, or nowhere known.

Resolution follows what the runtime and the compiler would: relative paths
(through the model's `Program.resolve`), tsconfig `paths` of the nearest
`tsconfig.json` (following relative `extends`), package `imports` (`#x`) of
the importing file's package, and workspace package names through the
`exports` map of their `package.json`. Package manifests come from the base
tree, and from the patched tree only for packages the base does not have: a
patch cannot re-point an existing package's name or exports to dodge the graph.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

FILE = "file"  # a repository path (it may be missing from the tree: the layer is still known)
PACKAGE = "package"  # a workspace package whose subpath did not resolve to a path
EXTERNAL = "external"  # an installed package, a `node:`/`bun:` builtin: outside every layer unless named
UNRESOLVED = "unresolved"

# An npm package name (`@scope/name`, `name`) or a runtime builtin; anything
# else that is not relative (`@/x`, `~/x`, `$lib/x`) is a path alias.
_PACKAGE_NAME = re.compile(r"(?:@[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*(?:/.*)?\Z|(?:node|bun):.+\Z")
_MAX_EXTENDS = 4


@dataclass(frozen=True)
class Target:
    kind: str
    path: str | None = None
    package: str | None = None  # the package name, when imported by name
    how: str = ""  # how the specifier was resolved, for messages
    reason: str = ""  # why it is unresolved


@dataclass(frozen=True)
class Package:
    name: str
    folder: str  # "" for the repository root
    manifest: str  # path of its package.json
    exports: Any
    imports: Any
    main: str | None


def _leaves(value: Any) -> Iterator[str]:
    """String targets of an exports/imports value, in condition order (`types` last: no runtime file)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for key in sorted(value, key=lambda k: k == "types"):
            yield from _leaves(value[key])


def _lookup(table: Any, key: str) -> str | None:
    """Node's subpath lookup: an exact key, else the `*` pattern with the longest prefix."""
    if not isinstance(table, dict):
        return None
    if key in table:
        return next(_leaves(table[key]), None)
    best: tuple[int, str] | None = None
    for pattern in table:
        if pattern.count("*") != 1:
            continue
        head, tail = pattern.split("*")
        if key.startswith(head) and key.endswith(tail) and len(key) >= len(head) + len(tail):
            if best is None or len(head) > best[0]:
                best = (len(head), pattern)
    if best is None:
        return None
    head, tail = best[1].split("*")
    middle = key[len(head): len(key) - len(tail)]
    leaf = next(_leaves(table[best[1]]), None)
    return leaf.replace("*", middle) if leaf is not None else None


def _exports_table(exports: Any) -> dict | None:
    if isinstance(exports, (str, list)):
        return {".": exports}
    if isinstance(exports, dict):
        if exports and not all(str(k).startswith(".") for k in exports):
            return {".": exports}  # conditions of the main entry
        return exports
    return None


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig.json) as plain JSON; strings kept intact."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i: j + 1])
            i = j + 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _json(text: str | None, jsonc: bool = False) -> Any:
    if text is None:
        return None
    try:
        return json.loads(strip_jsonc(text) if jsonc else text)
    except ValueError:
        return None


def _is_manifest(path: str) -> bool:
    return (path == "package.json" or path.endswith("/package.json")) and "node_modules/" not in path


class Workspace:
    """The workspace packages and tsconfig files of a review, and `resolve(importer, specifier)`."""

    def __init__(self, ctx: "ReviewContext") -> None:
        self._ctx = ctx
        self.packages: dict[str, Package] = {}
        self.manifests: tuple[str, ...] = ()
        self._tsconfigs: dict[str, Any] = {}
        self._load()

    def _load(self) -> None:
        # New packages can only come from changed manifests: the rest of the patched tree is the base's.
        base = [(self._ctx.base, p) for p in self._ctx.base.paths() if _is_manifest(p)]
        added = [(self._ctx.patched, f.path) for f in self._ctx.changeset.files
                 if _is_manifest(f.path) and f.patched_text is not None]
        found: list[str] = []
        for tree, path in base + sorted(added, key=lambda item: item[1]):
            data = _json(tree.text(path))
            name = data.get("name") if isinstance(data, dict) else None
            if not isinstance(name, str) or not name or name in self.packages:
                continue  # base first: a patched manifest only adds a package the base does not have
            main = data.get("module") or data.get("main")
            self.packages[name] = Package(name, posixpath.dirname(path), path, data.get("exports"),
                                          data.get("imports"), main if isinstance(main, str) else None)
            found.append(path)
        self.manifests = tuple(sorted(found))

    @property
    def folders(self) -> dict[str, str]:
        return {name: package.folder for name, package in self.packages.items()}

    def package_of(self, path: str) -> Package | None:
        """The workspace package whose folder holds `path` (the innermost one)."""
        best: Package | None = None
        for package in self.packages.values():
            if package.folder == "" or path.startswith(package.folder + "/"):
                if best is None or len(package.folder) > len(best.folder):
                    best = package
        return best

    # ------------------------------------------------------------ resolution

    def resolve(self, importer: str, specifier: str) -> Target:
        if specifier.startswith("."):
            return self._relative(importer, specifier)
        if specifier.startswith("#"):
            return self._subpath_import(importer, specifier)
        aliased = self._tsconfig_paths(importer, specifier)
        if aliased is not None:
            return aliased
        return self._by_name(specifier)

    def _relative(self, importer: str, specifier: str) -> Target:
        found = self._ctx.program.resolve(importer, specifier)
        if found is not None:
            return Target(FILE, found, how="relative path")
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
        if joined == ".." or joined.startswith("../"):
            return Target(UNRESOLVED, reason="a relative path above the repository root")
        return Target(FILE, joined, how="relative path (no such file in the patched tree)")

    def _in_package(self, package: Package, leaf: str, how: str) -> Target:
        path = posixpath.normpath(posixpath.join(package.folder, leaf)) if package.folder else posixpath.normpath(leaf)
        return Target(FILE, path, package=package.name, how=how)

    def _subpath_import(self, importer: str, specifier: str) -> Target:
        package = self.package_of(importer)
        leaf = _lookup(package.imports, specifier) if package is not None else None
        if package is None or leaf is None:
            return Target(UNRESOLVED, reason="a `#` subpath import no package.json `imports` entry maps")
        if leaf.startswith("."):
            return self._in_package(package, leaf, f"`imports` of {package.manifest}")
        return self._by_name(leaf)

    def _by_name(self, specifier: str) -> Target:
        if not _PACKAGE_NAME.match(specifier):
            return Target(UNRESOLVED, reason="a path alias that no tsconfig `paths` entry maps")
        parts = specifier.split("/")
        name = "/".join(parts[:2]) if specifier.startswith("@") else parts[0]
        package = self.packages.get(name)
        if package is None:
            return Target(EXTERNAL, package=name)
        rest = specifier[len(name):]
        subpath = "." + rest if rest else "."
        table = _exports_table(package.exports)
        if table is not None:
            leaf = _lookup(table, subpath)
            if leaf is None:
                return Target(PACKAGE, package=name,
                              reason=f"`{subpath}` is not in the `exports` of {package.manifest}")
            return self._in_package(package, leaf, f"`exports` of {package.manifest}")
        if subpath == ".":
            return self._in_package(package, package.main or "index.ts", f"entry of {package.manifest}")
        return self._in_package(package, subpath, f"subpath of {package.manifest}")

    # ------------------------------------------------------------ tsconfig

    def _tsconfig(self, path: str, depth: int = 0) -> tuple[dict, str] | None:
        """(compilerOptions.paths, the folder they are relative to) of the tsconfig at `path`, following `extends`."""
        if path in self._tsconfigs:
            return self._tsconfigs[path]
        self._tsconfigs[path] = None  # an `extends` cycle ends here
        data = _json(self._ctx.patched.text(path), jsonc=True)
        found: tuple[dict, str] | None = None
        if isinstance(data, dict):
            options = data.get("compilerOptions") if isinstance(data.get("compilerOptions"), dict) else {}
            folder = posixpath.dirname(path)
            paths = options.get("paths")
            if isinstance(paths, dict):
                base_url = options.get("baseUrl")
                root = posixpath.normpath(posixpath.join(folder, base_url)) if isinstance(base_url, str) else folder
                found = (paths, "" if root == "." else root)
            else:
                parent = data.get("extends")
                if isinstance(parent, str) and parent.startswith(".") and depth < _MAX_EXTENDS:
                    target = posixpath.normpath(posixpath.join(folder, parent))
                    target = target if target.endswith(".json") else target + ".json"
                    found = self._tsconfig(target, depth + 1)
        self._tsconfigs[path] = found
        return found

    def _nearest_tsconfig(self, importer: str) -> tuple[dict, str] | None:
        folder = posixpath.dirname(importer)
        while True:
            candidate = posixpath.join(folder, "tsconfig.json") if folder else "tsconfig.json"
            if self._ctx.patched.exists(candidate):
                return self._tsconfig(candidate)
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def _tsconfig_paths(self, importer: str, specifier: str) -> Target | None:
        config = self._nearest_tsconfig(importer)
        if config is None:
            return None
        paths, root = config
        leaf = _lookup({k: v for k, v in paths.items() if isinstance(k, str)}, specifier)
        if leaf is None:
            return None
        joined = posixpath.normpath(posixpath.join(root, leaf)) if root else posixpath.normpath(leaf)
        # Resolved like a relative import written beside the target (extensions, index files).
        beside = posixpath.join(posixpath.dirname(joined), "_")
        found = self._ctx.program.resolve(beside, "./" + posixpath.basename(joined)) if joined else None
        return Target(FILE, found or joined, how="tsconfig `paths`")
