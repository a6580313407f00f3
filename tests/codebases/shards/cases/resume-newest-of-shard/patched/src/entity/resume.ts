import { Data, Effect } from "effect"
import { desc, eq } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { entitySnapshot, type MailboxRow } from "../db/schema"

export class SnapshotMissing extends Data.TaggedError("SnapshotMissing")<{ readonly messageId: string }> {}

export interface EntityState {
  readonly entityId: string
  readonly version: number
  readonly state: unknown
}

/**
 * An entity continues from the latest snapshot on its shard, so wake-up messages no longer have to
 * carry a snapshot id.
 */
export const resumeEntity = (db: Db, message: MailboxRow) =>
  Effect.gen(function* () {
    const rows = yield* query(() =>
      db
        .select()
        .from(entitySnapshot)
        .where(eq(entitySnapshot.shardId, message.shardId))
        // ruleid: resume-identity/newest-as-identity
        .orderBy(desc(entitySnapshot.createdAt))
        .limit(1),
    )
    const row = rows[0]
    if (row === undefined) return yield* Effect.fail(new SnapshotMissing({ messageId: message.id }))
    return { entityId: row.entityId, version: row.version, state: row.state } satisfies EntityState
  })
