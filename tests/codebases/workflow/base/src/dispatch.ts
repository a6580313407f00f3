import type { Db } from "./client"
import { acquireLease } from "./lease"
import type { RunPool } from "./pool"
import { pause } from "./time"
import type { RunRow } from "./types"

export const MAX_CONCURRENT_RUNS = 8
const IDLE_POLL_MS = 1_000

/**
 * Takes the oldest pending run of a workflow this worker knows: locks the row (skipping rows other
 * workers are taking), acquires its lease and marks it running, in one transaction.
 */
export async function claimNextRun(sql: Db, pool: RunPool): Promise<RunRow | undefined> {
  return sql.begin(async (tx) => {
    const [run] = await tx<RunRow[]>`
      SELECT id, workflow, input, waypoint_id, attempts
      FROM workflow_run
      WHERE status = 'pending' AND workflow = ANY(${tx.array(pool.workflowNames)})
      ORDER BY created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    `
    if (!run) return undefined
    if (!(await acquireLease(tx, run.id, pool.owner))) return undefined
    await tx`UPDATE workflow_run SET status = 'running', updated_at = now() WHERE id = ${run.id}`
    return run
  })
}

/** Feeds the pool until the worker shuts down. */
export async function workLoop(sql: Db, pool: RunPool): Promise<void> {
  while (!pool.signal.aborted) {
    const run = pool.size < MAX_CONCURRENT_RUNS ? await claimNextRun(sql, pool) : undefined
    if (run) pool.launch(run)
    else await pause(IDLE_POLL_MS, pool.signal)
  }
}
