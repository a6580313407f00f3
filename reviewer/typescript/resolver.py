"""The interface analyses ask names and facts through: what a name stands for, what the patch changed.

`Program` has it; the analyses (`members`, `reach`, `references`, `builders`,
`confine`, `collections`, `flags`) are written against this Protocol, never
against Program's members, so the resolution behind it can change and an
analysis can be tested on anything that answers these questions.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Mapping, Protocol

import tree_sitter as ts

from reviewer.typescript.callbacks import Callback
from reviewer.typescript.expressions import Expr, Facts, Function
from reviewer.typescript.module import Module


class Hops:
    """How deeply resolutions that start others are nested, program-wide (a factory's member whose
    callee is itself a member), so that mutual recursion ends at `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.depth = 0

    @contextmanager
    def nested(self) -> Iterator[bool]:
        """Counts one more level while inside; yields False (and counts nothing) past the limit."""
        if self.depth > self.limit:
            yield False
            return
        self.depth += 1
        try:
            yield True
        finally:
            self.depth -= 1


class Resolver(Facts, Protocol):
    """What a name stands for and what the patch changed, for the analyses."""

    @property
    def changed_lines(self) -> Mapping[str, frozenset[int]]: ...

    @property
    def changed_paths(self) -> frozenset[str]: ...

    @property
    def member_hops(self) -> Hops: ...

    def module(self, path: str) -> Module | None: ...

    def memo(self, name: str) -> dict: ...

    def function_of(self, expr: Expr) -> Function | None: ...

    def bound_value(self, expr: Expr) -> Expr | None: ...

    def fold(self, expr: Expr) -> object: ...

    def definition(self, from_path: str, local_name: str) -> Function | None: ...

    def binding(self, module: Module, dotted: str) -> tuple[Module, ts.Node] | None: ...

    def lookup_scoped(self, module: Module, dotted: str, at: ts.Node) -> tuple[Module, ts.Node] | None: ...

    def scoped_definition(self, module: Module, scope: Function | None, dotted: str, at: ts.Node) -> Function | None: ...

    def callbacks(self, prop: str, paths: str | Iterable[str]) -> list[Callback]: ...
