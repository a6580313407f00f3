import { Effect } from "effect"
import { JobLock } from "./lock"

// An operator's status page only reads whether a lock ran out: it changes nothing.
export const lockState = (db: any, jobID: string) =>
  Effect.map(JobLock.expired(db, jobID), (gone) => (gone ? "free" : "held"))
