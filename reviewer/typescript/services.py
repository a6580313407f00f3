"""Effect services: a tag, and the name its members are called by (implementations: implements.py).

    class Locks extends Context.Service<Locks, { renew: .. }>()("app/Locks") {}
    const locks = yield* Locks                 // `locks.renew(id)` calls `Locks.renew`

A service's methods are reached through its tag, never through an import of
the function: a call on the service a tag yields is named by the tag. A tag
is recognised by what declares it: a class extending a call of a service
maker (`Context.Service`, `Context.Tag`, `Effect.Service`, `ServiceMap.Service`),
or a top-level constant bound to one (`Context.GenericTag(..)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import tree_sitter as ts

from reviewer.typescript import calls as cx
from reviewer.typescript import syntax as sx

if TYPE_CHECKING:
    from reviewer.typescript.source import Source


class Bindings(Protocol):
    """What recognising a tag asks of the program: the top-level declaration a dotted name means."""

    def binding(self, module: Any, dotted: str) -> tuple[Any, ts.Node] | None: ...


# The last segment of a call that makes a service tag (Effect 2/3: Context.Tag, Context.GenericTag,
# Effect.Service; Effect 4: Context.Service, ServiceMap.Service/Key; references: Context.Reference).
_MAKERS = frozenset({"Service", "Tag", "GenericTag", "Reference", "Key"})
_CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})


def is_service_tag(program: Bindings, module: "Source", node: ts.Node | None) -> bool:
    """Whether a reference (`Locks`, `Cluster.Locks`) names a service tag declared in the reviewed tree.
    Read from the top level (a local of that name is the caller's to rule out: module.alias_of does),
    so that it can be asked while the module's own index is being built."""
    dotted = sx.dotted_path(cx.picked(node)) if node is not None else None
    if dotted is None:
        return False
    found = program.binding(module, dotted)
    if found is None:
        return False
    _, value = found
    return _declares_tag(value)


def _declares_tag(value: ts.Node | None) -> bool:
    value = sx.strip(value)
    if value is None:
        return False
    if value.type in _CLASSES:
        heritage = next((c for c in sx.named(value) if c.type == "class_heritage"), None)
        extends = next((c for c in sx.named(heritage) if c.type == "extends_clause"), None) if heritage else None
        base = sx.field(extends, "value") if extends is not None else None
        return base is not None and _makes_tag(base)
    return _makes_tag(value)


def _makes_tag(node: ts.Node) -> bool:
    """A call chain with a call of a service maker in it: `Context.Service<S, I>()("id")`, `Context.Tag("id")<S, I>()`."""
    current = sx.strip(node)
    for _ in range(4):
        if current is None or current.type != "call_expression":
            return False
        callee = sx.strip(sx.field(current, "function"))
        if callee is None:
            return False
        if callee.type == "member_expression":
            prop = sx.field(callee, "property")
            return prop is not None and sx.text(prop) in _MAKERS
        current = callee  # `Context.Tag("id")<S, I>()`: the maker's call is the callee
    return False


def yielded_tag(program: Bindings, module: "Source", value: ts.Node, as_member: object) -> ts.Node | None:
    """The tag `yield* Tag` (the value of `const locks = ..`) takes its service from, when the alias is
    used as a member's head (`locks.renew`) or destructured (`const { renew } = ..`); None otherwise:
    the service itself, called, is no function of its tag's."""
    target = cx.picked(next(iter(sx.named(value)), None))
    return target if as_member and target is not None and is_service_tag(program, module, target) else None
