import { Context, Data, Effect, Layer } from "effect"
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres"
import { Pool } from "pg"
import * as schema from "./schema"

export type Db = NodePgDatabase<typeof schema>

export class DbError extends Data.TaggedError("DbError")<{ readonly cause: unknown }> {}

export class ShardDb extends Context.Tag("shards/ShardDb")<ShardDb, Db>() {}

export const ShardDbLive = (url: string) =>
  Layer.scoped(
    ShardDb,
    Effect.acquireRelease(
      Effect.sync(() => new Pool({ connectionString: url, max: 10 })),
      (pool) => Effect.promise(() => pool.end()),
    ).pipe(Effect.map((pool) => drizzle(pool, { schema }))),
  )

/** Runs one drizzle query; a rejected promise becomes a DbError. */
export const query = <A>(statement: () => Promise<A>) =>
  Effect.tryPromise({ try: statement, catch: (cause) => new DbError({ cause }) })
