import { afterEach, describe, expect, it, vi } from "vitest"
import { HEARTBEAT_MS, keepLeaseAlive } from "../src/heartbeat"
import { LEASE_MS, LeaseLostError } from "../src/lease"

// A stand-in for the postgres client: every query answers with the rows `answer` gives for its text.
function fakeSql(answer: (query: string) => unknown[]) {
  const sql = (strings: TemplateStringsArray, ..._values: unknown[]) => Promise.resolve(answer(strings.join("$")))
  return Object.assign(sql, {
    json: (value: unknown) => value,
    array: (value: unknown[]) => value,
    begin: (fn: (tx: unknown) => unknown) => Promise.resolve(fn(sql)),
  }) as any
}

afterEach(() => {
  vi.useRealTimers()
})

describe("keepLeaseAlive", () => {
  it("renews well inside the lease", () => {
    expect(HEARTBEAT_MS).toBeLessThanOrEqual(LEASE_MS / 3)
  })

  it("renews on every beat until stopped", async () => {
    vi.useFakeTimers()
    const renewals: string[] = []
    const sql = fakeSql((query) => {
      renewals.push(query)
      return [{ run_id: "run-1" }]
    })
    const stop = new AbortController()
    const beat = keepLeaseAlive(sql, "run-1", "worker-a", stop.signal)
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS * 3)
    stop.abort()
    await beat
    expect(renewals).toHaveLength(3)
  })

  it("fails with LeaseLostError when the renewal matches no row", async () => {
    vi.useFakeTimers()
    const stop = new AbortController()
    const beat = keepLeaseAlive(fakeSql(() => []), "run-1", "worker-a", stop.signal)
    const outcome = beat.then(
      () => "resolved",
      (err: unknown) => err,
    )
    await vi.advanceTimersByTimeAsync(HEARTBEAT_MS)
    expect(await outcome).toBeInstanceOf(LeaseLostError)
  })
})
