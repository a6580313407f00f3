import { Effect } from "effect"
import { and, eq, lt } from "drizzle-orm"
import { type Db, query } from "../db/ShardDb"
import { shardLease, type ShardLeaseRow } from "../db/schema"
import { ShardLeaseHeld, ShardLeaseLost } from "./errors"

/** How long a lease holds without a renewal: short, so a dead runner's shards fail over within seconds. */
// ok: lease-renewal/renewal-period (reported at each heartbeat the shorter lease leaves too slow)
export const LEASE_TTL_MS = 5_000

/** Take a shard nobody holds. The insert is the compare-and-set: the primary key refuses a second holder. */
export const acquire = (db: Db, shardId: number, runner: string) =>
  query(() =>
    db
      .insert(shardLease)
      .values({ shardId, runnerAddress: runner, expiresAt: Date.now() + LEASE_TTL_MS })
      .onConflictDoNothing()
      .returning({ shardId: shardLease.shardId }),
  ).pipe(Effect.flatMap((rows) => (rows.length === 1 ? Effect.void : Effect.fail(new ShardLeaseHeld({ shardId })))))

/** Push the expiry out. Fails with ShardLeaseLost when the row is gone or names another runner. */
export const renew = (db: Db, shardId: number, runner: string) =>
  query(() =>
    db
      .update(shardLease)
      .set({ expiresAt: Date.now() + LEASE_TTL_MS })
      .where(and(eq(shardLease.shardId, shardId), eq(shardLease.runnerAddress, runner)))
      .returning({ shardId: shardLease.shardId }),
  ).pipe(
    Effect.flatMap((rows) => (rows.length === 0 ? Effect.fail(new ShardLeaseLost({ shardId, runner })) : Effect.void)),
  )

/** Give the shard back; only this runner's own row is deleted. */
export const release = (db: Db, shardId: number, runner: string) =>
  query(() =>
    db.delete(shardLease).where(and(eq(shardLease.shardId, shardId), eq(shardLease.runnerAddress, runner))),
  ).pipe(Effect.asVoid)

/**
 * Take over an orphaned shard. Succeeds only while the row still holds what the scan saw (same runner,
 * same expiry) and that expiry has passed; answers whether this runner now owns the shard.
 */
export const takeOver = (db: Db, seen: ShardLeaseRow, runner: string) =>
  Effect.gen(function* () {
    const now = Date.now()
    const rows = yield* query(() =>
      db
        .update(shardLease)
        .set({ runnerAddress: runner, expiresAt: now + LEASE_TTL_MS })
        .where(
          and(
            eq(shardLease.shardId, seen.shardId),
            eq(shardLease.runnerAddress, seen.runnerAddress),
            eq(shardLease.expiresAt, seen.expiresAt),
            lt(shardLease.expiresAt, now),
          ),
        )
        .returning({ shardId: shardLease.shardId }),
    )
    return rows.length === 1
  })
