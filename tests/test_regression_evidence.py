"""regression-evidence: package resolution, the exercise question, and running after the other families."""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.rules.regression_evidence.exercise import Exercise, declarations_around
from reviewer.rules.regression_evidence.packages import Resolver, _export_target, read_packages
from reviewer.rules.regression_evidence.targets import shape
from reviewer.typescript import Program

FIXTURES = Path(__file__).parent / "fixtures" / "rules" / "regression-evidence"


# ------------------------------------------------------------------ exports maps


def test_exports_map_exact_key_beats_a_pattern_and_the_longest_pattern_prefix_wins() -> None:
    exports = {
        "./session/runner": "./src/session/runner/index.ts",
        "./session/*": {"bun": "./src/session/*.ts", "default": "./dist/session/*.js"},
        "./*": "./src/*.ts",
    }
    assert _export_target(exports, "./session/runner") == "./src/session/runner/index.ts"
    assert _export_target(exports, "./session/input") == "./src/session/input.ts"  # `bun` before `default`
    assert _export_target(exports, "./effect/app") == "./src/effect/app.ts"
    assert _export_target(exports, ".") is None  # not listed: hidden by the map


def test_exports_as_a_string_or_conditions_name_the_package_root_only() -> None:
    assert _export_target("./src/index.ts", ".") == "./src/index.ts"
    assert _export_target({"import": "./src/index.ts"}, ".") == "./src/index.ts"
    assert _export_target("./src/index.ts", "./x") is None


def _program(files: dict[str, str]) -> Program:
    return Program(files.get, {})


def test_resolver_maps_workspace_specifiers_and_reports_blind_ones() -> None:
    files = {
        "packages/core/package.json": '{"name": "@opencode-ai/core", "exports": {"./*": "./src/*.ts"}}',
        "packages/plain/package.json": '{"name": "plain"}',
        "packages/core/src/session/input.ts": "export const a = 1\n",
        "packages/plain/src/util/index.ts": "export const b = 1\n",
        "node_modules/x/package.json": '{"name": "@opencode-ai/core"}',
    }
    program = _program(files)
    packages = read_packages(tuple(sorted(files)), files.get)
    assert packages["@opencode-ai/core"].directory == "packages/core"  # node_modules never shadows it
    resolver = Resolver(program, packages, lambda p: p in files)
    assert resolver.resolve("packages/core/test/a.test.ts", "@opencode-ai/core/session/input") == (
        "packages/core/src/session/input.ts"
    )
    assert resolver.resolve("packages/core/test/a.test.ts", "plain/util") == "packages/plain/src/util/index.ts"
    assert resolver.resolve("packages/core/test/a.test.ts", "@opencode-ai/core/missing") is None
    assert resolver.is_workspace("@opencode-ai/core/missing")
    assert not resolver.is_workspace("effect")


# ------------------------------------------------------------------ exercise


PRODUCTION = """export * as Jobs from "./jobs"

export const rearm = (db: any) => db.update(T).set({ a: 1 }).where(eq(T.id, 1)).run()

export const redrive = (db: any) => rearm(db)

export const other = () => 1
"""


def _exercise(test_source: str, extra: dict[str, str] | None = None) -> tuple[Exercise, Program]:
    files = {"src/jobs.ts": PRODUCTION, "src/index.ts": 'export * as Jobs from "./jobs"\n',
             "test/jobs.test.ts": test_source, **(extra or {})}
    program = _program(files)
    resolver = Resolver(program, {}, lambda p: p in files)
    return Exercise(program, resolver, ("test/jobs.test.ts",), 4), program


def test_a_test_calling_the_declaration_exercises_it() -> None:
    exercise, _ = _exercise('import { Jobs } from "../src/jobs"\nit("x", () => Jobs.rearm(db))\n')
    verdict = exercise.verdict("src/jobs.ts", 3, 3)
    assert verdict.exercised_by == ("test/jobs.test.ts", "calls `Jobs.rearm`")


def test_a_function_of_the_module_that_reaches_it_exercises_it_through_one_reexport() -> None:
    exercise, _ = _exercise('import { Jobs as J } from "../src"\nit("x", () => J.redrive(db))\n')
    verdict = exercise.verdict("src/jobs.ts", 3, 3)
    assert verdict.exercised_by is not None and "reaches it" in verdict.exercised_by[1]


