import { defineConfig } from "drizzle-kit"

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/db/schema.ts",
  out: "./migrations",
  dbCredentials: { url: process.env.LEDGER_DATABASE_URL ?? "postgres://localhost:5432/ledger" },
})
