"""The one family template: the skeleton the engine runs for every family.

A family declares what it reads (`Reading`), the state one run of it shares
between its checks, its checks (functions over that state that return their
findings) and how it words what it proved. `Template.run` does the rest, the
same way for every family:

1. the reviewed files: the changed source files (under `--scope all`, also
   every file that names one of the family's idioms), minus its ignored
   globs, narrowed to its path option if it has one;
2. ERROR regions: one over changed lines in code that mentions an idiom
   makes the invariant `error` (nothing there could be checked); any other
   is a `parse-error` note with one anchor format for all;
3. relevance: a reviewed file the family has nothing to say about is left
   out, and when none is left the basis says what was looked for;
4. the checks, in their declared order;
5. `handler-unresolved` notes for handlers passed by a name the model
   cannot follow, in the roles the family reads;
6. ordering, and the basis: the violated checks in a line each when a
   blocking finding remains, else what the family proved.

The status is never the family's to set: the engine derives it from the
findings and `examined` (`derive_status`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Generic, Iterable, Mapping, Protocol, Sequence, TypeVar

from reviewer.engine import globs
from reviewer.engine.api import Options, Outcome
from reviewer.engine.production import UI_SUFFIXES, is_ui
from reviewer.report.model import Finding, Location, Severity

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext
    from reviewer.typescript import Module, Program, Role


class State(Protocol):
    """What the skeleton needs of a family's per-run state: the files it judges, narrowed in place."""

    changed: tuple[str, ...]


S = TypeVar("S", bound=State)
Check = Callable[[S], Iterable[Finding]]


# ------------------------------------------------------------------ what a family reads


@dataclass(frozen=True)
class Reading:
    """Which files a family reviews and what an unreadable region there would hide.

    `idioms` and `unchecked` are the family's words in the notes ("claim",
    "claim releases or renewals"); `tokens` the names whose presence around an
    ERROR region means it may hide a violation. `ignore` and `within` name
    the family's glob options (files never reviewed; the files it is narrowed
    to). `roles`: the roles whose unresolved handlers are noted.
    """

    idioms: str
    unchecked: str
    region_title: str
    tokens: Callable[[Options], Iterable[str]]
    ignore: str = ""
    within: str = ""
    roles: "tuple[Role, ...]" = ()
    handled: str = ""  # what a handler it could not follow leaves unchecked (default: `unchecked`)
    # The reviewed files when the family picks them itself, from its state (resume-identity's
    # `--scope all`, dependency-direction's layered files).
    paths: "Callable[[Any], tuple[str, ...]] | None" = None
    # Regions of a module that are not ERRORs of the code (dependency-direction's own reading).
    understood: "Callable[[Module], frozenset[int]] | None" = None
    # A region of a module it accepts is inspected whatever its words (bounded-scan: a module naming a table).
    inspects: "Callable[[ReviewContext, Module], bool] | None" = None
    # Whether a region hiding none of the idioms is still noted (False: the family judges constructs
    # that only its idioms make, so such a region hides nothing of its).
    notes_without_idioms: bool = True

    def reviewed(self, ctx: "ReviewContext", state: Any) -> tuple[str, ...]:
        opts = ctx.opts
        ignore = opts[self.ignore] if self.ignore else ()
        paths = self.paths(state) if self.paths is not None else reviewed_paths(ctx, ignore, self.tokens(opts))
        if self.within:
            paths = tuple(p for p in paths if globs.matches(p, opts[self.within]))
        return paths


