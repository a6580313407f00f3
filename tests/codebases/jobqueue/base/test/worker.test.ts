import { describe, it } from "vitest"
import { runJob } from "../src/worker"

describe("runJob", () => {
  it("lets the lock go when the job ends", () => {
    void runJob
  })
})
