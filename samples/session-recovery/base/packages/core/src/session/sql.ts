import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core"

/** How long an execution claim stays owned without a renewal. */
export const SESSION_EXECUTION_LEASE_MS = 30 * 1000

export const SessionExecutionTable = sqliteTable(
  "session_execution",
  {
    id: text().primaryKey(),
    session_id: text().notNull(),
    owner_id: text().notNull(),
    phase: text({ enum: ["ready", "running", "safe", "interrupted", "unknown"] }).notNull(),
    assistant_message_id: text(),
    expires_at: integer().notNull(),
    wake_attempts: integer().notNull().default(0),
    recovery_error: text(),
    time_created: integer().notNull(),
  },
  (table) => [
    uniqueIndex("session_execution_session_id_idx").on(table.session_id),
    index("session_execution_expires_attempts_idx").on(table.expires_at, table.wake_attempts, table.time_created),
  ],
)

export const SessionInputTable = sqliteTable(
  "session_input",
  {
    id: text().primaryKey(),
    session_id: text().notNull(),
    delivery: text({ enum: ["steer", "queue"] }).notNull(),
    promoted_seq: integer(),
    wake_pending: integer({ mode: "boolean" }).notNull().default(false),
    wake_attempts: integer().notNull().default(0),
    time_created: integer().notNull(),
  },
  (table) => [
    index("session_input_session_id_idx").on(table.session_id, table.time_created),
    index("session_input_wake_idx").on(table.wake_pending, table.wake_attempts, table.time_created),
  ],
)
