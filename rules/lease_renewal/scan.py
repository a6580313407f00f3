"""The state of one run, shared by the checks: what changed, what was found, per-run memos.

Also the `Loop` record (a renewal loop as found in a file): the run memoizes
loops per file, and the lost check reads them too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from reviewer.change.changeset import ChangedFile
from reviewer.report.model import Location
from reviewer.engine.api import Options
from reviewer.engine import globs
from reviewer.typescript import Call, Expr, Function, Program

from reviewer.rules import _effect as fx

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext


# ------------------------------------------------------------------ shared state


@dataclass
class Scan:
    """What one review of this family looks at and has concluded so far."""

    ctx: "ReviewContext"
    program: Program
    opts: Options
    changed: tuple[str, ...] = ()  # the reviewed files the family applies to (set by the template)
    facts: list[str] = field(default_factory=list)  # what each check proved, for the basis
    reported_releases: set[tuple[str, int, str]] = field(default_factory=set)
    hook_releases: set[tuple[str, int, str]] = field(default_factory=set)
    # path -> id(stage call) -> the renew/release call it is applied to
    subjects: dict[str, dict[int, Call]] = field(default_factory=dict)
    # Per-run memos of evidence that depends only on the changed files, not on the
    # finding asking for it (recomputing it per finding made large reviews quadratic).
    coordinator: tuple[Location, ...] | None = None
    lease_locations: tuple[Location, ...] | None = None
    loops_by_path: dict[str, list["Loop"]] = field(default_factory=dict)
    files: dict[str, ChangedFile] = field(default_factory=dict)  # the change set by path
    changed_imports: frozenset[str] | None = None  # files the changed files import
    # path -> method -> (position in the file, call) of its finalizer calls
    finalizers_by_path: dict[str, dict[str, list[tuple[int, Call]]]] = field(default_factory=dict)
    # path -> the coordinator interrupt calls of the file (every lost finding asks)
    coordinators_by_path: dict[str, list[Call]] = field(default_factory=dict)
    api_named: bool | None = None  # does the tree write the claim API's name at all (asked once)
    holders: dict[tuple[str, int, int, str], bool] = field(default_factory=dict)  # function -> holds a claim (memo)

    # Callee spellings repeat across thousands of calls: each is matched once per run.
    release_names: fx.Matcher = field(init=False)
    renew_names: fx.Matcher = field(init=False)
    catch_names: fx.Matcher = field(init=False)

    @property
    def widened(self) -> bool:
        return self.ctx.widened

    def __post_init__(self) -> None:
        self.release_names = fx.Matcher(self.opts.release)
        self.renew_names = fx.Matcher(self.opts.renew)
        self.catch_names = fx.Matcher(self.opts.catch_tag + self.opts.catch_tags + self.opts.catch_all)

    def is_release(self, call: Call) -> bool:
        # `(hard ? X.clear : X.release)(..)` releases on either branch; `Effect.forEach(claims, X.clear)` runs it
        return any(self.release_names(n) for n in call.runs)

    def released_as_finalizer(self, call: Call) -> bool:
        """The call releases only through functions it hands over in a finalizer slot
        (`Effect.addFinalizer(X.clear.bind(null, db, claim))`): the release runs in the final cleanup."""
        if self.release_names(call.callee) or len(call.runs) == 1:
            return False
        finalizing = set(self.program.handed_to_finalize(call))
        return all(n in finalizing for n in call.runs[1:] if self.release_names(n))

    def release_name(self, call: Call) -> str:
        """The release the call runs: its callee, or the branch or handed function that releases."""
        return next((n for n in call.runs if self.release_names(n)), call.callee)

    def is_run_site(self, call: Call) -> bool:
        """Does `call` run in code that holds a claim: the configured execution module, or a function
        that itself acquires or renews the claim (a worker that keeps its lock fresh, a dispatcher
        that takes it)? A finalizer there is the holder's own final step; a finalizer in code that
        holds no claim (an operator's cancel, a status route) frees a lock another run still holds.
        A helper of the program that acquires or renews (`keepAlive`) counts as its caller's."""
        if globs.matches(call.path, self.opts.allowed_release_sites):
            return True
        fn = fx.outer_named(call.enclosing)
        if fn is None:
            return False
        key = (fn.path, fn.line, fn.end_line, fn.name or "")
        if key not in self.holders:
            names = tuple(self.opts.acquire) + tuple(self.opts.renew)
            holds = fx.Matcher(names)
            inside = [o for o in fx.iter_calls(self.program, (call.path,)) if fx.within(o, fn.expr.span)]
            # Directly, or through a helper of the program (`keepAlive(db, shard)` that renews on a schedule).
            self.holders[key] = any(any(holds(n) for n in o.runs) for o in inside) or any(
                not self.is_release(o) and self.program.reaches(o.expr, list(names), max_depth=2) for o in inside
            )
        return self.holders[key]

    def imports_of_changed(self) -> frozenset[str]:
        """Repository files the changed files import (asked by several checks, read once per run)."""
        if self.changed_imports is None:
            self.changed_imports = frozenset(fx.imported_paths(self.program, self.changed))
        return self.changed_imports

    def is_renew(self, call: Call) -> bool:
        return self.renew_names(call.callee)

    def is_catch(self, call: Call) -> bool:
        """A catch_tag, catch_tags or catch_all call (the only ones that can see a lost claim)."""
        return self.catch_names(call.callee)


# ------------------------------------------------------------------ renewal loops


@dataclass(frozen=True)
class Loop:
    renew: Call
    path: str
    line: int
    end_line: int
    schedule: Expr | None
    fork: str | None
    fn: Function | None
    joined_inline: bool
    outer: Call  # the outermost call of the expression (the renewal or its last data-first wrapper)
    plain: bool = False  # a statement loop or timer (plain.py), not an Effect schedule
