import { Effect, Layer } from "effect"
import { ShardDbLive } from "./db/ShardDb"
import { rebalanceLoop } from "./rebalance/rebalance"
import { AssignmentsLive } from "./runner/Assignments"
import { RunnerConfig } from "./runner/RunnerConfig"

/** The runner's main fiber: claims free shards and adopts orphans until it is interrupted. */
export const runner = rebalanceLoop.pipe(Effect.annotateLogs("component", "runner"))

/** Everything but the application's EventLog and EntityRegistry, which the embedding service provides. */
export const RunnerLive = (url: string, address: string, shardCount: number) =>
  AssignmentsLive.pipe(
    Layer.provideMerge(ShardDbLive(url)),
    Layer.provideMerge(Layer.succeed(RunnerConfig, { address, shardCount })),
  )
