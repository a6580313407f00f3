import { Effect } from "effect"
import { desc, eq } from "drizzle-orm"
import { CheckpointTable } from "./schema"

// A job resumes from its own checkpoint: the row is found by the job's id, never by recency.
export const resumeFrom = (db: any, checkpointID: string) =>
  Effect.sync(() => db.select().from(CheckpointTable).where(eq(CheckpointTable.id, checkpointID)).get())

// After a restart, resume "the" interrupted job: whichever checkpoint was written last, of any job.
// With two jobs interrupted, the other one is never resumed and this one may be resumed twice.
export const resumeLatest = (db: any) =>
  Effect.sync(() =>
    // ruleid: resume-identity/newest-as-identity
    db.select().from(CheckpointTable).orderBy(desc(CheckpointTable.updated_at)).limit(1).get(),
  )
