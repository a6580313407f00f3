import { Effect, Schedule } from "effect"
import { asc, lt } from "drizzle-orm"
import { query, ShardDb } from "../db/ShardDb"
import { shardLease } from "../db/schema"
import * as ShardLease from "../lease/ShardLease"
import { Assignments } from "../runner/Assignments"
import { RunnerConfig } from "../runner/RunnerConfig"

const ORPHAN_PAGE = 32

/** Shards with no lease row at all (never assigned, or given back): try each; the insert decides who gets it. */
export const claimFree = Effect.gen(function* () {
  const { shardCount } = yield* RunnerConfig
  const assignments = yield* Assignments
  const mine = new Set(yield* assignments.running)
  for (let shardId = 0; shardId < shardCount; shardId++) {
    if (!mine.has(shardId)) yield* assignments.claim(shardId)
  }
})

/**
 * Shards whose lease ran out (their runner died) are taken over, longest-expired first. Each is
 * re-checked by the takeover itself, so a runner that renewed meanwhile keeps its shard.
 */
export const adoptOrphans = Effect.gen(function* () {
  const db = yield* ShardDb
  const { address } = yield* RunnerConfig
  const assignments = yield* Assignments

  const orphans = yield* query(() =>
    db
      .select()
      .from(shardLease)
      .where(lt(shardLease.expiresAt, Date.now()))
      .orderBy(asc(shardLease.expiresAt))
      .limit(ORPHAN_PAGE),
  )
  for (const orphan of orphans) {
    if (!(yield* ShardLease.takeOver(db, orphan, address))) continue
    yield* assignments.adopt(orphan.shardId)
  }
})

/** One pass every 15 seconds; a failed pass is logged and the next one tries again. */
export const rebalanceLoop = claimFree.pipe(
  Effect.zipRight(adoptOrphans),
  Effect.catchTag("DbError", (e) => Effect.logWarning("rebalance pass failed", e.cause)),
  Effect.repeat(Schedule.spaced("15 seconds")),
)
