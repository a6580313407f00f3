"""Grammar loading, parsing with a content-addressed cache, and error regions."""

from __future__ import annotations

import hashlib
import posixpath
from functools import lru_cache
from typing import Any, Protocol

import tree_sitter as ts
import tree_sitter_typescript as tsts

from reviewer.typescript.repair import parse_repaired

TYPESCRIPT = "typescript"
TSX = "tsx"

# JavaScript is read with the TSX grammar: TypeScript's syntax is a superset of it, and `.js`
# files hold JSX as often as `.jsx` ones do (TSX has no `<T>x` casts, which JavaScript lacks too).
_DIALECTS = {
    ".ts": TYPESCRIPT, ".mts": TYPESCRIPT, ".cts": TYPESCRIPT, ".tsx": TSX,
    ".js": TSX, ".jsx": TSX, ".mjs": TSX, ".cjs": TSX,
}  # fmt: skip


class SharedTrees(Protocol):
    """Trees kept across Programs by content (reviewer/engine/shared.py `Shared`)."""

    def tree(self, key: tuple[str, str]) -> Any | None: ...

    def keep_tree(self, key: tuple[str, str], tree: Any) -> None: ...


def dialect(path: str) -> str | None:
    """The grammar for `path`, or None when it is not TypeScript source."""
    return _DIALECTS.get(posixpath.splitext(path)[1])


@lru_cache(maxsize=None)
def language(name: str) -> ts.Language:
    """The grammar of a dialect (TYPESCRIPT or TSX), loaded once: parsers and queries share it."""
    return ts.Language(tsts.language_tsx() if name == TSX else tsts.language_typescript())


class Parsers:
    """Parsers and parsed trees of one Program.

    Owned by a Program rather than the module so no parser or cache is shared
    between reviews (tree-sitter parsers are stateful and not thread-safe).
    Trees are keyed by (dialect, sha1 of the bytes): a file with the same
    content at two paths or on both sides of a patch is parsed once.
    """

    def __init__(self, shared: "SharedTrees | None" = None) -> None:
        self._parsers: dict[str, ts.Parser] = {}
        self._trees: dict[tuple[str, str], ts.Tree] = {}
        # Trees a sweep keeps between reviews (reviewer/engine/shared.py); a
        # tree is immutable, so sharing it between Programs is safe.
        self._shared = shared

    def _parser(self, name: str) -> ts.Parser:
        parser = self._parsers.get(name)
        if parser is None:
            parser = ts.Parser(language(name))
            self._parsers[name] = parser
        return parser

    def parse(self, name: str, source: bytes) -> ts.Tree:
        key = (name, hashlib.sha1(source).hexdigest())
        tree = self._trees.get(key)
        if tree is None and self._shared is not None:
            tree = self._shared.tree(key)
        if tree is None:
            # Effect's `dual` signatures need a same-length repair to parse (repair.py).
            tree = parse_repaired(self._parser(name), source)
            if self._shared is not None:
                self._shared.keep_tree(key, tree)
        self._trees[key] = tree
        return tree


def node_lines(node: ts.Node) -> tuple[int, int]:
    """1-based inclusive (first, last) line of a node.

    A node whose end is column 0 of a later line (it swallowed a newline) ends
    on the line before; reporting the empty next line would misplace evidence.
    """
    start = node.start_point[0] + 1
    end_row, end_col = node.end_point
    end = end_row + 1
    if end_col == 0 and end_row > node.start_point[0]:
        end -= 1
    return start, end


def error_regions(tree: ts.Tree) -> tuple[tuple[int, int], ...]:
    """Line ranges of ERROR nodes (outermost only) and MISSING tokens."""
    regions: set[tuple[int, int]] = set()
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error:
            regions.add(node_lines(node))
            continue
        if node.is_missing:
            line = node.start_point[0] + 1
            regions.add((line, line))
            continue
        if node.has_error:
            stack.extend(node.children)
    return tuple(sorted(regions))
