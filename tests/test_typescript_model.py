"""The TypeScript model on real Effect-TS / drizzle snippets.

Every expected value below was worked out by hand from the fixture text; line
numbers are 1-based lines of the fixture as written (each starts on line 1).
"""

from __future__ import annotations

import textwrap

import pytest

from reviewer.typescript import DEFAULT_ROLES, Import, Program, Role, RoleTable


def _ts(source: str) -> str:
    return textwrap.dedent(source).lstrip("\n")


FILES: dict[str, str] = {
    "src/execution/claim.ts": _ts(
        """
        export * as SessionExecutionClaim from "./claim"
        import { Effect } from "effect"

        export const clear = (db: Db, claim: Claim) => Effect.sync(() => db.delete(claim))
        export const renew = (db: Db, claim: Claim) => Effect.sync(() => db.update(claim))
        export function release(db: Db, claim: Claim) {
          return clear(db, claim)
        }
        """
    ),
    "src/execution/index.ts": _ts(
        """
        export * as ExecutionClaim from "./claim"
        export { SESSION_EXECUTION_LEASE_MS as LEASE_MS } from "./lease"
        export * from "./lease"
        """
    ),
    "src/execution/lease.ts": _ts(
        """
        export const SESSION_EXECUTION_LEASE_MS = 30 * 1000
        export const RENEW_MS = SESSION_EXECUTION_LEASE_MS / 3
        export const PERIOD = "20 seconds"
        """
    ),
    "src/session/sql.ts": _ts(
        """
        export const LIMIT = 50 * 2
        export const scan = (db: Db) => db.select().from(SessionExecutionTable).limit(LIMIT).all()
        """
    ),
    "src/session/publish.ts": _ts(
        """
        import { SessionExecutionClaim as Claim } from "../execution/claim"
        import { ExecutionClaim, LEASE_MS, RENEW_MS } from "../execution"
        import { clear as wipe } from "../execution/claim"
        import * as Claims from "../execution/claim"
        import * as Sql from "./sql"
        import { Duration, Effect as E, Schedule, pipe } from "effect"
        import * as Stream from "effect/Stream"

        // Claim.clear(db, claim) is only mentioned here
        const note = "SessionExecutionClaim.clear(db, claim)"

        export const hooks = {
          terminalCommit: () => updateExecution({ phase: "safe", assistant_message_id: null }),
          interruptedCommit: () => Claim.clear(db, claim),
        }

        export const interruptAssistant = E.fn("Publish.interrupt")(function* (hooks: Hooks) {
          const heartbeat = yield* Claims.renew(db, claim).pipe(E.repeat(Schedule.spaced("20 seconds")), E.forkScoped)
          yield* cleanup.pipe(E.catchTag("Lost", () => E.logWarning("lost")))
          yield* events.publish(SessionEvent.Step.Interrupted, data, { commit: hooks.interruptedCommit })
          switch (event.type) {
            case "provider-error":
              return yield* failAssistant(hooks, event.error)
            case "finish":
              yield* ExecutionClaim.clear(db, claim)
          }
          const rows = yield* db.select().from(SessionExecutionTable).where(and(lte(SessionExecutionTable.expires_at, now), isNull(SessionExecutionTable.recovery_error))).orderBy(asc(SessionExecutionTable.wake_attempts)).limit(Sql.LIMIT).all()
          yield* wipe(db, claim)
        })

        export const tail = Stream.runDrain(pipe(source(), Stream.take(3)))
        """
    ),
    "src/session/events.ts": _ts(
        """
        import { hooks } from "./publish"

        export const commitInterrupted = (opts: { commit?: () => void }) => {
          hooks.interruptedCommit()
          opts.commit?.()
          return run({ commit: hooks.terminalCommit })
        }
        """
    ),
    "src/session/roles.ts": _ts(
        """
        import { Effect, Scope, pipe } from "effect"

        export const run = Effect.gen(function* () {
          yield* work().pipe(
            Effect.ensuring(Effect.sync(() => closeAll())),
            Effect.catchTags({ Lost: () => Effect.logError("lost") }),
          )
          const handle = yield* Effect.acquireRelease(open(), (h) => close(h))
          yield* Effect.onExit(step(), () => Effect.catchAll(flush(), () => Effect.forkDaemon(report())))
          yield* Effect.forkScoped(loop())
          yield* pipe(tick(), Effect.retryOrElse(policy, () => fallback()))
          if (ready) {
            yield* left()
          } else {
            yield* right()
          }
          yield* after()
        })
        """
    ),
    "src/runner/helpers.ts": _ts(
        """
        import { SessionExecutionClaim } from "../execution/claim"

        export function releaseClaim(db: Db, claim: Claim) {
          return SessionExecutionClaim.clear(db, claim)
        }
        """
    ),
    "src/runner/runner.ts": _ts(
        """
        import { Effect } from "effect"
        import { releaseClaim } from "./helpers"
        import * as Helpers from "./helpers"

        const clearNow = () => Helpers.releaseClaim(db, claim)

        export const stop = Effect.fn("Runner.stop")(function* () {
          yield* Effect.log("stopping")
          yield* releaseClaim(db, claim)
        })

        export const interrupt = Effect.fn("Runner.interrupt")(function* () {
          yield* coordinator.publish(Step.Interrupted, { commit: clearNow })
        })

        function ping(n: number): Effect.Effect<void> { return pong(n) }
        function pong(n: number): Effect.Effect<void> { return ping(n) }
        """
    ),
    "src/runner/durations.ts": _ts(
        """
        import { Duration, Schedule } from "effect"
        import { RENEW_MS, PERIOD } from "../execution/lease"

        export const a = Schedule.spaced("20 seconds")
        export const b = Schedule.spaced(Duration.seconds(20))
        export const c = Schedule.fixed(Duration.millis(RENEW_MS))
        export const d = Schedule.spaced(PERIOD)
        export const e = Schedule.spaced(RENEW_MS * 2)
        export const f = Duration.minutes(2)
        export const g = Schedule.spaced(unknownThing)
        export const h = "500 millis"
        """
    ),
    "src/util/mutex.ts": _ts(
        """
        interface KeyedMutex<Key>> {
          lock(key: Key): void
        }
        export type * from "./types"
        // SessionExecutionClaim.clear(db) in a comment
        const s = "SessionExecutionClaim.clear(db)"
        const t = `SessionExecutionClaim.clear(${s})`
        export const run = Effect.gen(function* () {
          yield* SessionExecutionClaim.clear(db, claim)
        })
        """
    ),
    "src/ui/view.tsx": _ts(
        """
        export const View = () => <button onClick={() => start()}>{label()}</button>
        """
    ),
    "src/session/schema.json": "{}\n",
}

