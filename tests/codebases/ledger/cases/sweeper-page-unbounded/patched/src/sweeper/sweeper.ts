import type { Sql } from "../db/client"
import { HOLD_TTL_MS } from "../holds/Hold"
import type { SqlHold } from "../holds/sqlHold"
import type { Dispatcher } from "../settle/pool"


/** How many transfers one sweep hands on at most; the pool takes at most its capacity anyway. */
export const SWEEP_PAGE = 50

interface StuckTransfer {
  id: string
  attempts: number
  holder: string | null
  expires_at: string | null
}

/**
 * Compare-and-set on what the page saw: insert a hold where there was none, or re-point the row
 * only if it still has the holder and expiry we read. Null when someone got there first.
 */
export async function takeOverHold(sql: Sql, row: StuckTransfer, holder: string, now: number): Promise<SqlHold | null> {
  const subject = `transfer:${row.id}`
  if (row.expires_at === null) {
    const inserted = await sql`
      INSERT INTO holds (subject, holder, expires_at)
      VALUES (${subject}, ${holder}, ${now + HOLD_TTL_MS})
      ON CONFLICT (subject) DO NOTHING
      RETURNING subject
    `
    return inserted.length === 1 ? { subject, holder } : null
  }
  const moved = await sql`
    UPDATE holds SET holder = ${holder}, expires_at = ${now + HOLD_TTL_MS}
    WHERE subject = ${subject} AND holder = ${row.holder} AND expires_at = ${row.expires_at}
    RETURNING subject
  `
  return moved.length === 1 ? { subject, holder } : null
}

/**
 * Boot-time sweep: transfers a dead process left in `settling`, whose hold is missing or expired.
 * Least-attempted first so one poison transfer cannot starve the others; each is taken over before
 * it is handed to the pool (with the hold: the settler does not take it again), and its attempts
 * are bumped.
 */
export async function redriveStuckTransfers(sql: Sql, pool: Dispatcher, holder: string, now = Date.now()): Promise<number> {
  // Read every stuck transfer and stop handing on once SWEEP_PAGE are in flight: a short page no
  // longer ends the boot loop early when some take-overs lose their race.
  // ruleid: bounded-scan/unbounded
  const page = await sql<StuckTransfer[]>`
    SELECT t.id, t.attempts, h.holder, h.expires_at
    FROM transfers t
    LEFT JOIN holds h ON h.subject = 'transfer:' || t.id
    WHERE t.status = 'settling'
      AND (h.expires_at IS NULL OR h.expires_at < ${now})
    ORDER BY t.attempts ASC, t.id ASC
  `
  let handed = 0
  for (const row of page) {
    if (handed >= SWEEP_PAGE) break

    const hold = await takeOverHold(sql, row, holder, now)
    if (hold === null) continue
    await sql`UPDATE transfers SET attempts = attempts + 1, updated_at = ${now} WHERE id = ${row.id}`
    if (pool.dispatch(row.id, hold)) handed++
  }
  return handed
}
