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
    const run = await takeOver(sql, candidate.id, pool.owner)
    if (!run) continue
    // Woken from the row takeOver re-read under the lease, not from the page.
    // ok: recovery-revalidation/stale-wake
    pool.launch(run)
    restarted++
  }
  return restarted
}

/**
 * Takes a stalled run over for `owner`: its lease, then a re-read of the run under it, then one more
 * attempt on its count. Answers the current row, or nothing when the run is no longer stalled.
 */
export async function takeOver(sql: Db, runId: string, owner: string): Promise<RunRow | undefined> {
  if (!(await acquireLease(sql, runId, owner))) return undefined // held: its owner is alive
  const run = await reloadRunning(sql, runId)
  if (!run) {
    // It ended between the page and the lease. Nothing of it runs here: the lease just taken is
    // handed straight back, so that it does not sit there until it runs out.
    // ok: lease-renewal/release-outside-finalizer
    await releaseLease(sql, runId, owner)
    return undefined
  }
  await sql`UPDATE workflow_run SET attempts = attempts + 1, updated_at = now() WHERE id = ${runId}`
  return run
}

async function reloadRunning(sql: Db, runId: string): Promise<RunRow | undefined> {
  const [run] = await sql<RunRow[]>`
    SELECT id, workflow, input, waypoint_id, attempts
    FROM workflow_run
    WHERE id = ${runId} AND status = 'running'
  `
  return run
}
