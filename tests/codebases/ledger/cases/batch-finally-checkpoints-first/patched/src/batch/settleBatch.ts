import { setTimeout as sleep } from "node:timers/promises"
import { and, asc, eq, gt } from "drizzle-orm"
import { Effect } from "effect"
import type { Db, Sql } from "../db/client"
import { transfers } from "../db/schema"
import { HOLD_TTL_MS } from "../holds/Hold"
import { extendHold, releaseHold, takeHold, type SqlHold } from "../holds/sqlHold"
import { settleTransfer } from "../settle/settler"
import { checkpointToResume, writeCheckpoint } from "./checkpoints"

export const BATCH_PAGE = 100
export const BATCH_KEEPALIVE_MS = HOLD_TTL_MS / 3

/** Keeps `batch:<id>` held until aborted; rejects with HoldExpiredError when the hold is lost. */
async function keepBatchHold(sql: Sql, hold: SqlHold, signal: AbortSignal): Promise<never> {
  for (;;) {
    await sleep(BATCH_KEEPALIVE_MS, undefined, { signal })
    await extendHold(sql, hold)
  }
}

interface Progress {
  after: string
  settled: number
}

async function settlePages(db: Db, batchId: string, progress: Progress, holder: string, signal: AbortSignal) {
  let { after, settled } = progress
  for (;;) {
    const page = await db
      .select({ id: transfers.id })
      .from(transfers)
      .where(and(eq(transfers.batchId, batchId), gt(transfers.id, after)))
      .orderBy(asc(transfers.id))
      .limit(BATCH_PAGE)
    if (page.length === 0) return { after, settled }
    for (const { id } of page) {
      signal.throwIfAborted()
      await Effect.runPromise(settleTransfer(db, id, holder))
      settled++
      after = id
      progress.after = after
      progress.settled = settled
    }
    await writeCheckpoint(db, batchId, after, settled)
  }
}

/**
 * Settles a batch in transfer-id order under the batch's hold, writing a checkpoint after every
 * page. Resumes after the checkpoint `checkpointId` names (by its id), or from the start.
 */
export async function resumeBatch(db: Db, sql: Sql, batchId: string, checkpointId: string | undefined, holder: string) {
  const from = await checkpointToResume(db, batchId, checkpointId)
  const hold = await takeHold(sql, `batch:${batchId}`, holder)
  if (hold === null) return { status: "busy" as const }
  const progress: Progress = { after: from?.lastTransferId ?? "", settled: from?.settledCount ?? 0 }
  const stop = new AbortController()
  const alive = keepBatchHold(sql, hold, stop.signal)
  try {
    const done = await Promise.race([settlePages(db, batchId, progress, holder, stop.signal), alive])
    return { status: "done" as const, ...done }
  } finally {
    stop.abort()
    // Leave a checkpoint even when the batch stops half-way, so the next resume skips what is done.
    // ruleid: cleanup-propagation/fallible-before-finalization
    await writeCheckpoint(db, batchId, progress.after, progress.settled)
    await releaseHold(sql, hold)
  }
}
