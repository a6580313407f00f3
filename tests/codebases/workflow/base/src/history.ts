import type { Db } from "./client"
import { LeaseLostError } from "./lease"

/** How a run ends. A run has exactly one of these in its history. */
export const RunEvent = {
  Completed: "run.completed",
  Failed: "run.failed",
} as const

export type RunOutcome = (typeof RunEvent)[keyof typeof RunEvent]

const STATUS: Record<RunOutcome, "completed" | "failed"> = {
  [RunEvent.Completed]: "completed",
  [RunEvent.Failed]: "failed",
}

/**
 * Records how a run ended (its status, and an entry in `run_event`) in one transaction, and only
 * while `owner` still holds the run's lease: a worker that lost it must not write an outcome.
 */
export async function recordOutcome(
  sql: Db,
  runId: string,
  owner: string,
  event: RunOutcome,
  detail?: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const fenced = await tx`
      UPDATE workflow_run SET status = ${STATUS[event]}, updated_at = now()
      WHERE id = ${runId}
        AND EXISTS (SELECT 1 FROM run_lease WHERE run_id = ${runId} AND owner_id = ${owner} AND valid_until > now())
      RETURNING id
    `
    if (fenced.length === 0) throw new LeaseLostError(runId, owner)
    await tx`INSERT INTO run_event (run_id, type, detail) VALUES (${runId}, ${event}, ${detail ?? null})`
  })
}
