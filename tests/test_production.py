"""Production code: what every family examines by default (reviewer/engine/production.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitrepo import git, make_change, write_files
from reviewer import review
from reviewer.engine.production import MARKS, Production, is_ui

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "lease-renewal" / "foreign-final-step"
LOCK = (FIXTURE / "base" / "src" / "queue" / "lock.ts").read_text()

ATTRIBUTES = {
    ".gitattributes": (
        "# GitHub's marks, as a real repository writes them\n"
        "gen/** linguist-generated\n"
        "*.pb.ts linguist-generated=true\n"
        "third/ linguist-vendored\n"
        "docs/**/*.ts linguist-documentation\n"
        "keep.pb.ts -linguist-generated\n"
        "src/api/*.ts text eol=lf\n"
    ),
    "pkg/.gitattributes": "client.ts linguist-generated\nsrc/own.pb.ts linguist-generated=false\n",
}
PATHS = [
    "gen/a.ts", "gen/deep/b.ts", "src/gen/c.ts", "x.pb.ts", "src/y.pb.ts", "keep.pb.ts", "src/keep.pb.ts",
    "third/lib.ts", "src/third/lib.ts", "docs/guide/ex.ts", "src/api/route.ts", "pkg/client.ts",
    "pkg/sub/client.ts", "pkg/src/own.pb.ts", "pkg/src/other.pb.ts", "client.ts", "src/plain.ts",
]


def _git_marks(repo: Path, path: str) -> str:
    """git's own answer: the first of MARKS that `git check-attr` reports set for `path`."""
    out = git(repo, "check-attr", *MARKS, "--", path)
    state = {line.split(": ")[1]: line.split(": ")[2] for line in out.splitlines()}
    return next((m for m in MARKS if state.get(m) not in ("unspecified", "unset", "false")), "")


def test_linguist_marks_are_resolved_as_git_resolves_them(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    write_files(repo, {**ATTRIBUTES, **{p: "export {}\n" for p in PATHS}})
    production = Production(lambda p: ATTRIBUTES.get(p))
    expected = {p: _git_marks(repo, p) for p in PATHS}
    assert {p: production.marked(p) for p in PATHS} == expected
    assert expected["gen/deep/b.ts"] == "linguist-generated"  # the test must see real marks
    assert expected["keep.pb.ts"] == "" and expected["src/plain.ts"] == ""


@pytest.mark.parametrize("path", [
    "src/__tests__/lock.ts", "packages/a/test/lock.ts", "src/lock.test.ts", "src/lock.spec.tsx",
    "node_modules/pkg/index.js", "packages/a/dist/index.js", "src/types.d.ts", "e2e/flow.ts",
    "src/fixtures/worker.ts", "perfTest/latencyTest.js", "packages/a/bench/scan.ts", "benchmarks/run.ts",
    "packages/effect/typetest/schema/Schema.tst.ts", "src/index.test-d.ts", "types/dtslint/index.ts",
])
def test_conventional_non_production_paths(path: str) -> None:
    assert Production(lambda p: None).why_not(path)


@pytest.mark.parametrize("path", [
    "src/queue/worker.ts", "packages/core/src/session/run.ts", "lib/builder.ts", "src/perfMetrics.ts",
    "src/benchmark.ts", "src/typetests.ts", "src/tstyche.ts",
])
def test_production_paths(path: str) -> None:
    assert not Production(lambda p: None).why_not(path)


def test_ui_modules_by_file_kind_and_framework_import() -> None:
    assert is_ui("src/App.tsx", [])
    assert is_ui("src/store.ts", ["solid-js/store"])
    assert is_ui("src/hooks.ts", ["react"])
    assert not is_ui("src/worker.ts", ["effect", "drizzle-orm", "./reactor", "react-native-is-not-listed-here"])


CANCEL = '''import { Effect } from "effect"
import { JobLock } from "../queue/lock"

export const cancelJob = (db: any, jobID: string) =>
  Effect.log("cancel").pipe(Effect.ensuring(JobLock.unlock(db, jobID)))
'''


def _lease(tmp_path: Path, base: dict[str, str], patched: dict[str, str]) -> tuple[str, str]:
    repo, base_sha, patch, _ = make_change(tmp_path, {"src/queue/lock.ts": LOCK, **base}, {"src/queue/lock.ts": LOCK, **base, **patched})
    outcome = review.run(review.Request(repo=str(repo.path), base=base_sha, patch=str(patch)))
    inv = next(i for i in outcome.report.invariants if i.id == "lease-renewal")
    return inv.status.value, inv.summary


def test_a_release_in_ordinary_code_is_judged_wherever_it_is(tmp_path: Path) -> None:
    status, summary = _lease(tmp_path, {}, {"src/admin/cancel.ts": CANCEL})
    assert status == "violated", summary


def test_code_the_base_marks_generated_is_not_examined(tmp_path: Path) -> None:
    status, summary = _lease(tmp_path, {".gitattributes": "src/admin/** linguist-generated\n"}, {"src/admin/cancel.ts": CANCEL})
    assert status == "not-applicable", summary


def test_a_patch_cannot_mark_its_own_code_generated(tmp_path: Path) -> None:
    status, summary = _lease(tmp_path, {}, {".gitattributes": "src/admin/** linguist-generated\n", "src/admin/cancel.ts": CANCEL})
    assert status == "violated", summary


def test_front_end_and_test_code_are_not_examined(tmp_path: Path) -> None:
    ui = CANCEL.replace('import { Effect } from "effect"\n', 'import { Effect } from "effect"\nimport { createSignal } from "solid-js"\n')
    status, summary = _lease(tmp_path, {}, {"src/admin/cancel.ts": ui, "src/admin/__tests__/cancel.ts": CANCEL})
    assert status == "not-applicable", summary


def test_a_patch_cannot_make_its_own_code_front_end(tmp_path: Path) -> None:
    ui = CANCEL.replace('import { Effect } from "effect"\n', 'import { Effect } from "effect"\nimport { createSignal } from "solid-js"\n')
    status, summary = _lease(tmp_path, {"src/admin/cancel.ts": CANCEL.replace("Effect.ensuring(JobLock.unlock(db, jobID))", "Effect.asVoid")},
                             {"src/admin/cancel.ts": ui})
    assert status == "violated", summary


def test_left_out_code_that_the_change_imports_is_examined(tmp_path: Path) -> None:
    route = 'import { cancelJob } from "./cancel.test"\nexport const onCancel = (db: any, id: string) => cancelJob(db, id)\n'
    status, summary = _lease(tmp_path, {}, {"src/admin/cancel.test.ts": CANCEL, "src/admin/route.ts": route})
    assert status == "violated", summary
