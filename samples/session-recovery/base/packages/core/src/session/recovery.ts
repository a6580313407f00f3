export * as SessionRecovery from "./recovery"

import { and, asc, eq, isNull, lte, sql } from "drizzle-orm"
import { Clock, Effect } from "effect"
import { Database } from "../database/database"
import { SessionExecutionClaim } from "./execution/claim"
import type { SessionExecutionLocal } from "./execution/local"
import { SessionExecutionTable } from "./sql"

const BATCH_SIZE = 100
const MAX_WAKE_ATTEMPTS = 5

export class ReconcileError extends Error {
  readonly _tag = "ReconcileError"
}

export interface Dependencies {
  readonly execution: SessionExecutionLocal.Interface
  /** Records a durable outcome for every tool call the step left running (hosted and local). */
  readonly reconcileTools: (sessionID: string, assistantMessageID: string | null) => Effect.Effect<void, ReconcileError>
}

type Row = typeof SessionExecutionTable.$inferSelect
type DatabaseService = Database.Interface["db"]

/** Gives an execution back to the next scan, quarantining it after too many attempts. */
const deferExecution = Effect.fnUntraced(function* (db: DatabaseService, ownerID: string, row: Row, reason: string) {
  yield* db
    .update(SessionExecutionTable)
    .set({
      wake_attempts: sql`${SessionExecutionTable.wake_attempts} + 1`,
      expires_at: 0,
      recovery_error: row.wake_attempts + 1 >= MAX_WAKE_ATTEMPTS ? reason : null,
    })
    .where(and(eq(SessionExecutionTable.id, row.id), eq(SessionExecutionTable.owner_id, ownerID)))
    .run()
    .pipe(Effect.orDie)
})

const recoverExecution = Effect.fnUntraced(function* (
  dependencies: Dependencies,
  db: DatabaseService,
  ownerID: string,
  row: Row,
) {
  const claim = yield* SessionExecutionClaim.takeover(db, row, ownerID)
  if (claim === undefined) return
  if (row.phase === "safe" || row.phase === "interrupted") {
    // A crash can land between the terminal commit and the tool outcomes; settle them before dropping the claim.
    yield* dependencies.reconcileTools(row.session_id, row.assistant_message_id)
    yield* SessionExecutionClaim.clear(db, claim)
    return
  }
  const resumed = yield* dependencies.execution.resume(claim)
  if (!resumed) yield* deferExecution(db, ownerID, row, "Session is already running locally")
})

export const recover = Effect.fn("SessionRecovery.recover")(function* (dependencies: Dependencies) {
  const { db } = yield* Database.Service
  const ownerID = crypto.randomUUID()
  const now = yield* Clock.currentTimeMillis
  const expired = yield* db
    .select()
    .from(SessionExecutionTable)
    .where(and(lte(SessionExecutionTable.expires_at, now), isNull(SessionExecutionTable.recovery_error)))
    .orderBy(asc(SessionExecutionTable.wake_attempts), asc(SessionExecutionTable.time_created))
    .limit(BATCH_SIZE)
    .all()
    .pipe(Effect.orDie)
  yield* Effect.forEach(
    expired,
    (row) =>
      recoverExecution(dependencies, db, ownerID, row).pipe(
        Effect.catchTag("ReconcileError", (error) => deferExecution(db, ownerID, row, error.message)),
      ),
    { discard: true },
  )
})
