"""The value layer of the TypeScript model: roles by reference, members, values through a const, aliases."""

from __future__ import annotations

from reviewer.typescript import Program, Role, consumer, later_uses

HANDLERS = {
    "h.ts": (
        'import { Store } from "./store"\n'
        "export const onFailure = (e: unknown) => Store.fail(e)\n"
        "export function handle(ctx: string) { return (e: unknown) => Store.mark(ctx) }\n"
        "export const plain = () => Store.touch()\n"
    ),
    "a.ts": (
        'import { Effect } from "effect"\n'
        'import { onFailure, handle } from "./h"\n'
        'import { Claim } from "./claim"\n'
        "const cleanup = Claim.release(db, claim)\n"
        "const local = (e: unknown) => Effect.log(e)\n"
        "export const run = (work: any, param: any) => work.pipe(\n"
        "  Effect.catchAll(onFailure),\n"
        "  Effect.catchAll(local),\n"
        "  Effect.ensuring(cleanup),\n"
        '  Effect.catchAll(handle("x")),\n'
        "  Effect.tapError(param),\n"
        "  Effect.orElse(Effect.void),\n"
        ")\n"
    ),
    "store.ts": "export const Store = { fail: (e: unknown) => 1, mark: (c: string) => 2, touch: () => 3 }\n",
    "claim.ts": "export const Claim = { release: (a: any, b: any) => 1 }\n",
}


def _roles(program: Program, path: str) -> dict[str, tuple[Role, ...]]:
    return {call.callee: call.roles for call in program.module(path).calls()}


def test_code_passed_by_name_runs_in_the_role_it_is_passed_into() -> None:
    program = Program(HANDLERS.get, changed_lines={"a.ts": [1]})
    here = _roles(program, "a.ts")
    assert here["Claim.release"] == (Role.FINALIZER,)  # a const handed to ensuring
    assert here["Effect.log"] == (Role.FAILURE_HANDLER,)  # a local function handed to catchAll
    there = _roles(program, "h.ts")
    assert there["Store.fail"] == (Role.FAILURE_HANDLER,)  # an imported handler
    assert there["Store.mark"] == (Role.FAILURE_HANDLER,)  # the function a curried call returns
    assert there["Store.touch"] == ()  # never passed anywhere
    # as written, none of them is in a handler
    assert all(call.local_roles == () for call in program.module("h.ts").calls())


def test_passing_sites_in_unchanged_files_give_no_role_to_other_files() -> None:
    program = Program(HANDLERS.get, changed_lines={"store.ts": [1]})
    assert _roles(program, "h.ts")["Store.fail"] == ()
    assert _roles(program, "a.ts")["Claim.release"] == (Role.FINALIZER,)  # same file: always read


def test_a_name_that_cannot_be_followed_is_unresolved_and_a_library_value_is_not() -> None:
    program = Program(HANDLERS.get, changed_lines={"a.ts": [11]})
    lost = program.unresolved_references("a.ts")
    assert [(u.text, u.role, u.combinator, u.line, u.changed) for u in lost] == [
        ("param", Role.FAILURE_HANDLER, "Effect.tapError", 11, True)
    ]


MEMBERS = {
    "lock.ts": (
        'import { Effect } from "effect"\n'
        "export class RunLock {\n"
        "  constructor(private db: any) {}\n"
        "  drop(c: any) { return Claim.release(this.db, c) }\n"
        "  free = (c: any) => Claim.release(this.db, c)\n"
        "  run(c: any) { return this.drop(c) }\n"
        "}\n"
        "export const makeStore = (db: any) => ({ release: (c: any) => Claim.release(db, c), note: () => 1 })\n"
        "export const makeSvc = (db: any) => Effect.gen(function* () {\n"
        "  const release = (c: any) => Claim.release(db, c)\n"
        "  return { release }\n"
        "})\n"
    ),
    "a.ts": (
        'import { Effect } from "effect"\n'
        'import { RunLock, makeStore, makeSvc } from "./lock"\n'
        "export const viaInstance = (db: any, c: any) => { const lock = new RunLock(db); lock.drop(c) }\n"
        "export const viaFactory = (db: any, c: any) => { const store = makeStore(db); store.release(c) }\n"
        "export const viaInline = (db: any, c: any) => new RunLock(db).free(c)\n"
        "export const viaGen = (db: any, c: any) => Effect.gen(function* () {\n"
        "  const svc = yield* makeSvc(db)\n"
        "  yield* svc.release(c)\n"
        "})\n"
        "export const lookAlike = (db: any, c: any) => { const store = makeStore(db); store.note() }\n"
        "export const param = (store: any, c: any) => store.release(c)\n"
    ),
}


