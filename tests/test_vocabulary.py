"""Inferred vocabulary: `reviewer init` proposes the code base's own names with evidence, and a
review whose defaults name nothing in the base tree uses what is inferred there.

The code base below is written with other names than the defaults (a run lock, not a
session claim; `Job.Completed`, not `Step.Ended`), plus look-alikes that must not be
taken for a lease API (a token expiry without an owner, a reader of the lock table).
"""

from __future__ import annotations

import io
import re
import tomllib
from contextlib import redirect_stdout
from pathlib import Path

from gitrepo import Repo, make_change, state_digest
from reviewer import cli, review
from reviewer.report.model import InvariantStatus

SCHEMA = """\
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core"

export const RunLockTable = sqliteTable("run_lock", {
  run_id: text().primaryKey(),
  holder: text("holder").notNull(),
  lease_until: integer("lease_until").notNull(),
})

export const JobQueueTable = sqliteTable("job_queue", {
  id: text().primaryKey(),
  run_id: text().notNull(),
  wake_attempts: integer().notNull().default(0),
})

// look-alike: a token's expiry, no owner: not a lock
export const TokenTable = sqliteTable("token", {
  id: text().primaryKey(),
  token_expiry: integer("token_expiry"),
})
"""

LOCK = """\
import { eq } from "drizzle-orm"
import { RunLockTable } from "../db/schema"

export const RUN_LOCK_LEASE_MS = 20_000

export const grab = (db: any, runID: string, holder: string) =>
  db.insert(RunLockTable).values({ run_id: runID, holder, lease_until: Date.now() + RUN_LOCK_LEASE_MS })

export const extend = (db: any, runID: string) =>
  db.update(RunLockTable).set({ lease_until: Date.now() + RUN_LOCK_LEASE_MS }).where(eq(RunLockTable.run_id, runID))

export const drop = (db: any, runID: string) => db.delete(RunLockTable).where(eq(RunLockTable.run_id, runID))

// a reader, not part of the lease API
export const inspect = (db: any, runID: string) => db.select().from(RunLockTable).where(eq(RunLockTable.run_id, runID))
"""

TOKENS = """\
import { TokenTable } from "../db/schema"

export const removeToken = (db: any, id: string) => db.delete(TokenTable)
"""

EVENTS = """\
import { defineEvent } from "./bus"

export namespace Job {
  export const Started = defineEvent("job.started")
  export const Completed = defineEvent("job.completed")
  export const Failed = defineEvent("job.failed")
}

// look-alike: only one terminal, no "success after failure" to get wrong
export namespace Upload {
  export const Completed = defineEvent("upload.completed")
}
"""

WORKER = """\
import { Effect } from "effect"
import * as RunLock from "./lock/run-lock"

export const work = (db: any, runID: string, body: Effect.Effect<void>) =>
  Effect.gen(function* () {
    yield* RunLock.grab(db, runID, "me")
    yield* body
  }).pipe(Effect.ensuring(RunLock.drop(db, runID)))

export const keepAlive = (db: any, runID: string) => RunLock.extend(db, runID)
"""

BASE = {
    "src/db/schema.ts": SCHEMA,
    "src/lock/run-lock.ts": LOCK,
    "src/account/tokens.ts": TOKENS,
    "src/events.ts": EVENTS,
    "src/worker.ts": WORKER,
}

STEER = """\
import { Effect } from "effect"
import * as RunLock from "./lock/run-lock"

export const steer = (db: any, runID: string, text: string) =>
  Effect.gen(function* () {
    if (text.length === 0) {
      yield* RunLock.drop(db, runID)
    }
    yield* Effect.log(text)
  })
"""


def _init(repo: Path, base: str = "HEAD") -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["init", "--repo", str(repo), "--base", base]) == 0
    return out.getvalue()