@dataclass(frozen=True)
class Template(Generic[S]):
    """A family's run, declared: the skeleton (module docstring) calls the family's parts in order.

    - `start(ctx)`: the run's state (the reviewed files are set on it as `changed`);
    - `relevant(state, module)`: does the family apply to this file at all (None: every reviewed file);
    - `prepare(state)`: what every check reads, once the relevant files are known;
    - `checks`: each returns the findings of one check or group of checks;
    - `proved(state, findings)`: the basis when nothing blocks;
    - `phrases`: check name -> how the basis names its violation (None: `proved` counts the
      violations itself, and is the basis either way);
    - `nothing`: the basis when no file is reviewed (None: the checks run anyway); `idle(state)`:
      when none is relevant;
    - `unreadable(state)`: why the checks could not judge the change, found while checking ("" when they could);
    - `examined(state)`: how many constructs were judged (default: the relevant files);
    - `notes_everywhere`: parse-error notes for every reviewed file, not only the relevant ones.
    """

    reading: Reading | None
    start: "Callable[[ReviewContext], S]"
    checks: tuple[Check[S], ...]
    proved: Callable[[S, tuple[Finding, ...]], str]
    phrases: Mapping[str, str] | None
    nothing: "str | Callable[[ReviewContext], str] | None" = "no changed TypeScript file"
    relevant: "Callable[[S, Module], bool] | None" = None
    prepare: Callable[[S], None] | None = None
    idle: Callable[[S], str] | None = None
    examined: Callable[[S], int] | None = None
    notes_everywhere: bool = False
    # The basis when nothing was examined, though notes may have been found (what was looked for).
    unexamined: Callable[[S, tuple[Finding, ...]], str] | None = None
    unreadable: Callable[[S], str] | None = None

    def run(self, ctx: "ReviewContext") -> Outcome:
        reading = self.reading
        state = self.start(ctx)
        reviewed = reading.reviewed(ctx, state) if reading is not None else tuple(ctx.changeset.source_paths())
        if reading is not None and not reviewed and self.nothing is not None:
            return Outcome(self.nothing(ctx) if callable(self.nothing) else self.nothing)
        regions = error_regions(ctx, reviewed, reading) if reading is not None else []
        first = next((r for r in regions if r.touched and r.inspected), None)
        if first is not None and reading is not None:
            why = unparsed_summary(first, f"{reading.idioms} idioms", reading.unchecked)
            return Outcome(why, unreadable=why)
        if self.relevant is not None:
            program = ctx.program
            state.changed = tuple(
                p for p in reviewed if (m := program.module(p)) is not None and self.relevant(state, m)
            )
            if not state.changed:
                return Outcome(self.idle(state) if self.idle is not None else "nothing relevant changed")
        else:
            state.changed = reviewed
        if self.prepare is not None:
            self.prepare(state)
        found: list[Finding] = []
        for check in self.checks:
            found.extend(check(state))
        if reading is not None:
            judged = set(state.changed)
            if reading.roles:
                handled = reading.handled or reading.unchecked
                found.extend(unresolved_handler_findings(ctx, ctx.program, state.changed, reading.roles, handled))
            kept = regions if self.notes_everywhere else [r for r in regions if r.path in judged]
            found.extend(parse_error_findings(ctx, kept, reading))
        findings = tuple(sorted(found, key=lambda f: f.sort_key()))
        why = self.unreadable(state) if self.unreadable is not None else ""
        if why:
            return Outcome(why, findings, unreadable=why)
        examined = self.examined(state) if self.examined is not None else len(state.changed)
        if not examined and self.unexamined is not None:
            return Outcome(self.unexamined(state, findings), findings)
        blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
        if blocking and self.phrases is not None:
            summary = violation_summary(blocking, self.phrases)
        else:
            summary = self.proved(state, findings)
        return Outcome(summary, findings, examined=examined)


# ------------------------------------------------------------------ reviewed files


