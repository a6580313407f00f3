import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/client"
import * as Hold from "./Hold"

/** A third of the hold's life: two keepalives can be late before the hold lapses. */
export const KEEPALIVE_MS = Hold.HOLD_TTL_MS / 3

/**
 * Extends the hold every KEEPALIVE_MS until interrupted. A failed extension is logged and retried
 * on the next tick.

 */
export const keepalive = (db: Db, hold: Hold.Hold) =>
  Hold.extend(db, hold).pipe(
    // A missed extension is usually a replica hiccup; keep ticking and try again next period.
    // ruleid: lease-renewal/lost-suppressed
    Effect.catchAll((e) => Effect.logWarning("hold keepalive failed", { subject: hold.subject, error: e._tag })),
    Effect.repeat(Schedule.spaced(Duration.millis(KEEPALIVE_MS))),
  )

