import { Effect } from "effect"
import { and, asc, eq } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { mailbox } from "../db/schema"
import { deliver } from "./deliver"
import * as Mailbox from "./Mailbox"

const RECOVER_PAGE = 50

/** One page of messages a previous owner of the shard left inflight; each is re-taken before it is delivered again. */
const recoverPage = (db: Db, shardId: number) =>
  Effect.gen(function* () {
    const stranded = yield* query(() =>
      db
        .select()
        .from(mailbox)
        .where(and(eq(mailbox.shardId, shardId), eq(mailbox.status, "inflight")))
        .orderBy(asc(mailbox.deliveries))
        .limit(RECOVER_PAGE),
    )
    for (const message of stranded) {
      if (!(yield* Mailbox.reclaim(db, message))) continue
      yield* deliver(db, message)
    }
    return stranded.length
  })

/** Run when a runner starts a shard: pages until a short page says nothing is left inflight. */
export const recoverInflight = (db: Db, shardId: number) =>
  recoverPage(db, shardId).pipe(Effect.repeat({ while: (read) => read === RECOVER_PAGE }))
