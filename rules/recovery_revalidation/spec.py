"""recovery-revalidation's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, parse_error_check

FAMILY_ID = "recovery-revalidation"

OPTIONS: tuple[Option, ...] = (
    Option(
        "recovery_paths",
        ["**"],
        Kind.GLOBS,
        "Files examined for recovery, wake and promotion code (globs; every production file by default, "
        "reviewer/engine/production.py): set it only to narrow.",
    ),
    Option(
        "recovery_entries",
        r"(?i)^(resume|recover|redrive|restart|reconcile|replay|rehydrate|startup|wake|revive|resurrect|rescue|reclaim|requeue|reap|boot)",
        Kind.PATTERN,
        "Names of functions (or properties) that read recovery candidates and wake or resume them: "
        "their per-candidate loops are what the wake checks judge. A top-level function iterating rows "
        "whose time has passed (`valid_until < now()`) is one whatever it is called.",
    ),
    Option(
        "candidate_reads",
        r"(?i)^(list|scan|select|find|load|pending|expired|stranded|suspended|candidates)",
        Kind.PATTERN,
        "Names of helpers that read several recovery candidates at once (a drizzle `select ... .all()` "
        "chain always counts).",
    ),
    Option(
        "wake_calls",
        ["wake", "resume"],
        Kind.NAMES,
        "Calls that wake or resume a Session (matched on the import-resolved callee's last segments: "
        "`execution.wake`, `SessionExecution.resume`). Without a name, a call of the code base handed "
        "the candidate that does more than database statements (`pool.launch(run)`) is a wake too.",
        vocabulary=True,
    ),
    Option(
        "revalidators",
        ["validateRecovery", "consumeSuspended", "takeWake", "takeover"],
        Kind.NAMES,
        "Calls that re-read or compare-and-set one candidate against the current durable state and "
        "answer whether it is still valid (their result must gate the wake). A compare-and-set (an update "
        "or delete whose condition says more than the row's id, an upsert taking an expired row) or a "
        "re-read of the one row, in any query form, counts too, directly or in a helper doing only those.",
        vocabulary=True,
    ),
    Option(
        "input_tables",
        ["SessionInputTable"],
        Kind.NAMES,
        "Tables whose rows are promoted (a Session's admitted input).",
        vocabulary=True,
    ),
    Option(
        "promoted_columns",
        ["promoted_seq"],
        Kind.NAMES,
        "Columns a promotion sets; `isNull(<column>)` is the still-unpromoted predicate.",
    ),
    Option(
        "id_columns",
        ["id"],
        Kind.NAMES,
        "Columns naming the precise row: a promotion's `where` needs `eq` on one of them.",
    ),
    Option(
        "session_columns",
        ["session_id"],
        Kind.NAMES,
        "Columns naming the row's Session: a promotion's `where` needs `eq` on one of them.",
    ),
    Option(
        "promote_calls",
        r"(?i)^promote",
        Kind.PATTERN,
        "Names of helpers that promote an input row (their arguments choose the row).",
    ),
    Option(
        "log_calls",
        ["Effect.log", "Effect.logWarning", "Effect.logError", "Effect.logInfo", "Effect.logDebug",
         "Effect.logFatal", "Effect.logTrace", "console.log", "console.warn", "console.error", "log.warn",
         "log.error", "log.info"],
        Kind.NAMES,
        "Calls that only log: a failure handler made of these (and success values) ignores the failure.",
    ),
    Option(
        "success_values",
        ["Effect.void", "Effect.succeed", "Effect.succeedNone", "Effect.asVoid", "Effect.as"],
        Kind.NAMES,
        "Success constructors a failure handler may return after logging.",
    ),
    Option(
        "fail_calls",
        ["Effect.fail", "Effect.die", "Effect.failCause", "Effect.dieMessage", "Effect.failSync", "Effect.interrupt"],
        Kind.NAMES,
        "Calls that fail an effect: a re-validation helper (or handler) that reaches one fails closed.",
    ),
    Option(
        "catch_stages",
        ["Effect.catchAll", "Effect.catchAllCause", "Effect.catchTag", "Effect.catchTags", "Effect.catch",
         "Effect.catchCause", "Effect.catchIf", "Effect.orElse", "Effect.catchAllDefect", "Effect.catchDefect"],
        Kind.NAMES,
        "Stages that turn a failure into whatever their handler returns.",
    ),
    Option(
        "ignore_stages",
        ["Effect.ignore", "Effect.ignoreLogged", "Effect.orElseSucceed", "Effect.ignoreCause"],
        Kind.NAMES,
        "Stages that drop a failure outright.",
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/stale-wake",
        severity=Severity.MUST_FIX,
        impact=Impact.DUPLICATED_WORK,
        title="Recovery candidate woken from a stale read",
        summary=(
            "A wake/resume inside the per-candidate loop of a recovery entry runs with no re-read or "
            "compare-and-set of that candidate between the scan that read it and the wake."
        ),
        why=(
            "The scan and the wake are separate moments: between them another process can promote the input, "
            "take the claim over, or supersede the recovery with a newer turn. Waking on the scan's copy "
            "runs a Session for work that is settled or no longer valid (a duplicate turn, or a recovery "
            "replayed over newer history). Re-validate the one candidate against the current durable state "
            "(a CAS that returns the row, or a validation read) immediately before the wake, and skip it "
            "when it no longer holds."
        ),
        bad=(
            "const rows = yield* db.select().from(SessionInputTable).where(eq(SessionInputTable.wake_pending, true))\n"
            "  .orderBy(asc(SessionInputTable.wake_attempts)).limit(BATCH_SIZE).all()\n"
            "yield* Effect.forEach(rows, (row) => execution.wake(row.sessionID))"
        ),
        good=(
            "yield* Effect.forEach(rows, (row) =>\n"
            "  Effect.gen(function* () {\n"
            "    if (!(yield* takeWake(db, row.id))) return   // CAS: still pending and unpromoted\n"
            "    yield* execution.wake(row.sessionID)\n"
            "  }))"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/validation-ignored",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Recovery re-validation does not gate the wake",
        summary=(
            "A re-validation (a revalidator call, a CAS update or a single-row re-read) runs before the wake, "
            "but its result is discarded or never tested on the way to the wake."
        ),
        why=(
            "A re-validation only protects the wake if a failed one stops it. A CAS whose row count is not "
            "checked, or a validation whose answer is logged and then passed over, wakes the stale candidate "
            "exactly as if nothing had been checked."
        ),
        bad=(
            "yield* takeWake(db, row.id)\n"
            "yield* execution.wake(row.sessionID)"
        ),
        good=(
            "if (!(yield* takeWake(db, row.id))) return\n"
            "yield* execution.wake(row.sessionID)"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/validation-swallowed",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Recovery re-validation failure is logged and ignored",
        summary=(
            "The re-validation before a wake has its failure caught by a handler that only logs or "
            "succeeds (or by `Effect.ignore`), so the wake still runs after the validation failed."
        ),
        why=(
            "A validation that fails (the recovery conflicts with newer history, the claim changed) is the "
            "signal not to wake. Catching it into a log line turns the refusal into a success and the "
            "stale recovery is woken and promoted anyway."
        ),
        bad=(
            "yield* validateRecovery(db, row.id).pipe(Effect.catchAll((e) => Effect.logWarning(e)))\n"
            "yield* execution.wake(row.sessionID)"
        ),
        good=(
            "const validation = yield* validateRecovery(db, row.id)\n"
            "if (validation.error) return yield* quarantine(db, row, validation.error)\n"
            "yield* execution.wake(row.sessionID)"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/promotion-by-recency",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Input promoted by recency instead of by identity",
        summary=(
            "A promotion takes the row a newest-first single-row read returned (`orderBy(desc(..))` with "
            "`.limit(1)`/`.get()`) instead of the exact row the recovery recorded."
        ),
        why=(
            "\"The newest input of the Session\" is not the recovery's input once anything else was admitted: "
            "a prompt admitted after the crash, or a second recovery, is newer and gets promoted in its place, "
            "while the recovered input stays pending or is replayed later out of order. Promote the recorded "
            "id with a compare-and-set on that precise row."
        ),
        bad=(
            "const latest = yield* db.select().from(SessionInputTable)\n"
            "  .where(eq(SessionInputTable.session_id, sessionID))\n"
            "  .orderBy(desc(SessionInputTable.time_created)).limit(1).get()\n"
            "if (latest) yield* SessionInput.promote(db, latest.id, seq)"
        ),
        good="yield* SessionInput.promoteExact(db, events, sessionID, recovery.inputID, commit)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/promotion-not-exact",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Promotion is not a compare-and-set on the precise row",
        summary=(
            "An update setting the promoted column of an input table must match the row's id, its Session "
            "and the still-unpromoted predicate (`isNull(promoted_seq)`) in its `where`."
        ),
        why=(
            "Promotion is the exactly-once step of a turn. Without the unpromoted predicate a second promoter "
            "(a recovery racing the live runner) overwrites the first promotion and the input is consumed "
            "twice; without the id it promotes every matching row; without the Session an id from another "
            "Session's recovery record promotes the wrong Session's input."
        ),
        bad=(
            "db.update(SessionInputTable).set({ promoted_seq: seq })\n"
            "  .where(eq(SessionInputTable.id, id))"
        ),
        good=(
            "db.update(SessionInputTable).set({ promoted_seq: seq })\n"
            "  .where(and(eq(SessionInputTable.id, id), eq(SessionInputTable.session_id, sessionID),\n"
            "    isNull(SessionInputTable.promoted_seq)))\n"
            "  .returning().get()"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/promotion-unresolved",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Promotion's where clause could not be read",
        summary=(
            "A promotion's `where` is built from something the reviewer cannot read (raw SQL, a spread of a "
            "parameter, a variable): whether it is an exact compare-and-set was not checked."
        ),
        why="Exactness is only proven when the id, Session and unpromoted conditions are visible in the syntax.",
        bad="db.update(SessionInputTable).set({ promoted_seq: seq }).where(conditions)",
        good="db.update(SessionInputTable).set({ promoted_seq: seq }).where(and(eq(T.id, id), eq(T.session_id, s), isNull(T.promoted_seq)))",
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code near recovery wakes or promotions",
        summary="The TypeScript parser left an ERROR region in a file with recovery idioms; code there was not checked.",
        why="Rules run on the partial tree; code inside an ERROR region is invisible to them.",
    ),
)
