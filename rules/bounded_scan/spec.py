"""bounded-scan's declarations: its options and the documentation of each check.

What `reviewer rules`, `--explain`, configuration and docs/rules read; the
scan-path test every other module asks goes with the option it reads.
"""

from __future__ import annotations

from reviewer.engine.globs import matches
from reviewer.report.model import Impact, Severity
from reviewer.engine.api import CheckSpec, Kind, Option, Options, parse_error_check


FAMILY_ID = "bounded-scan"

OPTIONS: tuple[Option, ...] = (
    Option(
        'tables',
        ["SessionExecutionTable", "SessionInputTable"],
        Kind.NAMES,
        'Tables whose rows belong to many entities and are read by recovery/wake scans.',
        vocabulary=True,
    ),
    Option(
        'bound',
        100,
        Kind.INTEGER,
        'Largest page a scan may read at once.',
    ),
    Option(
        'attempts_columns',
        ["wake_attempts", "resume_attempts"],
        Kind.NAMES,
        'Durable columns counting failed/no-op wakes; a fair scan orders by one of them first.',
    ),
    Option(
        'cursor_columns',
        [],
        Kind.NAMES,
        'Columns a keyset-paginated scan may order by first instead (a cursor).',
    ),
    Option(
        'entity_keys',
        ["session_id", "id"],
        Kind.NAMES,
        'Equality on one of these, or on any column named as an id (`*_id`, `*Id`), pins a query to a single '
        'entity: not a scan.',
    ),
    Option(
        'settled_guards',
        ["promoted_seq", "wake_pending", "recovery_error"],
        Kind.NAMES,
        "A CAS wake's `where` must mention one of these to exclude settled rows.",
    ),
    Option(
        'wake_flags',
        ["wake_pending"],
        Kind.NAMES,
        '`update(T).set({ <column>: false })` on one of these is a CAS wake.',
    ),
    Option(
        'paths',
        ["**"],
        Kind.GLOBS,
        'Files examined (globs; every production file by default, reviewer/engine/production.py): set it only to narrow.',
    ),
    Option(
        'scan_paths',
        ["packages/core/src/session/**"],
        Kind.GLOBS,
        'A hint: files whose every query over `tables` is recovery/wake code. Elsewhere a read is a scan by what '
        'reaches it (a recovery entry point, repeated code), wherever it is (globs, `**` crosses directories).',
    ),
    Option(
        'select_methods',
        ["select", "selectDistinct"],
        Kind.NAMES,
        'Method names that open a drizzle select chain.',
    ),
    Option(
        'single_row_terminals',
        ["get"],
        Kind.NAMES,
        'Chain terminals that read one row (never a scan).',
    ),
    Option(
        'max_helper_depth',
        4,
        Kind.INTEGER,
        'How far to follow calls: to the attempts increment, and from a recovery entry point to its scans.',
    ),
    Option(
        'recovery_entries',
        r'(?i)^(resume|recover|redrive|restart|reconcile|replay|rehydrate|startup|revive|resurrect|rescue|reclaim|requeue|reap|boot)',
        Kind.PATTERN,
        'Names of recovery entry points (functions or properties run at start-up or restart); '
        'every multi-row read they reach is a scan, whatever its table.',
    ),
    Option(
        'repeat_drivers',
        ["Effect.repeat", "Effect.repeatOrElse", "Effect.schedule", "Stream.repeatEffectWithSchedule", "setInterval"],
        Kind.NAMES,
        'Combinators and timers that run code again on a schedule: every multi-row read the repeated code '
        'reaches is a scan, whatever its table.',
    ),
    Option(
        'poll_waits',
        ["Effect.sleep", "Clock.sleep", "sleep", "Bun.sleep", "setTimeout", "Effect.delay", "delay"],
        Kind.NAMES,
        'Waits that make a `while`/`do` loop or a `for (;;)` a poller: a loop that waits between rounds '
        'repeats on a clock, and every multi-row read it reaches is a scan. A loop that does not wait '
        '(a step loop, a retry count) is ordinary code.',
    ),
)

_BAD_UNBOUNDED = """\
const rows = yield* db
  .select()
  .from(SessionInputTable)
  .where(eq(SessionInputTable.wake_pending, true))
  .all()   // every pending input of every Session, in one read"""

_GOOD_UNBOUNDED = """\
const rows = yield* db
  .select()
  .from(SessionInputTable)
  .where(eq(SessionInputTable.wake_pending, true))
  .orderBy(asc(SessionInputTable.wake_attempts))
  .limit(BATCH_SIZE)   // BATCH_SIZE = 100
  .all()"""

CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec(
        id=f"{FAMILY_ID}/unbounded",
        severity=Severity.MUST_FIX,
        impact=Impact.STARVATION,
        title="Recovery/wake scan without .limit",
        summary=(
            "A select over a scanned table in a scan path, or over any table when a recovery entry point "
            "(`recovery_entries`) reaches it, reads every row: add .limit(N) with N <= bound."
        ),
        why=(
            "Startup recovery and wake loops run on every boot and every tick. A scan without a limit reads "
            "the whole backlog at once: after an outage it loads thousands of rows, holds the SQLite writer, "
            "and wakes every Session together. Queries pinned to one entity (eq on session_id/id against a value; "
            "`eq(T.session_id, T.session_id)` or another column of the same table pins nothing) or reading "
            "one row (.get()) are not scans. A query built across statements or helpers (a builder bound to a "
            "`const`, or returned by a helper and finished by its callers) is judged whole, where it is finished. "
            "A raw `SELECT` in a `sql` tagged template (drizzle's or @effect/sql's) reached from recovery code is "
            "a scan too (read with sqlglot), and so is drizzle's relational `db.query.<t>.findMany({ where, limit })`: "
            "each needs a limit at most the bound, an `=` on an entity key with a "
            "value, or to run through a single-row terminal (`db.get(sql..)`); one sqlglot cannot parse is an "
            "`unresolved-bound`."
        ),
        bad=_BAD_UNBOUNDED,
        good=_GOOD_UNBOUNDED,
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/bound-too-large",
        severity=Severity.MUST_FIX,
        impact=Impact.STARVATION,
        title="Scan bound above the configured maximum",
        summary="A scan's .limit(N) resolves (constants and arithmetic folded) to more than the bound.",
        why="The bound caps how much one recovery pass can load and wake at once; a larger page defeats it.",
        bad="const BATCH_SIZE = 500\n...\n  .orderBy(asc(SessionExecutionTable.wake_attempts))\n  .limit(BATCH_SIZE)",
        good="const BATCH_SIZE = 100\n...\n  .orderBy(asc(SessionExecutionTable.wake_attempts))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/unresolved-bound",
        severity=Severity.MUST_FIX,
        impact=Impact.STARVATION,
        title="Scan bound could not be verified",
        summary=(
            "A scan's .limit(...) argument is not a constant the reviewer can fold, or a scan with no visible "
            "limit escapes (its builder is handed to a call, stored in a `let`, carried too far, or its `where` "
            "spreads conditions that cannot be read); check it by hand."
        ),
        why=(
            "The bound is only proven when the limit folds to a number; a runtime value may exceed it, and a "
            "builder that leaves the reviewed code may be bounded, or not, where it ends up. A bound the reviewer "
            "cannot verify blocks like one it knows is wrong (a patch could otherwise pass by writing the limit "
            "so it does not fold); the finding names what it could not read."
        ),
        bad="export const scan = (db: Db, size: number) =>\n  db.select().from(SessionExecutionTable).orderBy(asc(SessionExecutionTable.wake_attempts)).limit(size).all()",
        good="const BATCH_SIZE = 100\n...\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/starvation-order",
        severity=Severity.MUST_FIX,
        impact=Impact.STARVATION,
        title="Bounded scan not ordered by attempts",
        summary="A bounded scan must order first by the attempts column (ascending) or a cursor, else failed rows starve later ones.",
        why=(
            "A bounded scan only sees its first page. If failed or no-op rows stay on that page (ordered by "
            "creation time, or not ordered at all), every pass retries them and Sessions beyond the first "
            "page are never woken. Ordering by the durable attempts column ascending moves rows that failed "
            "behind fresh work; a cursor walks past them."
        ),
        bad="  .orderBy(asc(SessionExecutionTable.time_created))\n  .limit(BATCH_SIZE)",
        good="  .orderBy(asc(SessionExecutionTable.wake_attempts), asc(SessionExecutionTable.time_created))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/unresolved-order",
        severity=Severity.CONSIDER,
        impact=Impact.HYGIENE,
        title="Scan order could not be read",
        summary="The first .orderBy key of a bounded scan is not a column reference; check fairness by hand.",
        why="Fairness is only proven when the first sort key is the attempts column or a cursor.",
        bad="  .orderBy(sql`random()`)\n  .limit(BATCH_SIZE)",
        good="  .orderBy(asc(SessionInputTable.wake_attempts))\n  .limit(BATCH_SIZE)",
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/attempts-not-incremented",
        severity=Severity.SHOULD_FIX,
        impact=Impact.STARVATION,
        title="Scan ordered by attempts never increments them",
        summary="The function processing an attempts-ordered scan updates the rows but never bumps the attempts column.",
        why=(
            "Ordering by wake_attempts is only fair if a failed or no-op wake increments it; otherwise the "
            "same first-page rows keep sorting first and starve the rest, across restarts."
        ),
        bad=(
            "if (!(yield* execution.wake(row.sessionID)))\n"
            "  yield* db.update(SessionInputTable).set({ wake_pending: true }).where(eq(SessionInputTable.id, row.id)).run()"
        ),
        good=(
            "if (!(yield* execution.wake(row.sessionID)))\n"
            "  yield* db.update(SessionInputTable)\n"
            "    .set({ wake_pending: true, wake_attempts: sql`${SessionInputTable.wake_attempts} + 1` })\n"
            "    .where(eq(SessionInputTable.id, row.id)).run()"
        ),
    ),
    CheckSpec(
        id=f"{FAMILY_ID}/cas-includes-settled",
        severity=Severity.MUST_FIX,
        impact=Impact.DUPLICATED_WORK,
        title="Compare-and-swap wake can wake a settled row",
        summary="An update that takes a wake (wake_pending: false) must exclude settled rows in its where.",
        why=(
            "The scan and the wake are separate statements: between them the input can be promoted (settled). "
            "A CAS whose where only names the row id still succeeds on a settled row and wakes a Session "
            "for input that was already consumed."
        ),
        bad="db.update(SessionInputTable).set({ wake_pending: false }).where(eq(SessionInputTable.id, id))",
        good=(
            "db.update(SessionInputTable).set({ wake_pending: false })\n"
            "  .where(and(eq(SessionInputTable.id, id), eq(SessionInputTable.wake_pending, true), "
            "isNull(SessionInputTable.promoted_seq)))"
        ),
    ),
    parse_error_check(
        FAMILY_ID,
        title="Unparsed code near scans",
        summary="The TypeScript parser left an ERROR region in untouched code of a scanned file; scans there were not checked.",
        why="Rules run on the partial tree; code inside an ERROR region is invisible to them.",
    ),
)


# ---------------------------------------------------------------- options


def in_scan_paths(path: str, opts: Options) -> bool:
    return matches(path, opts.scan_paths)
