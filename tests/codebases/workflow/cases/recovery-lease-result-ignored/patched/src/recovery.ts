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
 * first: the lease is (re)taken for this worker, then the run is re-read.
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
    // acquireLease answers false when another worker holds the lease (it renewed, or recovered the
    // run first); the answer is dropped and the run is started a second time here.
    // ruleid: recovery-revalidation/validation-ignored
    await acquireLease(sql, candidate.id, pool.owner)
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

async function reloadRunning(sql: Db, runId: string): Promise<RunRow | undefined> {
  const [run] = await sql<RunRow[]>`
    SELECT id, workflow, input, waypoint_id, attempts
    FROM workflow_run
    WHERE id = ${runId} AND status = 'running'
  `
  return run
}
