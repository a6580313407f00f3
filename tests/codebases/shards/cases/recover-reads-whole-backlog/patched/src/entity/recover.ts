import { Effect } from "effect"
import { and, asc, eq, inArray } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { mailbox } from "../db/schema"
import { deliver } from "./deliver"
import * as Mailbox from "./Mailbox"

/**
 * Run when a runner starts a shard: what the shard's previous owner left behind, the messages it had
 * inflight and the pending backlog that piled up while the shard had no runner, is delivered in one
 * pass, oldest first, before the live loop starts.
 */
export const recoverInflight = (db: Db, shardId: number) =>
  Effect.gen(function* () {
    const leftBehind = yield* query(() =>
      // ruleid: bounded-scan/unbounded
      db
        .select()
        .from(mailbox)
        .where(and(eq(mailbox.shardId, shardId), inArray(mailbox.status, ["inflight", "pending"])))
        .orderBy(asc(mailbox.enqueuedAt)),
    )
    for (const message of leftBehind) {
      const mine =
        message.status === "inflight" ? yield* Mailbox.reclaim(db, message) : yield* Mailbox.markInflight(db, message.id)
      if (!mine) continue
      yield* deliver(db, message)
    }
  })
