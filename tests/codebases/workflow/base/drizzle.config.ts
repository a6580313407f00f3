import { defineConfig } from "drizzle-kit"

// The tables are declared in src/db/schema.ts for drizzle-kit only: the engine itself talks to
// Postgres with raw SQL through the `postgres` client.
export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  dbCredentials: { url: process.env.DATABASE_URL ?? "postgres://localhost/workflow" },
})
