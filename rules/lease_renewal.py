"""lease-renewal: an execution claim stays owned until every finalizer of its run is done.

DESIGN.md family 1. The claim row is the Session's uniqueness lock: while it
exists nobody else can start the Session. So it may only be deleted where the
run is over (a finalizer of the run in the execution module, or the cleanup the
coordinator runs after the runner's finalizers), its loss must fail closed, the
renewal loop that keeps it alive must be joined, and must renew well inside
the lease.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from reviewer.engine import globs
from reviewer.change.changeset import ChangedFile
from reviewer.report.model import Finding, Location, Severity
from reviewer.engine.api import CheckSpec, Family, Kind, Option, Options, Outcome, parse_error_check
from reviewer.typescript import Atom, Call, Callback, Exit, Expr, Function, Module, Program, Role, exits, mentions_string

from reviewer.rules import _effect as fx

if TYPE_CHECKING:
    from reviewer.engine.context import ReviewContext

FAMILY_ID = "lease-renewal"

OPTIONS: tuple[Option, ...] = (
    Option(
        'release',
        ["SessionExecutionClaim.clear", "SessionExecutionClaim.release", "SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        "Calls that delete the claim row (release the Session's lock).",
    ),
    Option(
        'renew',
        ["SessionExecutionClaim.renew", "SessionExecutionClaim.update"],
        Kind.NAMES,
        "Calls that extend the lease (opencode's own claim module spells it `update`).",
    ),
    Option(
        'interrupt_hooks',
        ["interruptedCommit"],
        Kind.NAMES,
        'Commit-hook properties run while an interruption is committed.',
    ),
    Option(
        'interrupt_events',
        ["SessionEvent.Step.Interrupted", "Step.Interrupted"],
        Kind.NAMES,
        'Events whose commit is an interruption.',
    ),
    Option(
        'coordinator',
        ["RunCoordinator.interrupt"],
        Kind.NAMES,
        "The coordinator's interrupt: its cleanup argument runs after the runner's finalizers.",
    ),
    Option(
        'coordinator_cleanup_arg',
        1,
        Kind.INTEGER,
        "Index of the cleanup argument of the coordinator's interrupt.",
    ),
    Option(
        'hook_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'Where interruption hooks may be defined when only a helper they call changed (globs).',
    ),
    Option(
        'allowed_release_sites',
        ["packages/core/src/session/execution/**"],
        Kind.GLOBS,
        "The execution module: finalizers here are the run's own final cleanup.",
    ),
    Option(
        'allowed_release_paths',
        ["packages/core/src/session/recovery.ts"],
        Kind.GLOBS,
        'Files that own claims outright (startup recovery deletes claims it took over).',
    ),
    Option(
        'acquire',
        ["SessionExecutionClaim.acquire", "SessionExecutionClaim.takeover"],
        Kind.NAMES,
        "Acquisition calls: a release after one of these in the same function rolls back a claim that never ran (e.g. the coordinator refused to start it), which is not a run's release.",
    ),
    Option(
        'stale_claim_cleanup',
        ["SessionExecutionClaim.consumeSuspended"],
        Kind.NAMES,
        "Releases that drop a dead owner's claim (not this run's) and may run on the wake path of the execution module outside finalizers.",
    ),
    Option(
        'ignore_paths',
        ["**/test/**", "**/*.test.ts", "**/*.spec.ts", "**/__tests__/**"],
        Kind.GLOBS,
        'Files never checked (tests drive the claim API directly).',
    ),
    Option(
        'lost_tags',
        ["Lost", "SessionExecutionClaim.Lost"],
        Kind.NAMES,
        'Error tags / classes of a lost renewal.',
    ),
    Option(
        'catch_tag',
        ["Effect.catchTag"],
        Kind.NAMES,
        'Combinators that catch one error tag (`Effect.catchTag("Lost", ...)`).',
    ),
    Option(
        'catch_tags',
        ["Effect.catchTags"],
        Kind.NAMES,
        'Combinators that catch by a table of tags (`Effect.catchTags({ Lost: ... })`).',
    ),
    Option(
        'catch_all',
        [
        "Effect.catchAll",
        "Effect.catchAllCause",
        "Effect.catchAllDefect",
        "Effect.catchDefect",
        "Effect.catchCause",
        "Effect.catch",
        "Effect.catchIf",
        "Effect.catchSome",
        "Effect.catchSomeDefect",
        "Effect.orElse",
        "Effect.orElseSucceed",
    ],
        Kind.NAMES,
        'Handlers that catch everything (a lost claim included).',
    ),
    Option(
        'ignore',
        ["Effect.ignore", "Effect.ignoreLogged", "Effect.orElseSucceed"],
        Kind.NAMES,
        'Stages that turn any failure into success.',
    ),
    Option(
        'fail',
        ["Effect.fail", "Effect.die", "Effect.failCause", "Effect.dieMessage", "Effect.failSync", "Effect.dieSync", "Effect.interrupt"],
        Kind.NAMES,
        'What re-fails inside a handler.',
    ),
    Option(
        'success',
        ["Effect.void", "Effect.succeed", "Effect.unit", "Effect.asVoid", "Effect.log", "Effect.logWarning", "Effect.logError", "Effect.logDebug", "Effect.sync", "return;"],
        Kind.NAMES,
        'What a swallowing handler returns.',
    ),
    Option(
        'repeat',
        ["Effect.repeat", "Effect.schedule", "Effect.repeatOrElse"],
        Kind.NAMES,
        "Combinators that repeat an effect on a schedule (a heartbeat's loop).",
    ),
    Option(
        'fork',
        ["Effect.fork", "Effect.forkScoped", "Effect.forkDaemon", "Effect.forkIn", "Effect.forkChild"],
        Kind.NAMES,
        'Combinators that fork an effect into a fiber of its own.',
    ),
    Option(
        'join',
        ["Fiber.join", "Fiber.await", "Fiber.joinAll", "Fiber.awaitAll", "Effect.raceFirst", "Effect.race", "Effect.raceAll", "Fiber.zip", "Fiber.zipWith"],
        Kind.NAMES,
        'Calls that join a fiber (surface its failure) when handed it.',
    ),
    Option(
        'join_members',
        ["await", "join"],
        Kind.NAMES,
        'Members that join a fiber: `fiber.await`, `fiber.join()`.',
    ),
    Option(
        'lease_constant',
        "SESSION_EXECUTION_LEASE_MS",
        Kind.TEXT,
        "The constant holding the claim's lease in milliseconds; renewal periods are compared with it.",
    ),
    Option(
        'lease_ms_fallback',
        30000,
        Kind.INTEGER,
        'The lease (ms) assumed when `lease_constant` cannot be resolved (the summary says so).',
    ),
    Option(
        'max_period_fraction',
        0.5,
        Kind.NUMBER,
        'A renewal period must be below this fraction of the lease.',
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/release-in-interrupt-commit",
        severity=Severity.MUST_FIX,
        title="Claim released inside the interruption commit",
        summary="The claim is deleted while Step.Interrupted commits, before the run's finalizers have finished.",
        why=(
            "The claim row is the Session's lock. An interruption commits Step.Interrupted first and only then "
            "runs the runner's finalizers (tool fibers killed, temp files removed), which can block. Deleting the "
            "claim in the commit lets another process insert a successor claim and start the Session while the "
            "old run still finalizes: two owners run one Session."
        ),
        bad=(
            "createLLMEventPublisher(events, {\n"
            "  terminalCommit: () => updateExecution({ phase: \"safe\" }),\n"
            "  interruptedCommit: () => SessionExecutionClaim.clear(db, claim),\n"
            "})"
        ),
        good=(
            "createLLMEventPublisher(events, {\n"
            "  interruptedCommit: () => updateExecution({ phase: \"interrupted\" }),\n"
            "})\n"
            "// the claim is cleared by the run's own finalizer in execution/local.ts:\n"
            "drain(claim).pipe(Effect.ensuring(SessionExecutionClaim.clear(db, claim).pipe(Effect.orDie)))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/release-outside-finalizer",
        severity=Severity.MUST_FIX,
        title="Claim released outside the run's final cleanup",
        summary="A claim release runs in ordinary code instead of a finalizer of the run (or the coordinator's cleanup).",
        why=(
            "Only the run's finalizer knows that every other finalizer has completed. A release on an ordinary "
            "path frees the Session's lock while the run (or its tool fibers) may still be executing, so a second "
            "owner can start it."
        ),
        bad=(
            "const steer = Effect.fn(function* (claim: Claim) {\n"
            "  if (text.length === 0) yield* SessionExecutionClaim.release(db, claim)  // run continues\n"
            "})"
        ),
        good=(
            "Effect.scoped(run(claim)).pipe(\n"
            "  Effect.onExit(() => SessionExecutionClaim.release(db, claim).pipe(Effect.orDie)),\n"
            ")"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/lost-suppressed",
        severity=Severity.MUST_FIX,
        title="Lost claim turned into success",
        summary="A renewal/release failure with SessionExecutionClaim.Lost is caught and ignored instead of failing closed.",
        why=(
            "Lost means another owner may hold the Session now. Swallowing it lets this process keep running "
            "(or report a clean stop) without the lock, so the two owners' writes interleave."
        ),
        bad="SessionExecutionClaim.clear(db, claim).pipe(Effect.catchTag(\"Lost\", () => Effect.void))",
        good="SessionExecutionClaim.clear(db, claim).pipe(Effect.orDie)  // a lost claim is a defect of the run",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/renewal-not-joined",
        severity=Severity.MUST_FIX,
        title="Forked renewal loop is never joined",
        summary="A forked heartbeat (renew + repeat + fork) whose fiber nobody joins, awaits or races.",
        why=(
            "A forked fiber's failure is invisible unless someone joins it. When the renewal finds the claim "
            "lost, the heartbeat dies silently and the run carries on without the lock."
        ),
        bad=(
            "yield* SessionExecutionClaim.renew(db, claim).pipe(\n"
            "  Effect.repeat(Schedule.spaced(\"10 seconds\")),\n"
            "  Effect.forkScoped,\n"
            ")\n"
            "yield* drain"
        ),
        good=(
            "const heartbeat = yield* SessionExecutionClaim.renew(db, claim).pipe(\n"
            "  Effect.repeat(Schedule.spaced(\"10 seconds\")),\n"
            "  Effect.forkScoped,\n"
            ")\n"
            "yield* drain.pipe(Effect.raceFirst(Fiber.join(heartbeat)))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/renewal-period",
        severity=Severity.MUST_FIX,
        title="Renewal period not well inside the lease",
        summary="The heartbeat's period is at least the configured fraction (1/2) of SESSION_EXECUTION_LEASE_MS.",
        why=(
            "A renewal can be late by a GC pause, a busy SQLite writer or a slow tick. With a period near the "
            "lease one late renewal lets the claim expire and startup recovery on another process takes it over "
            "while this run is alive."
        ),
        bad="Effect.repeat(Schedule.spaced(\"20 seconds\"))  // SESSION_EXECUTION_LEASE_MS = 30 * 1000",
        good="Effect.repeat(Schedule.spaced(Duration.millis(SESSION_EXECUTION_LEASE_MS / 3)))",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/period-unresolved",
        severity=Severity.CONSIDER,
        title="Renewal period could not be computed",
        summary="A changed heartbeat's schedule does not fold to a constant period, so renewal-period could not judge it.",
        why=(
            "Never green by silence: a period the model cannot compute (a schedule built at run time, a "
            "combinator it does not know, a constant it cannot resolve) is not a period that is known to be "
            "short enough. The note names the schedule so a reviewer can check it against the lease by hand."
        ),
        bad="Effect.repeat(SessionExecutionClaim.renew(db, claim), makeSchedule(config))  // period known only at run time",
        good="Effect.repeat(SessionExecutionClaim.renew(db, claim), Schedule.spaced(Duration.millis(SESSION_EXECUTION_LEASE_MS / 3)))",
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a file with claim handling",
        summary="The TypeScript parser left an ERROR region (untouched, or changed but without the family's idioms) in a file this family inspects.",
        why="Rules run on the partial tree; claim releases or renewals inside an ERROR region are invisible to them.",
    ),
)


# ------------------------------------------------------------------ options


# ------------------------------------------------------------------ shared state


@dataclass
class Scan:
    """What one review of this family looks at and has concluded so far."""

    ctx: "ReviewContext"
    program: Program
    opts: Options
    changed: tuple[str, ...]  # changed TS files, minus ignored ones
    findings: list[Finding]
    facts: list[str]
    reported_releases: set[tuple[str, int, str]]
    hook_releases: set[tuple[str, int, str]]
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

    # Callee spellings repeat across thousands of calls: each is matched once per run.
    release_names: fx.Matcher = field(init=False)
    renew_names: fx.Matcher = field(init=False)
    catch_names: fx.Matcher = field(init=False)

    def __post_init__(self) -> None:
        self.release_names = fx.Matcher(self.opts.release)
        self.renew_names = fx.Matcher(self.opts.renew)
        self.catch_names = fx.Matcher(self.opts.catch_tag + self.opts.catch_tags + self.opts.catch_all)

    def is_release(self, call: Call) -> bool:
        return self.release_names(call.callee)

    def is_renew(self, call: Call) -> bool:
        return self.renew_names(call.callee)

    def is_catch(self, call: Call) -> bool:
        """A catch_tag, catch_tags or catch_all call (the only ones that can see a lost claim)."""
        return self.catch_names(call.callee)


def _relevant(scan: Scan, module: Module) -> bool:
    """Does this file use the claim idioms at all (else the family does not apply to it)?"""
    opts = scan.opts
    for call in module.calls():
        if fx.matches(call.callee, opts.release + opts.renew):
            return True
        if fx.matches(call.callee, opts.catch_tag + opts.catch_tags) and _mentions_lost(call.expr, opts):
            return True
    for hook in opts.interrupt_hooks:
        if scan.program.callbacks(hook, module.path):
            return True
    return opts.lease_constant in module.imports or opts.lease_constant in module.declarations


def _mentions_lost(expr: Expr, opts: Options) -> bool:
    """A lost tag as a string (`"Lost"`), an object key (`{ Lost: .. }`) or a class reference."""
    shorts = {fx.last(tag) for tag in opts.lost_tags}
    # Asked of every catch handler, and handlers nest: each question is a lookup, not a walk of the handler.
    return any(mentions_string(expr, short) or fx.mentions(expr, short) for short in shorts)


# ------------------------------------------------------------------ check 1: release in interrupt commit


def _check_interrupt_commit(scan: Scan) -> None:
    program, opts = scan.program, scan.opts
    hooks_seen = 0
    for hook in opts.interrupt_hooks:
        files = sorted(set(scan.changed) | set(_files_mentioning(scan, hook)))
        for cb in sorted(program.callbacks(hook, files), key=lambda c: (c.path, c.line)):
            hooks_seen += 1
            start: Function | Expr = cb.function if cb.function is not None else cb.value
            reached = program.reaches(start, opts.release, max_depth=4)
            for path in sorted(reached, key=lambda p: [fx.key(c) for c in p]):
                release = path[-1]
                if fx.key(release) in scan.reported_releases:
                    continue
                touched = scan.files.get(cb.path)
                if not (any(c.changed for c in path) or (touched is not None and touched.touches(cb.line, cb.end_line))):
                    continue  # pre-existing wiring the patch did not touch
                scan.reported_releases.add(fx.key(release))
                scan.hook_releases.add(fx.key(release))
                scan.findings.append(_hook_finding(scan, cb, path))
    scan.facts.append(f"{hooks_seen} `{'`/`'.join(opts.interrupt_hooks)}` hook(s) reach no claim release")
    _check_interrupt_events(scan)


def _files_mentioning(scan: Scan, word: str) -> list[str]:
    """Unchanged files under `hook_paths` that may define `word` (a hook there may now reach a changed helper)."""
    return list(fx.files_naming(scan.ctx, scan.opts.hook_paths, (word,), scan.opts.ignore_paths))


def _hook_finding(scan: Scan, cb: Callback, path: tuple[Call, ...]) -> Finding:
    release = path[-1]
    related: list[Location] = []
    if not (release.path == cb.path and cb.line <= release.line <= cb.end_line):
        via = " → ".join(f"`{c.callee_text}`" for c in path)
        related.append(fx.call_loc(release, f"the release the hook reaches ({via})"))
    invokers = _invokers(scan, cb.prop, [cb])
    related.extend(invokers)
    related.extend(_coordinator_locations(scan))
    invoker_note = f" In {invokers[0].path}, {invokers[0].note}." if invokers else ""
    related.extend(_invoker_callers(scan, cb.prop, [cb]))
    at = "" if release.path == cb.path and cb.line <= release.line <= cb.end_line else f" ({release.path}:{release.line})"
    message = (
        f"The `{cb.prop}` hook at {cb.path}:{cb.line} runs `{release.callee}`{at}, deleting the Session's claim row while the interruption is being "
        f"committed.{invoker_note} The runner's finalizers "
        "(tool fibers, scope cleanup) run only after that commit, so the Session's lock is gone while the old "
        "run still executes. Record the interruption in the commit (e.g. `phase: \"interrupted\"`) and release "
        "the claim in the run's own finalizer or the coordinator's interrupt cleanup."
    )
    return scan.ctx.finding(
        "release-in-interrupt-commit",
        title=f"`{cb.prop}` releases the claim before the run's finalizers finish",
        message=message,
        location=fx.loc(cb.path, cb.line, cb.end_line),
        related=fx.unique_sorted(related),
        failure_sequence=_interrupt_sequence(release),
        anchor=f"{cb.prop}:{release.normalized}",
    )


def _interrupt_sequence(release: Call) -> list[str]:
    return [
        f"Cancellation commits Step.Interrupted and `{release.callee}` deletes the claim row",
        "the runner keeps running its finalizers (interrupting tool fibers, scope cleanup), which can block",
        "another process (or the next wake) inserts a successor claim for the same Session and starts it",
        "two owners run the Session at once; the old run's heartbeat then finds its claim Lost",
    ]


def _check_interrupt_events(scan: Scan) -> None:
    """A release reached from the `commit` of an interruption event publish, hook or not."""
    program, opts = scan.program, scan.opts
    # Filtered before sorting: the sort key normalises calls that share a line, and
    # only interruption publishes need an order.
    publishes = [c for c in fx.iter_calls(program, scan.changed) if _publishes_interruption(c, opts)]
    for call in fx.in_key_order(publishes):
        args = call.args
        for arg in args[1:]:
            for name, value in arg.props:
                if name in opts.interrupt_hooks or not _is_function_like(value):
                    continue
                reached = program.reaches(value, opts.release, max_depth=4)
                for path in sorted(reached, key=lambda p: [fx.key(c) for c in p]):
                    release = path[-1]
                    if fx.key(release) in scan.reported_releases or not any(c.changed for c in path) and not call.changed:
                        continue
                    scan.reported_releases.add(fx.key(release))
                    first = path[0]
                    event = args[0].normalized
                    related = [fx.call_loc(call, f"publishes `{event}` with this commit")]
                    if first is not release:
                        related.append(fx.call_loc(release, "the release the commit reaches"))
                    related.extend(_coordinator_locations(scan))
                    scan.findings.append(
                        scan.ctx.finding(
                            "release-in-interrupt-commit",
                            title=f"`{event}` commit releases the claim before the run's finalizers finish",
                            message=(
                                f"The `{name}` of the `{event}` publish at {call.path}:{call.line} runs "
                                f"`{release.callee}` ({release.path}:{release.line}), so the claim row is deleted "
                                "in the same transaction that records the interruption, before the interrupted "
                                "run's finalizers have completed. Release the claim only in the run's finalizer "
                                "or in the coordinator's interrupt cleanup."
                            ),
                            location=fx.call_loc(first),
                            related=fx.unique_sorted(related),
                            failure_sequence=_interrupt_sequence(release),
                            anchor=f"{event}:{release.normalized}",
                        )
                    )


def _publishes_interruption(call: Call, opts: Options) -> bool:
    args = call.args
    return bool(args) and fx.matches(args[0].member_path or fx.ref_name(args[0]), opts.interrupt_events)


def _is_function_like(expr: Expr) -> bool:
    return expr.kind in ("arrow_function", "function_expression", "function", "identifier", "member_expression", "call_expression")


def _invokers(scan: Scan, prop: str, skip: Sequence[Callback] = ()) -> list[Location]:
    """Where the hook runs: `hooks.<prop>()` in the changed files and the files they import."""
    program = scan.program
    paths = _around_hooks(scan, skip)
    out: list[Location] = []
    found = []
    for inv in sorted(program.invocations(prop, paths), key=lambda i: (i.path, i.line)):
        if inv.call is None or fx.last(inv.call.callee) != prop:
            continue
        if any(cb.path == inv.path and cb.line <= inv.line <= cb.end_line for cb in skip):
            continue  # the hook calling a look-alike of itself is not its invoker
        host = fx.publish_around(scan.program, inv.path, inv.line)
        found.append((inv, fx.event_of(host) if host is not None else None))
    # Prefer invokers that commit an interruption event; fall back to any.
    committing = [(inv, host) for inv, host in found if host and fx.matches(host, scan.opts.interrupt_events)]
    for inv, host in committing or found:
        named = fx.outer_named(inv.enclosing, skip=("commit",) + scan.opts.interrupt_hooks)
        event = f" while committing `{host}`" if host else ""
        if named is not None:
            out.append(fx.fn_loc(named, f"`{named.name}` runs the hook (:{inv.line}){event}"))
        else:
            out.append(fx.loc(inv.path, inv.line, inv.end_line, f"runs the hook{event}"))
    return out


def _around_hooks(scan: Scan, hooks: Sequence[Callback]) -> list[str]:
    """The changed files, the hooks' files, and the files they import: where a hook is invoked."""
    own = {cb.path for cb in hooks}
    if scan.changed_imports is None:
        scan.changed_imports = frozenset(fx.imported_paths(scan.program, scan.changed))
    # The imports of a union are the union of the imports: the changed files' part is read once per run.
    return sorted(set(scan.changed) | own | scan.changed_imports | set(fx.imported_paths(scan.program, own)))


