"""resume-identity's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read.
"""

from __future__ import annotations

from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, parse_error_check


FAMILY_ID = "resume-identity"

OPTIONS: tuple[Option, ...] = (
    Option(
        "resume_words",
        ["resume", "recover", "restore", "continue", "rehydrate"],
        Kind.NAMES,
        "Words that mark code as resuming persisted work, matched against the segments of a function, "
        "variable or callee name (`resumeTask`, `latestRecovery`, `restore_session`; a trailing `e` is "
        "dropped, so `resume` also matches `resumed`, `continue` matches `continuation`).",
    ),
    Option(
        "recency_fields",
        [
            "time_created", "time_updated", "timeCreated", "timeUpdated", "time.created", "time.updated",
            "createdAt", "updatedAt", "created_at", "updated_at", "mtime", "mtimeMs", "lastModified",
        ],
        Kind.NAMES,
        "Columns and properties that hold a row's or file's age; ordering by one of them descending and "
        "taking the first picks \"the newest\". A dotted name matches a property path (`b.time.updated`).",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "identity_pattern",
        r"^(id|ID|.*(_id|Id|ID))$",
        Kind.PATTERN,
        "Columns and properties that hold an explicit identity; an equality on one pins a query or a "
        "search to one entity, so the newest of its rows is not chosen by age alone.",
    ),
    Option(
        "decoders",
        [
            "JSON.parse", "Schema.decode", "Schema.decodeUnknown", "Schema.decodeSync", "Schema.decodeUnknownSync",
            "Schema.decodeEither", "Schema.decodeUnknownEither", "Schema.decodeOption", "Schema.decodeUnknownOption",
            "Schema.decodePromise", "Schema.decodeUnknownPromise", "readJson", "readJsonSync",
        ],
        Kind.NAMES,
        "Calls that decode persisted state and fail when it is corrupt (curried forms included).",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "state_reads",
        [
            "readFile", "readFileSync", "readFileString", "readJson", "readJsonSync", "Storage.read",
            "localStorage.getItem", "Bun.file().json", "Bun.file().text",
        ],
        Kind.NAMES,
        "Calls that read persisted state (files, storage); a decoder applied to what one returns decodes "
        "persisted state.",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "state_paths",
        ["**/session/**", "**/recovery/**", "**/resume/**", "**/*recovery*", "**/*resume*", "**/*checkpoint*"],
        Kind.GLOBS,
        "Files that hold recovery state; a decode fallback there is judged even when no name in it says "
        "resume (elsewhere a resume word in the function or variable name is needed).",
    ),
    Option(
        "fallbacks",
        [
            "Effect.orElseSucceed", "Effect.orElse", "Effect.catchAll", "Effect.catchAllCause", "Effect.catch",
            "Effect.catchTag", "Effect.catchTags", "Effect.catchCause", "Effect.catchIf", "Option.getOrElse",
        ],
        Kind.NAMES,
        "Combinators that replace a failure (or a None) with a value; a promise's `.catch(...)` counts too.",
    ),
    Option(
        "confirmation_field",
        "",
        Kind.TEXT,
        "The input field a resume must be confirmed with (`confirmed`), when the code base has that "
        "contract. Empty (the opencode default: it has none) switches `resume-unconfirmed` off.",
    ),
    Option(
        "cursor_fields",
        ["resumeCursor", "resume_cursor", "resumeSessionId", "resumeSessionID"],
        Kind.NAMES,
        "Persisted fields that point at an upstream session to resume.",
        vocabulary=True,
    ),
    Option(
        "destroy_calls",
        ["session.abort", "session.delete", "session.remove"],
        Kind.NAMES,
        "Calls that destroy the upstream session a resume cursor points at.",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "destroy_events",
        ["Session.Event.Deleted", "SessionEvent.Deleted"],
        Kind.NAMES,
        "Events announcing that a session was deleted; a callback handed to a call together with one is a "
        "delete handler.",
        vocabulary=False,  # generic words (language, library), not this code base's idioms:
        # present in any code base, and a whole-tree grep for them costs seconds
    ),
    Option(
        "ignore_paths",
        ["**/test/**", "**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/e2e/**"],
        Kind.GLOBS,
        "Files never checked (tests build fixtures by recency on purpose).",
    ),
)

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/newest-as-identity",
        severity=Severity.MUST_FIX,
        impact=Impact.DUPLICATED_WORK,
        title="Resumed state chosen as the newest, not by identity",
        summary=(
            "A row or file ordered by a time column descending, of which the first is taken "
            "(`.limit(1)`, `.get()`, `[0]`, `.at(0)`, `.find`), is resumed without an equality on an identity."
        ),
        why=(
            "Recovery must continue the task it was asked to continue. \"The newest\" is whatever was written "
            "last: another session's state, a half-written file of a crashed run, or a row of a different "
            "task. Resuming it silently attaches one session to another's work. Match the state by its "
            "identity (session id, task id) and report a missing match."
        ),
        bad=(
            "const latest = yield* db.select().from(SessionInputTable)\n"
            "  .orderBy(desc(SessionInputTable.time_created)).limit(1).get()\n"
            "yield* resumeExecution(latest)"
        ),
        good=(
            "const row = yield* db.select().from(SessionInputTable)\n"
            "  .where(eq(SessionInputTable.session_id, sessionID))\n"
            "  .orderBy(desc(SessionInputTable.time_created)).limit(1).get()\n"
            "if (row) yield* resumeExecution(row)"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/corrupt-state-as-empty",
        severity=Severity.MUST_FIX,
        impact=Impact.LOST_OUTCOME,
        title="Corrupt persisted state read as empty",
        summary=(
            "A decode of persisted recovery state (`JSON.parse`, `Schema.decode*`, `readJson`) whose failure "
            "is turned into `[]`, `{}`, `undefined` or `null` (a `catch`, `orElseSucceed`, `catchAll`)."
        ),
        why=(
            "Corrupt state is not the same as no state. Read as an empty list, a torn or truncated state file "
            "makes recovery believe nothing was in flight: unfinished work is never resumed, and the next "
            "write replaces the corrupt file with an empty one, destroying what could have been repaired. "
            "Report corruption as a persistence error; treat only a missing file as empty."
        ),
        bad=(
            "const load = (file: string) =>\n"
            "  fs.readFileString(file).pipe(\n"
            "    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(Tasks))),\n"
            "    Effect.orElseSucceed(() => []),\n"
            "  )"
        ),
        good=(
            "const load = (file: string) =>\n"
            "  fs.readFileString(file).pipe(\n"
            "    Effect.catchTag(\"SystemError\", (e) => e.reason === \"NotFound\" ? Effect.succeed(\"[]\") : Effect.fail(e)),\n"
            "    Effect.flatMap(Schema.decodeUnknown(Schema.parseJson(Tasks))),\n"
            "    Effect.mapError((cause) => new StateCorrupt({ file, cause })),\n"
            "  )"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/resume-unconfirmed",
        severity=Severity.MUST_FIX,
        impact=Impact.DUPLICATED_WORK,
        title="Resume without the explicit confirmation the code base requires",
        summary=(
            "A changed resume entry point never reads the configured confirmation field (`confirmed`), "
            "nor does any caller of it (off unless `confirmation_field` is set)."
        ),
        why=(
            "Where the contract is that an unfinished task is continued only when the user confirms it, a "
            "resume path that skips the check continues a task the user only inspected: stale evidence is "
            "presented as current and the task's identity moves to a session that never asked for it."
        ),
        bad="export const resume = (input: ResumeInput) => tasks.attach(input.taskId, input.sessionId)",
        good=(
            "export const resume = (input: ResumeInput) =>\n"
            "  input.confirmed === true ? tasks.attach(input.taskId, input.sessionId) : Effect.fail(new NeedsConfirmation())"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/cursor-not-invalidated",
        severity=Severity.SHOULD_FIX,
        impact=Impact.DUPLICATED_WORK,
        title="Resume cursor kept after its session is destroyed",
        summary=(
            "A persisted resume cursor field names an upstream session, and a handler that destroys or deletes "
            "that session (`session.abort`, a `Session.Event.Deleted` handler) never clears or invalidates it."
        ),
        why=(
            "The cursor outlives what it points at. The next start resumes from it, asks for a session that "
            "no longer exists, and fails with a process error instead of starting fresh or restoring the "
            "conversation. Clear the cursor (or mark it invalid) where the session is destroyed."
        ),
        bad=(
            "const stopContext = (ctx: Context) =>\n"
            "  Effect.promise(() => ctx.client.session.abort({ path: { id: ctx.sessionId } }))"
        ),
        good=(
            "const stopContext = (ctx: Context) =>\n"
            "  Effect.promise(() => ctx.client.session.abort({ path: { id: ctx.sessionId } })).pipe(\n"
            "    Effect.andThen(bindings.update(ctx.threadId, { resumeCursor: undefined })),\n"
            "  )"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/identity-unresolved",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Newest pick whose filter the reviewer cannot read",
        summary=(
            "A resumed newest pick filters by conditions the model cannot read (a spread of a runtime array), "
            "so whether it is pinned to one identity was not decided."
        ),
        why=(
            "Never green by silence: `where(and(...conditions))` may or may not hold the identity equality "
            "that makes a newest pick safe. The note names the query so a reviewer can check it by hand."
        ),
        bad=(
            "const conditions = filters.map(toCondition)\n"
            "const last = yield* db.select().from(RecoveryTable).where(and(...conditions))\n"
            "  .orderBy(desc(RecoveryTable.time_created)).limit(1).get()\n"
            "yield* resume(last)"
        ),
        good=(
            "const last = yield* db.select().from(RecoveryTable)\n"
            "  .where(eq(RecoveryTable.session_id, sessionID))\n"
            "  .orderBy(desc(RecoveryTable.time_created)).limit(1).get()\n"
            "yield* resume(last)"
        ),
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code in a file with resume idioms",
        summary="The TypeScript parser left an ERROR region (untouched, or changed but without the family's idioms) in a file this family inspects.",
        why="Rules run on the partial tree; a newest pick, a decode fallback or a cursor write inside an ERROR region is invisible to them.",
    ),
)