PUBLISH = "src/session/publish.ts"
ROLES = "src/session/roles.ts"
RUNNER = "src/runner/runner.ts"


@pytest.fixture
def program() -> Program:
    return Program(FILES.get, {PUBLISH: frozenset({14}), RUNNER: frozenset({5, 6})})


def _one(calls: list, **expected: object) -> object:
    matches = [c for c in calls if all(getattr(c, k) == v for k, v in expected.items())]
    assert len(matches) == 1, (expected, calls)
    return matches[0]


# -- modules, imports, resolution ---------------------------------------------------


def test_module_reads_imports_and_self_namespace(program: Program) -> None:
    claim = program.module("src/execution/claim.ts")
    assert claim is not None and claim.namespace == "SessionExecutionClaim"
    publish = program.module(PUBLISH)
    assert publish is not None and publish.namespace is None and not publish.has_errors
    assert publish.imports["Claim"] == Import(
        local="Claim", specifier="../execution/claim", module="src/execution/claim.ts", imported="SessionExecutionClaim"
    )
    assert publish.imports["Sql"] == Import(local="Sql", specifier="./sql", module="src/session/sql.ts", imported="*")
    assert publish.imports["E"] == Import(local="E", specifier="effect", module=None, imported="Effect")
    assert publish.imports["ExecutionClaim"].module == "src/execution/index.ts"


def test_module_is_cached_and_only_for_typescript(program: Program) -> None:
    assert program.module(PUBLISH) is program.module(PUBLISH)
    assert program.module("src/session/schema.json") is None
    assert program.module("src/session/missing.ts") is None
    assert program.module("src/ui/view.tsx") is not None


def test_resolve_relative_specifiers(program: Program) -> None:
    assert program.resolve(PUBLISH, "../execution/claim") == "src/execution/claim.ts"
    assert program.resolve(PUBLISH, "../execution") == "src/execution/index.ts"
    assert program.resolve(PUBLISH, "../execution/claim.js") == "src/execution/claim.ts"
    assert program.resolve(PUBLISH, "./schema.json") == "src/session/schema.json"
    assert program.resolve(PUBLISH, "./nope") is None
    assert program.resolve(PUBLISH, "effect") is None
    assert program.resolve("a.ts", "../../outside") is None


# -- calls and callee names -----------------------------------------------------------


def test_release_found_however_imported_but_not_in_comments_or_strings(program: Program) -> None:
    calls = program.calls("SessionExecutionClaim.clear", [PUBLISH])
    assert [(c.line, c.callee_text) for c in calls] == [
        (14, "Claim.clear"),  # aliased named import of the self re-exported namespace
        (25, "ExecutionClaim.clear"),  # namespace re-exported from the index
        (28, "wipe"),  # aliased import of the exported function
    ]
    # the method is the last segment of the resolved name, not of the local alias
    assert [c.method for c in calls] == ["clear", "clear", "clear"]


