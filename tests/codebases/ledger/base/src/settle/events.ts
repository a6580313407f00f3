import { randomUUID } from "node:crypto"
import type { Db } from "../db/client"
import { webhookOutbox } from "../db/schema"
import { query } from "../holds/Hold"

/** Every transfer ends with exactly one of these; the outbox delivers it to the merchant. */
export const TransferEvent = {
  Settled: "transfer.settled",
  Rejected: "transfer.rejected",
} as const

export type TransferEventType = (typeof TransferEvent)[keyof typeof TransferEvent]

export interface OutcomePayload {
  readonly transferId: string
  readonly reason?: string
}

export const publish = (db: Db, type: TransferEventType, payload: OutcomePayload) =>
  query(() =>
    db.insert(webhookOutbox).values({
      id: randomUUID(),
      transferId: payload.transferId,
      eventType: type,
      payload,
      nextAttemptAt: Date.now(),
    }),
  )
