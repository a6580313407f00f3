"""Statement-level facts of the TypeScript model on real Effect-TS snippets.

Every expectation was worked out by hand from the snippet text; line numbers
are 1-based lines of the snippet as written (each starts on line 1).
"""

from __future__ import annotations

import textwrap

from reviewer.typescript import (
    Call,
    Program,
    Atom,
    assignments_in,
    block_exit,
    copied_from,
    runs_maybe,
    evaluate,
    exits,
    guards,
    jumps_past,
    names_in,
    statement_of,
    strings_in,
    throws,
    words_on_lines,
)


def _program(source: str, path: str = "x.ts") -> Program:
    text = textwrap.dedent(source).lstrip("\n")
    return Program({path: text}.get)


def _call(program: Program, callee: str, line: int | None = None, path: str = "x.ts") -> Call:
    found = [c for c in program.module(path).calls() if c.callee == callee and (line is None or c.line == line)]
    assert len(found) == 1, (callee, line, found)
    return found[0]


def _phase(value: str):
    """Decides atoms in a world where `row.phase === value` (any other atom is unknown)."""

    def decide(test: Atom) -> bool | None:
        if test.operator in ("===", "!==") and test.left.member_path == "row.phase" and test.right is not None:
            literal = test.right.string_value
            if literal is None:
                return None
            return (literal == value) == (test.operator == "===")
        return None

    return decide


# ------------------------------------------------------------------ evaluate


def test_evaluate_follows_not_and_or_and_leaves_unknown_atoms_unknown() -> None:
    program = _program(
        """
        if (!(row.phase === "safe" || row.phase === "interrupted") && ready) go()
        if (row.phase !== "safe" && other) go()
        """
    )
    tests = [g.test for c in program.module("x.ts").calls() for g in guards(c)]
    assert [t.line for t in tests] == [1, 2]
    assert evaluate(tests[0], _phase("safe")) is False  # !(true || ..) && ? -> false
    assert evaluate(tests[0], _phase("ready")) is None  # !(false || false) && ready(?) -> unknown
    assert evaluate(tests[1], _phase("safe")) is False
    assert evaluate(tests[1], _phase("ready")) is None


def test_evaluate_hands_instanceof_and_calls_to_decide() -> None:
    program = _program(
        """
        const h = (e) => (e instanceof Claim.Lost ? a() : Claim.Lost.is(e) ? b() : c())
        """
    )
    seen: list[tuple[str, str | None, str | None]] = []

    def decide(test: Atom) -> bool | None:
        seen.append((test.operator, test.left.normalized, test.right.normalized if test.right else None))
        return None

    for g in guards(_call(program, "c")):
        evaluate(g.test, decide)
    assert seen == [("instanceof", "e", "Claim.Lost"), ("", "Claim.Lost.is(e)", None)]


# ------------------------------------------------------------------ guards


def test_guards_of_if_else_ternary_logical_and_early_exits() -> None:
    program = _program(
        """
        function recover(row, claim) {
          if (row.phase === "ready") return
          for (const r of rows) {
            if (r.phase !== "safe") continue
            clear(r)
          }
          if (row.phase === "safe") {
            first()
          } else {
            second(row.phase === "x" ? third() : fourth())
          }
          ok && fifth()
        }
        """
    )
    clear = guards(_call(program, "clear"))
    assert [(g.kind, g.test.line, g.holds) for g in clear] == [("early-exit", 2, False), ("early-exit", 4, False)]
    assert [(g.kind, g.holds) for g in guards(_call(program, "first"))] == [("early-exit", False), ("if", True)]
    third = guards(_call(program, "third"))
    assert [(g.kind, g.test.normalized, g.holds) for g in third] == [
        ("early-exit", 'row.phase==="ready"', False),
        ("if", 'row.phase==="safe"', False),
        ("ternary", 'row.phase==="x"', True),
    ]
    assert [g.holds for g in guards(_call(program, "fourth"))][-1] is False
    fifth = guards(_call(program, "fifth"))
    assert [(g.kind, g.test.normalized, g.holds) for g in fifth][-1] == ("logical", "ok", True)
    # a world where the phase is "safe": clear() may run, first() may, second() may not
    safe = _phase("safe")
    assert all(g.admits(safe) for g in clear)
    assert all(g.admits(safe) for g in guards(_call(program, "first")))
    assert not all(g.admits(safe) for g in guards(_call(program, "second")))
    assert not all(g.admits(_phase("ready")) for g in clear)


