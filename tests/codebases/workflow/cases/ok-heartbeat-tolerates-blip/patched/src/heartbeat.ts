import type { Db } from "./client"
import { LEASE_MS, LeaseLostError, extendLease } from "./lease"
import { pause } from "./time"

/** Renew well inside the lease: a late timer, a GC pause or a slow query must not let it lapse. */
export const HEARTBEAT_MS = LEASE_MS / 4

/**
 * Keeps the run's lease alive until `signal` aborts, then resolves. Rejects with LeaseLostError as
 * soon as a renewal finds the lease gone: the runner races this promise with the run's steps, so a
 * lost lease ends the run.
 *
 * A single connection reset during a database failover used to end every run of the worker. Now a
 * renewal that fails for another reason is tried again on the next beat, but only while the last
 * successful renewal is certain to outlive that beat by a whole beat more; past that, the error ends
 * the run as before.
 */
export async function keepLeaseAlive(sql: Db, runId: string, owner: string, signal: AbortSignal): Promise<void> {
  let heldFrom = Date.now() // the caller acquired the lease just before the run started
  while (await pause(HEARTBEAT_MS, signal)) {
    const sentAt = Date.now()
    try {
      await extendLease(sql, runId, owner)
      heldFrom = sentAt
      // ok: lease-renewal/lost-suppressed
    } catch (err) {
      if (err instanceof LeaseLostError) throw err
      if (Date.now() + 2 * HEARTBEAT_MS >= heldFrom + LEASE_MS) throw err
      console.warn(`heartbeat for run ${runId} failed, retrying on the next beat:`, err)
    }
  }
}
