import type { Db } from "./client"
import { acquireLease, releaseLease } from "./lease"
import type { RunPool } from "./pool"
import type { RunRow } from "./types"

/** How many stalled runs one recovery pass takes on; the next pass (or the next boot) takes the rest. */
export const RECOVERY_BATCH = 25

/**
 * At startup: finds runs whose worker died (status `running`, and no lease or one that ran out) of
 * the workflows this worker runs, and restarts them here, fewest attempts first so that a run that
 * keeps crashing does not starve the rest.
 *
 * The page is read before anything is taken: by the time a candidate's turn comes, its owner may have
 * renewed, another worker may have recovered it, or it may have ended. So each one is re-checked
 * first: its lease is taken (which fails while someone holds it), then the run is re-read under it.
 */
export async function recoverStalledRuns(sql: Db, pool: RunPool): Promise<number> {
  const candidates = await sql<RunRow[]>`
    SELECT r.id, r.workflow, r.input, r.waypoint_id, r.attempts
    FROM workflow_run r
    LEFT JOIN run_lease l ON l.run_id = r.id
    WHERE r.status = 'running' AND (l.run_id IS NULL OR l.valid_until < now())
      AND r.workflow = ANY(${sql.array(pool.workflowNames)})
    ORDER BY r.attempts ASC, r.updated_at ASC
    LIMIT ${RECOVERY_BATCH}
  `
  let restarted = 0
  for (const candidate of candidates) {
    if (!(await acquireLease(sql, candidate.id, pool.owner))) continue
    const run = await reloadRunning(sql, candidate.id)
    if (!run) {
      // It ended between the page and the lease: give back the lease of a run we never started.
      await releaseLease(sql, candidate.id, pool.owner)
      continue
    }
    await sql`UPDATE workflow_run SET attempts = attempts + 1, updated_at = now() WHERE id = ${run.id}`
    pool.launch(run)
    restarted++
  }
  return restarted
}

/** How many leftover leases one sweep deletes. */
export const SWEEP_BATCH = 100

/**
 * At startup, after the stalled runs: deletes leases that outlived their run. A run's finally block
 * releases its lease, but when that DELETE itself fails (the database went away as the run ended)
 * the row stays behind, expired, next to a run that has ended. A bounded page of them; each row is
 * deleted only if it is still expired and its run still ended, since the page was read earlier.
 */
export async function sweepLeftoverLeases(sql: Db): Promise<number> {
  // ok: bounded-scan/unbounded
  const leftovers = await sql<{ run_id: string }[]>`
    SELECT l.run_id
    FROM run_lease l
    JOIN workflow_run r ON r.id = l.run_id
    WHERE r.status IN ('completed', 'failed') AND l.valid_until < now()
    ORDER BY l.valid_until ASC
    LIMIT ${SWEEP_BATCH}
  `
  let swept = 0
  for (const { run_id } of leftovers) {
    // Nobody holds these: the run has ended and the lease has run out.
    // ok: lease-renewal/release-outside-finalizer
    const deleted = await sql`
      DELETE FROM run_lease
      WHERE run_id = ${run_id} AND valid_until < now()
        AND EXISTS (SELECT 1 FROM workflow_run WHERE id = ${run_id} AND status IN ('completed', 'failed'))
      RETURNING run_id
    `
    swept += deleted.length
  }
  return swept
}

async function reloadRunning(sql: Db, runId: string): Promise<RunRow | undefined> {
  const [run] = await sql<RunRow[]>`
    SELECT id, workflow, input, waypoint_id, attempts
    FROM workflow_run
    WHERE id = ${runId} AND status = 'running'
  `
  return run
}