def test_guards_of_switch_cases_include_fall_through_labels() -> None:
    program = _program(
        """
        function f(row) {
          switch (row.phase) {
            case "safe":
            case "interrupted":
              reconcile()
              break
            case "ready":
              drop()
              break
            default:
              other()
          }
        }
        """
    )
    (case,) = guards(_call(program, "reconcile"))
    assert case.kind == "case" and case.subject.normalized == "row.phase"
    assert [label.string_value for label in case.labels] == ["safe", "interrupted"]
    assert case.admits(_phase("safe")) and case.admits(_phase("interrupted"))
    assert not case.admits(_phase("ready"))
    (ready,) = guards(_call(program, "drop"))
    assert [label.string_value for label in ready.labels] == ["ready"]
    assert guards(_call(program, "other")) == ()


def test_guards_stop_at_the_function_unless_asked_to_go_further() -> None:
    program = _program(
        """
        const run = Effect.gen(function* () {
          if (enabled) {
            yield* Effect.forEach(rows, (row) => {
              if (row.live) return inner(row)
              return Effect.void
            })
          }
        })
        """
    )
    inner = _call(program, "inner")
    assert [g.test.normalized for g in guards(inner)] == ["row.live"]
    outer = program.module("x.ts").functions()[0]
    assert [g.test.normalized for g in guards(inner, within=outer)] == ["enabled", "row.live"]


# ------------------------------------------------------------------ block exits


def test_block_exit_and_jumps_past() -> None:
    program = _program(
        """
        const finish = Effect.fnUntraced(function* (error) {
          if (error !== undefined) {
            yield* failAssistant(error)
            return
          }
          if (late) return yield* failAssistant("late")
          yield* failAssistant("again")
          yield* endAssistant("done")
        })
        const publish = Effect.fnUntraced(function* (event) {
          for (const e of events) {
            switch (e.type) {
              case "provider-error":
                yield* failAssistant(e.message)
                break
            }
            yield* endAssistant("loop")
          }
          yield* endAssistant("after")
        })
        """
    )
    first, late, again = (_call(program, "failAssistant", line) for line in (3, 6, 7))
    end = _call(program, "endAssistant", 8)
    assert block_exit(first).kind == "return_statement" and block_exit(first).line == 4
    assert block_exit(late).line == 6  # the `return yield* ..` around the call
    assert block_exit(again) is None
    assert jumps_past(first, end) and jumps_past(late, end)
    assert not jumps_past(again, end)
    broken = _call(program, "failAssistant", 14)
    assert block_exit(broken).kind == "break_statement"
    # `break` leaves the switch only: code after it in the loop still runs
    assert not jumps_past(broken, _call(program, "endAssistant", 17))
    assert not jumps_past(broken, _call(program, "endAssistant", 19))


def test_statement_of() -> None:
    program = _program(
        """
        function f() {
          const beat = yield* renew().pipe(Effect.forkScoped)
          if (x) go()
          return () => inner()
        }
        """
    )
    assert statement_of(_call(program, "renew")).kind == "lexical_declaration"
    assert statement_of(_call(program, "go")).kind == "expression_statement"
    assert statement_of(_call(program, "inner")) is None  # an arrow's expression body


# ------------------------------------------------------------------ exits


def test_exits_of_a_handler_with_an_early_refail() -> None:
    program = _program(
        """
        const handler = (defect) => {
          if (!(defect instanceof Claim.Lost)) return Effect.die(defect)
          // The claim is gone already: nothing left to clean up.
          return Effect.void
        }
        """
    )
    fn = program.module("x.ts").functions()[0]
    found = exits(fn)
    assert [(e.kind, e.value.normalized if e.value else None, e.line) for e in found] == [
        ("return", "Effect.die(defect)", 2),
        ("return", "Effect.void", 4),
    ]
    assert [(g.kind, g.holds) for g in found[0].guards] == [("if", True)]
    assert [(g.kind, g.holds) for g in found[1].guards] == [("early-exit", False)]


def test_exits_split_ternaries_and_report_falling_off_the_end() -> None:
    program = _program(
        """
        const a = (e) => (e instanceof Lost ? Effect.void : Effect.fail(e))
        const b = (e) => {
          if (e._tag === "Lost") {
            log(e)
          } else {
            throw e
          }
        }
        const c = function* () {
          yield* Effect.log("x")
          return
        }
        """
    )
    a, b, c = program.module("x.ts").functions()
    assert [(e.kind, e.value.normalized, [g.holds for g in e.guards]) for e in exits(a)] == [
        ("expression", "Effect.void", [True]),
        ("expression", "Effect.fail(e)", [False]),
    ]
    assert [(e.kind, e.value.normalized if e.value else None) for e in exits(b)] == [("throw", "e"), ("end", None)]
    assert [(e.kind, e.value) for e in exits(c)] == [("return", None)]


