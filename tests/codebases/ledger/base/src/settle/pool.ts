import { Effect } from "effect"
import type { Db } from "../db/client"
import type { Hold } from "../holds/Hold"
import { settleTransfer, settleUnderHold, type Outcome } from "./settler"

export interface Dispatcher {
  /**
   * Starts settling `transferId` in the background, under `hold` when the caller already took it
   * (the sweeper), else under a hold the settler takes. False when the transfer is already in
   * flight here or the pool is full.
   */
  dispatch(transferId: string, hold?: Hold): boolean
}

/** Bounded in-process concurrency for settlements. */
export class SettlementPool implements Dispatcher {
  private readonly inflight = new Map<string, Promise<Outcome | undefined>>()

  constructor(
    private readonly db: Db,
    private readonly holder: string,
    private readonly capacity = 16,
  ) {}

  dispatch(transferId: string, hold?: Hold): boolean {
    if (this.inflight.has(transferId) || this.inflight.size >= this.capacity) return false
    const settle = hold ? settleUnderHold(this.db, transferId, hold) : settleTransfer(this.db, transferId, this.holder)
    const settling = Effect.runPromise(
      settle.pipe(
        Effect.tapErrorCause((cause) => Effect.logError("settlement failed", cause)),
        Effect.option,
        Effect.map((o) => (o._tag === "Some" ? o.value : undefined)),
      ),
    ).finally(() => this.inflight.delete(transferId))
    this.inflight.set(transferId, settling)
    return true
  }

  get size(): number {
    return this.inflight.size
  }

  /** Waits for every settlement in flight; their holds are dropped by their own finalizers. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inflight.values()])
  }
}