def reviewed_paths(ctx: "ReviewContext", ignore: Sequence[str], idioms: Iterable[str]) -> tuple[str, ...]:
    """The production source files a family examines (reviewer/engine/production.py): the changed
    ones, and under `--scope all` also every file of the patched tree that names one of its idioms
    (one `git grep -w`), so a violation the patch did not touch is found and counted instead of
    never being looked at."""
    production = ctx.production

    def ui(program: Any, path: str) -> bool:
        module = program.module(path) if not path.endswith(UI_SUFFIXES) else None
        return is_ui(path, [imp.specifier for imp in module.imports.values()] if module is not None else ())

    def service(path: str) -> bool:  # production code that is not front-end code
        return production(path) and not ui(ctx.program, path)

    sources = [p for p in ctx.changeset.source_paths() if not globs.matches(p, ignore)]
    changed = {p for p in sources if service(p)}
    # The patch may not take its own code out of review: a file that was service code in the base and
    # became "front-end" by an import the patch added, or a left-out file the changed code imports
    # (it runs in production all the same), is examined.
    for path in sources:
        if path in changed:
            continue
        was = ctx.changeset.file(path)
        old = (was.old_path or path) if was is not None else path
        if production(path) and ctx.base.exists(old) and production(old) and not ui(ctx.base_program, old):
            changed.add(path)
    imported = {d for p in sorted(changed) if (m := ctx.program.module(p)) is not None for d in m.dependencies}
    changed |= {p for p in sources if p in imported}
    if not ctx.widened:
        return tuple(sorted(changed))
    # A name as written, and its namespace (`Claim.clear` may be reached through `Claim`).
    bare = [name.replace("()", "") for name in idioms]
    words = sorted({w for name in bare for w in (name, name.split(".")[0]) if w})
    named = {p for p in ctx.patched.files_naming(words) if not globs.matches(p, ignore) and service(p)}
    return tuple(sorted(changed | named))


def changed_hunks(ctx: "ReviewContext", path: str, note: str) -> list[Location]:
    """The patched line ranges the patch added in `path` (evidence that ties a note to the change)."""
    changed = ctx.changeset.file(path)
    if changed is None:
        return []
    out = []
    for hunk in changed.hunks:
        if hunk.added:
            out.append(Location(path, min(hunk.added), max(hunk.added), note))
    return out[:3]


# ------------------------------------------------------------------ parse errors


@dataclass(frozen=True)
class ErrorRegion:
    path: str
    start: int
    end: int
    touched: bool  # overlaps lines the patch changed
    inspected: bool  # a name or string on its lines is an idiom the family inspects


def error_regions(ctx: "ReviewContext", paths: Iterable[str], reading: Reading) -> list[ErrorRegion]:
    """tree-sitter ERROR regions of `paths`, classified for the fail-closed rule.

    A region over changed lines whose declaration (see `error_scope`) mentions
    one of the family's idioms could hide a violation: the invariant is
    `error`. Any other region (untouched code, or a changed `interface X<in K>`
    with no idiom in it) is only a note. Read on every reviewed file before
    relevance is decided: calls inside a region are not calls to the model, so
    "no relevant call" may be the region's doing.
    """
    from reviewer.typescript import error_scope, words_on_lines  # lazy, as in context.py: tree-sitter only when read

    program = ctx.program
    # On the region's own lines an idiom's last segment is enough (`.clear(`
    # inside a broken statement); across the declaration around it, where
    # generic words like `clear` abound, every segment of the qualified name
    # must appear (`SessionExecutionClaim` and `clear`).
    words = frozenset(t for t in reading.tokens(ctx.opts) if t)
    lasts = frozenset(w.rsplit(".", 1)[-1] for w in words)
    files = ctx.changeset.by_path
    out: list[ErrorRegion] = []
    for path in sorted(set(paths)):
        module = program.module(path)
        understood = reading.understood(module) if module is not None and reading.understood else frozenset()
        whole = module is not None and reading.inspects is not None and reading.inspects(ctx, module)
        changed = files.get(path)
        for start, end in program.parse_errors(path):
            if start == end and start in understood:
                continue
            # No module to read (cannot happen for a region it reported): fail closed, assume inspected.
            if module is None or whole:
                inspected = True
            else:
                around = words_on_lines(module, *error_scope(module, start, end))
                inspected = bool(lasts & words_on_lines(module, start, end)) or any(
                    set(word.split(".")) <= around for word in words
                )
            if not inspected and not reading.notes_without_idioms:
                continue
            touched = changed is not None and changed.touches(start, end)
            out.append(ErrorRegion(path, start, end, touched, inspected))
    return out


