export type RunStatus = "pending" | "running" | "completed" | "failed"

/** A row of `workflow_run`, as the engine reads it. */
export interface RunRow {
  id: string
  workflow: string
  input: unknown
  waypoint_id: string | null
  attempts: number
}

export interface StepContext {
  runId: string
  /** Aborted when the run must stop (shutdown, lost lease): a long step should give up early. */
  signal: AbortSignal
}

export interface Step {
  name: string
  run(state: unknown, ctx: StepContext): Promise<unknown>
}

export interface Workflow {
  name: string
  steps: readonly Step[]
  /** Undoes the effects of a failed run's completed steps, when the workflow can. */
  compensate?: (input: unknown, runId: string) => Promise<void>
}

export type WorkflowRegistry = ReadonlyMap<string, Workflow>
