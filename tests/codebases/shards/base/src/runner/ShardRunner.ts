import { Duration, Effect, Fiber } from "effect"
import { type Db, ShardDb } from "../db/ShardDb"
import { deliver } from "../entity/deliver"
import * as Mailbox from "../entity/Mailbox"
import { recoverInflight } from "../entity/recover"
import * as ShardLease from "../lease/ShardLease"
import { keepAlive } from "./heartbeat"
import { RunnerConfig } from "./RunnerConfig"

const BATCH = 25
const IDLE = Duration.millis(250)

/** Delivers the shard's pending messages one at a time, forever. */
const drain = (db: Db, shardId: number) =>
  Effect.gen(function* () {
    const batch = yield* Mailbox.nextBatch(db, shardId, BATCH)
    for (const message of batch) {
      if (!(yield* Mailbox.markInflight(db, message.id))) continue
      yield* deliver(db, message)
    }
    if (batch.length === 0) yield* Effect.sleep(IDLE)
  }).pipe(Effect.forever)

/**
 * Runs a shard whose lease this runner already holds (Assignments took it). The heartbeat races the
 * work, so a lost lease stops the shard; the lease is given back by the run's own finalizer, after
 * the heartbeat and the deliveries have stopped.
 */
export const runShard = (shardId: number) =>
  Effect.gen(function* () {
    const db = yield* ShardDb
    const { address } = yield* RunnerConfig

    yield* Effect.addFinalizer(() => ShardLease.release(db, shardId, address).pipe(Effect.orDie))
    const heartbeat = yield* Effect.forkScoped(keepAlive(db, shardId, address))

    yield* Effect.logInfo(`shard ${shardId} started`)
    yield* Effect.raceFirst(
      recoverInflight(db, shardId).pipe(Effect.zipRight(drain(db, shardId))),
      Fiber.join(heartbeat),
    )
  }).pipe(Effect.scoped, Effect.annotateLogs("shard", shardId))
