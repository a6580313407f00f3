import { Duration, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"

/** Renewals were a third of our write load on the primary: beat less often. */
// ruleid: lease-renewal/renewal-period
export const HEARTBEAT_EVERY = Duration.seconds(30)

/**
 * Renews the shard's lease for as long as it runs. It never succeeds: it ends only by failing, with
 * ShardLeaseLost when another runner has the shard or a DbError when renewal could not be written.
 */
export const keepAlive = (db: Db, shardId: number, runner: string) =>
  ShardLease.renew(db, shardId, runner).pipe(Effect.repeat(Schedule.spaced(HEARTBEAT_EVERY)))
