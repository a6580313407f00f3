"""`--scope all` widens every family: lease-renewal and terminal-commit-order also examine
unchanged files that use their idioms, so a violation the patch never touched is counted.

Under the default scope the same violation is not the patch's: not looked for in an untouched
file (lease-renewal, terminal-commit-order) or listed as pre-existing, never blocking.
"""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.report.model import InvariantStatus

CLAIM = """\
export namespace SessionExecutionClaim {
  export const release = (db: any, claim: string) => db.delete(claim)
}
"""

EARLY_RELEASE = """\
import { Effect } from "effect"
import { SessionExecutionClaim } from "./claim"

export const nudge = (db: any, claim: string, text: string) =>
  Effect.gen(function* () {
    if (!text) yield* SessionExecutionClaim.release(db, claim)
    yield* Effect.log(text)
  })
"""

PUBLISH_TWICE = """\
import { Effect } from "effect"
import { SessionEvent } from "./event"

export const close = (bus: any, broken: boolean) =>
  Effect.gen(function* () {
    if (broken) yield* bus.publish(SessionEvent.Step.Failed, { why: "x" })
    yield* bus.publish(SessionEvent.Step.Ended, { ok: true })
  })
"""

BASE = {
    "src/claim.ts": CLAIM,
    "src/nudge.ts": EARLY_RELEASE,
    "src/close.ts": PUBLISH_TWICE,
    "src/other.ts": "export const other = 1\n",
}


def _review(tmp: Path, scope: str):
    repo, sha, patch, _ = make_change(tmp, BASE, {**BASE, "src/other.ts": "export const other = 2\n"})
    return review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), scope=scope)).report


def _status(report, family: str) -> InvariantStatus:
    return next(i for i in report.invariants if i.id == family).status


def test_the_default_scope_does_not_blame_the_patch(tmp_path: Path) -> None:
    report = _review(tmp_path, "changed")
    assert _status(report, "lease-renewal") is InvariantStatus.NOT_APPLICABLE
    assert _status(report, "terminal-commit-order") is InvariantStatus.NOT_APPLICABLE
    assert report.verdict.value == "MERGE"


def test_scope_all_examines_untouched_files_and_counts_what_it_finds(tmp_path: Path) -> None:
    report = _review(tmp_path, "all")
    assert _status(report, "lease-renewal") is InvariantStatus.VIOLATED
    assert _status(report, "terminal-commit-order") is InvariantStatus.VIOLATED
    rules = {(f.rule, f.location.path) for f in report.findings if f.location is not None}
    assert ("lease-renewal/release-outside-finalizer", "src/nudge.ts") in rules
    assert ("terminal-commit-order/success-after-failure", "src/close.ts") in rules
    assert report.verdict.value == "DO-NOT-MERGE"


def test_scope_all_leaves_clean_untouched_files_clean(tmp_path: Path) -> None:
    """The look-alike: the idioms are used correctly in the untouched files."""
    run = EARLY_RELEASE.replace('"./claim"', '"../../../../../src/claim"').replace(
        "if (!text) yield* SessionExecutionClaim.release(db, claim)\n    ", ""
    ).replace("yield* Effect.log(text)\n  })", "yield* Effect.log(text)\n  }).pipe(Effect.ensuring(SessionExecutionClaim.release(db, claim)))")
    fine = {
        **{k: v for k, v in BASE.items() if k != "src/nudge.ts"},
        # the run's own final cleanup, in the execution module (allowed_release_sites)
        "packages/core/src/session/execution/run.ts": run,
        "src/close.ts": PUBLISH_TWICE.replace("if (broken) yield*", "if (broken) return yield*"),
    }
    repo, sha, patch, _ = make_change(tmp_path, fine, {**fine, "src/other.ts": "export const other = 2\n"})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), scope="all")).report
    assert report.verdict.value == "MERGE", [f.rule for f in report.findings]
    assert next(i for i in report.invariants if i.id == "lease-renewal").status is InvariantStatus.VERIFIED
    assert next(i for i in report.invariants if i.id == "terminal-commit-order").status is InvariantStatus.VERIFIED
