import { Effect } from "effect"
import { desc, eq } from "drizzle-orm"
import { CheckpointTable } from "./schema"

// A job resumes from its own checkpoint: the row is found by the job's id, never by recency.
export const resumeFrom = (db: any, checkpointID: string) =>
  Effect.sync(() => db.select().from(CheckpointTable).where(eq(CheckpointTable.id, checkpointID)).get())

// A job's own latest checkpoint: pinned to the job by its id, so the newest of its rows is its state.
export const latestOf = (db: any, jobID: string) =>
  Effect.sync(() =>
    // ok: resume-identity/newest-as-identity
    db.select().from(CheckpointTable).where(eq(CheckpointTable.job_id, jobID)).orderBy(desc(CheckpointTable.updated_at)).limit(1).get(),
  )
