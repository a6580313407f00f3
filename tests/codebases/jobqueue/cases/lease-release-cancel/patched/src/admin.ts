import { Effect } from "effect"
import { JobLock } from "./lock"

// An operator's cancel holds no lock of its own: letting the job's lock go here frees it for a
// second worker while the first one still runs the job.
export const cancelJob = (db: any, jobID: string) =>
  Effect.log(`cancel ${jobID}`).pipe(
    // ruleid: lease-renewal/release-outside-finalizer
    Effect.ensuring(JobLock.unlock(db, jobID)),
  )
