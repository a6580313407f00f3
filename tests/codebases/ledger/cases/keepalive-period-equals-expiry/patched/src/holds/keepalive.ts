import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/client"
import * as Hold from "./Hold"

/** Once per hold lifetime: the extension lands just as the old expiry passes, and halves the writes. */
// ruleid: lease-renewal/renewal-period
export const KEEPALIVE_MS = Hold.HOLD_TTL_MS


/**
 * Extends the hold every KEEPALIVE_MS until interrupted. Fails (HoldExpired or LedgerDbError) the
 * first time an extension does not go through; the settler races its work against this failure.
 */
export const keepalive = (db: Db, hold: Hold.Hold) =>
  Hold.extend(db, hold).pipe(Effect.repeat(Schedule.spaced(Duration.millis(KEEPALIVE_MS))))
