"""A family that finds nothing to check says when it could not have: its names do not exist here.

`n/a` must never read as "safe" when the family did not know what to look for.
"""

from __future__ import annotations

from pathlib import Path

from gitrepo import make_change
from reviewer import review
from reviewer.report.model import InvariantStatus, Severity


def _review(tmp: Path, base: dict[str, str], patched: dict[str, str], config: str | None = None):
    repo, sha, patch, _ = make_change(tmp, base, patched)
    cfg = None
    if config is not None:
        cfg = tmp / "ci.toml"
        cfg.write_text(config)
    req = review.Request(repo=str(repo.path), base=sha, patch=str(patch), config=str(cfg) if cfg else None)
    return review.run(req).report


def _lease(report):
    return next(i for i in report.invariants if i.id == "lease-renewal")


def test_a_code_base_without_the_configured_api_gets_a_note_and_a_summary(tmp_path) -> None:
    report = _review(tmp_path, {"src/a.ts": "export const a = 1\n"}, {"src/a.ts": "export const a = 2\n"})
    lease = _lease(report)
    assert lease.status is InvariantStatus.NOT_APPLICABLE
    assert "default `release`, `renew`" in lease.summary and "could not look" in lease.summary
    (note,) = [f for f in report.findings if f.rule == "lease-renewal/idioms-not-found"]
    assert note.severity is Severity.CONSIDER and note.location is None
    assert "SessionExecutionClaim" in note.message and "[rules.lease-renewal]" in note.message
    assert report.verdict.value == "MERGE"


def test_names_that_exist_in_the_base_tree_give_no_note(tmp_path) -> None:
    base = {
        "src/claim.ts": "export namespace SessionExecutionClaim { export const renew = () => 1\n"
                        "  export const clear = () => 2; export const acquire = () => 3 }\n"
                        "export const SESSION_EXECUTION_LEASE_MS = 30_000\nexport const interruptedCommit = 1\n",
        "src/a.ts": "export const a = 1\n",
    }
    report = _review(tmp_path, base, {**base, "src/a.ts": "export const a = 2\n"})
    lease = _lease(report)
    assert lease.status is InvariantStatus.NOT_APPLICABLE and "could not look" not in lease.summary
    assert not [f for f in report.findings if f.rule.endswith("/idioms-not-found") and f.family == "lease-renewal"]


def test_a_word_only_in_a_longer_identifier_does_not_count(tmp_path) -> None:
    """Whole words: `SessionExecutionClaimX` is not `SessionExecutionClaim`."""
    base = {"src/a.ts": "export const SessionExecutionClaimX = 1\nexport const SESSION_EXECUTION_LEASE_MS_OLD = 2\n"}
    report = _review(tmp_path, base, {"src/a.ts": base["src/a.ts"] + "export const b = 3\n"})
    assert "`release`" in _lease(report).summary


def test_the_configured_names_are_the_ones_looked_for(tmp_path) -> None:
    base = {"src/lease.ts": "export namespace Lease { export const drop = () => 1; export const extend = () => 2 }\n",
            "src/a.ts": "export const a = 1\n"}
    config = '[rules.lease-renewal]\nrelease = ["Lease.drop"]\nrenew = ["Lease.extend"]\nacquire = ["Lease.take"]\n'
    report = _review(tmp_path, base, {**base, "src/a.ts": "export const a = 2\n"}, config)
    summary = _lease(report).summary
    # release and renew exist; acquire (Lease.take) does not: `Lease` exists, `Lease.take` nowhere (a
    # name set by hand is judged whole, not by its first segment).
    assert "`release`" not in summary and "`renew`" not in summary and "`acquire`" in summary
    assert "`interrupt_hooks`" in summary and "`lease_constant`" in summary


