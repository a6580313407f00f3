import { setTimeout as sleep } from "node:timers/promises"
import type { Sql } from "../db/client"

export const DELIVERY_PAGE = 25
export const POLL_MS = 2_000
const MAX_DELIVERIES = 12

export interface OutboxRow {
  id: string
  transfer_id: string
  event_type: string
  payload: unknown
  deliveries: number
}

export type Send = (row: OutboxRow) => Promise<{ status: number }>

const backoffMs = (deliveries: number) => Math.min(60 * 60_000, 1_000 * 2 ** deliveries)

/** Moves one row queued -> sending; false when another deliverer took it first. */
async function takeForDelivery(sql: Sql, id: string): Promise<boolean> {
  const taken = await sql`
    UPDATE webhook_outbox SET status = 'sending', deliveries = deliveries + 1
    WHERE id = ${id} AND status = 'queued'
    RETURNING id
  `
  return taken.length === 1
}

async function deliverOne(sql: Sql, send: Send, row: OutboxRow): Promise<void> {
  if (!(await takeForDelivery(sql, row.id))) return
  let ok = false
  try {
    const res = await send(row)
    ok = res.status >= 200 && res.status < 300
  } catch {
    ok = false
  }
  if (ok) {
    await sql`UPDATE webhook_outbox SET status = 'delivered' WHERE id = ${row.id}`
  } else if (row.deliveries + 1 >= MAX_DELIVERIES) {
    await sql`UPDATE webhook_outbox SET status = 'dead' WHERE id = ${row.id}`
  } else {
    await sql`
      UPDATE webhook_outbox SET status = 'queued', next_attempt_at = ${Date.now() + backoffMs(row.deliveries + 1)}
      WHERE id = ${row.id}
    `
  }
}

/** Polls the outbox until aborted: due rows, fewest deliveries first, one page per round. */
export async function deliverLoop(sql: Sql, send: Send, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const due = await sql<OutboxRow[]>`
      SELECT id, transfer_id, event_type, payload, deliveries
      FROM webhook_outbox
      WHERE status = 'queued' AND next_attempt_at <= ${Date.now()}
      ORDER BY deliveries ASC, next_attempt_at ASC
      LIMIT ${DELIVERY_PAGE}
    `
    for (const row of due) await deliverOne(sql, send, row)
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined)
  }
}
