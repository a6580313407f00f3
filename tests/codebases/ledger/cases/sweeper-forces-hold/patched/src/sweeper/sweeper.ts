import type { Sql } from "../db/client"
import { HOLD_TTL_MS } from "../holds/Hold"
import type { SqlHold } from "../holds/sqlHold"
import type { Dispatcher } from "../settle/pool"


/** Largest page one sweep reads; the pool takes at most its capacity of them anyway. */
export const SWEEP_PAGE = 50

interface StuckTransfer {
  id: string
  attempts: number
  holder: string | null
  expires_at: string | null
}

/**
 * Points the transfer's hold at us, whatever the row says now: the page only lists transfers whose
 * hold was missing or expired, so there is nothing to compare against.
 */
export async function forceHold(sql: Sql, transferId: string, holder: string, now: number): Promise<SqlHold> {
  const subject = `transfer:${transferId}`
  await sql`
    INSERT INTO holds (subject, holder, expires_at)
    VALUES (${subject}, ${holder}, ${now + HOLD_TTL_MS})
    ON CONFLICT (subject) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
  `
  return { subject, holder }
}

/**
 * Boot-time sweep: transfers a dead process left in `settling`, whose hold is missing or expired.
 * Least-attempted first so one poison transfer cannot starve the others; each is handed to the
 * pool with its hold (the settler does not take it again), and its attempts are bumped.
 */
export async function redriveStuckTransfers(sql: Sql, pool: Dispatcher, holder: string, now = Date.now()): Promise<number> {
  const page = await sql<StuckTransfer[]>`
    SELECT t.id, t.attempts, h.holder, h.expires_at
    FROM transfers t
    LEFT JOIN holds h ON h.subject = 'transfer:' || t.id
    WHERE t.status = 'settling'
      AND (h.expires_at IS NULL OR h.expires_at < ${now})
    ORDER BY t.attempts ASC, t.id ASC
    LIMIT ${SWEEP_PAGE}
  `
  let handed = 0
  for (const row of page) {
    const hold = await forceHold(sql, row.id, holder, now)
    await sql`UPDATE transfers SET attempts = attempts + 1, updated_at = ${now} WHERE id = ${row.id}`
    // ruleid: recovery-revalidation/stale-wake
    if (pool.dispatch(row.id, hold)) handed++

  }
  return handed
}