def _first_hops(program: Program, name: str) -> set[str]:
    fn = program.function("a.ts", name)
    return {path[0].callee for path in program.reaches(fn, "Claim.release")}


def test_methods_of_instances_factories_and_this_are_entered() -> None:
    program = Program(MEMBERS.get, changed_lines={"a.ts": [1]})
    assert "lock.drop" in _first_hops(program, "viaInstance")
    assert "store.release" in _first_hops(program, "viaFactory")
    assert _first_hops(program, "viaInline") == {"new RunLock(db).free"}
    assert "svc.release" in _first_hops(program, "viaGen")
    assert "store.note" not in _first_hops(program, "lookAlike")
    assert _first_hops(program, "param") == set()  # a parameter's value is not written here
    run = next(f for f in program.module("lock.ts").functions() if f.name == "run")
    assert [[c.callee for c in p] for p in program.reaches(run, "Claim.release")] == [["this.drop", "Claim.release"]]


def test_a_cycle_of_factories_ends() -> None:
    files = {
        "a.ts": "const s = makeS()\n"
        "function makeS() { return s.make() }\n"
        "export const go = () => s.make().run()\n"
    }
    program = Program(files.get)
    assert program.reaches(program.function("a.ts", "go"), "never") == []


FLOW = (
    'import { Effect } from "effect"\n'
    "export const g = () => Effect.gen(function* () {\n"
    "  const once = Claim.renew(db, claim)\n"
    "  const loop = once.pipe(Effect.repeat(every))\n"
    "  const later = (once: any) => once.pipe(Effect.ignore)\n"
    "  {\n"
    "    const once = other()\n"
    "    yield* once.pipe(Effect.orDie)\n"
    "  }\n"
    "  yield* Effect.forkScoped(loop)\n"
    "})\n"
)


def test_later_uses_follow_a_const_and_skip_rebindings() -> None:
    program = Program({"a.ts": FLOW}.get)
    calls = {c.callee: c for c in program.module("a.ts").calls()}
    uses = later_uses(calls["Claim.renew"])
    assert [u.line for u in uses] == [4]  # not the parameter on line 5, not the block's own const
    taker = consumer(uses[0])
    assert taker is not None and taker.callee == "once.pipe"
    loop_uses = later_uses(taker)
    assert [consumer(u).callee for u in loop_uses] == ["Effect.forkScoped"]


def test_const_aliases_name_calls_like_what_they_alias() -> None:
    files = {
        "a.ts": 'import { Effect } from "effect"\n'
        'import { SessionExecutionClaim } from "./claim"\n'
        "const E = Effect\n"
        "const Claims = SessionExecutionClaim\n"
        "export const f = (db: any, c: any, ctx: any) => {\n"
        "  const { release, clear: drop } = SessionExecutionClaim\n"
        "  const conn = ctx.db\n"
        "  E.fork(x)\n"
        "  Claims.release(db, c)\n"
        "  release(db, c)\n"
        "  drop(db, c)\n"
        "  conn.select()\n"
        "  const g = (Claims: any) => Claims.release(1)\n"
        "}\n"
    }
    program = Program(files.get)
    assert [c.callee for c in program.module("a.ts").calls()] == [
        "Effect.fork",
        "SessionExecutionClaim.release",
        "SessionExecutionClaim.release",
        "SessionExecutionClaim.clear",
        "conn.select",  # a parameter's property is a runtime value, not a name
        "Claims.release",  # the parameter hides the alias
    ]