def test_a_configured_name_is_judged_whole_not_by_its_first_segment(tmp_path) -> None:
    """A code base with a `Step` type of its own and no `Step.Ended` anywhere has no `Step.Ended` event."""
    base = {"src/step.ts": "export interface Step { run(): void }\nexport const steps: Step[] = []\n",
            "src/a.ts": "export const a = 1\n"}
    config = '[rules.terminal-commit-order]\nsuccess_events = ["Step.Ended"]\nfailure_events = ["Step.Failed"]\n'
    report = _review(tmp_path, base, {**base, "src/a.ts": "export const a = 2\n"}, config)
    terminal = next(r for r in report.invariants if r.id == "terminal-commit-order")
    assert "`success_events`" in terminal.summary and "`failure_events`" in terminal.summary


def test_disabling_the_note_keeps_the_summary_honest(tmp_path) -> None:
    config = '[disable]\nrules = ["lease-renewal/idioms-not-found"]\n'
    report = _review(tmp_path, {"src/a.ts": "export const a = 1\n"}, {"src/a.ts": "export const a = 2\n"}, config)
    assert not [f for f in report.findings if f.rule == "lease-renewal/idioms-not-found"]
    assert "could not look" in _lease(report).summary


def test_a_family_with_something_to_check_is_never_called_blind(tmp_path) -> None:
    base = {"packages/core/src/session/sql.ts": "import { sqliteTable, text } from 'drizzle-orm/sqlite-core'\n"
            "export const T = sqliteTable('t', { id: text() })\n"}
    patched = {"packages/core/src/session/sql.ts": base["packages/core/src/session/sql.ts"],
               "packages/core/src/session/scan.ts": "import { T } from './sql'\n"
               "export const recoverAll = (db: any) => db.select().from(T).all()\n"}
    report = _review(tmp_path, base, patched)
    scan = next(i for i in report.invariants if i.id == "bounded-scan")
    assert scan.status is InvariantStatus.VIOLATED and "could not look" not in scan.summary


def test_a_huge_name_list_is_one_grep_on_stdin(tmp_path) -> None:
    """200,000 configured names: no "argument list too long", the note still names the option."""
    names = ", ".join(f'"Claim{i}.clear"' for i in range(200_000))
    report = _review(tmp_path, {"src/a.ts": "export const a = 1\n"}, {"src/a.ts": "export const a = 2\n"},
                     f"[rules.lease-renewal]\nrelease = [{names}]\n")
    assert "`release`" in _lease(report).summary


def test_a_name_with_a_nul_byte_is_refused_with_the_config(tmp_path) -> None:
    import pytest
    from reviewer.errors import ReviewerError

    with pytest.raises(ReviewerError, match="must not hold a NUL byte"):
        _review(tmp_path, {"src/a.ts": "export const a = 1\n"}, {"src/a.ts": "export const a = 2\n"},
                '[rules.lease-renewal]\nrelease = ["Claim\\u0000clear"]\n')


def test_a_misspelt_configured_name_is_reported_even_when_the_family_ran(tmp_path) -> None:
    """The family found something to check with its other names; the misspelt one is still said out loud."""
    claim = "export namespace SessionExecutionClaim { export const release = (d: any, c: any) => d; export const renew = (d: any, c: any) => d }\n"
    steer = (
        'import { Effect } from "effect"\nimport { SessionExecutionClaim } from "./claim"\n'
        "export const steer = (db: any, claim: any) => Effect.gen(function* () {\n"
        "  yield* SessionExecutionClaim.renew(db, claim)\n})\n"
    )
    base = {"src/claim.ts": claim, "src/steer.ts": "export const steer = 1\n",
            "reviewer.toml": '[rules.lease-renewal]\nrelease = ["SessionExecutionClaim.release"]\nacquire = ["SessionExecutionClam.acquire"]\n'}
    report = _review(tmp_path, base, {**base, "src/steer.ts": steer})
    lease = _lease(report)
    assert lease.status is InvariantStatus.VERIFIED
    (note,) = [f for f in report.findings if f.rule == "lease-renewal/idioms-not-found"]
    assert "configured `acquire`" in note.title and "SessionExecutionClam" in note.message
    assert "misspelt" in note.message and "`release`" not in note.title