def _invoker_callers(scan: Scan, prop: str, skip: Sequence[Callback]) -> list[Location]:
    """Where the invoking helper is called from a finalizer (e.g. `Effect.onInterrupt`), before more cleanup."""
    program = scan.program
    paths = _around_hooks(scan, skip)
    names = set()
    for inv in program.invocations(prop, paths):
        if any(cb.path == inv.path and cb.line <= inv.line <= cb.end_line for cb in skip):
            continue
        named = fx.outer_named(inv.enclosing, skip=("commit",) + scan.opts.interrupt_hooks)
        if named is not None and named.name:
            names.add(named.name)
    out: list[Location] = []
    for call in _finalizer_calls_named(scan, paths, names):
        if call.enclosing is not None:
            later = [c for c in call.enclosing.calls if call.precedes(c)]
            if later:
                then = ", ".join(f"`{c.callee_text}`" for c in later[:2])
                note = f"the interruption finalizer calls `{call.callee_text}` first (:{call.line}), then {then}: those run after the claim is gone"
            else:
                note = f"the interruption finalizer runs `{call.callee_text}` (:{call.line}); the run's other finalizers follow it"
            out.append(fx.fn_loc(call.enclosing, note))
    return out


def _finalizer_calls_named(scan: Scan, paths: Sequence[str], names: set[str]) -> list[Call]:
    """Finalizer calls of `names` in `paths`, in file and source order (as `iter_calls` yields them).

    Asked once per hook finding over every changed file: each file's finalizer calls
    are indexed by method once per run instead of every call being scanned again.
    """
    out: list[Call] = []
    if not names:
        return out
    for path in sorted(set(paths)):
        table = _finalizers_of(scan, path)
        hits = sorted((hit for name in names for hit in table.get(name, ())), key=lambda hit: hit[0])
        out.extend(call for _, call in hits)
    return out


