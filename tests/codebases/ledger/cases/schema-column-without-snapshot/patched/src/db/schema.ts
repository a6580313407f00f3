import { bigint, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core"

export type TransferStatus = "pending" | "settling" | "settled" | "rejected"

/** A movement of money between two accounts; settled once, by whoever holds `transfer:<id>`. */
export const transfers = pgTable(
  "transfers",
  {
    id: text("id").primaryKey(),
    debitAccount: text("debit_account").notNull(),
    creditAccount: text("credit_account").notNull(),
    amountMinor: bigint("amount_minor", { mode: "bigint" }).notNull(),
    currency: text("currency").notNull(),
    status: text("status").$type<TransferStatus>().notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    batchId: text("batch_id"),
    /** The merchant's own reference for the transfer, echoed in every webhook. */
    // ruleid: schema-prev-ids/ddl-without-snapshot
    reference: text("reference"),

    createdAt: bigint("created_at", { mode: "number" }).notNull(),
    updatedAt: bigint("updated_at", { mode: "number" }).notNull(),
  },
  (t) => [index("transfers_status_attempts").on(t.status, t.attempts), index("transfers_batch").on(t.batchId, t.id)],
)

/** One row per held subject (`transfer:<id>`, `batch:<id>`): who may work on it, until when. */
export const holds = pgTable("holds", {
  subject: text("subject").primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
})

/** Double-entry lines; a transfer posts exactly one debit and one credit. */
export const postings = pgTable(
  "postings",
  {
    id: text("id").primaryKey(),
    transferId: text("transfer_id").notNull(),
    account: text("account").notNull(),
    deltaMinor: bigint("delta_minor", { mode: "bigint" }).notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [uniqueIndex("postings_transfer_account").on(t.transferId, t.account)],
)

/** Progress of a settlement batch: the last transfer (by id) whose outcome is durable. */
export const settlementCheckpoints = pgTable(
  "settlement_checkpoints",
  {
    id: text("id").primaryKey(),
    batchId: text("batch_id").notNull(),
    lastTransferId: text("last_transfer_id").notNull(),
    settledCount: integer("settled_count").notNull(),
    createdAt: bigint("created_at", { mode: "number" }).notNull(),
  },
  (t) => [index("checkpoints_batch_created").on(t.batchId, t.createdAt)],
)

/** Outcome events waiting to be delivered to the merchant's webhook endpoint. */
export const webhookOutbox = pgTable(
  "webhook_outbox",
  {
    id: text("id").primaryKey(),
    transferId: text("transfer_id").notNull(),
    eventType: text("event_type").notNull(),
    payload: jsonb("payload").notNull(),
    status: text("status").notNull().default("queued"),
    deliveries: integer("deliveries").notNull().default(0),
    nextAttemptAt: bigint("next_attempt_at", { mode: "number" }).notNull(),
  },
  (t) => [index("outbox_status_next").on(t.status, t.nextAttemptAt)],
)
