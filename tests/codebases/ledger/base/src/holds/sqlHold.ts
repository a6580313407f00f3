import type { Sql } from "../db/client"
import { HOLD_TTL_MS } from "./Hold"

/** The same holds, for the plain-async parts of the service (batches, the sweeper). */
export interface SqlHold {
  readonly subject: string
  readonly holder: string
}

export class HoldExpiredError extends Error {
  constructor(
    readonly subject: string,
    readonly holder: string,
  ) {
    super(`hold on ${subject} is no longer held by ${holder}`)
    this.name = "HoldExpiredError"
  }
}

export async function takeHold(sql: Sql, subject: string, holder: string, now = Date.now()): Promise<SqlHold | null> {
  const rows = await sql`
    INSERT INTO holds (subject, holder, expires_at)
    VALUES (${subject}, ${holder}, ${now + HOLD_TTL_MS})
    ON CONFLICT (subject) DO UPDATE
      SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
      WHERE holds.expires_at < ${now}

    RETURNING subject
  `
  return rows.length === 1 ? { subject, holder } : null
}

/** Throws HoldExpiredError when the row is gone or someone else's. */
export async function extendHold(sql: Sql, hold: SqlHold): Promise<void> {
  const rows = await sql`
    UPDATE holds SET expires_at = ${Date.now() + HOLD_TTL_MS}
    WHERE subject = ${hold.subject} AND holder = ${hold.holder}
    RETURNING subject
  `
  if (rows.length === 0) throw new HoldExpiredError(hold.subject, hold.holder)
}

export async function releaseHold(sql: Sql, hold: SqlHold): Promise<void> {
  await sql`DELETE FROM holds WHERE subject = ${hold.subject} AND holder = ${hold.holder}`
}
