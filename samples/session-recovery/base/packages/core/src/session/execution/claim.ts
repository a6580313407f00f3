export * as SessionExecutionClaim from "./claim"

import { and, eq, gt, lte } from "drizzle-orm"
import { Clock, Effect } from "effect"
import type { Database } from "../../database/database"
import { SESSION_EXECUTION_LEASE_MS, SessionExecutionTable } from "../sql"

type DatabaseService = Database.Interface["db"]

export type Claim = {
  readonly sessionID: string
  readonly executionID: string
  readonly ownerID: string
}

export type Values = Partial<Pick<typeof SessionExecutionTable.$inferInsert, "assistant_message_id" | "phase">>

export class Lost extends Error {
  readonly _tag = "Lost"
  constructor(readonly claim: Claim) {
    super(`Session execution claim lost: ${claim.executionID}`)
  }
}

const owned = (claim: Claim) =>
  and(
    eq(SessionExecutionTable.id, claim.executionID),
    eq(SessionExecutionTable.session_id, claim.sessionID),
    eq(SessionExecutionTable.owner_id, claim.ownerID),
  )

const live = (claim: Claim, now: number) => and(owned(claim), gt(SessionExecutionTable.expires_at, now))

export const acquire = Effect.fn("SessionExecutionClaim.acquire")(function* (
  db: DatabaseService,
  sessionID: string,
  ownerID: string,
) {
  const now = yield* Clock.currentTimeMillis
  const executionID = crypto.randomUUID()
  const inserted = yield* db
    .insert(SessionExecutionTable)
    .values({
      id: executionID,
      session_id: sessionID,
      owner_id: ownerID,
      phase: "ready",
      expires_at: now + SESSION_EXECUTION_LEASE_MS,
      time_created: now,
    })
    .onConflictDoNothing({ target: SessionExecutionTable.session_id })
    .returning({ id: SessionExecutionTable.id })
    .get()
    .pipe(Effect.orDie)
  if (inserted === undefined) return undefined
  return { sessionID, executionID, ownerID } satisfies Claim
})

/** Takes over a claim whose owner stopped renewing it. */
export const takeover = Effect.fn("SessionExecutionClaim.takeover")(function* (
  db: DatabaseService,
  row: typeof SessionExecutionTable.$inferSelect,
  ownerID: string,
) {
  const now = yield* Clock.currentTimeMillis
  const taken = yield* db
    .update(SessionExecutionTable)
    .set({ owner_id: ownerID, expires_at: now + SESSION_EXECUTION_LEASE_MS })
    .where(
      and(
        eq(SessionExecutionTable.id, row.id),
        eq(SessionExecutionTable.owner_id, row.owner_id),
        lte(SessionExecutionTable.expires_at, now),
      ),
    )
    .returning({ id: SessionExecutionTable.id })
    .get()
    .pipe(Effect.orDie)
  if (taken === undefined) return undefined
  return { sessionID: row.session_id, executionID: row.id, ownerID } satisfies Claim
})

export const renew = Effect.fn("SessionExecutionClaim.renew")(function* (
  db: DatabaseService,
  claim: Claim,
  values: Values = {},
) {
  const now = yield* Clock.currentTimeMillis
  const renewed = yield* db
    .update(SessionExecutionTable)
    .set({ ...values, expires_at: now + SESSION_EXECUTION_LEASE_MS })
    .where(live(claim, now))
    .returning({ id: SessionExecutionTable.id })
    .all()
    .pipe(Effect.orDie)
  if (renewed.length === 0) return yield* Effect.fail(new Lost(claim))
})

/** Deletes a claim this owner still holds. */
export const clear = Effect.fn("SessionExecutionClaim.clear")(function* (db: DatabaseService, claim: Claim) {
  const now = yield* Clock.currentTimeMillis
  const deleted = yield* db
    .delete(SessionExecutionTable)
    .where(live(claim, now))
    .returning({ id: SessionExecutionTable.id })
    .all()
    .pipe(Effect.orDie)
  if (deleted.length === 0) return yield* Effect.fail(new Lost(claim))
})

/** Deletes the claim row even if its lease lapsed, as long as nobody took it over. */
export const release = Effect.fn("SessionExecutionClaim.release")(function* (db: DatabaseService, claim: Claim) {
  const deleted = yield* db
    .delete(SessionExecutionTable)
    .where(owned(claim))
    .returning({ id: SessionExecutionTable.id })
    .all()
    .pipe(Effect.orDie)
  if (deleted.length === 0) return yield* Effect.fail(new Lost(claim))
})

/** Drops an expired claim whose owner committed an interruption before it stopped. */
export const consumeSuspended = Effect.fn("SessionExecutionClaim.consumeSuspended")(function* (
  db: DatabaseService,
  sessionID: string,
) {
  const now = yield* Clock.currentTimeMillis
  const deleted = yield* db
    .delete(SessionExecutionTable)
    .where(
      and(
        eq(SessionExecutionTable.session_id, sessionID),
        eq(SessionExecutionTable.phase, "interrupted"),
        lte(SessionExecutionTable.expires_at, now),
      ),
    )
    .returning({ id: SessionExecutionTable.id })
    .all()
    .pipe(Effect.orDie)
  return deleted.length > 0
})