def _line(path: str, text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_init_proposes_the_code_bases_own_names_with_evidence(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit(BASE, "base")
    before = state_digest(repo.path)
    text = _init(repo.path)
    assert state_digest(repo.path) == before  # printed, never written into the repository
    rules = tomllib.loads(text)["rules"]
    lease = rules["lease-renewal"]
    assert lease["acquire"] == ["RunLock.grab"]
    assert lease["renew"] == ["RunLock.extend"]
    assert lease["release"] == ["RunLock.drop"]
    assert lease["lease_constant"] == "RUN_LOCK_LEASE_MS"
    assert "interrupt_hooks" not in lease  # not inferred: said so in a comment
    assert rules["bounded-scan"]["tables"] == ["JobQueueTable"]
    terminal = rules["terminal-commit-order"]
    assert terminal["success_events"] == ["Job.Completed"] and terminal["failure_events"] == ["Job.Failed"]
    # Evidence: each name follows the path:line it was read from.
    drop_line = _line("src/lock/run-lock.ts", LOCK, "export const drop")
    assert re.search(rf"#\s+src/lock/run-lock\.ts:{drop_line} `drop` writes RunLockTable", text)
    assert f"src/db/schema.ts:{_line('', SCHEMA, 'wake_attempts')}" in text
    # Look-alikes are not proposed.
    assert "removeToken" not in text and "TokenTable" not in text and "inspect" not in text
    assert "Upload" not in text


def test_init_says_what_it_looked_for_when_it_finds_nothing(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({"src/account/tokens.ts": TOKENS, "src/db/schema.ts": SCHEMA.split("export const RunLockTable")[0]
                 + "export const TokenTable = sqliteTable(\"token\", { id: text(), token_expiry: integer() })\n"}, "base")
    text = _init(repo.path)
    rules = tomllib.loads(text)["rules"]
    assert "release" not in rules["lease-renewal"]
    assert "# release: " in text and "nothing found; looked for functions named like release" in text
    assert "no sqliteTable/pgTable/mysqlTable declares a lease column" in text


def test_init_keeps_what_reviewer_toml_sets(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit({**BASE, "reviewer.toml": '[rules.lease-renewal]\nrelease = ["RunLock.free"]\n'}, "base")
    lease = tomllib.loads(_init(repo.path))["rules"]["lease-renewal"]
    assert lease["release"] == ["RunLock.free"] and lease["renew"] == ["RunLock.extend"]


def test_init_refuses_a_base_that_is_not_a_commit(tmp_path: Path, capsys) -> None:
    repo = Repo(tmp_path / "repo")
    repo.commit(BASE, "base")
    assert cli.main(["init", "--repo", str(repo.path), "--base", "no-such-ref"]) == 2
    assert "no-such-ref" in capsys.readouterr().err


def _review(tmp: Path, base: dict[str, str], patched: dict[str, str]):
    repo, sha, patch, _ = make_change(tmp, base, patched)
    return review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch))).report


def _invariant(report, family: str):
    return next(i for i in report.invariants if i.id == family)


def test_a_review_uses_the_inferred_api_when_the_defaults_name_nothing(tmp_path: Path) -> None:
    report = _review(tmp_path, BASE, {**BASE, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.VIOLATED and lease.vocabulary == "mixed"  # interrupt_hooks: default
    assert "vocabulary inferred from the base tree" in lease.summary and "release = RunLock.drop" in lease.summary
    (finding,) = [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]
    assert finding.location.path == "src/steer.ts" and finding.location.line == _line("", STEER, "RunLock.drop")
    assert report.verdict.value == "DO-NOT-MERGE"


def test_the_same_release_inside_a_finalizer_is_fine(tmp_path: Path) -> None:
    """The look-alike: the inferred API in the run's own finalizer (worker.ts already does it)."""
    worker = WORKER.replace("export const keepAlive", "export const twice = work\nexport const keepAlive")
    report = _review(tmp_path, BASE, {**BASE, "src/worker.ts": worker})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.VERIFIED and lease.vocabulary == "mixed"
    assert report.verdict.value == "MERGE"


def test_configuration_wins_over_inference(tmp_path: Path) -> None:
    config = '[rules.lease-renewal]\nrelease = ["RunLock.free"]\nrenew = ["RunLock.bump"]\n'
    base = {**BASE, "reviewer.toml": config}
    report = _review(tmp_path, base, {**base, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    # release/renew as configured (so the drop is not a release); acquire and the constant inferred.
    assert lease.vocabulary == "mixed" and "release = " not in lease.summary
    assert not [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_inference_reads_the_base_tree_never_the_patch(tmp_path: Path) -> None:
    """A lease API the patch itself adds is not learnt from the patch: the family says it is blind."""
    base = {k: v for k, v in BASE.items() if k != "src/lock/run-lock.ts"}
    report = _review(tmp_path, base, {**BASE, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.NOT_APPLICABLE and lease.vocabulary == "default"
    (note,) = [f for f in report.findings if f.rule == "lease-renewal/idioms-not-found"]
    assert "Inference from the base tree found nothing either" in note.message and "reviewer init" in note.message


def test_inferred_terminal_events_catch_success_after_failure(tmp_path: Path) -> None:
    runner = """\
import { Effect } from "effect"
import { Job } from "./events"

export const finish = (bus: any, failed: boolean) =>
  Effect.gen(function* () {
    if (failed) {
      yield* bus.publish(Job.Failed, { reason: "boom" })
    }
    yield* bus.publish(Job.Completed, { ok: true })
  })
"""
    report = _review(tmp_path, BASE, {**BASE, "src/runner.ts": runner})
    terminal = _invariant(report, "terminal-commit-order")
    assert terminal.vocabulary in ("inferred", "mixed")
    assert [f.rule for f in report.findings if f.rule == "terminal-commit-order/success-after-failure"]


def test_the_default_names_stand_where_they_exist(tmp_path: Path) -> None:
    """Per option: where a default name occurs (the seed's claim API), it is used, not replaced."""
    base = {"src/claim.ts": "export namespace SessionExecutionClaim { export const release = () => 1 }\n",
            **BASE}
    report = _review(tmp_path, base, {**base, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    assert "release = RunLock.drop" not in lease.summary
    assert not [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_an_inference_that_raises_fails_its_family_closed(tmp_path: Path, monkeypatch) -> None:
    """A bug (or a hostile base tree) that breaks inference must never read as `n/a`."""
    import dataclasses

    def broken(corpus):
        raise RuntimeError("boom")

    patched = tuple(dataclasses.replace(f, infer=broken) if f.id == "lease-renewal" else f for f in review.discover())
    monkeypatch.setattr(review, "discover", lambda: patched)
    report = _review(tmp_path, BASE, {**BASE, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.ERROR and "boom" in lease.summary
    assert report.verdict.value == "DO-NOT-MERGE"


def test_a_name_only_in_a_comment_or_string_does_not_count_as_present(tmp_path: Path) -> None:
    """A base tree that mentions a default name in a comment must not keep the family looking for it."""
    base = {**BASE, "src/notes.ts": "// Step 1: collect input; SessionExecutionClaim.release is gone\n"
                                    'export const hint = "SessionExecutionClaim"\n'}
    report = _review(tmp_path, base, {**base, "src/steer.ts": STEER})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.VIOLATED and "release = RunLock.drop" in lease.summary


def test_a_lock_module_with_a_non_ascii_name_is_inferred(tmp_path: Path) -> None:
    """git quotes such paths unless asked not to; the inferred API must not vanish with them."""
    base = {k: v for k, v in BASE.items() if k != "src/lock/run-lock.ts"}
    base["src/lock/lösung.ts"] = LOCK
    base["src/worker.ts"] = WORKER.replace("./lock/run-lock", "./lock/lösung")
    steer = STEER.replace("./lock/run-lock", "./lock/lösung")
    report = _review(tmp_path, base, {**base, "src/steer.ts": steer})
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.VIOLATED and "src/lock/lösung.ts" in lease.summary


def test_a_dead_acquire_does_not_make_an_early_release_a_rollback(tmp_path: Path) -> None:
    steer = STEER.replace(
        "    if (text.length === 0) {\n",
        '    if (text === "__never__") yield* RunLock.grab(db, runID, "me")\n    if (text.length === 0) {\n',
    )
    report = _review(tmp_path, BASE, {**BASE, "src/steer.ts": steer})
    assert [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_an_acquire_that_always_runs_first_makes_the_release_a_rollback(tmp_path: Path) -> None:
    """The look-alike: grab, and give the lock back at once when there is nothing to do."""
    steer = STEER.replace("    if (text.length === 0) {\n", '    yield* RunLock.grab(db, runID, "me")\n    if (text.length === 0) {\n')
    report = _review(tmp_path, BASE, {**BASE, "src/steer.ts": steer})
    assert not [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_a_heartbeat_without_an_owner_and_test_code_are_not_a_lease_api(tmp_path: Path) -> None:
    devices = """\
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core"

export const DeviceTable = sqliteTable("device", { id: text().primaryKey(), last_heartbeat_at: integer() })

export const removeDevice = (db: any, id: string) => db.delete(DeviceTable)
"""
    fixture = """\
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core"

const FakeLockTable = sqliteTable("fake_lock", { id: text(), holder: text(), lease_until: integer() })

export const clearFixtures = (db: any) => db.delete(FakeLockTable)
"""
    repo = Repo(tmp_path / "repo")
    repo.commit({"src/devices.ts": devices, "src/__tests__/lock.test.ts": fixture}, "base")
    text = _init(repo.path)
    lease = tomllib.loads(text)["rules"]["lease-renewal"]
    assert "release" not in lease and "removeDevice" not in text and "clearFixtures" not in text


def test_a_heartbeat_next_to_an_owner_is_a_lease(tmp_path: Path) -> None:
    table = SCHEMA.replace('lease_until: integer("lease_until").notNull()', "heartbeat_at: integer().notNull()")
    lock = LOCK.replace("lease_until", "heartbeat_at")
    repo = Repo(tmp_path / "repo")
    repo.commit({**BASE, "src/db/schema.ts": table, "src/lock/run-lock.ts": lock}, "base")
    lease = tomllib.loads(_init(repo.path))["rules"]["lease-renewal"]
    assert lease["release"] == ["RunLock.drop"]


def test_an_inference_over_its_time_budget_fails_its_family_closed(tmp_path: Path, monkeypatch) -> None:
    import dataclasses
    import time

    def slow(corpus):
        time.sleep(5)
        return ()

    patched = tuple(dataclasses.replace(f, infer=slow) if f.id == "lease-renewal" else f for f in review.discover())
    monkeypatch.setattr(review, "discover", lambda: patched)
    repo, sha, patch, _ = make_change(tmp_path, BASE, {**BASE, "src/steer.ts": STEER})
    report = review.run(review.Request(repo=str(repo.path), base=sha, patch=str(patch), budget_seconds=0.5)).report
    lease = _invariant(report, "lease-renewal")
    assert lease.status is InvariantStatus.ERROR and "time budget" in lease.summary
    assert report.verdict.value == "DO-NOT-MERGE"


def test_an_acquire_only_in_a_failure_handler_does_not_make_a_rollback(tmp_path: Path) -> None:
    """It runs only when something failed; the release after it runs on the ordinary path too."""
    steer = STEER.replace(
        "    if (text.length === 0) {\n",
        '    yield* Effect.log("start").pipe(Effect.catchAll(() => RunLock.grab(db, runID, "me")))\n'
        "    if (text.length === 0) {\n",
    )
    report = _review(tmp_path, BASE, {**BASE, "src/steer.ts": steer})
    assert [f for f in report.findings if f.rule == "lease-renewal/release-outside-finalizer"]


def test_vocabulary_defaults_are_names_not_common_words() -> None:
    """The base tree is grepped for every vocabulary word as a fixed string in one pass: a word like
    `it` matched 65,000 lines of a real code base and made a review 8x slower (bench/README.md).
    Generic words (the language's, a library's) are options, never vocabulary."""
    from reviewer.engine.registry import discover
    from reviewer.engine.vocabulary import words

    short = sorted({(f.id, o.name, w) for f in discover() for o in f.options if o.vocabulary
                    for w in words(o.default) if len(w) < 4})
    assert not short, short


MAILBOX = """\
export const post = (sql: any, id: string, body: string) =>
  sql`INSERT INTO mailbox (id, body) VALUES (${id}, ${body})`

export const seize = (sql: any, id: string, worker: string, until: number, now: number) =>
  sql`UPDATE mailbox SET taken_by = ${worker}, taken_until = ${until} WHERE id = ${id} AND (taken_until IS NULL OR taken_until < ${now})`

export const enlist = (sql: any, id: string, worker: string, until: number) =>
  sql`INSERT INTO mailbox (id, body, taken_by, taken_until) VALUES (${id}, '', ${worker}, ${until})`

export const free = (sql: any, id: string) => sql`UPDATE mailbox SET taken_by = NULL, taken_until = NULL WHERE id = ${id}`
"""


def test_an_insert_that_writes_no_lease_column_is_not_an_acquire(tmp_path: Path) -> None:
    """Enqueueing a row into a table raw SQL leases by compare-and-set writes no holder and no expiry:
    it is not the lease's acquire (a queue's offer was proposed as one); the CAS update and an insert
    that sets the holder are."""
    repo = Repo(tmp_path / "repo")
    repo.commit({"src/mailbox.ts": MAILBOX}, "base")
    text = _init(repo.path)
    lease = tomllib.loads(text)["rules"]["lease-renewal"]
    assert lease["acquire"] == ["enlist", "seize"], text  # an insert that sets the holder takes
    assert lease["release"] == ["free"], text
