import { Effect } from "effect"
import { eq } from "drizzle-orm"
import { CheckpointTable } from "./schema"

// A job resumes from its own checkpoint: the row is found by the job's id, never by recency.
export const resumeFrom = (db: any, checkpointID: string) =>
  Effect.sync(() => db.select().from(CheckpointTable).where(eq(CheckpointTable.id, checkpointID)).get())
