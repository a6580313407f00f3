import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** Well under half of LEASE_TTL_MS even with jitter's +20%: 4.8 seconds at most. */
export const HEARTBEAT_EVERY = Duration.seconds(4)

/**
 * Renews the shard's lease for as long as it runs, jittered so the runners' renewals do not all hit
 * the primary on the same tick. It ends only by failing (ShardLeaseLost or a DbError).
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(
    // ok: lease-renewal/renewal-period
    Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY).pipe(Schedule.jittered)),
  )
