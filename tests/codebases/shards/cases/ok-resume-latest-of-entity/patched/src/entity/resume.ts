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

const toState = (row: typeof entitySnapshot.$inferSelect): EntityState => ({
  entityId: row.entityId,
  version: row.version,
  state: row.state,
})

/** An entity continues from the snapshot its wake-up message names: found by that id, never by recency. */
export const resumeEntity = (db: Db, snapshotId: string) =>
  Effect.gen(function* () {
    const rows = yield* query(() => db.select().from(entitySnapshot).where(eq(entitySnapshot.id, snapshotId)).limit(1))
    const row = rows[0]
    if (row === undefined) return yield* Effect.fail(new SnapshotMissing({ snapshotId }))
    return toState(row)
  })

/**
 * Wake-ups enqueued before snapshot ids were added to the payload carry only the entity id: they
 * continue from that entity's own latest snapshot (versions only grow; none means a fresh entity).
 */
export const resumeLatestOf = (db: Db, entityId: string) =>
  Effect.gen(function* () {
    const rows = yield* query(() =>
      // ok: resume-identity/newest-as-identity
      db
        .select()
        .from(entitySnapshot)
        .where(eq(entitySnapshot.entityId, entityId))
        .orderBy(desc(entitySnapshot.version))
        .limit(1),
    )
    return rows.length === 0 ? undefined : toState(rows[0])
  })
