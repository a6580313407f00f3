import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** A quarter of LEASE_TTL_MS: three renewals can miss before the lease runs out. */
export const HEARTBEAT_EVERY = Duration.seconds(5)

/** Back off between failed renewals so a struggling primary is not hammered. */
const renewalBackoff = Schedule.exponential("200 millis").pipe(Schedule.union(Schedule.spaced("3 seconds")))

/**
 * Renews the shard's lease for as long as it runs. A failed renewal is retried with backoff until it
 * goes through, then the heartbeat carries on.
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(
    // ruleid: lease-renewal/lost-suppressed
    Effect.retry(renewalBackoff),
    Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)),
  )
