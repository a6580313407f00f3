import type { Db } from "./client"

/**
 * How long a run's lease holds without a heartbeat. A worker owns a run while `run_lease` has a row
 * for it naming the worker (`owner_id`) whose `valid_until` lies in the future.
 */
export const LEASE_MS = 20_000

/** A renewal (or a fenced write) found that this worker no longer holds the run's lease. */
export class LeaseLostError extends Error {
  constructor(
    readonly runId: string,
    readonly owner: string,
  ) {
    super(`lease on run ${runId} is no longer held by ${owner}`)
    this.name = "LeaseLostError"
  }
}

/**
 * Takes the run's lease for `owner` when nobody holds it or its holder let it run out. Answers
 * whether `owner` holds it now.
 */
export async function acquireLease(sql: Db, runId: string, owner: string): Promise<boolean> {
  const rows = await sql`
    INSERT INTO run_lease (run_id, owner_id, valid_until)
    VALUES (${runId}, ${owner}, now() + make_interval(secs => ${LEASE_MS / 1000}))
    ON CONFLICT (run_id) DO UPDATE
      SET owner_id = excluded.owner_id, valid_until = excluded.valid_until
      WHERE run_lease.valid_until < now()
    RETURNING run_id
  `
  return rows.length === 1
}

/**
 * Pushes the lease's deadline out. A renewal that matches no row is usually a run that just ended
 * (its finally block released the lease while a beat was in flight), so it is only worth a warning.
 */
export async function extendLease(sql: Db, runId: string, owner: string): Promise<void> {
  const rows = await sql`
    UPDATE run_lease
    SET valid_until = now() + make_interval(secs => ${LEASE_MS / 1000})
    WHERE run_id = ${runId} AND owner_id = ${owner} AND valid_until > now()
    RETURNING run_id
  `
  // It is also a lease that ran out or that another worker took: the run carries on without it.
  // ruleid: lease-renewal/lost-suppressed
  if (rows.length === 0) console.warn(`lease on run ${runId} not renewed: no longer held by ${owner}`)
}

/** Gives the lease up. Called from the run's own finally block, once nothing of the run is left running. */
export async function releaseLease(sql: Db, runId: string, owner: string): Promise<void> {
  await sql`DELETE FROM run_lease WHERE run_id = ${runId} AND owner_id = ${owner}`
}
