import { describe, expect, it } from "vitest"
import { BATCH_KEEPALIVE_MS } from "../src/batch/settleBatch"
import { HOLD_TTL_MS } from "../src/holds/Hold"
import { KEEPALIVE_MS } from "../src/holds/keepalive"

describe("hold keepalive", () => {
  it("extends a transfer hold well inside its expiry", () => {
    expect(KEEPALIVE_MS * 2).toBeLessThan(HOLD_TTL_MS)
  })

  it("extends a batch hold well inside its expiry", () => {
    expect(BATCH_KEEPALIVE_MS * 2).toBeLessThan(HOLD_TTL_MS)
  })
})
