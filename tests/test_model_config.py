"""[model] in reviewer.toml teaches the TypeScript model a code base's own combinators.

The code base below wraps Effect in its own helpers: `Run.cleanup(effect, finalizer)` is its
finalizer. The model knows only Effect's names by default, so a release inside `Run.cleanup`
looks like ordinary code until [model] says what `Run.cleanup` is.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gitrepo import make_change
from reviewer import review
from reviewer.engine.registry import discover
from reviewer.errors import ReviewerError
from reviewer.inputs.config import build_config
from reviewer.report.model import InvariantStatus

CLAIM = """\
export namespace SessionExecutionClaim {
  export const release = (db: any, claim: string) => db.delete(claim)
  export const renew = (db: any, claim: string) => db.update(claim)
}
"""

RUN = """\
export namespace Run {
  export const cleanup = <A>(effect: A, finalizer: () => unknown): A => effect
}
"""

EXECUTION = """\
import { Effect } from "effect"
import { SessionExecutionClaim } from "../../../../../src/claim"
import { Run } from "../../../../../src/run"

export const drain = (db: any, claim: string, work: Effect.Effect<void>) =>
  Run.cleanup(work, () => SessionExecutionClaim.release(db, claim))
"""

PATH = "packages/core/src/session/execution/drain.ts"
BASE = {"src/claim.ts": CLAIM, "src/run.ts": RUN, PATH: "export const drain = 1\n"}


def _lease(tmp: Path, config: str | None):
    base = {**BASE, **({"reviewer.toml": config} if config else {})}
    repo, sha, patch, _ = make_change(tmp, base, {**base, PATH: EXECUTION})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report
    return report, next(i for i in report.invariants if i.id == "lease-renewal")


def test_an_unknown_finalizer_leaves_the_release_in_ordinary_code(tmp_path: Path) -> None:
    report, lease = _lease(tmp_path, None)
    assert lease.status is InvariantStatus.VIOLATED
    assert [f.rule for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_model_finalizers_make_the_helper_a_finalizer(tmp_path: Path) -> None:
    config = '[model]\nfinalizers = { "Effect.ensuring" = "last", "Run.cleanup" = "last" }\n'
    report, lease = _lease(tmp_path, config)
    assert lease.status is InvariantStatus.VERIFIED, [f.message for f in report.findings]
    assert report.verdict.value == "MERGE"


def test_the_wrong_argument_is_not_the_finalizer(tmp_path: Path) -> None:
    """The look-alike: the table names the helper, but its first argument, not the finalizer."""
    config = '[model]\nfinalizers = { "Run.cleanup" = "0" }\n'
    _, lease = _lease(tmp_path, config)
    assert lease.status is InvariantStatus.VIOLATED


@pytest.mark.parametrize(
    "text, message",
    [
        ('[model]\nfinalizers = ["Run.cleanup"]\n', "[model] finalizers must be a table"),
        ('[model]\nfinalizers = { "Run.cleanup" = "first" }\n', "[model] finalizers must be a table"),
        ('[model]\nforks = "Effect.fork"\n', "[model] forks must be a list of names"),
        ('[model]\nfork = ["Effect.fork"]\n', "[model] has no key fork"),
        ("model = 3\n", "model must be a table"),
        ("[model]\nmax_hops = 0\n", "[model] max_hops must be an integer from 1 to 32"),
        ("[model]\nmax_hops = true\n", "[model] max_hops must be an integer from 1 to 32"),
    ],
)
def test_a_bad_model_table_is_a_one_line_error(text: str, message: str) -> None:
    import tomllib

    with pytest.raises(ReviewerError) as err:
        build_config(tomllib.loads(text), discover(), "reviewer.toml")
    assert message in str(err.value) and "\n" not in str(err.value)


def test_max_hops_bounds_how_far_a_factory_is_followed(tmp_path: Path) -> None:
    """`a.b.release()` through two factories resolves with the default, not with max_hops = 1."""
    from reviewer.typescript import Program, RoleTable, DEFAULT_ROLES

    files = {
        "f.ts": "export const inner = (db: any) => ({ release: (c: any) => Claim.release(db, c) })\n"
        "export const outer = (db: any) => ({ b: inner(db) })\n",
        "a.ts": 'import { outer } from "./f"\n'
        "export const go = (db: any, c: any) => { const a = outer(db); a.b.release(c) }\n",
    }

    def reached(hops: int) -> list[str]:
        roles = RoleTable(DEFAULT_ROLES.failure_handlers, DEFAULT_ROLES.finalizers, DEFAULT_ROLES.forks,
                          DEFAULT_ROLES.commit_hooks, DEFAULT_ROLES.failure_cases, max_hops=hops)
        program = Program(files.get, roles=roles)
        go = program.function("a.ts", "go")
        # paths through the member call only (entering `outer(db)` reaches the release too)
        return [path[-1].callee for path in program.reaches(go, "Claim.release") if path[0].callee == "a.b.release"]

    assert reached(6) == ["Claim.release"]
    assert reached(1) == []


def test_the_configuration_guide_lists_the_default_role_table() -> None:
    from reviewer.typescript import DEFAULT_ROLES

    doc = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text(encoding="utf-8")
    for name in [*DEFAULT_ROLES.failure_handlers, *DEFAULT_ROLES.finalizers, *DEFAULT_ROLES.forks,
                 *DEFAULT_ROLES.commit_hooks, *DEFAULT_ROLES.failure_cases]:
        assert f'"{name}"' in doc, name
