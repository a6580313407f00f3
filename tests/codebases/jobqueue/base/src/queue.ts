import { Effect } from "effect"
import { eq } from "drizzle-orm"
import { JobTable } from "./schema"

export const wake = (db: any, jobID: string) =>
  Effect.sync(() => db.update(JobTable).set({ status: "queued", updated_at: Date.now() }).where(eq(JobTable.id, jobID)).run())

export * as Queue from "./queue"
