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
 * Executes one run under the lease its caller acquired for `owner`. The heartbeat is raced with the
 * steps, so a lost lease ends the run (and nothing is recorded: another worker owns it now). Only the
 * steps are inside the inner try now: a failure to record the completion is no longer reported as a
 * failure of the run itself. The lease is released in the finally block, as the run's very last step.
 */
export async function executeRun(
  sql: Db,
  run: RunRow,
  owner: string,
  workflow: Workflow,
  shutdown: AbortSignal,
): Promise<RunResult> {
  const stop = new AbortController()
  const heartbeat = keepLeaseAlive(sql, run.id, owner, stop.signal)
  let result: RunResult = "completed"
  try {
    try {
      await Promise.race([runSteps(sql, run, owner, workflow, AbortSignal.any([stop.signal, shutdown])), heartbeat])
    } catch (err) {
      if (err instanceof LeaseLostError) throw err
      if (shutdown.aborted) return "interrupted"
      await recordOutcome(sql, run.id, owner, RunEvent.Failed, describe(err))
      result = "failed"
    }
    // Reached after the catch recorded run.failed too: the failed run is then marked completed.
    // ruleid: terminal-commit-order/success-after-failure
    await recordOutcome(sql, run.id, owner, RunEvent.Completed)
    return result
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
