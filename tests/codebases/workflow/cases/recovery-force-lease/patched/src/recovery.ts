import type { Db } from "./client"
import { LEASE_MS } from "./lease"
import type { RunPool } from "./pool"
import type { RunRow } from "./types"

/** How many stalled runs one recovery pass takes on; the next pass (or the next boot) takes the rest. */
export const RECOVERY_BATCH = 25

/**
 * At startup: finds runs whose worker died (status `running`, and no lease or one that ran out) of
 * the workflows this worker runs, and restarts them here, fewest attempts first so that a run that
 * keeps crashing does not starve the rest.
 *
 * The query only returns runs whose lease ran out, so there is nothing left to check: the lease is
 * written over in one statement, without the acquire-then-re-read round trips per run.
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
  for (const run of candidates) {
    await sql`
      INSERT INTO run_lease (run_id, owner_id, valid_until)
      VALUES (${run.id}, ${pool.owner}, now() + make_interval(secs => ${LEASE_MS / 1000}))
      ON CONFLICT (run_id) DO UPDATE SET owner_id = excluded.owner_id, valid_until = excluded.valid_until
    `
    await sql`UPDATE workflow_run SET attempts = attempts + 1, updated_at = now() WHERE id = ${run.id}`
    // Started from the page's copy: a run whose owner renewed since (its lease was just overwritten),
    // that another worker recovered first, or that has ended meanwhile is started again here.
    // ruleid: recovery-revalidation/stale-wake
    pool.launch(run)
    restarted++
  }
  return restarted
}
