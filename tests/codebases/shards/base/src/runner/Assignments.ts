import { Context, Effect, FiberMap, Layer } from "effect"
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
    /** Take a free shard's lease and start it; false when another runner holds it. */
    readonly claim: (shardId: number) => Effect.Effect<boolean, DbError>
    /** Start a shard whose lease this runner has just taken over. */
    readonly adopt: (shardId: number) => Effect.Effect<void>
    readonly running: Effect.Effect<ReadonlyArray<number>>
  }
>() {}

export const AssignmentsLive = Layer.scoped(
  Assignments,
  Effect.gen(function* () {
    const db = yield* ShardDb
    const { address } = yield* RunnerConfig
    const context = yield* Effect.context<ShardDb | RunnerConfig | EventLog | EntityRegistry>()
    const fibers = yield* FiberMap.make<number>()

    const start = (shardId: number) =>
      FiberMap.run(
        fibers,
        shardId,
        runShard(shardId).pipe(
          Effect.tapErrorCause((cause) => Effect.logWarning(`shard ${shardId} stopped`, cause)),
          Effect.provide(context),
        ),
      ).pipe(Effect.asVoid)

    return {
      claim: (shardId) =>
        ShardLease.acquire(db, shardId, address).pipe(
          Effect.zipRight(start(shardId)),
          Effect.as(true),
          Effect.catchTag("ShardLeaseHeld", () => Effect.succeed(false)),
        ),
      adopt: start,
      running: FiberMap.keys(fibers).pipe(Effect.map((keys) => Array.from(keys))),
    }
  }),
)
