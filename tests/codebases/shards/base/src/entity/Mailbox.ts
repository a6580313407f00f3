import { Effect } from "effect"
import { and, asc, eq, sql } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { mailbox, type MailboxRow } from "../db/schema"

/** The next pending messages of one shard, oldest first. */
export const nextBatch = (db: Db, shardId: number, size: number) =>
  query(() =>
    db
      .select()
      .from(mailbox)
      .where(and(eq(mailbox.shardId, shardId), eq(mailbox.status, "pending")))
      .orderBy(asc(mailbox.enqueuedAt))
      .limit(size),
  )

/** pending -> inflight for one message; answers false when someone else moved it first. */
export const markInflight = (db: Db, id: string) =>
  query(() =>
    db
      .update(mailbox)
      .set({ status: "inflight", deliveries: sql`${mailbox.deliveries} + 1` })
      .where(and(eq(mailbox.id, id), eq(mailbox.status, "pending")))
      .returning({ id: mailbox.id }),
  ).pipe(Effect.map((rows) => rows.length === 1))

/**
 * Re-take a message a crashed owner left inflight: only while it is still inflight with the delivery
 * count the scan saw (nobody settled or re-took it since). Answers whether it is ours to deliver.
 */
export const reclaim = (db: Db, seen: MailboxRow) =>
  query(() =>
    db
      .update(mailbox)
      .set({ deliveries: seen.deliveries + 1 })
      .where(and(eq(mailbox.id, seen.id), eq(mailbox.status, "inflight"), eq(mailbox.deliveries, seen.deliveries)))
      .returning({ id: mailbox.id }),
  ).pipe(Effect.map((rows) => rows.length === 1))

/** inflight -> done | failed. */
export const settle = (db: Db, id: string, status: "done" | "failed") =>
  query(() =>
    db
      .update(mailbox)
      .set({ status })
      .where(and(eq(mailbox.id, id), eq(mailbox.status, "inflight"))),
  ).pipe(Effect.asVoid)
