import type { Db } from "./client"
import { LEASE_MS, extendLease } from "./lease"
import { pause } from "./time"

/**
 * Renew three times per lease: still often enough that a late timer, a GC pause or a slow query
 * cannot let it lapse (a beat can be missed with a third of the lease to spare), with fewer writes
 * than four times per lease.
 */
// ok: lease-renewal/renewal-period
export const RENEW_EVERY_MS = Math.floor(LEASE_MS / 3)

/**
 * Keeps the run's lease alive until `signal` aborts, then resolves. Rejects with LeaseLostError (or
 * the database's error) as soon as a renewal fails: the runner races this promise with the run's
 * steps, so a lost lease ends the run.
 */
export async function keepLeaseAlive(sql: Db, runId: string, owner: string, signal: AbortSignal): Promise<void> {
  while (await pause(RENEW_EVERY_MS, signal)) {
    await extendLease(sql, runId, owner)
  }
}

/** @deprecated the old name, kept for the tests. */
export const HEARTBEAT_MS = RENEW_EVERY_MS
