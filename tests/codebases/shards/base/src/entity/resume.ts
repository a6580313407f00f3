import { Data, Effect } from "effect"
import { eq } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { entitySnapshot } from "../db/schema"

export class SnapshotMissing extends Data.TaggedError("SnapshotMissing")<{ readonly snapshotId: string }> {}

export interface EntityState {
  readonly entityId: string
  readonly version: number
  readonly state: unknown
}

/** An entity continues from the snapshot its wake-up message names: found by that id, never by recency. */
export const resumeEntity = (db: Db, snapshotId: string) =>
  Effect.gen(function* () {
    const rows = yield* query(() => db.select().from(entitySnapshot).where(eq(entitySnapshot.id, snapshotId)).limit(1))
    const row = rows[0]
    if (row === undefined) return yield* Effect.fail(new SnapshotMissing({ snapshotId }))
    return { entityId: row.entityId, version: row.version, state: row.state } satisfies EntityState
  })
