import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { connect } from "./client"
import { workLoop } from "./dispatch"
import { RunPool } from "./pool"
import { recoverStalledRuns, sweepLeftoverLeases } from "./recovery"
import type { WorkflowRegistry } from "./types"

/** Starts a worker: recovers what dead workers left behind, then takes pending runs until SIGTERM. */
export async function startWorker(workflows: WorkflowRegistry): Promise<void> {
  const sql = connect()
  const owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`
  const pool = new RunPool(sql, owner, workflows)

  const recovered = await recoverStalledRuns(sql, pool)
  console.info(`worker ${owner}: recovered ${recovered} stalled run(s)`)
  const swept = await sweepLeftoverLeases(sql)
  if (swept > 0) console.info(`worker ${owner}: deleted ${swept} lease(s) left behind by ended runs`)

  const loop = workLoop(sql, pool)
  process.once("SIGTERM", () => {
    void (async () => {
      await pool.shutdown()
      await loop
      await sql.end({ timeout: 5 })
    })()
  })
  await loop
}