def _finalizers_of(scan: Scan, path: str) -> dict[str, list[tuple[int, Call]]]:
    if path not in scan.finalizers_by_path:
        table: dict[str, list[tuple[int, Call]]] = {}
        for position, call in enumerate(fx.iter_calls(scan.program, [path])):
            if Role.FINALIZER in call.roles and call.enclosing is not None:
                table.setdefault(call.method, []).append((position, call))
        scan.finalizers_by_path[path] = table
    return scan.finalizers_by_path[path]


def _coordinator_locations(scan: Scan) -> tuple[Location, ...]:
    """The coordinator's interrupt (it finishes interruption and finalizers before its cleanup)."""
    if scan.coordinator is None:
        scan.coordinator = tuple(_find_coordinator(scan))
    return scan.coordinator


def _find_coordinator(scan: Scan) -> list[Location]:
    program = scan.program
    paths = set(scan.changed) | set(fx.imported_paths(program, scan.changed))
    paths |= set(fx.tree_paths(scan.ctx, scan.opts.allowed_release_sites))
    paths |= set(fx.imported_paths(program, paths))
    out: list[Location] = []
    for target in scan.opts.coordinator:
        owner, member = fx.owner(target), fx.last(target)
        for module in fx.modules(program, paths):
            if not module.namespace or not owner or not (module.namespace == owner or module.namespace.endswith(owner)):
                continue
            fn = program.function(module.path, member) or next(
                (f for f in module.functions() if f.name == member), None
            )
            if fn is not None:
                out.append(fx.fn_loc(fn, f"`{module.namespace}.{member}` finishes interruption and the runner's finalizers only here"))
    return out


