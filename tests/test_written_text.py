"""Issue 14, "Code shown exactly as written": messages quote code as its author wrote it.

A report quoting `size>100?100:size||1` for code written `size > 100 ? 100 :
size || 1` reads as a different line than the one in the editor. Rules quote
`Expr.written` (the source folded onto one line); anchors keep the normal
form, so a finding's id does not change when the code is reformatted. Each
family is reviewed twice on real repositories, once on spaced code and once
on the same code without spaces: the ids match, the quotes follow the code.
"""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.report.model import Finding, Report
from reviewer.typescript import Program
from reviewer.typescript.written import WRITTEN_LIMIT
from test_rule_fixtures import FIXTURES, case_trees

SESSION = "packages/core/src/session"


def _review(tmp_path: Path, base: dict[str, bytes], patched: dict[str, bytes]) -> Report:
    repo, base_sha, patch_path, _ = make_change(tmp_path, base, patched)
    return review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch_path))).report


def _both(tmp_path: Path, base: dict[str, bytes], spaced: dict[str, str], compact: dict[str, str]) -> tuple[Report, Report]:
    """The same change reviewed as written with spaces, and written without them."""
    encode = lambda files: {**base, **{p: t.encode() for p, t in files.items()}}  # noqa: E731
    return _review(tmp_path / "spaced", base, encode(spaced)), _review(tmp_path / "compact", base, encode(compact))


def _of(report: Report, rule: str) -> Finding:
    found = [f for f in report.findings if f.rule == rule]
    assert len(found) == 1, [(f.rule, f.title) for f in report.findings]
    return found[0]


def _texts(finding: Finding) -> str:
    """Everything a reader sees of a finding, one string."""
    return "\n".join([finding.title, finding.message, *finding.failure_sequence, *(r.note for r in finding.related)])


def _same_ids(spaced: Report, compact: Report) -> None:
    assert [(f.rule, f.id) for f in spaced.findings] == [(f.rule, f.id) for f in compact.findings]


# ---------------------------------------------------------------- the model


def _module(source: str):
    files = {"a.ts": source}
    return Program(files.get, {}).module("a.ts")


def _first_call(source: str, callee: str):
    return next(c for c in _module(source).calls() if c.callee == callee)


def test_written_keeps_spaces_and_folds_layout_onto_one_line() -> None:
    call = _first_call(
        "const q = db\n  .select()\n  .from(T) // the table\n  .where(and(eq(T.a, 'x  y'), /* keep */ gt(T.b, 1)))\n"
        "  .limit(size > 100 ? 100 : size || 1)\n",
        "db.select().from().where().limit",
    )
    # Line breaks inside brackets and before a `.` link go; other whitespace becomes one space;
    # the string keeps its two spaces (content), the block comment stays, the line comment goes.
    assert call.written == "db.select().from(T).where(and(eq(T.a, 'x  y'), /* keep */ gt(T.b, 1))).limit(size > 100 ? 100 : size || 1)"
    assert call.args[0].written == "size > 100 ? 100 : size || 1"
    # The normal form, for matching and anchors, is unchanged.
    assert call.args[0].normalized == "size>100?100:size||1"
    assert call.callee_written == "db.select().from(T).where(and(eq(T.a, 'x  y'), /* keep */ gt(T.b, 1))).limit"


def test_written_multiline_arguments_and_templates() -> None:
    call = _first_call("foo(\n  a,\n  ...rest,\n  `two\n   lines ${ x }`,\n)\nconst arr = [\n  ...a,\n  ...b,\n]\n", "foo")
    assert call.written == "foo(a, ...rest, `two lines ${ x }`,)"
    spread = _module("const arr = [\n  ...a,\n  ...b,\n]\n").constant("arr")
    assert spread is not None and spread.written == "[...a, ...b,]"


