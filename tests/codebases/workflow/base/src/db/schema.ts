// Table declarations for drizzle-kit (`npm run db:generate` diffs them against the newest snapshot
// under migrations/). The engine does not import this file: it queries with raw SQL.
import { bigserial, index, integer, jsonb, pgTable, text, timestamp, uuid } from "drizzle-orm/pg-core"

export const workflowRun = pgTable(
  "workflow_run",
  {
    id: uuid().primaryKey().defaultRandom(),
    workflow: text().notNull(),
    status: text().notNull().default("pending"), // pending | running | completed | failed
    input: jsonb().notNull(),
    attempts: integer().notNull().default(0),
    waypoint_id: uuid(),
    created_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
    updated_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("workflow_run_status_idx").on(t.status, t.attempts)],
)

export const runEvent = pgTable("run_event", {
  id: bigserial({ mode: "number" }).primaryKey(),
  run_id: uuid().notNull(),
  type: text().notNull(),
  detail: text(),
  recorded_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
})

export const runLease = pgTable("run_lease", {
  run_id: uuid()
    .primaryKey()
    .references(() => workflowRun.id, { onDelete: "cascade" }),
  owner_id: text().notNull(),
  valid_until: timestamp({ withTimezone: true }).notNull(),
})

export const waypoint = pgTable(
  "waypoint",
  {
    id: uuid().primaryKey().defaultRandom(),
    run_id: uuid().notNull(),
    step_index: integer().notNull(),
    state: jsonb().notNull(),
    recorded_at: timestamp({ withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("waypoint_run_idx").on(t.run_id, t.step_index)],
)