# ------------------------------------------------------------------ check 2: release outside finalizer


def _check_release_sites(scan: Scan) -> None:
    program, opts = scan.program, scan.opts
    candidates = [
        c
        for c in fx.iter_calls(program, scan.changed)
        if scan.is_release(c) and c.changed and not _owns_api(program, c, opts)
    ]
    allowed = _allowed_releases(scan)
    checked = 0
    for call in fx.in_key_order(candidates):
        checked += 1
        if fx.key(call) in scan.reported_releases:
            continue
        if globs.matches(call.path, opts.allowed_release_paths):
            continue
        if fx.key(call) in allowed:
            continue
        if globs.matches(call.path, opts.allowed_release_sites) and (
            Role.FINALIZER in call.roles or fx.matches(call.callee, opts.stale_claim_cleanup)
        ):
            continue
        if _rolls_back(scan, call):
            continue
        scan.findings.append(_outside_finding(scan, call))
    scan.facts.append(f"{checked} changed release(s), each in a run finalizer, the coordinator's cleanup or an allowed site")


def _rolls_back(scan: Scan, release: Call) -> bool:
    """A release after an acquire/takeover in the same function: the claim is this code's own and no run holds it."""
    fn = fx.outer_named(release.enclosing) or release.enclosing
    if fn is None:
        return False
    for call in fn.all_calls:
        if fx.matches(call.callee, scan.opts.acquire) and (call.line, call.end_line) < (release.line, release.line):
            return True
    return False


def _owns_api(program: Program, call: Call, opts: Options) -> bool:
    """Calls inside the module that defines the release API itself (one release built on another)."""
    module = program.module(call.path)
    return module is not None and module.namespace is not None and module.namespace == fx.owner(call.callee)