def test_a_parameter_passed_as_a_handler_is_what_its_call_sites_pass() -> None:
    files = {
        "g.ts": 'import { Effect } from "effect"\n'
        "export const guarded = (work: any, cleanup: any) => work.pipe(Effect.ensuring(cleanup))\n"
        "export const opaque = (work: any, cleanup: any) => work.pipe(Effect.ensuring(cleanup))\n",
        "a.ts": 'import { guarded, opaque } from "./g"\n'
        "export const go = (db: any, c: any) => guarded(run, Claim.release(db, c))\n"
        "export const passOn = (work: any, fin: any) => opaque(work, fin)\n",
    }
    program = Program(files.get, changed_lines={"a.ts": [1], "g.ts": [1]})
    calls = {c.callee: c for c in program.module("a.ts").calls()}
    assert calls["Claim.release"].roles == (Role.FINALIZER,)
    # `opaque` is called with a parameter of its caller, which nobody calls: not followed
    assert [(u.text, u.line) for u in program.unresolved_references("g.ts")] == [("cleanup", 3)]


def test_var_declarations_are_indexed_and_are_no_aliases() -> None:
    """`var` has no `kind` field in the grammar; reading it as one crashed the walk."""
    program = Program({"a.ts": "function f() { var x = 1; var E = Effect; E.fork(x) }\nvar y = 2\n"}.get)
    assert [c.callee for c in program.module("a.ts").calls()] == ["E.fork"]


def test_code_also_run_in_straight_line_code_is_not_confined_to_the_role_it_is_passed_into() -> None:
    """A hostile patch must not make a mid-run release pass as a finalizer by also handing it to one:
    it may run as a finalizer (`roles`), but not only as one (`confined_roles`)."""
    files = {
        "a.ts": 'import { Effect } from "effect"\n'
        "export const run = (db: any, c: any, work: any) => Effect.gen(function* () {\n"
        "  const cleanup = Claim.release(db, c)\n"
        "  yield* cleanup\n"
        "  yield* work.pipe(Effect.ensuring(cleanup))\n"
        "})\n"
        "const handBack = (_exit: unknown) => Claim.clear(db, c)\n"
        "export const early = (work: any) => Effect.gen(function* () {\n"
        "  yield* handBack(undefined)\n"
        "  yield* work.pipe(Effect.onExit(handBack))\n"
        "})\n"
        "const onlyPassed = (_exit: unknown) => Claim.drop(db, c)\n"
        "export const late = (work: any) => work.pipe(Effect.onExit(onlyPassed), Effect.onExit((e) => onlyPassed(e)))\n"
    }
    program = Program(files.get, changed_lines={"a.ts": [1]})
    calls = {c.callee: c for c in program.module("a.ts").calls()}
    for name in ("Claim.release", "Claim.clear", "Claim.drop"):
        assert calls[name].roles == (Role.FINALIZER,), name
    assert calls["Claim.release"].confined_roles == ()
    assert calls["Claim.clear"].confined_roles == ()
    assert calls["Claim.drop"].confined_roles == (Role.FINALIZER,)


def test_a_catch_tags_table_names_its_handlers_inline_by_shorthand_or_through_a_const() -> None:
    files = {
        "a.ts": 'import { Effect } from "effect"\n'
        "const LLMError = (e: unknown) => Store.fail(e)\n"
        "const Timeout = (e: unknown) => Store.late(e)\n"
        "const table = { Timeout }\n"
        "export const r = (w: any) => w.pipe(Effect.catchTags({ LLMError }), Effect.catchTags(table))\n"
        "export const plain = (w: any) => w.pipe(Effect.tap(Store.touch))\n"
    }
    program = Program(files.get, changed_lines={"a.ts": [1]})
    roles = {c.callee: c.roles for c in program.module("a.ts").calls()}
    assert roles["Store.fail"] == (Role.FAILURE_HANDLER,)
    assert roles["Store.late"] == (Role.FAILURE_HANDLER,)
    catch = next(c for c in program.module("a.ts").calls() if c.callee == "Effect.catchTags")
    assert [a.text for a in program.role_arguments(catch, Role.FAILURE_HANDLER)] == ["LLMError"]
    assert program.role_arguments(catch, Role.FINALIZER) == ()
    tap = next(c for c in program.module("a.ts").calls() if c.callee == "Effect.tap")
    assert program.role_arguments(tap, Role.FAILURE_HANDLER) == ()
