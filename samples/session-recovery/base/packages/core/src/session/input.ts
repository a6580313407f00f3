export * as SessionInput from "./input"

import { and, asc, eq, isNull, sql } from "drizzle-orm"
import { Clock, Effect } from "effect"
import type { Database } from "../database/database"
import type { SessionExecutionLocal } from "./execution/local"
import { SessionInputTable } from "./sql"

type DatabaseService = Database.Interface["db"]

const BATCH_SIZE = 100

export type Delivery = (typeof SessionInputTable.$inferSelect)["delivery"]

export const admit = Effect.fn("SessionInput.admit")(function* (
  db: DatabaseService,
  input: { readonly id: string; readonly sessionID: string; readonly delivery: Delivery },
) {
  yield* db
    .insert(SessionInputTable)
    .values({
      id: input.id,
      session_id: input.sessionID,
      delivery: input.delivery,
      wake_pending: true,
      time_created: yield* Clock.currentTimeMillis,
    })
    .run()
    .pipe(Effect.orDie)
})

/** Inputs of one Session that the runner has not consumed yet, oldest first. */
export const pending = Effect.fn("SessionInput.pending")(function* (db: DatabaseService, sessionID: string) {
  return yield* db
    .select()
    .from(SessionInputTable)
    .where(and(eq(SessionInputTable.session_id, sessionID), isNull(SessionInputTable.promoted_seq)))
    .orderBy(asc(SessionInputTable.time_created), asc(SessionInputTable.id))
    .all()
    .pipe(Effect.orDie)
})

export const promote = Effect.fn("SessionInput.promote")(function* (
  db: DatabaseService,
  sessionID: string,
  id: string,
  promotedSeq: number,
) {
  const promoted = yield* db
    .update(SessionInputTable)
    .set({ promoted_seq: promotedSeq, wake_pending: false })
    .where(
      and(
        eq(SessionInputTable.id, id),
        eq(SessionInputTable.session_id, sessionID),
        isNull(SessionInputTable.promoted_seq),
      ),
    )
    .returning({ id: SessionInputTable.id })
    .all()
    .pipe(Effect.orDie)
  return promoted.length > 0
})

/** Takes one pending wake; settled (promoted) inputs never wake again. */
const takeWake = Effect.fnUntraced(function* (db: DatabaseService, id: string) {
  const taken = yield* db
    .update(SessionInputTable)
    .set({ wake_pending: false })
    .where(
      and(
        eq(SessionInputTable.id, id),
        eq(SessionInputTable.wake_pending, true),
        isNull(SessionInputTable.promoted_seq),
      ),
    )
    .returning({ id: SessionInputTable.id })
    .all()
    .pipe(Effect.orDie)
  return taken.length > 0
})

const retryWake = Effect.fnUntraced(function* (db: DatabaseService, id: string) {
  yield* db
    .update(SessionInputTable)
    .set({ wake_pending: true, wake_attempts: sql`${SessionInputTable.wake_attempts} + 1` })
    .where(and(eq(SessionInputTable.id, id), isNull(SessionInputTable.promoted_seq)))
    .run()
    .pipe(Effect.orDie)
})

export const wakePending = Effect.fn("SessionInput.wakePending")(function* (
  db: DatabaseService,
  execution: SessionExecutionLocal.Interface,
) {
  const rows = yield* db
    .select({ id: SessionInputTable.id, sessionID: SessionInputTable.session_id })
    .from(SessionInputTable)
    .where(and(eq(SessionInputTable.wake_pending, true), isNull(SessionInputTable.promoted_seq)))
    .orderBy(asc(SessionInputTable.wake_attempts), asc(SessionInputTable.time_created), asc(SessionInputTable.id))
    .limit(BATCH_SIZE)
    .all()
    .pipe(Effect.orDie)
  yield* Effect.forEach(
    rows,
    (row) =>
      Effect.gen(function* () {
        if (!(yield* takeWake(db, row.id))) return
        // No-op wakes (another owner holds the Session) count as attempts so they sort behind fresh work.
        if (!(yield* execution.wake(row.sessionID))) yield* retryWake(db, row.id)
      }),
    { discard: true },
  )
})
