import type { Db } from "./client"
import { keepLeaseAlive } from "./heartbeat"
import { RunEvent, recordOutcome } from "./history"
import { LeaseLostError, releaseLease } from "./lease"
import type { RunRow, Workflow } from "./types"
import { resumePoint, saveWaypoint } from "./waypoint"
import { notifyRunFinished } from "./notify"

/** `interrupted`: stopped for a shutdown with no outcome; recovery resumes it from its last waypoint. */
export type RunResult = "completed" | "failed" | "interrupted"

const describe = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err))

/**
 * Executes one run under the lease its caller acquired for `owner`. The heartbeat is raced with the
 * steps, so a lost lease ends the run (and nothing is recorded: another worker owns it now). However
 * the run ends, its watchers are told; the lease is released whether or not that worked, as the
 * run's very last step.
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
  let result: RunResult | "lost" = "lost"
  try {
    await Promise.race([runSteps(sql, run, owner, workflow, AbortSignal.any([stop.signal, shutdown])), heartbeat])
    await recordOutcome(sql, run.id, owner, RunEvent.Completed)
    return (result = "completed")
  } catch (err) {
    if (err instanceof LeaseLostError) throw err
    if (shutdown.aborted) return (result = "interrupted")
    await recordOutcome(sql, run.id, owner, RunEvent.Failed, describe(err))
    return (result = "failed")
  } finally {
    stop.abort()
    // The webhook may fail: its failure is kept as a value so the release below always runs.
    // ok: cleanup-propagation/fallible-before-finalization
    const notified = await notifyRunFinished(run.id, result).then(
      () => undefined,
      (err: unknown) => ({ err }),
    )
    await releaseLease(sql, run.id, owner)
    // The notification is best effort (the outcome is in run_event already): say so and go on.
    if (notified) console.warn(`run ${run.id}: could not notify watchers:`, notified.err)
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
