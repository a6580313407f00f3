import { Effect } from "effect"
import { asc, eq } from "drizzle-orm"
import { JobTable } from "./schema"
import { JobLock } from "./lock"
import { Queue } from "./queue"

// At boot: page through stalled jobs, oldest attempts first; wake each whose lock has run out.
export const reviveStalled = (db: any) =>
  Effect.gen(function* () {
    const stalled = db.select().from(JobTable).where(eq(JobTable.status, "stalled"))
      .orderBy(asc(JobTable.attempts)).limit(50).all()
    for (const job of stalled) {
      // ruleid: recovery-revalidation/stale-wake
      yield* Queue.wake(db, job.id)
    }
  })
