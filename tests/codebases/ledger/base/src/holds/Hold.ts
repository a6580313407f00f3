import { and, eq, lt } from "drizzle-orm"
import { Data, Effect, Option } from "effect"
import type { Db } from "../db/client"
import { holds } from "../db/schema"

/** How long a hold stays valid without a keepalive. */
export const HOLD_TTL_MS = 30_000

export interface Hold {
  readonly subject: string
  readonly holder: string
}

/** The hold's row is gone or belongs to someone else: stop touching the subject. */
export class HoldExpired extends Data.TaggedError("HoldExpired")<{ readonly subject: string; readonly holder: string }> {}

export class LedgerDbError extends Data.TaggedError("LedgerDbError")<{ readonly cause: unknown }> {}

export const query = <A>(f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: (cause) => new LedgerDbError({ cause }) })

export const subjectOf = (transferId: string) => `transfer:${transferId}`

/** Takes the hold on `subject`: a new row, or a row whose holder let it expire. None while it is held. */
export const acquire = (db: Db, subject: string, holder: string) =>
  Effect.gen(function* () {
    const now = Date.now()
    const rows = yield* query(() =>
      db
        .insert(holds)
        .values({ subject, holder, expiresAt: now + HOLD_TTL_MS })
        .onConflictDoUpdate({
          target: holds.subject,
          set: { holder, expiresAt: now + HOLD_TTL_MS },
          setWhere: lt(holds.expiresAt, now),

        })
        .returning({ subject: holds.subject }),
    )
    return rows.length === 1 ? Option.some<Hold>({ subject, holder }) : Option.none<Hold>()
  })

/** Pushes the expiry out; fails with HoldExpired when the row is no longer ours. */
export const extend = (db: Db, hold: Hold) =>
  Effect.gen(function* () {
    const rows = yield* query(() =>
      db
        .update(holds)
        .set({ expiresAt: Date.now() + HOLD_TTL_MS })
        .where(and(eq(holds.subject, hold.subject), eq(holds.holder, hold.holder)))
        .returning({ subject: holds.subject }),
    )
    if (rows.length === 0) return yield* Effect.fail(new HoldExpired(hold))
  })

/** Deletes our own row. Only the settler's final step calls this. */
export const drop = (db: Db, hold: Hold) =>
  query(() => db.delete(holds).where(and(eq(holds.subject, hold.subject), eq(holds.holder, hold.holder)))).pipe(
    Effect.asVoid,
  )
