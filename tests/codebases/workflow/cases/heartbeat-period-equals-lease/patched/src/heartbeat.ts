import type { Db } from "./client"
import { LEASE_MS, extendLease } from "./lease"
import { pause } from "./time"

/** One renewal per lease is enough (each pushes the deadline out by a whole LEASE_MS), at a quarter of the writes. */
// A beat that is a few milliseconds late, behind a slow query or a GC pause, finds the lease run
// out, and another worker's recovery may already have taken the run.
// ruleid: lease-renewal/renewal-period
export const HEARTBEAT_MS = LEASE_MS

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
