import { describe, expect, it } from "vitest"
import { LEASE_TTL_MS } from "../src/lease/ShardLease"
import { HEARTBEAT_EVERY } from "../src/runner/heartbeat"
import { Duration } from "effect"

describe("shard lease", () => {
  it("renews well inside the lease", () => {
    expect(Duration.toMillis(HEARTBEAT_EVERY) * 2).toBeLessThan(LEASE_TTL_MS)
  })
})
