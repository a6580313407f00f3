import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** A quarter of LEASE_TTL_MS: three renewals can miss before the lease runs out. */
export const HEARTBEAT_EVERY = Duration.seconds(5)

/**
 * Renews the shard's lease for as long as it runs. A renewal that fails once (a slow primary, a
 * failover) should not stop a healthy shard, so a failed renewal is logged and the next beat tries again.
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(
    // ruleid: lease-renewal/lost-suppressed
    Effect.orElse(() => Effect.logWarning(`lease renewal for shard ${shardId} failed; retrying on the next beat`)),
    Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)),
  )
