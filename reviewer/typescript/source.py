"""What the lower layers of the model ask of the layers above them, as Protocols.

The model reads bottom-up: syntax (`syntax`, `parse`, `repair`), names on
nodes (`calls`, `values`), expressions (`expressions`, `branches`), one
module's tables (`index`, `walk`), the module (`module`), the resolver
interface analyses use (`resolver`), the analyses, and `Program` on top.
A lower layer never imports a higher one, not even for annotations: it says
here (or beside its own types) what it needs, and `Module`/`Program` have it.
`tests/test_architecture.py` holds the graph acyclic, TYPE_CHECKING included.
"""

from __future__ import annotations

from typing import Mapping, Protocol

import tree_sitter as ts

from reviewer.typescript import syntax as sx


class Definitions(Protocol):
    """What naming a callee asks of the whole program: is a dotted name a declared function,
    and what does a module-level name stand for (through imports)."""

    def definition(self, from_path: str, local_name: str) -> object | None: ...

    def qualified_head(self, module: "Names", name: str) -> str: ...


class Names(Protocol):
    """What naming a callee asks of the module it is written in."""

    @property
    def path(self) -> str: ...

    @property
    def program(self) -> Definitions: ...

    def scoped_declaration(self, at: ts.Node, name: str) -> str | None: ...

    def alias_of(self, at: ts.Node, name: str, depth: int = 0, member: bool = False) -> str | None: ...


class Levels(Protocol):
    """A module's call index as naming asks it: call node id -> (callee name, chain level), walk.py's memo."""

    @property
    def named_callees(self) -> Mapping[int, tuple[str | None, int]]: ...


class Indexed(Names, Protocol):
    """A module whose calls are indexed (asked only once the index is built)."""

    @property
    def index(self) -> Levels: ...


class Imported(Protocol):
    """One name an `import` binds (module.Import)."""

    @property
    def specifier(self) -> str: ...

    @property
    def imported(self) -> str: ...


class Source(Names, Protocol):
    """A parsed module as the layers below `module` see it: its names, imports and tree."""

    @property
    def imports(self) -> Mapping[str, Imported]: ...

    @property
    def root(self) -> ts.Node: ...

    @property
    def normal_forms(self) -> sx.NormalForms: ...
