import { Effect } from "effect"
import { ShardDb } from "../db/ShardDb"
import * as ShardLease from "../lease/ShardLease"
import { RunnerConfig } from "../runner/RunnerConfig"

/**
 * Operator hand-off before a deploy: give a shard back so another runner claims it on its next
 * rebalance pass instead of waiting out the lease.
 *
 * The shard's fiber on this runner is not stopped: it keeps delivering until its next heartbeat finds
 * the row gone, and another runner may already have claimed the shard and be delivering too.
 */
export const handOff = (shardId: number) =>
  Effect.gen(function* () {
    const db = yield* ShardDb
    const { address } = yield* RunnerConfig
    // ruleid: lease-renewal/release-outside-finalizer
    yield* ShardLease.release(db, shardId, address)
    yield* Effect.logInfo(`shard ${shardId} handed off`)
  })
