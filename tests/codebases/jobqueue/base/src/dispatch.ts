import { Effect } from "effect"
import { JobLock } from "./lock"
import { runJob } from "./worker"

export const dispatch = (db: any, bus: any, jobID: string, me: string, work: Effect.Effect<void, Error>) =>
  Effect.gen(function* () {
    yield* JobLock.take(db, jobID, me)
    yield* Effect.forkDaemon(runJob(db, bus, jobID, me, work))
  })