def test_written_is_one_line_whatever_breaks_the_source_holds() -> None:
    breaks = "\r\n", "\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c"
    for brk in breaks:
        value = _module(f"const v = f(a,{brk}  b) + `x{brk}y` + 'q'{brk}  + g\n").constant("v")
        assert value is not None
        assert len(value.written.splitlines()) == 1, (brk, value.written)


def test_long_quotes_are_cut_around_an_ellipsis_keeping_head_and_tail() -> None:
    items = ", ".join(f"item{i} + {i}" for i in range(200_000))
    value = _module(f"const v = pick({items})\n").constant("v")
    assert value is not None
    shown = value.written
    assert len(shown) <= WRITTEN_LIMIT and "…" in shown
    assert shown.startswith("pick(item0 + 0, item1 + 1") and shown.endswith("item199999 + 199999)")
    short = _module("const w = pick(a, b)\n").constant("w")
    assert short is not None and short.written == "pick(a, b)"


def test_unresolved_reference_keeps_its_normal_form_for_anchors() -> None:
    files = {
        "g.ts": 'import { Effect } from "effect"\n'
        "export const g = (work: Effect.Effect<void>, hooks: any, kind: string) =>\n"
        '  Effect.ensuring(work, hooks[kind ?? "done"])\n'
    }
    program = Program(files.get, {"g.ts": frozenset({2, 3})})
    refs = program.unresolved_references(["g.ts"])
    assert [(r.text, r.written) for r in refs] == [('hooks[kind??"done"]', 'hooks[kind ?? "done"]')]


# ---------------------------------------------------------------- bounded-scan


_SCAN = """import {{ asc, eq }} from "drizzle-orm"
import {{ SessionInputTable as Inputs }} from "./sql"

export const wakeBatch = (db: any, size: number) =>
  db
    .select()
    .from(Inputs)
    .where(eq(Inputs.wake_pending, true))
    .orderBy(asc(Inputs.wake_attempts))
    .limit({bound})
    .all()

const PAGE = 100
export const wakePages = (db: any) =>
  db.select().from(Inputs).where(eq(Inputs.wake_pending, true)).orderBy(asc(Inputs.wake_attempts)).limit({page}).all()
"""


def test_bounded_scan_quotes_the_bound_as_written(tmp_path: Path) -> None:
    base, _ = case_trees(FIXTURES / "bounded-scan" / "unbounded")
    path = f"{SESSION}/wake.ts"
    spaced, compact = _both(
        tmp_path,
        base,
        {path: _SCAN.format(bound="size > 100 ? 100 : size || 1", page="PAGE * 2")},
        {path: _SCAN.format(bound="size>100?100:size||1", page="PAGE*2")},
    )
    _same_ids(spaced, compact)
    unresolved = _of(spaced, "bounded-scan/unresolved-bound")
    assert unresolved.title == "Cannot resolve scan bound `.limit(size > 100 ? 100 : size || 1)` in `wakeBatch`"
    assert "limited by `size > 100 ? 100 : size || 1`" in unresolved.message
    assert "`.limit(size > 100 ? 100 : size || 1)`" in [r.note for r in unresolved.related]
    assert "size>100" not in _texts(unresolved)
    too_large = _of(spaced, "bounded-scan/bound-too-large")
    assert "`.limit(PAGE * 2 = 200)`" in too_large.message
    summary = next(i.summary for i in spaced.invariants if i.id == "bounded-scan")
    assert ".limit(PAGE * 2 = 200)" in summary
    # The compact spelling is quoted compact: the text follows the code, the id does not.
    assert "`.limit(size>100?100:size||1)`" in _of(compact, "bounded-scan/unresolved-bound").title


# ---------------------------------------------------------------- lease-renewal


_HEARTBEAT = """import {{ Duration, Effect, Fiber, Schedule }} from "effect"
import {{ SESSION_EXECUTION_LEASE_MS }} from "../sql"
import {{ SessionExecutionClaim }} from "./claim"

export const keepAlive = (db: any, claim: SessionExecutionClaim.Claim, work: Effect.Effect<void>, hooks: any, kind: string) =>
  Effect.gen(function* () {{
    const fiber = yield* SessionExecutionClaim.renew(db, claim).pipe(
      Effect.repeat(Schedule.spaced(Duration.millis({period}))),
      Effect.forkScoped,
    )
    yield* Effect.raceFirst(work, Fiber.join(fiber)).pipe(Effect.ensuring({cleanup}))
  }}).pipe(Effect.scoped)
"""


