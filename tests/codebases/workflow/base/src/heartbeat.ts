import type { Db } from "./client"
import { LEASE_MS, extendLease } from "./lease"
import { pause } from "./time"

/** Renew well inside the lease: a late timer, a GC pause or a slow query must not let it lapse. */
export const HEARTBEAT_MS = LEASE_MS / 4

/**
 * Keeps the run's lease alive until `signal` aborts, then resolves. Rejects with LeaseLostError (or
 * the database's error) as soon as a renewal fails: the runner races this promise with the run's
 * steps, so a lost lease ends the run.
 */
export async function keepLeaseAlive(sql: Db, runId: string, owner: string, signal: AbortSignal): Promise<void> {
  while (await pause(HEARTBEAT_MS, signal)) {
    await extendLease(sql, runId, owner)
  }
}