def _allowed_releases(scan: Scan) -> set[tuple[str, int, str]]:
    """Releases reached from a finalizer of the execution module or from the coordinator's cleanup."""
    program, opts = scan.program, scan.opts
    roots: list[Expr | Call] = []
    site_paths = set(fx.tree_paths(scan.ctx, opts.allowed_release_sites)) | {
        p for p in scan.changed if globs.matches(p, opts.allowed_release_sites)
    }
    finalizer_calls = [c for c in fx.iter_calls(program, site_paths) if Role.FINALIZER in c.roles]
    covered: set[int] = set()
    # Outermost first: a call nested in another finalizer call is covered by the outer one's reach.
    for call in sorted(finalizer_calls, key=lambda c: (c.path, c.line, -c.end_line)):  # stable: outer calls first
        if id(call) in covered:
            continue
        roots.append(call)
        covered.update(id(inner) for inner in call.expr.calls)
    for call in fx.iter_calls(program, set(scan.changed) | site_paths):
        if _is_coordinator_interrupt(call, opts):
            args = call.args
            if len(args) > opts.coordinator_cleanup_arg:
                roots.append(args[opts.coordinator_cleanup_arg])
    allowed: set[tuple[str, int, str]] = set()
    for root in roots:
        if isinstance(root, Call):
            if scan.is_release(root):
                allowed.add(fx.key(root))
                continue
            start: Expr = root.expr
        else:
            start = root
            for inner in start.calls:
                if scan.is_release(inner):
                    allowed.add(fx.key(inner))
        for path in program.reaches(start, opts.release, max_depth=4):
            allowed.add(fx.key(path[-1]))
    return allowed


def _is_coordinator_interrupt(call: Call, opts: Options) -> bool:
    """`SessionRunCoordinator.interrupt(..)`, or `coordinator.interrupt(..)` on a coordinator value."""
    for target in opts.coordinator:
        owner, member = fx.owner(target), fx.last(target)
        if call.method != member:
            continue
        if fx.matches(call.callee, (target,)):
            return True
        receiver = fx.owner(call.callee).rsplit(".", 1)[-1].lower()
        if receiver and owner and (owner.lower().endswith(receiver) or receiver.endswith(owner.lower())):
            return True
    return False


def _outside_finding(scan: Scan, call: Call) -> Finding:
    fn = fx.outer_named(call.enclosing)
    where = f"in {fx.describe(fn)}" if fn is not None else "at module level"
    role = call.role.value
    related: list[Location] = []
    if fn is not None:
        related.append(fx.fn_loc(fn, f"`{fn.name}` is not a finalizer of the run"))
    related.extend(_coordinator_locations(scan))
    return scan.ctx.finding(
        "release-outside-finalizer",
        title=f"`{call.callee}` runs outside the run's final cleanup",
        message=(
            f"`{call.callee}` at {call.path}:{call.line} runs {where} with role {role}: it is not a finalizer of "
            "the run in the execution module, nor the cleanup handed to the coordinator's interrupt. Releasing the "
            "claim there frees the Session's lock while the run or its finalizers may still be executing. Move the "
            "release into the run's `Effect.onExit`/`Effect.ensuring` (or the coordinator's cleanup)."
        ),
        location=fx.call_loc(call),
        related=fx.unique_sorted(related),
        failure_sequence=[
            f"`{call.callee}` deletes the claim row while the run is still in progress",
            "another process (or the next wake) sees no claim and inserts its own for the Session",
            "both runs append events and tool outcomes for the same Session",
            "the first run's next renewal finds its claim Lost only after the damage is done",
        ],
        anchor=call.normalized,
    )


# ------------------------------------------------------------------ check 3: lost suppressed


def _check_lost(scan: Scan) -> None:
    program, opts = scan.program, scan.opts
    seen = fx.KeySet()  # `fx.key` triples of calls and stages already reported
    counted = 0
    # Handlers are found before sorting: the sort key normalises calls that share a
    # line, and only catches that can see a lost claim need an order.
    handlers: dict[int, tuple[Expr, str]] = {}
    catches: list[Call] = []
    for call in fx.iter_calls(program, scan.changed):
        handler, why = _lost_handler(scan, call)
        if handler is not None:
            handlers[id(call)] = (handler, why)
            catches.append(call)
    for call in fx.in_key_order(catches):
        handler, why = handlers[id(call)]
        counted += 1
        if not (call.changed or handler.changed) or call in seen:
            continue
        lost_succeeds = _lost_branch_succeeds(program, handler, opts)
        if fx.handler_fails(program, handler, opts.fail) and not lost_succeeds:
            continue
        if not fx.yields_success(handler, opts.success) and not lost_succeeds:
            continue
        seen.add(call)
        scan.findings.append(_lost_finding(scan, call, why, _subject(scan, call)))
    # `renew(..).pipe(Effect.ignore)` / `Effect.ignore(renew(..))`
    claim_calls = [c for c in fx.iter_calls(program, scan.changed) if scan.is_renew(c) or scan.is_release(c)]
    for call in fx.in_key_order(claim_calls):
        for stage in fx.stages_of(call):
            if not fx.matches(stage.name, opts.ignore) or fx.matches(stage.name, opts.catch_all) and stage.call is not None:
                continue
            counted += 1
            at = stage.call or call
            if not (stage.expr.changed or call.changed):
                continue
            if stage.expr in seen:
                continue
            seen.add(stage.expr)
            scan.findings.append(
                _lost_finding(scan, at, f"`{fx.strip_call_marks(stage.name)}` discards every failure, a lost claim included,", call, stage.expr)
            )
    scan.facts.append(
        f"{counted} catch/ignore site(s) that can see Lost, none turning it into success" if counted else "no catch/ignore of Lost"
    )


def _lost_handler(scan: Scan, call: Call) -> tuple[Expr | None, str]:
    """The handler of a catch that can see a lost claim, and how it sees it."""
    opts = scan.opts
    if not scan.is_catch(call):
        return None, ""  # decided before reading the arguments: most calls are not catches
    args = call.args
    if not args:
        return None, ""
    if fx.matches(call.callee, opts.catch_tag):
        tags = [a.string_value for a in args[:-1] if a.string_value is not None]
        if any(fx.matches(t, opts.lost_tags) or t in {fx.last(x) for x in opts.lost_tags} for t in tags):
            return args[-1], f"`{fx.strip_call_marks(call.callee)}(\"{tags[0]}\", ..)` catches the lost claim"
        return None, ""
    if fx.matches(call.callee, opts.catch_tags):
        shorts = {fx.last(x) for x in opts.lost_tags}
        for arg in args:
            for name, value in arg.props:
                if name in shorts:
                    return value, f"`{fx.strip_call_marks(call.callee)}({{ {name}: .. }})` catches the lost claim"
        return None, ""
    if fx.matches(call.callee, opts.catch_all):
        handler = args[-1]
        if _mentions_lost(handler, opts):
            return handler, f"`{fx.strip_call_marks(call.callee)}` singles out the lost claim"
        if _subject(scan, call) is not None:
            return handler, f"`{fx.strip_call_marks(call.callee)}` catches every failure, a lost claim included,"
    return None, ""


