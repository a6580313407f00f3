import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** A quarter of LEASE_TTL_MS: three renewals can miss before the lease runs out. */
export const HEARTBEAT_EVERY = Duration.seconds(5)

/**
 * Renews the shard's lease for as long as it runs. It never succeeds: it ends only by failing, with
 * ShardLeaseLost when another runner has the shard or a DbError when renewal could not be written.
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)))
