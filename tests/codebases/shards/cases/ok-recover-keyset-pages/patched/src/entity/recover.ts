import { Effect, Option } from "effect"
import { and, asc, eq, gt } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { mailbox } from "../db/schema"
import { deliver } from "./deliver"
import * as Mailbox from "./Mailbox"

const RECOVER_PAGE = 50

/**
 * Run when a runner starts a shard: walks the messages a previous owner left inflight in id order, one
 * bounded page at a time, so a message that cannot be re-taken never holds the walk on one page.
 */
export const recoverInflight = (db: Db, shardId: number) =>
  Effect.iterate(Option.some(""), {
    while: Option.isSome,
    body: (after) =>
      Effect.gen(function* () {
        const page = yield* query(() =>
          // ok: bounded-scan/unbounded
          db
            .select()
            .from(mailbox)
            .where(and(eq(mailbox.shardId, shardId), eq(mailbox.status, "inflight"), gt(mailbox.id, after.value)))
            .orderBy(asc(mailbox.id))
            .limit(RECOVER_PAGE),
        )
        for (const message of page) {
          if (!(yield* Mailbox.reclaim(db, message))) continue
          // ok: recovery-revalidation/stale-wake
          yield* deliver(db, message)
        }
        return page.length === RECOVER_PAGE ? Option.some(page[page.length - 1].id) : Option.none<string>()
      }),
  })
