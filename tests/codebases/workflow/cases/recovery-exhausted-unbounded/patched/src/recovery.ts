import type { Db } from "./client"
import { RunEvent, recordOutcome } from "./history"
import { acquireLease, releaseLease } from "./lease"
import type { RunPool } from "./pool"
import type { RunRow } from "./types"

/** How many stalled runs one recovery pass takes on; the next pass (or the next boot) takes the rest. */
export const RECOVERY_BATCH = 25

/** A run that took its worker down this many times is failed instead of restarted once more. */
export const MAX_ATTEMPTS = 5

/**
 * At startup: finds runs whose worker died (status `running`, and no lease or one that ran out) of
 * the workflows this worker runs, and restarts them here, fewest attempts first so that a run that
 * keeps crashing does not starve the rest. Runs that used up their attempts are failed first.
 *
 * The page is read before anything is taken: by the time a candidate's turn comes, its owner may have
 * renewed, another worker may have recovered it, or it may have ended. So each one is re-checked
 * first: its lease is taken (which fails while someone holds it), then the run is re-read under it.
 */
export async function recoverStalledRuns(sql: Db, pool: RunPool): Promise<number> {
  await failExhaustedRuns(sql, pool)

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

async function failExhaustedRuns(sql: Db, pool: RunPool): Promise<void> {
  for (const stuck of await listExhausted(sql)) {
    if (!(await acquireLease(sql, stuck.id, pool.owner))) continue // still alive somewhere: leave it
    try {
      if (await reloadRunning(sql, stuck.id)) {
        await recordOutcome(sql, stuck.id, pool.owner, RunEvent.Failed, `gave up after ${MAX_ATTEMPTS} attempts`)
      }
    } finally {
      await releaseLease(sql, stuck.id, pool.owner)
    }
  }
}

/** Every run that used up its attempts, however many there are: one read at boot. */
function listExhausted(sql: Db): Promise<{ id: string }[]> {
  // ruleid: bounded-scan/unbounded
  return sql<{ id: string }[]>`
    SELECT id FROM workflow_run
    WHERE status = 'running' AND attempts >= ${MAX_ATTEMPTS}
    ORDER BY updated_at
  `
}

async function reloadRunning(sql: Db, runId: string): Promise<RunRow | undefined> {
  const [run] = await sql<RunRow[]>`
    SELECT id, workflow, input, waypoint_id, attempts
    FROM workflow_run
    WHERE id = ${runId} AND status = 'running'
  `
  return run
}
