import type { Sql } from "../db/client"
import { HOLD_TTL_MS as TTL } from "../holds/Hold"
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

/** Transfers a dead process left in `settling`, whose hold is missing or expired; one page. */
async function listStuck(sql: Sql, now: number): Promise<StuckTransfer[]> {
  // ok: bounded-scan/unbounded
  return sql<StuckTransfer[]>`
    SELECT t.id, t.attempts, h.holder, h.expires_at
      FROM transfers t
      LEFT JOIN holds h ON h.subject = 'transfer:' || t.id
     WHERE t.status = 'settling' AND (h.expires_at IS NULL OR h.expires_at < ${now})
     ORDER BY t.attempts ASC, t.id ASC
     LIMIT ${SWEEP_PAGE}
  `
}

/**
 * Compare-and-set on what the page saw: insert a hold where there was none, or re-point the row
 * only if it still has the holder and expiry we read. Null when someone got there first.
 */
export async function takeOverHold(sql: Sql, row: StuckTransfer, holder: string, now: number): Promise<SqlHold | null> {
  const subject = `transfer:${row.id}`
  const changed =
    row.expires_at === null
      ? await sql`
          INSERT INTO holds (subject, holder, expires_at) VALUES (${subject}, ${holder}, ${now + TTL})
          ON CONFLICT (subject) DO NOTHING
          RETURNING subject`
      : await sql`
          UPDATE holds SET holder = ${holder}, expires_at = ${now + TTL}
           WHERE subject = ${subject} AND holder = ${row.holder} AND expires_at = ${row.expires_at}
          RETURNING subject`
  return changed.length === 1 ? { subject, holder } : null
}

/** Takes one stuck transfer over and hands it on; false when the take-over lost its race. */
async function handOn(sql: Sql, pool: Dispatcher, row: StuckTransfer, holder: string, now: number): Promise<boolean> {
  const hold = await takeOverHold(sql, row, holder, now)
  if (!hold) return false
  await sql`UPDATE transfers SET attempts = attempts + 1, updated_at = ${now} WHERE id = ${row.id}`
  return pool.dispatch(row.id, hold) // ok: recovery-revalidation/stale-wake
}

/**
 * Boot-time sweep, least-attempted first so one poison transfer cannot starve the others. Each
 * transfer is taken over (compare-and-set) before it is handed to the pool, and its attempts bumped.
 */
export async function redriveStuckTransfers(sql: Sql, pool: Dispatcher, holder: string, now = Date.now()): Promise<number> {
  let handed = 0
  for (const row of await listStuck(sql, now)) {
    if (await handOn(sql, pool, row, holder, now)) handed += 1
  }
  return handed
}
