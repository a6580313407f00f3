import { Effect, Fiber, Schedule } from "effect"
import { JobLock } from "./lock"
import { JobEvent, emit } from "./events"

// A worker runs one job under the lock the dispatcher took for it: the heartbeat keeps the lock
// fresh (a lost lock ends the job through the race), and the worker lets it go when the job ends.
export const runJob = (db: any, bus: any, jobID: string, me: string, work: Effect.Effect<void, Error>) =>
  Effect.gen(function* () {
    const beat = yield* Effect.forkScoped(
      JobLock.refresh(db, jobID, me).pipe(
        // ruleid: lease-renewal/lost-suppressed
        Effect.catchAll(() => Effect.logWarning("refresh failed")),
        Effect.repeat(Schedule.spaced("10 seconds")),
      ),
    )
    const exit = yield* Effect.exit(Effect.raceFirst(work, Fiber.join(beat)))
    if (exit._tag === "Failure") {
      yield* emit(bus, JobEvent.Crashed, jobID)
      return
    }
    yield* emit(bus, JobEvent.Done, jobID)
  }).pipe(Effect.ensuring(JobLock.unlock(db, jobID)), Effect.scoped)
