import { hostname } from "node:os"
import { resumeBatch } from "./batch/settleBatch"
import { db, sql } from "./db/client"
import { SettlementPool } from "./settle/pool"
import { redriveStuckTransfers, SWEEP_PAGE } from "./sweeper/sweeper"
import { deliverLoop, type Send } from "./webhooks/deliver"

const holder = `${hostname()}:${process.pid}`
const pool = new SettlementPool(db, holder)
const shutdown = new AbortController()

const send: Send = async (row) => {
  const res = await fetch(process.env.LEDGER_WEBHOOK_URL ?? "http://localhost:8080/hooks", {
    method: "POST",
    headers: { "content-type": "application/json", "x-ledger-event": row.event_type },
    body: JSON.stringify({ id: row.id, transferId: row.transfer_id, payload: row.payload }),
  })
  return { status: res.status }
}

async function boot(): Promise<void> {
  // Re-drive what the previous process left half-settled, one page at a time, until a page comes back short.
  while ((await redriveStuckTransfers(sql, pool, holder)) === SWEEP_PAGE) await pool.drain()

  const deliveries = deliverLoop(sql, send, shutdown.signal)
  const sweeps = setInterval(() => {
    redriveStuckTransfers(sql, pool, holder).catch((err) => console.error("sweep failed", err))
  }, 60_000)

  const batchId = process.env.LEDGER_RESUME_BATCH
  if (batchId) console.log("batch", await resumeBatch(db, sql, batchId, process.env.LEDGER_RESUME_CHECKPOINT, holder))

  process.once("SIGTERM", async () => {
    clearInterval(sweeps)
    shutdown.abort()
    await pool.drain()
    await deliveries
    await sql.end({ timeout: 5 })
  })
}

boot().catch((err) => {
  console.error(err)
  process.exit(1)
})
