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

/**
 * Keeps `batch:<id>` held on a timer until the returned stop function is called. The first failed
 * extension (HoldExpiredError or a database error) stops the timer and aborts `lost` with the
 * error, which the page loop throws at its next transfer.
 */
function keepBatchHold(sql: Sql, hold: SqlHold, lost: AbortController): () => void {
  const timer = setInterval(() => {
    // ok: lease-renewal/lost-suppressed
    extendHold(sql, hold).catch((err: unknown) => {
      clearInterval(timer)
      lost.abort(err)
    })
  }, BATCH_KEEPALIVE_MS) // ok: lease-renewal/renewal-period
  return () => clearInterval(timer)
}

async function settlePages(db: Db, batchId: string, after: string, settled: number, holder: string, signal: AbortSignal) {
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
  const lost = new AbortController()
  const stopKeepalive = keepBatchHold(sql, hold, lost)
  try {
    const done = await settlePages(db, batchId, from?.lastTransferId ?? "", from?.settledCount ?? 0, holder, lost.signal)
    return { status: "done" as const, ...done }
  } finally {
    stopKeepalive()
    await releaseHold(sql, hold)
  }
}
