import { describe, expect, it, vi } from "vitest"
import type { Sql } from "../src/db/client"
import { redriveStuckTransfers, SWEEP_PAGE } from "../src/sweeper/sweeper"

/** A tagged-template stand-in: answers each statement from a queue, records the SQL text. */
const fakeSql = (answers: unknown[][]) => {
  const seen: string[] = []
  const tag = (strings: TemplateStringsArray) => {
    seen.push(strings.join("?"))
    return Promise.resolve(answers.shift() ?? [])
  }
  return { sql: tag as unknown as Sql, seen }
}

describe("redriveStuckTransfers", () => {
  it("hands a stuck transfer on only after taking its hold over", async () => {
    const { sql, seen } = fakeSql([
      [{ id: "t1", attempts: 0, holder: "old", expires_at: "1" }],
      [], // the take-over matched nothing: someone else has it
    ])
    const pool = { dispatch: vi.fn(() => true) }
    expect(await redriveStuckTransfers(sql, pool, "me", 10)).toBe(0)
    expect(pool.dispatch).not.toHaveBeenCalled()
    expect(seen[0]).toContain("LIMIT")
  })

  it("reads one bounded page", () => {
    expect(SWEEP_PAGE).toBeLessThanOrEqual(100)
  })
})
