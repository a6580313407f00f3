import { Context, Effect, FiberMap, Layer, Ref } from "effect"
import { type DbError, ShardDb } from "../db/ShardDb"
import { EntityRegistry } from "../entity/EntityRegistry"
import { EventLog } from "../entity/events"
import * as ShardLease from "../lease/ShardLease"
import { RunnerConfig } from "./RunnerConfig"
import { runShard } from "./ShardRunner"

/** The shards this runner runs, one fiber each. */
export class Assignments extends Context.Tag("shards/Assignments")<
  Assignments,
  {
    /** Take a free shard's lease and start it; false when another runner holds it or this one is closing. */
    readonly claim: (shardId: number) => Effect.Effect<boolean, DbError>
    /** Start a shard whose lease this runner has just taken over. */
    readonly adopt: (shardId: number) => Effect.Effect<void>
    readonly running: Effect.Effect<ReadonlyArray<number>>
    /** Stop taking shards: the runner is shutting down. */
    readonly close: Effect.Effect<void>
  }
>() {}

export const AssignmentsLive = Layer.scoped(
  Assignments,
  Effect.gen(function* () {
    const db = yield* ShardDb
    const { address } = yield* RunnerConfig
    const context = yield* Effect.context<ShardDb | RunnerConfig | EventLog | EntityRegistry>()
    const fibers = yield* FiberMap.make<number>()
    const closing = yield* Ref.make(false)

    const start = (shardId: number) =>
      FiberMap.run(
        fibers,
        shardId,
        runShard(shardId).pipe(
          Effect.tapErrorCause((cause) => Effect.logWarning(`shard ${shardId} stopped`, cause)),
          Effect.provide(context),
        ),
      ).pipe(Effect.asVoid)

    const claim = (shardId: number) =>
      Effect.gen(function* () {
        yield* ShardLease.acquire(db, shardId, address)
        // A shutdown that began while the insert was in flight: the shard was never started here,
        // so the lease just taken is given straight back instead of idling until it expires.
        if (yield* Ref.get(closing)) {
          // ok: lease-renewal/release-outside-finalizer
          yield* ShardLease.release(db, shardId, address)
          return false
        }
        yield* start(shardId)
        return true
      }).pipe(Effect.catchTag("ShardLeaseHeld", () => Effect.succeed(false)))

    return {
      claim,
      adopt: start,
      running: FiberMap.keys(fibers).pipe(Effect.map((keys) => Array.from(keys))),
      close: Ref.set(closing, true),
    }
  }),
)
