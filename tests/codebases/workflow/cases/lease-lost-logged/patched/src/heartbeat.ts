import type { Db } from "./client"
import { LEASE_MS, extendLease } from "./lease"
import { pause } from "./time"

/** Renew well inside the lease: a late timer, a GC pause or a slow query must not let it lapse. */
export const HEARTBEAT_MS = LEASE_MS / 4

/**
 * Keeps the run's lease alive until `signal` aborts, then resolves. A failed renewal used to end the
 * run at once, and a single connection reset during a failover killed every run of the worker: now
 * it is logged and the next beat tries again.
 */
export async function keepLeaseAlive(sql: Db, runId: string, owner: string, signal: AbortSignal): Promise<void> {
  while (await pause(HEARTBEAT_MS, signal)) {
    try {
      await extendLease(sql, runId, owner)
      // The catch takes LeaseLostError too: the run keeps going after another worker took it over.
      // ruleid: lease-renewal/lost-suppressed
    } catch (err) {
      console.warn(`heartbeat for run ${runId} failed, retrying on the next beat:`, err)
    }
  }
}
