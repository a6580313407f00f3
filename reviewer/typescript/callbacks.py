"""What `Program.callbacks` and `Program.invocations` find: a function handed over under a property
name (`{ interruptedCommit: () => .. }`), and a read of that property (`options.interruptedCommit()`)."""

from __future__ import annotations

from dataclasses import dataclass

from reviewer.typescript.expressions import Call, Expr, Function


@dataclass(frozen=True, eq=False)
class Callback:
    """An object-literal member named `prop` (see Program.callbacks): its `value`, the `function` it
    denotes (inline, local or imported; None when unknown) and the object literal `owner`."""

    prop: str
    path: str
    line: int
    end_line: int
    value: Expr
    function: Function | None
    owner: Expr


@dataclass(frozen=True, eq=False)
class Invocation:
    """A read of `x.prop` (see Program.invocations): the member expression `expr`, the function around
    it, and the innermost call whose callee or arguments hold it, within that function (else None)."""

    prop: str
    path: str
    line: int
    end_line: int
    expr: Expr
    enclosing: Function | None
    call: Call | None
