import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** A quarter of LEASE_TTL_MS: three renewals can miss before the lease runs out. */
export const HEARTBEAT_EVERY = Duration.seconds(5)

/**
 * Renews the shard's lease for as long as it runs. A renewal the database refused (a failover) is
 * retried twice, half a second apart, well inside the lease; a lost lease is never retried: it is
 * logged and fails the heartbeat, which stops the shard.
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(
    Effect.retry({ schedule: Schedule.spaced("500 millis"), times: 2, while: (e) => e._tag === "DbError" }),
    // ok: lease-renewal/lost-suppressed
    Effect.catchTag("ShardLeaseLost", (lost) =>
      Effect.logError(`shard ${lost.shardId} lease lost`).pipe(Effect.zipRight(Effect.fail(lost))),
    ),
    Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)),
  )