def test_lease_renewal_quotes_schedules_and_handlers_as_written(tmp_path: Path) -> None:
    base, _ = case_trees(FIXTURES / "lease-renewal" / "period-unresolved")
    path = f"{SESSION}/execution/keepalive.ts"
    spaced, compact = _both(
        tmp_path,
        base,
        {path: _HEARTBEAT.format(period="SESSION_EXECUTION_LEASE_MS / 2", cleanup='hooks[kind ?? "done"]')},
        {path: _HEARTBEAT.format(period="SESSION_EXECUTION_LEASE_MS/2", cleanup='hooks[kind??"done"]')},
    )
    _same_ids(spaced, compact)
    period = _of(spaced, "lease-renewal/renewal-period")
    schedule = "Schedule.spaced(Duration.millis(SESSION_EXECUTION_LEASE_MS / 2))"
    assert f"(`{schedule}`)" in period.message
    assert f"the schedule: `{schedule}`" in [r.note for r in period.related]
    assert "LEASE_MS/2" not in _texts(period)
    handler = _of(spaced, "lease-renewal/handler-unresolved")
    assert handler.title.startswith('`hooks[kind ?? "done"]` runs as a finalizer')
    assert 'kind??"done"' not in _texts(handler)


# ---------------------------------------------------------------- terminal-commit-order


_CLOSER = """import {{ Effect }} from "effect"
import {{ SessionEvent }} from "../event"

export const closeStep = (events: SessionEvent.Publisher, sessionID: string, error: string | undefined, retries: number) =>
  Effect.gen(function* () {{
    if (error !== undefined) yield* events.publish(SessionEvent.Step.Failed, {{ sessionID, error }})
    if ({guard}) yield* events.publish(SessionEvent.Step.Ended, {{ sessionID }})
  }})
"""


def test_terminal_commit_order_quotes_conditions_as_written(tmp_path: Path) -> None:
    base, _ = case_trees(FIXTURES / "terminal-commit-order" / "success-after-failure")
    path = f"{SESSION}/runner/closer.ts"
    spaced, compact = _both(
        tmp_path,
        base,
        {path: _CLOSER.format(guard='retries > 0 && error !== "fatal"')},
        {path: _CLOSER.format(guard='retries>0&&error!=="fatal"')},
    )
    _same_ids(spaced, compact)
    finding = _of(spaced, "terminal-commit-order/success-after-failure")
    assert 'condition `retries > 0 && error !== "fatal"` on this path' in [r.note for r in finding.related]
    assert "retries>0" not in _texts(finding)


# ---------------------------------------------------------------- schema-prev-ids


def test_schema_prev_ids_ids_survive_reformatting(tmp_path: Path) -> None:
    """This family quotes names, paths and ids, never expressions: reformatting the changed
    table declaration changes neither its findings nor their ids."""
    case = FIXTURES / "schema-prev-ids" / "ddl-without-snapshot"
    base, patched = case_trees(case)
    path = "packages/core/src/session/sql.ts"
    source = patched[path].decode()
    compacted = source.replace(": ", ":").replace(", ", ",").replace("{ ", "{").replace(" }", "}")
    assert compacted != source
    spaced, compact = _both(tmp_path, base, {p: t.decode() for p, t in patched.items()}, {**{p: t.decode() for p, t in patched.items()}, path: compacted})
    assert any(f.rule == "schema-prev-ids/ddl-without-snapshot" for f in spaced.findings)
    _same_ids(spaced, compact)
    assert [(f.title, f.message) for f in spaced.findings] == [(f.title, f.message) for f in compact.findings]
