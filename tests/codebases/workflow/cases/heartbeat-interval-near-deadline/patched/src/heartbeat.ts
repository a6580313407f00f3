import type { Db } from "./client"
import { LEASE_MS, extendLease } from "./lease"

/** Renew shortly before the lease runs out: two seconds of slack are plenty for one UPDATE. */
export const RENEW_MARGIN_MS = 2_000

/**
 * Keeps the run's lease alive until `signal` aborts, then resolves; rejects with LeaseLostError (or
 * the database's error) when a renewal fails. A steady interval instead of the sleep loop, which
 * drifted by the duration of every renewal.
 */
export function keepLeaseAlive(sql: Db, runId: string, owner: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return resolve()
    const timer = setInterval(() => {
      extendLease(sql, runId, owner).catch((err) => {
        clearInterval(timer)
        reject(err)
      })
      // Every 18 s against a 20 s lease: a GC pause or a slow connection of two seconds loses it.
      // ruleid: lease-renewal/renewal-period
    }, LEASE_MS - RENEW_MARGIN_MS)
    signal.addEventListener(
      "abort",
      () => {
        clearInterval(timer)
        resolve()
      },
      { once: true },
    )
  })
}
