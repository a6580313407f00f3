import type { Db } from "./client"
import { keepLeaseAlive } from "./heartbeat"
import { RunEvent, recordOutcome } from "./history"
import { LeaseLostError, releaseLease } from "./lease"
import type { RunRow, Workflow } from "./types"
import { resumePoint, saveWaypoint } from "./waypoint"

/** `interrupted`: stopped for a shutdown with no outcome; recovery resumes it from its last waypoint. */
export type RunResult = "completed" | "failed" | "interrupted"

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

/**
 * Executes one run under the lease its caller acquired for `owner`. The heartbeat runs beside the
 * steps (racing the two made a step's own error and a heartbeat error look alike in the catch); the
 * lease is released in the finally block, as the run's very last step.
 */
export async function executeRun(
  sql: Db,
  run: RunRow,
  owner: string,
  workflow: Workflow,
  shutdown: AbortSignal,
): Promise<RunResult> {
  const stop = new AbortController()
  // Nobody awaits this promise: when a renewal finds the lease gone it rejects unhandled (the
  // process dies, or the rejection is only logged) and the steps go on without the lease.
  // ruleid: lease-renewal/renewal-not-joined
  const heartbeat = keepLeaseAlive(sql, run.id, owner, stop.signal)
  try {
    await runSteps(sql, run, owner, workflow, AbortSignal.any([stop.signal, shutdown]))
    await recordOutcome(sql, run.id, owner, RunEvent.Completed)
    return "completed"
  } catch (err) {
    if (err instanceof LeaseLostError) throw err
    if (shutdown.aborted) return "interrupted"
    await recordOutcome(sql, run.id, owner, RunEvent.Failed, describe(err))
    return "failed"
  } finally {
    stop.abort()
    await releaseLease(sql, run.id, owner)
  }
}

async function runSteps(sql: Db, run: RunRow, owner: string, workflow: Workflow, signal: AbortSignal): Promise<void> {
  let { stepIndex, state } = await resumePoint(sql, run)
  for (; stepIndex < workflow.steps.length; stepIndex++) {
    signal.throwIfAborted()
    state = await workflow.steps[stepIndex].run(state, { runId: run.id, signal })
    await saveWaypoint(sql, run.id, owner, stepIndex, state)
  }
}
