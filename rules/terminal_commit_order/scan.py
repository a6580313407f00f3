"""The state of one run, shared by the checks: what changed, what is in scope, per-run memos.

`in_scope` is the one change-scope test every check asks: the patch touched
the call or the named function around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from reviewer.change.changeset import ChangedFile
from reviewer.report.model import Location
from reviewer.engine.api import Options
from reviewer.typescript import Atom, Call, Expr, Function, Program

from reviewer.rules import _effect as fx

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.rules.terminal_commit_order.handlers import Handling


@dataclass
class Scan:
    ctx: "ReviewContext"
    program: Program
    opts: Options
    changed: tuple[str, ...] = ()  # the reviewed files the family applies to (set by the template)
    scope: tuple[str, ...] = ()  # changed files and the files they import (`prepare`)
    facts: list[str] = field(default_factory=list)  # what each check proved, for the basis
    # settle step short name -> every callee spelling seen for it (`publisher.failUnsettledTools`, ...)
    settle_callees: dict[str, set[str]] = field(default_factory=dict)
    # Terminal sites committed before tools settle (recovery findings point at them).
    early: list[Call] = field(default_factory=list)
    # names written in an outermost function, by its identity (read once, asked per site)
    names: dict[int, frozenset[str]] = field(default_factory=dict)
    # Per-run indexes and memos: asked per site, each was a scan over every file or call.
    files: dict[str, ChangedFile] = field(default_factory=dict)  # the change set by path
    callers: dict[int, list[Call]] = field(default_factory=dict)  # id(helper) -> its callers
    by_method: dict[str, list[Call]] | None = None  # calls in scope by method, in scope order
    recovery_sites: tuple[Location, ...] | None = None
    events: list[tuple[Call, str]] | None = None  # publishing calls in scope, in scope order
    # The safe-phase world (one per run, so guard paths judge each shared guard once)
    # and each function's reconcile calls (filtered once, asked per release).
    phase_world: Callable[[Atom], bool | None] | None = None
    reconcilers: dict[int, list[Call]] = field(default_factory=dict)
    # Failure handlers (handlers.py): id(handler function) -> (the function, the combinators it is
    # handed to); whether a handled effect can start tools, by its source position; the names and
    # callees of the tool machinery.
    handlers: "dict[int, tuple[Function, list[Handling]]] | None" = None
    handler_roots: "dict[int, tuple[Function, list[Handling]] | None]" = field(default_factory=dict)
    starts_tools: dict[Expr, bool] = field(default_factory=dict)
    tool_vocabulary: tuple[frozenset[str], frozenset[str]] | None = None
    # (id(helper function), targets) -> call paths from it to a terminal (one reachability question each)
    reached: dict[tuple[int, tuple[str, ...]], list[tuple[Call, ...]]] = field(default_factory=dict)
    # id(function) -> the call of its enclosing function it is handed to (absent: bound to a name, or
    # top level), filled once per enclosing function read (`handing_read`)
    handed_to: dict[int, Call] = field(default_factory=dict)
    handing_read: set[int] = field(default_factory=set)
    # (id(call), settle step) -> whether the call's own callee settles it (`yield* settleAll()`)
    settles_via: dict[tuple[int, str], bool] = field(default_factory=dict)


def in_scope(scan: Scan, call: Call) -> bool:
    """The patch touched this call or the named function around it."""
    if call.path not in scan.changed:
        return False
    if call.changed or scan.ctx.widened:
        return True
    fn = fx.outer_named(call.enclosing)
    touched = scan.files.get(call.path)
    return fn is not None and touched is not None and touched.touches(fn.line, fn.end_line)