def _subject(scan: Scan, catch: Call) -> Call | None:
    """The renew/release call this catch is applied to (as a pipe stage or data-first)."""
    if catch.path not in scan.subjects:
        table: dict[int, Call] = {}
        for call in fx.iter_calls(scan.program, [catch.path]):
            if scan.is_renew(call) or scan.is_release(call):
                for stage in fx.stages_of(call):
                    if stage.call is not None:
                        table.setdefault(id(stage.call), call)
        scan.subjects[catch.path] = table
    return scan.subjects[catch.path].get(id(catch))


def _lost_branch_succeeds(program: Program, handler: Expr, opts: Options) -> bool:
    """The handler tests for Lost and produces success on a path only Lost takes.

    `if (!(e instanceof Lost)) return Effect.die(e)` followed by a success,
    `e instanceof Lost ? Effect.void : ..`, `if (e._tag === "Lost") return Effect.void`,
    `if (Lost.is(e)) return` all qualify; the test may be written across lines.
    """
    function = program.function_of(handler)
    if function is None:
        return False
    shorts = frozenset(fx.last(t) for t in opts.lost_tags)
    lost, other = _lost_world(shorts, True), _lost_world(shorts, False)
    for end in exits(function):
        # Exits share the guards around them: `all_admit` judges each shared prefix once.
        only_lost = end.guards.all_admit(lost) and not end.guards.all_admit(other)
        if only_lost and _exit_succeeds(end, opts):
            return True
    return False


def _lost_world(shorts: frozenset[str], is_lost: bool) -> Callable[[Atom], bool | None]:
    """Decides the tests a handler makes of its error, in a world where it is (or is not) Lost."""

    def decide(atom: Atom) -> bool | None:
        if atom.operator == "instanceof" and atom.right is not None:
            return is_lost if fx.last(fx.ref_name(atom.right) or "") in shorts else None
        if atom.operator in ("===", "==", "!==", "!=") and atom.right is not None:
            tag = _tag_comparison(atom)
            if tag is None:
                return None
            equal = tag in shorts if is_lost else (False if tag in shorts else None)
            return equal if equal is None or atom.operator in ("===", "==") else not equal
        call = atom.left.call
        if atom.operator == "" and call is not None and call.method == "is" and fx.last(fx.owner(call.callee)) in shorts:
            return is_lost  # `Lost.is(e)`, `Claim.Lost.is(e)`
        return None

    return decide


def _tag_comparison(atom: Atom) -> str | None:
    """The tag in `e._tag === "Lost"` (either side), else None."""
    for ref, literal in ((atom.left, atom.right), (atom.right, atom.left)):
        if ref is None or literal is None:
            continue
        path = ref.member_path or ""
        if (path == "_tag" or path.endswith("._tag")) and literal.string_value is not None:
            return literal.string_value
    return None


def _exit_succeeds(end: Exit, opts: Options) -> bool:
    """This way out of a handler produces success: a bare return, falling off the end, or a
    success value (`Effect.void`, `Effect.succeed(..)`) that does not fail again."""
    if end.kind == "throw":
        return False
    if end.value is None:
        return True
    if fx.refers_to_any(end.value, opts.fail):
        return False
    return fx.refers_to_any(end.value, opts.success)


def _lost_finding(scan: Scan, call: Call, why: str, subject: Call | None, stage: Expr | None = None) -> Finding:
    location = fx.loc(stage.path, stage.line, stage.end_line) if stage is not None else fx.call_loc(call)
    target = f" on `{subject.callee}`" if subject is not None else ""
    related: list[Location] = []
    if subject is not None and (subject.path, subject.line) != (location.path, location.line):
        related.append(fx.call_loc(subject, f"`{subject.callee}` fails with Lost when another owner took the claim"))
    cleanup = _coordinator_cleanup_around(scan, call)
    if cleanup is not None:
        related.append(fx.call_loc(cleanup, f"the cleanup handed to `{cleanup.callee_text}`"))
    for loop in _loops_in(scan, call.path):
        if loop.fork is not None and fx.outer_named(loop.fn) is fx.outer_named(call.enclosing):
            related.append(fx.loc(loop.path, loop.line, loop.end_line, "the heartbeat whose Lost also goes unobserved"))
    for release in sorted(scan.hook_releases):
        related.append(fx.loc(release[0], release[1], release[1], "deletes the claim during the interruption commit, so Lost is the normal case here"))
    handler = "its handler returns success without failing again"
    return scan.ctx.finding(
        "lost-suppressed",
        title=f"Lost claim swallowed{(' on `' + fx.last(subject.callee) + '`') if subject else ''}",
        message=(
            f"{why}{target} at {location.path}:{location.line}; {handler}. A Lost claim means another owner may hold "
            "the Session, so the run must fail closed (let the failure through, or `Effect.orDie`) instead of "
            "reporting a clean stop without the lock."
        ),
        location=location,
        related=fx.unique_sorted(related),
        failure_sequence=[
            "the claim is lost while this run still works: deleted by an interruption commit, or expired and taken over",
            "another process starts the Session with a fresh claim",
            f"this run's {'renewal/release' if subject is None else '`' + fx.last(subject.callee) + '`'} fails with Lost "
            "and the handler turns it into success",
            "the caller sees a clean stop and nothing fails closed while the new owner runs the Session",
        ],
        anchor=(stage.normalized if stage is not None else call.normalized),
    )


def _coordinator_cleanup_around(scan: Scan, call: Call) -> Call | None:
    """The coordinator interrupt whose cleanup argument contains `call`, if any."""
    if call.path not in scan.coordinators_by_path:
        # Filtered once per file: a file with thousands of swallowing catches asks once per catch.
        scan.coordinators_by_path[call.path] = [
            other for other in fx.iter_calls(scan.program, [call.path]) if _is_coordinator_interrupt(other, scan.opts)
        ]
    for other in scan.coordinators_by_path[call.path]:
        if other.line <= call.line and call.end_line <= other.end_line:
            return other
    return None


# ------------------------------------------------------------------ checks 4-5: renewal loops


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


