import type { Db } from "./client"
import { acquireLease, releaseLease } from "./lease"
import type { RunPool } from "./pool"
import type { RunRow } from "./types"

/**
 * At startup: finds runs whose worker died (status `running`, and no lease or one that ran out) of
 * the workflows this worker runs, and restarts them here, fewest attempts first so that a run that
 * keeps crashing does not starve the rest. All of them in one pass: with a page of 25, a worker that
 * booted after an outage left most stalled runs to the next deploy.
 *
 * The page is read before anything is taken: by the time a candidate's turn comes, its owner may have
 * renewed, another worker may have recovered it, or it may have ended. So each one is re-checked
 * first: its lease is taken (which fails while someone holds it), then the run is re-read under it.
 */
export async function recoverStalledRuns(sql: Db, pool: RunPool): Promise<number> {
  // After an outage this is every run in flight at once, all restarted on this one worker.
  // ruleid: bounded-scan/unbounded
  const candidates = await sql<RunRow[]>`
    SELECT r.id, r.workflow, r.input, r.waypoint_id, r.attempts
    FROM workflow_run r
    LEFT JOIN run_lease l ON l.run_id = r.id
    WHERE r.status = 'running' AND (l.run_id IS NULL OR l.valid_until < now())
      AND r.workflow = ANY(${sql.array(pool.workflowNames)})
    ORDER BY r.attempts ASC, r.updated_at ASC
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

async function reloadRunning(sql: Db, runId: string): Promise<RunRow | undefined> {
  const [run] = await sql<RunRow[]>`
    SELECT id, workflow, input, waypoint_id, attempts
    FROM workflow_run
    WHERE id = ${runId} AND status = 'running'
  `
  return run
}