def unparsed_summary(region: ErrorRegion, idioms: str, unchecked: str) -> str:
    """Why a family is `error` over `region`."""
    return (
        f"{region.path}:{region.start}-{region.end} does not parse (tree-sitter ERROR region over changed lines "
        f"in code that mentions {idioms}); {unchecked} there cannot be checked"
    )


def parse_error_findings(ctx: "ReviewContext", regions: Sequence[ErrorRegion], reading: Reading) -> list[Finding]:
    """The `consider` note for each region that did not block the family."""
    out = []
    for region in regions:
        where = f"in changed lines without {reading.idioms} idioms" if region.touched else "in code the patch did not change"
        out.append(
            ctx.finding(
                "parse-error",
                title=reading.region_title,
                message=(
                    f"{region.path}:{region.start}-{region.end} did not parse (tree-sitter ERROR region {where}); "
                    f"{reading.unchecked} inside it were not checked."
                ),
                location=Location(region.path, region.start, region.end),
                related=changed_hunks(
                    ctx, region.path, "the patch changed this file here; checks of it ran on a partial tree"
                ),
                anchor=f"parse-error:{region.path}:{region.start}",
            )
        )
    return out


# ------------------------------------------------------------------ notes and summaries


def unresolved_handler_findings(
    ctx: "ReviewContext", program: "Program", paths: Iterable[str], roles: "Iterable[Role]", unchecked: str
) -> list[Finding]:
    """`handler-unresolved` notes for names passed in `roles` on changed lines of `paths` that the model
    could not follow (see Program.unresolved_references)."""
    from reviewer.typescript import Role

    words = {Role.FAILURE_HANDLER: "failure handler", Role.FINALIZER: "finalizer", Role.FORKED: "forked effect"}
    wanted = frozenset(roles)
    out: list[Finding] = []
    for ref in program.unresolved_references(paths):
        if ref.role not in wanted or not (ref.changed or ctx.widened):
            continue
        role = words.get(ref.role, ref.role.value)
        out.append(
            ctx.finding(
                "handler-unresolved",
                title=f"`{ref.written}` runs as a {role}, but its code was not found",
                message=(
                    f"`{ref.written}` at {ref.path}:{ref.line} is handed to `{ref.combinator.replace('()', '')}` as "
                    f"its {role}, but it is a name the reviewer cannot follow (a parameter, or a property of a value "
                    f"known only at run time), so {unchecked} inside it were not checked. Check it by hand, or "
                    "pass a function or `const` the reviewer can resolve."
                ),
                location=Location(ref.path, ref.line, ref.end_line),
                anchor=f"{ref.text}:{ref.combinator}:{ref.role.value}",
            )
        )
    return out


def violation_summary(blocking: Sequence[Finding], phrases: Mapping[str, str]) -> str:
    """One phrase per violated check, with its first location and how many more there are.

    A blocking finding of a check without a phrase is named by its title, so
    a basis never reads as if the violation were not there.
    """
    parts = []
    named = list(phrases.items()) + [
        (f.rule.split("/", 1)[-1], f.title) for f in blocking if f.rule.split("/", 1)[-1] not in phrases
    ]
    seen: set[str] = set()
    for check, phrase in named:
        if check in seen:
            continue
        seen.add(check)
        hits = [f for f in blocking if f.rule.endswith("/" + check)]
        if hits:
            first = hits[0].location
            where = f" ({first.path.rsplit('/', 1)[-1]}:{first.line})" if first is not None else ""
            parts.append(f"{phrase}{where}" + (f" +{len(hits) - 1}" if len(hits) > 1 else ""))
    return "; ".join(parts)
