import type { Db } from "./client"
import { releaseLease } from "./lease"
import { executeRun } from "./runner"
import type { RunRow, WorkflowRegistry } from "./types"

/**
 * The runs this worker executes. Each run holds its own lease and gives it up in its own finally
 * block.
 */
export class RunPool {
  private readonly active = new Map<string, Promise<void>>()
  private readonly stopping = new AbortController()

  constructor(
    private readonly sql: Db,
    readonly owner: string,
    private readonly workflows: WorkflowRegistry,
  ) {}

  get size(): number {
    return this.active.size
  }

  /** Aborted once the worker shuts down. */
  get signal(): AbortSignal {
    return this.stopping.signal
  }

  get workflowNames(): string[] {
    return [...this.workflows.keys()]
  }

  knows(workflow: string): boolean {
    return this.workflows.has(workflow)
  }

  /** Starts a run whose lease this worker has just acquired. */
  launch(run: RunRow): void {
    const workflow = this.workflows.get(run.workflow)
    if (!workflow) throw new Error(`workflow ${run.workflow} is not registered on this worker`)
    const done = executeRun(this.sql, run, this.owner, workflow, this.stopping.signal)
      .then((result) => console.info(`run ${run.id}: ${result}`))
      .catch((err) => console.error(`run ${run.id} stopped:`, err))
      .finally(() => this.active.delete(run.id))
    this.active.set(run.id, done)
  }

  /**
   * Stops taking work and asks every run to stop after its current step. Deploys were slow because
   * every run of a stopping worker sat out its lease before another worker could recover it: hand
   * the leases back straight away, then wait for the runs.
   */
  async shutdown(): Promise<void> {
    this.stopping.abort()
    for (const runId of this.active.keys()) {
      // The run is still inside its current step here: another worker's recovery sees it running
      // with no lease and starts it a second time.
      // ruleid: lease-renewal/release-outside-finalizer
      await releaseLease(this.sql, runId, this.owner)
    }
    await Promise.allSettled(this.active.values())
  }
}
