export * as Database from "./database"

import { EffectDrizzleSqlite } from "@opencode-ai/effect-drizzle-sqlite"
import { Context, Effect, Layer } from "effect"
import { migrations } from "./migration.gen"

export type Client = EffectDrizzleSqlite.Database

export interface Interface {
  readonly db: Client
}

export class Service extends Context.Service<Service, Interface>()("@opencode/Database") {}

export const layer = (filename: string) =>
  Layer.effect(
    Service,
    Effect.gen(function* () {
      const db = yield* EffectDrizzleSqlite.open(filename)
      for (const migration of migrations) yield* db.migrate(migration.name, migration.statements)
      return Service.of({ db })
    }),
  )

export const layerMemory = layer(":memory:")
