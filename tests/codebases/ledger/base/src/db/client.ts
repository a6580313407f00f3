import { drizzle } from "drizzle-orm/postgres-js"
import postgres from "postgres"
import * as schema from "./schema"

export const sql = postgres(process.env.LEDGER_DATABASE_URL ?? "postgres://localhost:5432/ledger", {
  max: 10,
  idle_timeout: 30,
})

export const db = drizzle({ client: sql, schema })

export type Sql = typeof sql
export type Db = typeof db