def test_a_test_that_imports_the_module_but_runs_other_code_does_not_exercise_it() -> None:
    exercise, _ = _exercise('import { other } from "../src/jobs"\nit("x", () => other())\n')
    verdict = exercise.verdict("src/jobs.ts", 3, 3)
    assert verdict.exercised_by is None and verdict.importing == ["test/jobs.test.ts"]


def test_a_test_of_a_neighbour_with_a_stand_in_does_not_exercise_it() -> None:
    exercise, _ = _exercise(
        'import { Local } from "../src/local"\nit("x", () => Local.make({ run: () => Effect.never }))\n',
        {"src/local.ts": 'export * as Local from "./local"\nexport const make = (o: any) => o\n'},
    )
    verdict = exercise.verdict("src/jobs.ts", 3, 3)
    assert verdict.exercised_by is None and verdict.importing == []


def test_declarations_around_a_line() -> None:
    program = _program({"src/jobs.ts": PRODUCTION})
    module = program.module("src/jobs.ts")
    assert module is not None
    assert declarations_around(module, 3, 3) == ["rearm"]
    assert declarations_around(module, 2, 2) == []


def test_shape_ignores_the_formatters_choices_only() -> None:
    assert shape("and(eq(T.id, id), isNull(T.seq), )") == shape("and(eq(T.id, id), isNull(T.seq))")
    assert shape("and(eq(T.id, id))") != shape("and(eq(T.id, id), isNull(T.seq))")


# ------------------------------------------------------------------ engine: after the other families


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _case(name: str) -> tuple[dict[str, bytes], dict[str, bytes]]:
    base = {**_tree(FIXTURES / "_shared"), **_tree(FIXTURES / name / "base")}
    return base, {**base, **_tree(FIXTURES / name / "patched")}


def _family(report, family_id: str):
    return next(i for i in report.invariants if i.id == family_id)


def test_runs_after_the_others_and_its_cache_entry_is_keyed_on_their_findings(tmp_path: Path) -> None:
    base, patched = _case("interrupt-commit-stand-in")
    repo, base_sha, patch, _ = make_change(tmp_path, base, patched)
    cache = tmp_path / "cache"
    first = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch), cache_dir=str(cache))).report
    ours = _family(first, "regression-evidence")
    assert [f.rule for f in ours.findings] == ["regression-evidence/untested-finding"]
    assert "lease-renewal/release-in-interrupt-commit" in ours.findings[0].message
    # The invariants stay in id order although this family ran last.
    assert [i.id for i in first.invariants] == sorted(i.id for i in first.invariants)
    # Disabling the lease-renewal check changes no option or severity of this family: only its
    # input. A cache keyed on options alone would replay the finding from the first run.
    config = tmp_path / "reviewer.toml"
    config.write_text('[disable]\nrules = ["lease-renewal/release-in-interrupt-commit"]\n')
    second = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch), config=str(config),
                                       cache_dir=str(cache))).report
    ours = _family(second, "regression-evidence")
    assert not [f for f in ours.findings if f.rule == "regression-evidence/untested-finding"]


def test_a_test_that_loads_the_module_only_through_another_module_or_a_spawned_entry_is_undecided() -> None:
    through_import, _ = _exercise(
        'import { Runner } from "../src/runner"\nit("x", () => Runner.go())\n',
        {"src/runner.ts": 'export * as Runner from "./runner"\nimport { Jobs } from "./jobs"\nexport const go = () => 1\n'},
    )
    assert through_import.verdict("src/jobs.ts", 3, 3).loading == ("test/jobs.test.ts", "indirect")
    spawned, _ = _exercise(
        'it("x", () => spawn(["bun", path.join(dir, "../src/main.ts")]))\n',
        {"src/main.ts": 'import { Jobs } from "./jobs"\nJobs.redrive(db)\n'},
    )
    assert spawned.verdict("src/jobs.ts", 3, 3).loading == ("test/jobs.test.ts", "indirect")
    unrelated, _ = _exercise('import { x } from "../src/other"\nit("x", () => x())\n', {"src/other.ts": "export const x = 1\n"})
    assert unrelated.verdict("src/jobs.ts", 3, 3).loading is None
