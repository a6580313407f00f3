import { Context } from "effect"

export interface RunnerConfigShape {
  /** host:port other runners and the router reach this runner at; it is the lease owner column. */
  readonly address: string
  readonly shardCount: number
}

export class RunnerConfig extends Context.Tag("shards/RunnerConfig")<RunnerConfig, RunnerConfigShape>() {}
