import type { Db } from "./client"
import { LeaseLostError } from "./lease"
import type { RunRow } from "./types"

/** The state a run reached after one of its steps: a run resumes from the waypoint it points at. */
export interface Waypoint {
  id: string
  run_id: string
  step_index: number
  state: unknown
}

/**
 * Saves the state after step `stepIndex` and points the run at it, in one transaction and only while
 * `owner` holds the run's lease.
 */
export async function saveWaypoint(
  sql: Db,
  runId: string,
  owner: string,
  stepIndex: number,
  state: unknown,
): Promise<string> {
  return sql.begin(async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      INSERT INTO waypoint (run_id, step_index, state)
      SELECT ${runId}, ${stepIndex}, ${tx.json(state as any)}
      WHERE EXISTS (SELECT 1 FROM run_lease WHERE run_id = ${runId} AND owner_id = ${owner} AND valid_until > now())
      RETURNING id
    `
    if (!row) throw new LeaseLostError(runId, owner)
    await tx`UPDATE workflow_run SET waypoint_id = ${row.id}, updated_at = now() WHERE id = ${runId}`
    return row.id
  })
}

export async function loadWaypoint(sql: Db, waypointId: string): Promise<Waypoint> {
  const [row] = await sql<Waypoint[]>`
    SELECT id, run_id, step_index, state FROM waypoint WHERE id = ${waypointId}
  `
  if (!row) throw new Error(`waypoint ${waypointId} does not exist`)
  return row
}

/** Where a run (re)starts: after the waypoint it points at, or at its first step with its input. */
export async function resumePoint(sql: Db, run: RunRow): Promise<{ stepIndex: number; state: unknown }> {
  if (run.waypoint_id === null) return { stepIndex: 0, state: run.input }
  const waypoint = await loadWaypoint(sql, run.waypoint_id)
  if (waypoint.run_id !== run.id) {
    throw new Error(`waypoint ${waypoint.id} belongs to run ${waypoint.run_id}, not to ${run.id}`)
  }
  return { stepIndex: waypoint.step_index + 1, state: waypoint.state }
}