def _loops(scan: Scan, paths: Iterable[str]) -> list[Loop]:
    program, opts = scan.program, scan.opts
    out: list[Loop] = []
    for call in fx.in_key_order(c for c in fx.iter_calls(program, paths) if scan.is_renew(c)):
        stages = fx.stages_of(call)
        repeat = next((s for s in stages if fx.matches(s.name, opts.repeat)), None)
        if repeat is None:
            continue
        fork_at = next((i for i, s in enumerate(stages) if fx.matches(s.name, opts.fork)), None)
        schedule = _schedule_of(repeat, call)
        joined = fork_at is not None and any(fx.matches(s.name, opts.join) for s in stages[fork_at + 1 :])
        line, end = fx.outermost(call, stages)
        wrappers = [s.call for s in stages if s.wraps and s.call is not None]
        out.append(
            Loop(
                renew=call,
                path=call.path,
                line=line,
                end_line=end,
                schedule=schedule,
                fork=stages[fork_at].name if fork_at is not None else None,
                fn=call.enclosing,
                joined_inline=joined,
                outer=wrappers[-1] if wrappers else call,
            )
        )
    return out


def _loops_in(scan: Scan, path: str) -> list[Loop]:
    """The loops of one file, found once per run (every lost finding in the file asks)."""
    if path not in scan.loops_by_path:
        scan.loops_by_path[path] = _loops(scan, [path])
    return scan.loops_by_path[path]


def _schedule_of(repeat: fx.Stage, renew: Call) -> Expr | None:
    """The schedule argument: the last argument that is not the renewal itself."""
    if repeat.call is None:
        return None
    args = [a for a in repeat.call.args if a.call is not renew]
    if not args:
        return None
    options = args[-1].prop("schedule")  # `Effect.repeat({ schedule: .. })`
    return options if options is not None else args[-1]


def _check_loops(scan: Scan) -> None:
    program, opts = scan.program, scan.opts
    lease, lease_source, lease_changed = _lease(scan)
    scope = set(scan.changed)
    if lease_changed:
        scope |= set(fx.tree_paths(scan.ctx, opts.allowed_release_sites))
    loops = _loops(scan, sorted(p for p in scope if not globs.matches(p, opts.ignore_paths)))
    periods: list[str] = []
    for loop in loops:
        touched = scan.files.get(loop.path)
        changed = touched is not None and touched.touches(loop.line, loop.end_line)
        if loop.fork is not None and changed:
            _check_joined(scan, loop)
        if loop.schedule is None:
            continue
        period = program.duration_ms(loop.schedule)
        if period is None:
            if changed or lease_changed:
                scan.findings.append(_unresolved_period(scan, loop))
            continue
        periods.append(_ms(period))
        if not (changed or lease_changed):
            continue
        if period >= lease * opts.max_period_fraction:
            scan.findings.append(_period_finding(scan, loop, period, lease, lease_source))
    resolved = "" if lease_source.startswith(f"`{opts.lease_constant}` =") else " (assumed: the constant did not resolve)"
    bound = f"{_ms(lease * opts.max_period_fraction)} = {opts.max_period_fraction:g} × `{opts.lease_constant}` {_ms(lease)}{resolved}"
    scan.facts.append(
        f"{len(loops)} heartbeat(s), forked ones joined" + (f", period {', '.join(periods)} < {bound}" if periods else "")
    )


def _check_joined(scan: Scan, loop: Loop) -> None:
    if loop.joined_inline:
        return
    usage, name = loop.outer.binding
    if usage not in ("bound", "discarded") or (name is not None and "." in name):
        return  # returned, handed on or stored on an object: someone else owns the fiber
    if usage == "bound" and name is not None and _joined(scan, loop, name):
        return
    fn = fx.outer_named(loop.fn)
    what = f"bound to `{name}` but never joined" if usage == "bound" else "discarded (not bound to a variable)"
    related = [fx.call_loc(loop.renew, f"`{loop.renew.callee}` fails with Lost when the claim is gone")]
    if fn is not None:
        related.append(fx.fn_loc(fn, f"`{fn.name}` never joins, awaits or races the heartbeat fiber"))
    guarded = _guarded_work(loop)
    if guarded is not None:
        related.append(fx.call_loc(guarded, f"`{guarded.callee_text}` runs next without racing the heartbeat"))
    scan.findings.append(
        scan.ctx.finding(
            "renewal-not-joined",
            title=f"Forked heartbeat {('`' + name + '` ') if name else ''}is never joined",
            message=(
                f"The renewal loop at {loop.path}:{loop.line} (`{loop.renew.callee}` repeated, then "
                f"`{fx.strip_call_marks(loop.fork or '')}`) is {what} in {fx.describe(fn)}. When a renewal finds the "
                "claim lost the fiber fails silently and the work it guards keeps running without the lock. Join it "
                "(`Effect.raceFirst(Fiber.join(heartbeat))`, `Fiber.join`) so a lost claim interrupts the work."
            ),
            location=fx.loc(loop.path, loop.line, loop.end_line),
            related=fx.unique_sorted(related),
            failure_sequence=[
                "the heartbeat renews the claim in a forked fiber",
                "the claim is lost (deleted in a commit, or expired and taken over)",
                f"`{fx.last(loop.renew.callee)}` fails with Lost and the forked fiber dies; nobody observes its exit",
                "the guarded work runs on without a claim while another owner runs the Session",
            ],
            anchor=f"{loop.renew.normalized}:{loop.fork}",
        )
    )


def _guarded_work(loop: Loop) -> Call | None:
    """The first call after the loop in the same body: the work the heartbeat should guard."""
    if loop.fn is None:
        return None
    later = [c for c in loop.fn.calls if c.line > loop.end_line]
    return min(later, key=lambda c: (c.line, -c.end_line), default=None)


def _joined(scan: Scan, loop: Loop, name: str) -> bool:
    """Is the fiber bound to `name` joined/awaited/raced anywhere in the same function?"""
    fn = fx.outer_named(loop.fn) or loop.fn
    opts = scan.opts
    calls = fn.all_calls if fn is not None else tuple(fx.iter_calls(scan.program, [loop.path]))
    for call in calls:
        if call.line <= loop.end_line and call.line >= loop.line:
            continue
        if fx.matches(call.callee, opts.join):
            if any(fx.mentions(a, name) for a in call.args):
                return True
        if call.method in opts.join_members and fx.owner(call.callee) == name:
            return True
    # `heartbeat.await` read as a property (Effect 4 fibers)
    if fn is None:
        return False
    for member in opts.join_members:
        for read in scan.program.invocations(member, fn.path):
            if fn.line <= read.line <= fn.end_line and read.expr.member_path == f"{name}.{member}":
                return True
    return False


def _lease(scan: Scan) -> tuple[float, str, bool]:
    """(lease ms, where it came from, whether the patch changed its value)."""
    opts = scan.opts
    patched = _resolve_lease(scan.program, scan, patched=True)
    base = _resolve_lease(scan.ctx.base_program, scan, patched=False)
    if patched is None:
        fallback = float(opts.lease_ms_fallback)
        return fallback, f"`{opts.lease_constant}` could not be resolved; assumed {_ms(fallback)}", False
    value, where = patched
    changed = base is not None and base[0] != value
    was = f", was {_ms(base[0])} before the patch" if changed and base is not None else ""
    return value, f"`{opts.lease_constant}` = {_ms(value)} ({where}{was})", changed


