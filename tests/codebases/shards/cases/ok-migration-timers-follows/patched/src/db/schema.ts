import { bigint, index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core"

// One row per shard some runner holds. A runner owns shard N while the row names its address and
// `expires_at` (epoch ms) is still ahead; its heartbeat keeps pushing the expiry out.
export const shardLease = pgTable("shard_lease", {
  shardId: integer("shard_id").primaryKey(),
  runnerAddress: text("runner_address").notNull(),
  expiresAt: bigint("expires_at", { mode: "number" }).notNull(),
})

// Messages addressed to entities. An entity lives on the shard its id hashes to, so the shard's
// runner is the only one that delivers its messages.
export const mailbox = pgTable(
  "mailbox",
  {
    id: text("id").primaryKey(),
    entityId: text("entity_id").notNull(),
    shardId: integer("shard_id").notNull(),
    tag: text("tag").notNull(),
    payload: jsonb("payload").notNull(),
    status: text("status", { enum: ["pending", "inflight", "done", "failed"] }).notNull().default("pending"),
    deliveries: integer("deliveries").notNull().default(0),
    enqueuedAt: bigint("enqueued_at", { mode: "number" }).notNull(),
  },
  (t) => [index("mailbox_shard_status").on(t.shardId, t.status)],
)

// An entity's persisted state: one row per snapshot taken. A message that wakes an entity names
// the snapshot it continues from.
export const entitySnapshot = pgTable("entity_snapshot", {
  id: text("id").primaryKey(),
  entityId: text("entity_id").notNull(),
  shardId: integer("shard_id").notNull(),
  version: integer("version").notNull(),
  state: jsonb("state").notNull(),
  createdAt: bigint("created_at", { mode: "number" }).notNull(),
})

// A message an entity scheduled for itself: delivered to its mailbox once `fire_at` has passed.
export const entityTimer = pgTable(
  "entity_timer",
  {
    id: text("id").primaryKey(),
    entityId: text("entity_id").notNull(),
    shardId: integer("shard_id").notNull(),
    tag: text("tag").notNull(),
    fireAt: bigint("fire_at", { mode: "number" }).notNull(),
  },
  (t) => [index("entity_timer_shard_fire").on(t.shardId, t.fireAt)],
)

export type MailboxRow = typeof mailbox.$inferSelect
export type ShardLeaseRow = typeof shardLease.$inferSelect