# ------------------------------------------------------------------ mentions


def test_names_and_strings_ignore_comments_and_string_contents() -> None:
    program = _program(
        """
        const h = Effect.catchTag("Lost", (lost: Claim.Lost) =>
          // never throw here: Fiber.join(heartbeat)
          Effect.logWarning("will throw Effect.void").pipe(Effect.andThen(Effect.fail(lost))),
        )
        """
    )
    call = _call(program, "Effect.catchTag")
    names = names_in(call)
    assert {"Effect", "catchTag", "lost", "Claim", "Lost", "logWarning", "pipe", "andThen", "fail"} <= names
    assert "heartbeat" not in names and "throw" not in names and "void" not in names
    assert strings_in(call) == {"Lost", "will throw Effect.void"}
    assert not throws(call)


def test_assignments_name_the_written_variable_and_its_stored_value() -> None:
    program = _program(
        """
        let gaveUp = false
        const h = Effect.sync(() => {
          gaveUp = true
          state.given = 1
          count++
          total += 2
          const local = "not an assignment"
          // seen = true
          log("x = 1")
        })
        """
    )
    found = assignments_in(_call(program, "Effect.sync"))
    assert set(found) == {"gaveUp", "state", "count", "total"}
    assert [v.text for v in found["gaveUp"]] == ["true"]
    assert found["state"] == (None,) and found["count"] == (None,) and found["total"] == (None,)
    assert program.declared_at(_call(program, "log"), "gaveUp").line == 1
    assert program.declared_at(_call(program, "log"), "local").line == 7
    assert program.declared_at(_call(program, "log"), "unbound") is None


def test_copied_from_names_the_collections_an_argument_copies_whole() -> None:
    program = _program(
        """
        refresh(me, [...held, ...pending], Array.from(owned), kept, [...held].filter((x) => !gone.has(x)), [a, b], f(x))
        """
    )
    args = _call(program, "refresh").args
    assert [[e.text for e in copied_from(a)] for a in args] == [
        ["me"], ["held", "pending"], ["owned"], ["kept"], ["held"], [], [],
    ]


def test_runs_maybe_in_a_loop_or_a_try_block_not_in_its_catch() -> None:
    program = _program(
        """
        const h = () => {
          first()
          for (const x of xs) inLoop()
          while (again()) { inWhile() }
          try { inTry() } catch (e) { inCatch() } finally { inFinally() }
          if (ok) guarded()
        }
        """
    )
    fn = _call(program, "first").enclosing
    maybe = {c.callee: runs_maybe(c, fn) for c in program.module("x.ts").calls()}
    assert maybe == {"first": False, "inLoop": True, "again": True, "inWhile": True, "inTry": True,
                     "inCatch": False, "inFinally": False, "guarded": False}


def test_throws_sees_nested_callbacks() -> None:
    program = _program(
        """
        const h = (e) => Effect.sync(() => {
          throw e
        })
        """
    )
    assert throws(_call(program, "Effect.sync"))


def test_words_on_lines_read_tokens_inside_error_regions() -> None:
    program = _program(
        """
        export interface TerminalCommit {
          <E>(): Effect.Effect<void, E>
          <E>(phase: "safe")): ReturnType<Hooks["terminalCommit"]>
        }
        // terminalCommit is mentioned in a comment only
        """
    )
    module = program.module("x.ts")
    assert program.parse_errors("x.ts")  # a stray `)`: the grammar cannot parse the second call signature
    assert {"terminalCommit", "Hooks", "safe", "phase"} <= words_on_lines(module, 3, 3)
    assert "terminalCommit" not in words_on_lines(module, 5, 5)


def test_exit_values_are_read_through_yield_and_await() -> None:
    program = _program(
        """
        const gen = function* (e) {
          if (e instanceof Lost) return yield* (Effect.void)
          return yield* Effect.fail(e)
        }
        const later = async (e) => await (e.ok ? done() : retry())
        """
    )
    gen, later = program.module("x.ts").functions()
    assert [(e.value.normalized, e.line) for e in exits(gen)] == [("Effect.void", 2), ("Effect.fail(e)", 3)]
    assert [(e.value.normalized, [g.holds for g in e.guards]) for e in exits(later)] == [
        ("done()", [True]),
        ("retry()", [False]),
    ]
