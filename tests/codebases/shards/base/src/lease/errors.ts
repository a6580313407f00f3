import { Data } from "effect"

/** The lease row is gone or names another runner: this runner no longer owns the shard. */
export class ShardLeaseLost extends Data.TaggedError("ShardLeaseLost")<{
  readonly shardId: number
  readonly runner: string
}> {}

/** Another runner holds the shard (its lease row exists). */
export class ShardLeaseHeld extends Data.TaggedError("ShardLeaseHeld")<{
  readonly shardId: number
}> {}
