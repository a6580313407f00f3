import postgres from "postgres"

/** The client, or a transaction of it: both are called as a tagged template. */
export type Db = postgres.Sql | postgres.TransactionSql

export function connect(url = process.env.DATABASE_URL): postgres.Sql {
  if (!url) throw new Error("DATABASE_URL is not set")
  return postgres(url, { max: 10, idle_timeout: 30, connect_timeout: 10 })
}