def _resolve_lease(program: Program, scan: Scan, patched: bool) -> tuple[float, str] | None:
    name = scan.opts.lease_constant
    candidates: list[str] = []
    for call in fx.iter_calls(scan.program, scan.changed) if patched else ():
        if scan.is_renew(call):
            candidates.append(call.path)
            definition = scan.program.definition(call.path, call.callee_text)
            if definition is not None:
                candidates.append(definition.path)
    candidates += list(scan.changed) + list(fx.tree_paths(scan.ctx, scan.opts.allowed_release_sites))
    # Each renewal adds its file again; the first file that resolves wins, so asking once per file is the same.
    for path in dict.fromkeys(candidates):
        value = program.value(path, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            module = program.module(path)
            imp = module.imports.get(name) if module is not None else None
            where = imp.module if imp is not None and imp.module else path
            return float(value), where
    return None


def _lease_locations(scan: Scan) -> list[Location]:
    """Where the lease constant is declared (for the period finding's evidence)."""
    if scan.lease_locations is None:
        scan.lease_locations = tuple(_find_lease_locations(scan))
    return list(scan.lease_locations)


def _find_lease_locations(scan: Scan) -> list[Location]:
    name = scan.opts.lease_constant
    paths = set(scan.changed) | set(fx.imported_paths(scan.program, scan.changed))
    paths |= set(fx.imported_paths(scan.program, paths))
    for module in fx.modules(scan.program, paths):
        if name in module.declarations and name not in module.imports:
            expr = module.constant(name)
            if expr is not None:
                return [fx.loc(module.path, expr.line, expr.end_line, f"`{name} = {expr.normalized}`")]
    return []


def _ms(value: float) -> str:
    return f"{value / 1000:g} s" if value >= 1000 else f"{value:g} ms"


def _period_finding(scan: Scan, loop: Loop, period: float, lease: float, source: str) -> Finding:
    schedule = loop.schedule
    assert schedule is not None
    fraction = scan.opts.max_period_fraction
    return scan.ctx.finding(
        "renewal-period",
        title=f"Heartbeat every {_ms(period)} against a {_ms(lease)} lease",
        message=(
            f"The renewal loop at {loop.path}:{loop.line} renews `{loop.renew.callee}` every {_ms(period)} "
            f"(`{schedule.normalized}`), but {source}: the period must stay below {fraction:g} of the lease "
            f"({_ms(lease * fraction)}). One late tick lets the claim expire while the run is alive."
        ),
        location=fx.loc(loop.path, loop.line, loop.end_line),
        related=[fx.loc(schedule.path, schedule.line, schedule.end_line, f"the schedule: `{schedule.normalized}`")]
        + _lease_locations(scan),
        failure_sequence=[
            f"one renewal is delayed by more than {_ms(max(lease - period, 0))} (GC pause, busy SQLite writer), so "
            f"{_ms(lease)} pass without a renewal",
            "the claim's expires_at passes while the run is still working",
            "startup recovery or another process takes the claim over",
            "the next renewal fails with Lost after the new owner already started the Session",
        ],
        anchor=f"{loop.renew.normalized}:{schedule.normalized}",
    )


def _unresolved_period(scan: Scan, loop: Loop) -> Finding:
    schedule = loop.schedule
    assert schedule is not None
    return scan.ctx.finding(
        "period-unresolved",
        title=f"Heartbeat period of `{loop.renew.callee}` not computed",
        message=(
            f"The renewal loop at {loop.path}:{loop.line} repeats on `{schedule.normalized}`, which does not fold "
            f"to a constant period, so it was not compared with the lease ({scan.opts.max_period_fraction:g} of "
            f"`{scan.opts.lease_constant}`). Check the period by hand."
        ),
        location=fx.loc(loop.path, loop.line, loop.end_line),
        related=[fx.loc(schedule.path, schedule.line, schedule.end_line, f"the schedule: `{schedule.normalized}`")],
        anchor=f"{loop.renew.normalized}:{schedule.normalized}:unresolved",
    )


# ------------------------------------------------------------------ run


def _idiom_tokens(opts: Options) -> list[str]:
    """Names whose presence in an unparsed region means it may hide a claim violation."""
    names = opts.release + opts.renew + opts.acquire + opts.lost_tags + opts.interrupt_hooks
    return sorted(set(names) | {opts.lease_constant})


def run(ctx: "ReviewContext") -> Outcome:
    opts = ctx.opts
    changed = tuple(p for p in ctx.changeset.typescript_paths() if not globs.matches(p, opts.ignore_paths))
    if not changed:
        return Outcome("no changed TypeScript file")
    program = ctx.program
    scan = Scan(ctx, program, opts, (), [], [], set(), set(), files=ctx.changeset.by_path)
    # Regions first, over every changed file: calls inside an ERROR region are
    # invisible to the model, so a broken file could otherwise look irrelevant.
    regions = fx.error_regions(program, ctx, changed, _idiom_tokens(opts))
    first = fx.blocking_region(regions)
    if first is not None:
        unreadable = fx.unparsed_summary(first, "claim idioms", "claim releases and renewals")
        return Outcome(unreadable, unreadable=unreadable)
    relevant = tuple(p for p in changed if (m := program.module(p)) is not None and _relevant(scan, m))
    if not relevant:
        return Outcome(
            "no changed file releases, renews or catches a session execution claim, or defines an interruption hook",
        )
    regions = [r for r in regions if r.path in relevant]
    scan.changed = relevant
    _check_interrupt_commit(scan)
    _check_release_sites(scan)
    _check_lost(scan)
    _check_loops(scan)
    scan.findings.extend(
        fx.parse_error_findings(
            ctx,
            regions,
            title="Unparsed region in a file with claim handling",
            idioms="claim",
            unchecked="claim releases or renewals",
        )
    )
    findings = tuple(sorted(scan.findings, key=lambda f: f.sort_key()))
    blocking = [f for f in findings if f.severity is not Severity.CONSIDER]
    summary = _summary(scan, relevant, blocking)
    return Outcome(summary, findings, examined=len(relevant))


_VIOLATION_PHRASES = {
    "release-in-interrupt-commit": "claim released in the interruption commit",
    "release-outside-finalizer": "claim released outside the run's finalizers",
    "lost-suppressed": "`Lost` swallowed",
    "renewal-not-joined": "forked heartbeat never joined",
    "renewal-period": "renewal period not inside the lease",
}


def _summary(scan: Scan, relevant: Sequence[str], blocking: Sequence[Finding]) -> str:
    if blocking:
        return fx.violation_summary(blocking, _VIOLATION_PHRASES)
    return "; ".join(scan.facts) + f" ({len(relevant)} file(s))"


FAMILY = Family(
    id=FAMILY_ID,
    summary="An execution claim stays owned until every finalizer of its run has completed.",
    checks=CHECKS,
    run=run,
    options=OPTIONS,
)
