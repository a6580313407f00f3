import { Data, Effect } from "effect"
import { desc, eq } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { entitySnapshot } from "../db/schema"

export class SnapshotMissing extends Data.TaggedError("SnapshotMissing")<{ readonly snapshotId: string }> {}

export interface EntityState {
  readonly entityId: string
  readonly version: number
  readonly state: unknown
}

/**
 * An entity continues from the snapshot its wake-up message names. Wake-ups enqueued before snapshot
 * ids were added to the payload carry none: those continue from the most recent snapshot.
 */
export const resumeEntity = (db: Db, snapshotId: string | undefined) =>
  Effect.gen(function* () {
    const rows =
      snapshotId === undefined
        ? yield* query(() =>
            // ruleid: resume-identity/newest-as-identity
            db.select().from(entitySnapshot).orderBy(desc(entitySnapshot.createdAt)).limit(1),
          )
        : yield* query(() => db.select().from(entitySnapshot).where(eq(entitySnapshot.id, snapshotId)).limit(1))
    const row = rows[0]
    if (row === undefined) return yield* Effect.fail(new SnapshotMissing({ snapshotId: snapshotId ?? "(latest)" }))
    return { entityId: row.entityId, version: row.version, state: row.state } satisfies EntityState
  })
