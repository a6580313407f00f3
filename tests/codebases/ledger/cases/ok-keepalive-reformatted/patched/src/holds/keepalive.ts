import * as Eff from "effect/Effect"
import * as Sched from "effect/Schedule"
import type { Db } from "../db/client"
import { extend, HOLD_TTL_MS as TTL, type Hold } from "./Hold"

/** A quarter of the hold's life: three keepalives can be late before the hold lapses. */
export const KEEPALIVE_MS = TTL / 4

/** A database blip is retried a few times, quickly, well inside one keepalive period. */
const blip = Sched.exponential("100 millis").pipe(Sched.intersect(Sched.recurs(3)))

/**
 * Extends the hold every KEEPALIVE_MS until interrupted. Only a LedgerDbError is retried; a
 * HoldExpired fails the keepalive at once, and the settler's race stops the work.
 */
export const keepalive = (db: Db, hold: Hold) =>
  extend(db, hold).pipe(
    // ok: lease-renewal/lost-suppressed
    Eff.retry({ schedule: blip, while: (e) => e._tag === "LedgerDbError" }),
    // ok: lease-renewal/renewal-period
    Eff.repeat(Sched.spaced(`${KEEPALIVE_MS} millis`)),
  )