def test_namespace_imports_and_package_aliases(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    renew = _one(calls, line=18, method="renew")
    assert renew.callee == "SessionExecutionClaim.renew"  # `import * as Claims` of a self-namespaced module
    assert _one(calls, line=27, method="limit").args[0].member_path == "Sql.LIMIT"
    assert _one(calls, line=19, method="catchTag").callee == "Effect.catchTag"  # `Effect as E`
    assert _one(calls, line=17, callee_text='E.fn("Publish.interrupt")').callee == "Effect.fn()"
    # `import * as Stream from "effect/Stream"` reads as the module's name
    assert _one(calls, line=31, method="runDrain").callee == "Stream.runDrain"


def test_calls_inside_own_module_use_its_namespace(program: Program) -> None:
    claim = program.module("src/execution/claim.ts")
    assert [(c.line, c.callee) for c in claim.calls()] == [
        (4, "Effect.sync"),
        (4, "db.delete"),
        (5, "Effect.sync"),
        (5, "db.update"),
        (7, "SessionExecutionClaim.clear"),
    ]


def test_member_chain(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    limit = _one(calls, line=27, method="limit")
    assert limit.callee == "db.select().from().where().orderBy().limit"
    assert [c.method for c in limit.chain] == ["select", "from", "where", "orderBy", "limit", "all"]
    select = limit.chain[0]
    assert select.callee == "db.select" and select.chain == limit.chain
    from_ = limit.chain[1]
    assert from_.receiver is not None and from_.receiver.call is select
    assert from_.args[0].identifier == "SessionExecutionTable"
    assert select.receiver is not None and select.receiver.identifier == "db"
    order = limit.chain[3]
    assert order.args[0].call.args[0].member_path == "SessionExecutionTable.wake_attempts"
    assert program.value(PUBLISH, limit.args[0].member_path) == 100


def test_pipe_stages_method_and_function_form(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    renew = _one(calls, line=18, method="renew")
    pipe_call = renew.chain[-1]
    assert pipe_call.method == "pipe"
    assert [s.normalized for s in pipe_call.pipe_stages] == ['E.repeat(Schedule.spaced("20 seconds"))', "E.forkScoped"]
    assert [s.qualified for s in pipe_call.pipe_stages] == ["Effect.repeat()", "Effect.forkScoped"]
    assert renew.piped_into == pipe_call.pipe_stages
    assert renew.pipe_stages == ()
    source = _one(calls, line=31, method="source")
    assert [s.normalized for s in source.piped_into] == ["Stream.take(3)"]
    pipe_fn = _one(calls, line=31, method="pipe")
    assert pipe_fn.callee == "pipe" and [s.normalized for s in pipe_fn.pipe_stages] == ["Stream.take(3)"]


# -- roles and case labels ---------------------------------------------------------


def test_roles_of_handlers_finalizers_hooks_and_forks(program: Program) -> None:
    calls = program.module(ROLES).calls()
    role = {c.callee_text: c.roles for c in calls}
    assert role["work"] == ()
    assert role["Effect.sync"] == (Role.FINALIZER,)  # ensuring argument
    assert role["closeAll"] == (Role.FINALIZER,)
    assert role["Effect.logError"] == (Role.FAILURE_HANDLER,)  # catchTags object value
    assert role["open"] == ()
    assert role["close"] == (Role.FINALIZER,)  # acquireRelease release
    assert role["step"] == ()  # the effect onExit observes is not the finalizer
    assert role["flush"] == (Role.FINALIZER,)
    assert role["Effect.forkDaemon"] == (Role.FAILURE_HANDLER, Role.FINALIZER)
    assert role["report"] == (Role.FORKED, Role.FAILURE_HANDLER, Role.FINALIZER)  # innermost first
    assert role["loop"] == (Role.FORKED,)
    assert role["tick"] == ()
    assert role["fallback"] == (Role.FAILURE_HANDLER,)  # retryOrElse fallback in pipe(...)
    report = _one(calls, callee_text="report")
    assert report.role is Role.FORKED
    assert _one(calls, callee_text="work").role is Role.ORDINARY


def test_roles_in_publish_flow(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    assert _one(calls, method="updateExecution").roles == (Role.COMMIT_HOOK,)
    assert _one(calls, line=14).role is Role.COMMIT_HOOK
    assert _one(calls, line=18, method="renew").role is Role.FORKED  # piped into E.forkScoped
    assert _one(calls, line=18, method="spaced").role is Role.FORKED
    assert _one(calls, line=18, method="pipe").role is Role.ORDINARY
    assert _one(calls, line=19, method="logWarning").role is Role.FAILURE_HANDLER
    assert _one(calls, line=19, method="pipe").role is Role.ORDINARY
    functions = program.module(PUBLISH).functions()
    assert [(f.name, f.kind, f.line, f.role) for f in functions] == [
        ("terminalCommit", "arrow", 13, Role.COMMIT_HOOK),
        ("interruptedCommit", "arrow", 14, Role.COMMIT_HOOK),
        ("interruptAssistant", "generator", 17, Role.ORDINARY),
        (None, "arrow", 19, Role.FAILURE_HANDLER),
    ]
    assert functions[3].parent is functions[2]


def test_case_labels(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    fail = _one(calls, method="failAssistant")
    assert fail.case_label == "provider-error" and fail.role is Role.FAILURE_HANDLER
    finish = _one(calls, line=25)
    assert finish.case_label == "finish" and finish.role is Role.ORDINARY
    assert _one(calls, method="publish").case_label is None


def test_custom_role_table() -> None:
    files = {"x.ts": "export const f = () => Retry.withFallback(attempt(), () => fallback()).pipe(Effect.catchAll(() => h()))\n"}
    table = RoleTable(failure_handlers={"Retry.withFallback": "1"}, finalizers={}, forks=frozenset(), commit_hooks=frozenset())
    calls = Program(files.get, roles=table).module("x.ts").calls()
    roles = {c.callee: c.roles for c in calls}
    assert roles["fallback"] == (Role.FAILURE_HANDLER,)
    assert roles["attempt"] == ()
    assert roles["h"] == ()  # Effect.catchAll is not in this table
    assert DEFAULT_ROLES.failure_handlers["Effect.catchTag"] == "last"
    assert "Effect.ignore" not in DEFAULT_ROLES.failure_handlers


# -- order inside Effect.gen -----------------------------------------------------------


def test_precedes_inside_effect_gen(program: Program) -> None:
    calls = program.module(PUBLISH).calls()
    renew = _one(calls, line=18, method="renew")
    publish = _one(calls, method="publish")
    fail = _one(calls, method="failAssistant")
    finish = _one(calls, line=25)
    wipe = _one(calls, line=28)
    hook_clear = _one(calls, line=14)
    assert renew.precedes(publish) and not publish.precedes(renew)
    assert publish.precedes(wipe)
    assert not fail.precedes(finish) and not finish.precedes(fail)  # different switch cases
    assert not hook_clear.precedes(wipe)  # different functions
    handler = _one(calls, line=19, method="logWarning")  # inside the catchTag arrow
    outer = renew.enclosing
    assert not handler.precedes(wipe) and handler.precedes(wipe, within=outer)
    assert not wipe.precedes(handler, within=outer)
    assert not hook_clear.precedes(wipe, within=outer)  # not inside `outer` at all
    assert (renew.index, publish.index, fail.index, finish.index, wipe.index) == (1, 6, 7, 8, 19)
    assert renew.statement_index == (0,) and fail.statement_index == (3, 0) and wipe.statement_index == (5,)
    assert renew.enclosing is not None and renew.enclosing.name == "interruptAssistant"

    branches = {c.callee: c for c in program.module(ROLES).calls()}
    assert not branches["left"].precedes(branches["right"])  # if / else
    assert branches["left"].precedes(branches["after"]) and branches["right"].precedes(branches["after"])
    assert branches["work"].precedes(branches["left"])


# -- callbacks and invocations across files ----------------------------------------------


def test_callbacks_across_files(program: Program) -> None:
    paths = ["src/session/events.ts", PUBLISH]
    interrupted = program.callbacks("interruptedCommit", paths)
    assert [(c.path, c.line) for c in interrupted] == [(PUBLISH, 14)]
    hook = interrupted[0]
    assert hook.value.kind == "arrow_function" and hook.owner.kind == "object" and hook.owner.line == 12
    assert hook.function is not None and hook.function.name == "interruptedCommit"
    assert [c.callee for c in hook.function.calls] == ["SessionExecutionClaim.clear"]

    commits = program.callbacks("commit", paths)
    assert [(c.path, c.line, c.value.member_path) for c in commits] == [
        ("src/session/events.ts", 6, "hooks.terminalCommit"),
        (PUBLISH, 20, "hooks.interruptedCommit"),
    ]
    # defined in publish.ts, handed on in events.ts
    assert commits[0].function is not None and (commits[0].function.path, commits[0].function.line) == (PUBLISH, 13)
    assert commits[1].function is None  # `hooks` there is a parameter: nothing to resolve statically


def test_invocations_across_files(program: Program) -> None:
    paths = [PUBLISH, "src/session/events.ts"]
    found = program.invocations("interruptedCommit", paths)
    assert [(i.path, i.line, i.call.callee if i.call else None) for i in found] == [
        ("src/session/events.ts", 4, "hooks.interruptedCommit"),
        (PUBLISH, 20, "events.publish"),
    ]
    assert found[1].enclosing is not None and found[1].enclosing.name == "interruptAssistant"
    assert found[1].expr.member_path == "hooks.interruptedCommit"
    optional = program.invocations("commit", paths)
    assert [(i.line, i.call.callee_text) for i in optional] == [(5, "opts.commit")]


# -- definitions and reachability -------------------------------------------------------


def test_function_lookup_by_name(program: Program) -> None:
    stop = program.function(RUNNER, "stop")
    assert stop is not None and (stop.name, stop.kind, stop.line, stop.end_line) == ("stop", "generator", 7, 10)
    assert [c.callee for c in stop.calls] == ["Effect.log", "releaseClaim"]
    release = program.function("src/execution/claim.ts", "release")
    assert release is not None and release.kind == "function" and release.line == 6
    run = program.function(ROLES, "run")
    assert run is not None and run.kind == "generator" and run.line == 3
    assert program.function(ROLES, "handle") is None  # not top-level
    clear_now = program.function(RUNNER, "clearNow")
    assert clear_now is not None and clear_now.kind == "arrow" and clear_now.changed
    assert not stop.changed
    assert stop.body_text_normalized == '{yield*Effect.log("stopping")yield*releaseClaim(db,claim)}'
    assert len(run.all_calls) > len(run.calls)


def test_definition_follows_imports(program: Program) -> None:
    for local in ("Claim.clear", "wipe", "Claims.clear", "ExecutionClaim.clear"):
        found = program.definition(PUBLISH, local)
        assert found is not None and (found.path, found.name, found.line) == ("src/execution/claim.ts", "clear", 4), local
    helper = program.definition(RUNNER, "Helpers.releaseClaim")
    assert helper is not None and (helper.path, helper.line) == ("src/runner/helpers.ts", 3)
    hook = program.definition("src/session/events.ts", "hooks.interruptedCommit")
    assert hook is not None and (hook.path, hook.line) == (PUBLISH, 14)
    assert program.definition(PUBLISH, "events.publish") is None
    assert program.definition(PUBLISH, "E.gen") is None


def test_reaches_across_files_through_helper(program: Program) -> None:
    stop = program.function(RUNNER, "stop")
    paths = program.reaches(stop, "SessionExecutionClaim.clear")
    assert [[(c.path, c.line, c.callee) for c in path] for path in paths] == [
        [(RUNNER, 9, "releaseClaim"), ("src/runner/helpers.ts", 4, "SessionExecutionClaim.clear")]
    ]


def test_reaches_through_callback_in_object_literal(program: Program) -> None:
    interrupt = program.function(RUNNER, "interrupt")
    paths = program.reaches(interrupt, ["SessionExecutionClaim.clear"])
    assert [[(c.line, c.callee) for c in path] for path in paths] == [
        [(13, "coordinator.publish"), (5, "Helpers.releaseClaim"), (4, "SessionExecutionClaim.clear")]
    ]
    assert program.reaches(interrupt, "SessionExecutionClaim.clear", max_depth=1) == []


def test_reaches_from_expression_and_cycles(program: Program) -> None:
    hook = program.callbacks("interruptedCommit", [PUBLISH])[0]
    paths = program.reaches(hook.value, "db.delete")
    assert [[(c.path, c.line) for c in path] for path in paths] == [[(PUBLISH, 14), ("src/execution/claim.ts", 4)]]
    assert program.reaches(program.function(RUNNER, "ping"), "never.called") == []


# -- values and durations ---------------------------------------------------------------


def test_constant_folding_through_imports(program: Program) -> None:
    assert program.value("src/execution/lease.ts", "SESSION_EXECUTION_LEASE_MS") == 30000
    assert program.value("src/execution/lease.ts", "RENEW_MS") == 10000
    assert program.value(PUBLISH, "LEASE_MS") == 30000  # aliased re-export from the index
    assert program.value(PUBLISH, "RENEW_MS") == 10000  # `export *` from the index
    assert program.value(PUBLISH, "Sql.LIMIT") == 100
    assert program.value("src/execution/lease.ts", "PERIOD") == "20 seconds"
    assert program.value(PUBLISH, "nothing") is None
    assert program.value(PUBLISH, "hooks") is None


def test_durations(program: Program) -> None:
    module = program.module("src/runner/durations.ts")
    expected = {
        "a": 20000.0,
        "b": 20000.0,
        "c": 10000.0,
        "d": 20000.0,
        "e": 20000.0,
        "f": 120000.0,
        "g": None,
        "h": 500.0,
    }
    got = {name: program.duration_ms(module.constant(name)) for name in expected}
    assert got == expected
    spaced = _one(program.module(PUBLISH).calls(), method="spaced")
    assert program.duration_ms(spaced.expr) == 20000.0
    assert program.duration_ms(spaced.args[0]) == 20000.0


# -- expressions -------------------------------------------------------------------------


def test_expression_accessors(program: Program) -> None:
    publish = program.module(PUBLISH)
    hooks = publish.constant("hooks")
    assert hooks is not None and hooks.kind == "object" and (hooks.line, hooks.end_line) == (12, 15)
    assert [key for key, _ in hooks.props] == ["terminalCommit", "interruptedCommit"]
    assert hooks.changed  # line 14 was added by the patch
    update = _one(publish.calls(), method="updateExecution")
    record = update.args[0]
    assert record.prop("phase").string_value == "safe"
    assert record.prop("assistant_message_id").kind == "null"
    assert record.prop("missing") is None
    assert update.enclosing is not None and update.args[0].enclosing_function is update.enclosing
    seconds = _one(program.module("src/runner/durations.ts").calls(), method="seconds")
    assert seconds.args[0].number_value == 20 and seconds.args[0].kind == "number"
    assert _one(publish.calls(), line=14).changed and not _one(publish.calls(), line=28).changed
    assert _one(publish.calls(), line=19, method="catchTag").args[0].string_value == "Lost"


def test_normalized_ignores_layout_and_comments() -> None:
    files = {
        "a.ts": "f(a,  b, /* why */ c)\n",
        "b.ts": "f(\n  a, // first\n  b,\n  c,\n)\n",
    }
    program = Program(files.get)
    (one,) = program.module("a.ts").calls()
    (two,) = program.module("b.ts").calls()
    assert one.normalized == "f(a,b,c)"
    assert two.normalized == "f(a,b,c,)"
    assert (two.line, two.end_line) == (1, 5)


# -- parse errors -----------------------------------------------------------------------


def test_parse_errors_are_reported_and_later_calls_still_found(program: Program) -> None:
    path = "src/util/mutex.ts"
    assert program.parse_errors(path) == ((1, 1), (4, 4))
    module = program.module(path)
    assert module is not None and module.has_errors
    assert [(c.line, c.callee) for c in module.calls()] == [(8, "Effect.gen"), (9, "SessionExecutionClaim.clear")]
    assert program.function(path, "run") is not None
    assert program.parse_errors(PUBLISH) == ()
    assert program.parse_errors("src/session/missing.ts") == ()


def test_tsx_uses_the_tsx_grammar(program: Program) -> None:
    path = "src/ui/view.tsx"
    assert program.parse_errors(path) == ()
    assert [c.callee for c in program.module(path).calls()] == ["start", "label"]
    assert program.function(path, "View") is not None


# -- what becomes of a call's value; local constants; namespace blocks -------------------------

GEN = _ts(
    """
    import { Effect, pipe } from "effect"

    export const run = Effect.gen(function* () {
      const BATCH = 25
      const beat = yield* renew(db, claim).pipe(Effect.repeat(s), Effect.forkScoped)
      yield* Effect.forkScoped(Effect.repeat(tick(), s))
      other = yield* pipe(work(), Effect.fork)
      const rows = yield* db.select().from(T).limit(BATCH * 2).all()
      return yield* finish()
    })
    """
)


def test_binding_and_host_of_calls() -> None:
    program = Program({"gen.ts": GEN}.get)
    calls = {c.callee: c for c in program.module("gen.ts").calls()}
    assert calls["renew"].binding == ("bound", "beat")  # through `.pipe(..)` and `yield*`
    assert calls["renew"].role is Role.FORKED
    assert calls["Effect.forkScoped"].binding == ("discarded", None)
    assert calls["tick"].host is calls["Effect.repeat"] and calls["Effect.repeat"].host is calls["Effect.forkScoped"]
    assert calls["tick"].role is Role.FORKED  # data-first fork argument
    assert calls["work"].binding == ("bound", "other") and calls["work"].role is Role.FORKED
    assert calls["db.select"].binding == ("bound", "rows")
    assert calls["finish"].binding == ("returned", None)
    assert calls["renew"].host is None


def test_fold_sees_local_constants_and_parameters_shadow() -> None:
    files = {
        "gen.ts": GEN,
        "shadow.ts": "const LIMIT = 10\nexport const f = (LIMIT: number) => q.limit(LIMIT)\nexport const g = () => q.limit(LIMIT)\n",
    }
    program = Program(files.get)
    limit = _one(program.module("gen.ts").calls(), method="limit")
    assert program.fold(limit.args[0]) == 50
    shadowed, plain = [c for c in program.module("shadow.ts").calls()]
    assert program.fold(shadowed.args[0]) is None  # the parameter, not the module constant
    assert program.fold(plain.args[0]) == 10


def test_namespace_blocks() -> None:
    files = {
        "s.ts": _ts(
            """
            export namespace Session {
              export const get = fn(Identifier.schema("session"), async (id) => {
                return Storage.read(["session", id])
              })
              export async function remove(id: string) {
                const s = await get(id)
                await Storage.remove(["session", id])
              }
            }
            """
        ),
        "u.ts": 'import { Session } from "./s"\nexport async function run() { await Session.remove("x") }\n',
    }
    program = Program(files.get)
    assert [(c.line, c.callee) for c in program.module("s.ts").calls()] == [
        (2, "fn"),
        (2, "Identifier.schema"),
        (3, "Storage.read"),
        (6, "Session.get"),  # bare `get` inside the namespace that declares it
        (7, "Storage.remove"),
    ]
    remove = program.definition("u.ts", "Session.remove")
    assert remove is not None and (remove.name, remove.line) == ("remove", 5)
    paths = program.reaches(program.function("u.ts", "run"), "Storage.read")
    assert [[(c.path, c.line) for c in path] for path in paths] == [[("u.ts", 2), ("s.ts", 6), ("s.ts", 3)]]


def test_resolve_never_reads_non_typescript_targets() -> None:
    read: list[str] = []
    files = {"src/a.ts": 'import logo from "./logo.png"\nimport { x } from "./util.js"\n', "src/util.ts": "export const x = 1\n"}

    def source(path: str) -> str | None:
        read.append(path)
        if path.endswith(".png"):
            raise AssertionError("a non-TypeScript import target was read")
        return files.get(path)

    program = Program(source, exists=lambda path: path in files or path == "src/logo.png")
    assert program.resolve("src/a.ts", "./logo.png") == "src/logo.png"  # known from the listing
    assert program.resolve("src/a.ts", "./missing.png") is None
    assert program.resolve("src/a.ts", "./util.js") == "src/util.ts"
    assert not any(p.endswith(".png") for p in read)


# ------------------------------------------------------------------ deep inputs (linear work, no recursion)
# tests/test_pathological.py reviews the same shapes end to end and bounds how
# the work grows; these check what the model answers on them.


def _chain_program(links: int) -> Program:
    source = 'import { Effect } from "effect"\nexport const x = Effect.succeed(1)\n' + "  .pipe(Effect.orDie)\n" * links
    return Program({"chain.ts": source}.get)


def test_deep_chain_is_one_shared_chain_answered_from_a_parent_map() -> None:
    from reviewer.typescript.index import DEEP

    links = 3_000
    module = _chain_program(links).module("chain.ts")
    calls = module.calls()
    assert len(calls) == links + 1
    index = module.index
    assert index.depth > DEEP
    outer, root = calls[0], calls[-1]  # pre-order: the last link first, `Effect.succeed(1)` last
    assert root.callee == "Effect.succeed" and root.chain[0] is root
    # one tuple for every link, each knowing its place
    assert root.chain is outer.chain and len(root.chain) == links + 1
    assert [c.chain_position for c in (root, calls[1], outer)] == [0, links - 1, links]
    assert root.binding == ("bound", "x") and outer.binding == ("bound", "x")
    assert root.host is None and outer.host is None
    assert len(root.piped_into) == links and all(s.normalized == "Effect.orDie" for s in root.piped_into)
    assert index._parents is not None  # deep: parents came from the map, not tree-sitter's root-down search
    assert outer.enclosing is None and outer.expr.enclosing_function is None


def test_deep_chain_names_stay_bounded() -> None:
    from reviewer.typescript.calls import _MAX_CHAIN, _MAX_UNNAMED

    links = 2_000
    calls = _chain_program(links).module("chain.ts").calls()
    by_depth = list(reversed(calls))  # innermost first
    # named through at most _MAX_CHAIN calls below: `Effect.succeed().pipe().pipe ...`
    assert by_depth[1].callee == "Effect.succeed().pipe"
    assert by_depth[_MAX_CHAIN].callee == "Effect.succeed()" + ".pipe()" * (_MAX_CHAIN - 1) + ".pipe"
    # deeper links are unnamed: their source, cut around `…`, never the whole chain per link
    deep = by_depth[_MAX_CHAIN + 1]
    assert deep.callee.startswith("Effect.succeed(1).pipe(Effect.orDie)") and "…" in deep.callee
    assert all(len(c.callee) <= _MAX_UNNAMED and c.method == "pipe" for c in by_depth[1:])
    assert len(calls[0].callee_text) <= 4096 and calls[0].callee_text.endswith(".pipe")
    assert len(calls[0].normalized) > 30_000  # the full normal form is still there when asked for


def test_call_names_do_not_depend_on_the_order_they_are_asked_in(program: Program) -> None:
    """The walk names callees through a memo; the answer is `qualified_name`'s, chain by chain."""
    from reviewer.typescript import calls as cx
    from reviewer.typescript import syntax as sx

    for path in sorted(FILES):
        module = program.module(path)
        if module is None:
            continue
        for call in reversed(module.calls()):
            assert call.callee == (cx.qualified_name(module, sx.field(call._node, "function")) or call.callee)
            assert cx.call_name(module, call._node, {}) == cx.qualified_name(module, sx.field(call._node, "function"))


def test_shared_chains_equal_each_calls_own_chain(program: Program) -> None:
    from reviewer.typescript import calls as cx

    cases = dict(FILES)
    cases["casts.ts"] = "const a = (db.select() as any).from(t).where(w)\nconst b = (q.a().b)().c()\n"
    program = Program(cases.get)
    for path in sorted(cases):
        module = program.module(path)
        if module is None:
            continue
        index = module.index
        for call in module.calls():
            own = tuple(c for c in (index.call_at(n) for n in cx.chain_nodes(call._node)) if c is not None)
            assert call.chain == own, (path, call.line, call.callee)
            assert own[call.chain_position] is call
            assert call.chain_from_here == own[call.chain_position :]


def test_precedes_is_decided_at_the_common_ancestor() -> None:
    source = _ts(
        """
        const f = Effect.gen(function* () {
          if (a) { yield* one() } else { yield* two() }
          const v = c ? three() : four()
          switch (k) { case "x": five(); break; default: six() }
          seven(eight(), nine())
        })
        """
    )
    calls = {c.callee: c for c in Program({"p.ts": source}.get).module("p.ts").calls()}
    assert not calls["one"].precedes(calls["two"]) and calls["one"].precedes(calls["three"])
    assert not calls["three"].precedes(calls["four"]) and calls["four"].precedes(calls["five"])
    assert not calls["five"].precedes(calls["six"]) and calls["eight"].precedes(calls["nine"])
    assert not calls["eight"].precedes(calls["seven"])  # `seven(..)` starts before its arguments


def test_exits_of_a_long_else_if_chain_share_their_guards() -> None:
    from reviewer.typescript import exits

    branches = 3_000  # nests far deeper than Python's recursion limit
    source = (
        "export const h = (e: any) => {\n  if (e.t === 0) return Effect.void\n"
        + "".join(f"  else if (e.t === {i}) return Effect.void\n" for i in range(1, branches))
        + "  return Effect.fail(e)\n}\n"
    )
    function = Program({"h.ts": source}.get).module("h.ts").functions()[0]
    found = exits(function)
    assert len(found) == branches + 1 and found[-1].value.normalized == "Effect.fail(e)"
    assert [len(e.guards) for e in found[:3]] == [1, 2, 3] and len(found[-2].guards) == branches
    assert len(found[-1].guards) == 0  # an `if` with an `else` is no early exit
    assert [g.holds for g in found[2].guards] == [False, False, True]
    assert found[1].guards == tuple(found[1].guards) and list(found[1].guards)[0] == found[2].guards[0]

    def world(atom):  # e.t is 7
        return atom.right.number_value == 7 if atom.operator == "===" else None

    for end in (found[0], found[7], found[8], found[-1]):
        assert end.guards.all_admit(world) == all(g.admits(world) for g in end.guards)
    assert [e.guards.all_admit(world) for e in found[:-1]].count(True) == 1


def test_long_conditions_and_ternaries_do_not_recurse() -> None:
    from reviewer.typescript import Expr, evaluate, exits

    terms = 3_000
    source = (
        "export const h = (e: any) => {\n  if ("
        + " || ".join(f'e._tag === "T{i}"' for i in range(terms))
        + ") return Effect.void\n  return "
        + "".join(f'e.k === {i} ? Effect.die(e) : ' for i in range(terms))
        + "Effect.fail(e)\n}\n"
    )
    function = Program({"h.ts": source}.get).module("h.ts").functions()[0]
    found = exits(function)
    assert len(found) == terms + 2 and len(found[-1].guards) == 1 + terms  # the early exit, then each `:`
    test = found[0].guards[0].test
    assert isinstance(test, Expr)
    tagged = lambda tag: lambda atom: (atom.right.string_value == tag) if atom.operator == "===" else None  # noqa: E731
    assert evaluate(test, tagged("T2999")) is True and evaluate(test, tagged("other")) is False


def test_deep_namespace_blocks_are_read_without_recursion() -> None:
    depth = 2_000
    source = "namespace N {\n" * depth + "export const v = f()\n" + "}\n" * depth
    module = Program({"n.ts": source}.get).module("n.ts")
    assert module.has_namespace_blocks and "N" in module.declarations
    assert "N." * 31 + "N" in module.declarations and "N." * 40 + "N" not in module.declarations
    (call,) = module.calls()
    assert call.callee == "f"


def test_calls_within_is_the_calls_inside_a_node(program: Program) -> None:
    for path in sorted(FILES):
        module = program.module(path)
        if module is None:
            continue
        everything = module.calls()
        for function in module.functions():
            node = function._node
            naive = tuple(
                c for c in everything if node.start_byte <= c._node.start_byte and c._node.end_byte <= node.end_byte
            )
            assert function.all_calls == naive


def test_remembered_guard_paths_equal_a_walk_up_from_each_call() -> None:
    """guard_path remembers every node's guards; each call's must be what walking up finds."""
    from reviewer.typescript import guard_path, guards
    from reviewer.typescript import syntax as sx
    from reviewer.typescript.statements import _guards_at

    source = _ts(
        """
        export const f = Effect.gen(function* (row: Row) {
          if (!row.live) return
          if (row.phase === "safe") {
            yield* one()
          } else if (row.phase === "ready") {
            yield* two()
          } else {
            yield* three()
          }
          const v = row.a ? four() : five()
          row.b && six()
          switch (row.kind) {
            case "x":
            case "y":
              seven()
              if (row.c) break
              eight()
              break
            default:
              nine(() => { if (row.d) ten() })
          }
          eleven()
        })
        """
    )
    module = Program({"g.ts": source}.get).module("g.ts")
    outer = module.functions()[0]

    def walked(call, within):
        stop = within._node if within is not None else None
        out, child = [], call._node
        for parent in sx.ancestors(call._node):
            if parent == stop or (stop is None and sx.is_function(parent)):
                break
            out.extend(reversed(_guards_at(module, parent, child)))
            child = parent
        return tuple(reversed(out))

    calls = module.calls()
    for within in (None, outer):
        for call in reversed(calls):  # innermost and last first: the memo fills from below
            assert guards(call, within) == walked(call, within), call.callee
            assert tuple(guard_path(call, within)) == walked(call, within)
    tests = [g.test.normalized for g in guards(next(c for c in calls if c.callee == "ten"), outer)]
    assert tests == ["!row.live", "row.d"]  # the early exit, then the callback's own if


# -- one call, many spellings ---------------------------------------------------------------


def test_a_call_spelled_another_way_has_the_callee_and_arguments_of_the_plain_call() -> None:
    """In a vocabulary unlike opencode's: a lock store whose `drop` releases a lease."""
    files = {
        "lib/locks.ts": "export * as Locks from \"./locks\"\nexport const drop = (db: Db, lease: Lease) => db.unlock(lease)\n",
        "lib/job.ts": (
            'import { Locks as L } from "./locks"\n'
            "export const a = (db, lease) => L.drop(db, lease)\n"
            "export const b = (db, lease) => (0, L.drop)(db, lease)\n"
            "export const c = (db, lease) => L.dr\\u006fp(db, lease)\n"
            "export const d = (db, lease) => L.\\u{64}rop(db, lease)\n"
            "export const e = (db, lease) => L.drop.call(undefined, db, lease)\n"
            "export const f = (db, lease) => L.drop.apply(undefined, [db, lease])\n"
            "export const g = (db, lease) => L.drop.bind(undefined, db)(lease)\n"
            "export const h = (db, lease) => Reflect.apply(L.drop, undefined, [db, lease])\n"
            "export const i = (store, patch) => store.apply(patch)\n"
            "export const j = (client) => client.call(\"drop\")\n"
            "export const k = (db, lease) => Reflect.apply(Object.keys, undefined, [lease])\n"
            "export const l = (db, lease) => L.drop.call.call(L.drop, undefined, db, lease)\n"
            "export const m = (db, lease) => Function.prototype.call.call(L.drop, undefined, db, lease)\n"
            "export const n = (db, lease) => L.drop.bind(undefined).call(undefined, db, lease)\n"
            "export const o = (db, lease) => L.drop.bind(undefined, db).apply(undefined, [lease])\n"
            "export const p = (db, lease) => L.drop.call.apply(L.drop, [undefined, db, lease])\n"
            "export const q = (store, patch) => store.apply.call(store, patch)\n"
        ),
    }
    program = Program(files.get)
    module = program.module("lib/job.ts")
    outer = {}
    for call in module.calls():
        outer.setdefault(call.line, call)  # the outermost call of each line comes first
    spelled = {line: (call.callee, [a.normalized for a in call.args]) for line, call in outer.items()}
    for line in range(2, 10):
        assert spelled[line] == ("Locks.drop", ["db", "lease"]), (line, spelled[line])
    # Look-alikes: methods that share a name with Function.prototype's, and Reflect.apply of something else.
    assert spelled[10] == ("store.apply", ["patch"])
    assert spelled[11] == ("client.call", ['"drop"'])
    assert spelled[12][0] == "Reflect.apply"
    # Invokers of invokers run the function they are finally given.
    for line in range(13, 18):
        assert spelled[line] == ("Locks.drop", ["db", "lease"]), (line, spelled[line])
    assert spelled[18][0] == "store.apply.call"  # a method of a runtime object stays as written


def test_a_function_handed_over_as_a_value_is_what_the_call_runs() -> None:
    """Picked out of a literal, bound first and called later, or handed to a combinator that runs it:
    `Call.runs` names the lock store's `drop` every time, and nothing for look-alikes."""
    files = {
        "lib/locks.ts": "export * as Locks from \"./locks\"\nexport const drop = (db: Db, lease: Lease) => db.unlock(lease)\n"
                        "export const peek = (db: Db, lease: Lease) => db.read(lease)\n",
        "lib/job.ts": (
            'import { Locks as L } from "./locks"\n'
            "export const a = (db, lease) => [L.drop][0](db, lease)\n"
            "export const b = (db, lease) => ({ go: L.drop }).go(db, lease)\n"
            "export const c = (db, leases) => Effect.forEach(leases, L.drop.bind(null, db))\n"
            "export const d = (leases) => leases.map(L.drop)\n"
            "export const e = (db, lease) => { const f = L.drop.bind(undefined, db); return f(lease) }\n"
            "export const f = (db, lease) => { const g = [L.drop][0]; return g(db, lease) }\n"
            "export const g = (db, lease) => [L.peek][0](db, lease)\n"
            "export const h = (lease) => Effect.log(\"drop\", L.drop, lease)\n"
            "export const i = (db, leases) => Effect.forEach(leases, (lease) => L.peek(db, lease))\n"
            "export const j = (db, lease) => [L.drop, L.peek][1](db, lease)\n"
            "export const k = (db, lease, more) => ({ go: L.drop, ...more }).go(db, lease)\n"
        ),
    }
    program = Program(files.get)
    module = program.module("lib/job.ts")
    runs = {}
    for call in module.calls():
        runs.setdefault(call.line, set()).update(call.runs)
    for line in range(2, 8):
        assert "Locks.drop" in runs[line], (line, runs[line])
    assert "Locks.peek" in runs[8] and "Locks.drop" not in runs[8]
    assert "Locks.drop" not in runs[9]  # logged, not run
    assert "Locks.drop" not in runs[10]  # an inline function: its own call is the one that runs
    assert "Locks.peek" in runs[11] and "Locks.drop" not in runs[11]
    assert "Locks.drop" not in runs[12]  # a spread after the member may override it: not known


# -- code in other file kinds, loaded other ways ----------------------------------------------


def test_require_create_require_and_import_bind_names_like_an_import() -> None:
    files = {
        "src/a.ts": (
            'import { createRequire as make } from "node:module"\n'
            "const req = make(import.meta.url)\n"
            'const Claim = req("./claim.js")\n'
            'const { clear, drop: d } = require("./claim.js")\n'
            'const Lazy = await import("./claim.js")\n'
            'import Old = require("./claim.js")\n'
            'const notALoader = ((x: string) => x)("./claim.js")\n'
        ),
        "src/claim.js": "export const clear = (db, c) => db.delete(c)\nexport const drop = clear\n",
    }
    program = Program(files.get)
    module = program.module("src/a.ts")
    bound = {name: (i.module, i.imported) for name, i in module.imports.items() if name != "make"}
    assert bound == {
        "Claim": ("src/claim.js", "*"), "clear": ("src/claim.js", "clear"), "d": ("src/claim.js", "drop"),
        "Lazy": ("src/claim.js", "*"), "Old": ("src/claim.js", "*"),
    }
    assert module.requirers == frozenset({"req"})
    # The JavaScript file is a module of the program like any other.
    assert program.definition("src/a.ts", "d") is not None
    loads = sorted((c.line, c.loads) for c in module.calls() if c.loads is not None)
    assert loads == [(3, ("require", "./claim.js")), (4, ("require", "./claim.js")), (5, ("import", "./claim.js"))]


def test_javascript_is_source_unless_installed_or_minified() -> None:
    from reviewer.change.changeset import is_source

    # A folder's name decides nothing: a helper in `dist/` or `vendor/` runs like any other.
    for path in ("src/a.ts", "src/b.tsx", "src/c.js", "src/d.mjs", "src/e.cjs", "src/f.jsx", "dist/c.js",
                 "packages/x/build/c.mjs", "vendor/lib.js", "out/helper.js"):
        assert is_source(path), path
    for path in ("src/types.d.ts", "node_modules/p/index.js", "src/app.min.js", "README.md"):
        assert not is_source(path), path
