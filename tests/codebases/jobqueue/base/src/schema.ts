import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core"

export const JobTable = sqliteTable("job", {
  id: text().primaryKey(),
  status: text().notNull(), // queued | running | stalled | done | crashed
  attempts: integer().notNull().default(0),
  payload: text().notNull(),
  updated_at: integer().notNull(),
})

export const JobLockTable = sqliteTable("job_lock", {
  job_id: text().primaryKey(),
  holder: text().notNull(),
  expires_at: integer().notNull(),
})

export const CheckpointTable = sqliteTable("checkpoint", {
  id: text().primaryKey(),
  job_id: text().notNull(),
  step: integer().notNull(),
  state: text().notNull(),
  updated_at: integer().notNull(),
})
