export * as SessionExecutionLocal from "./local"

import { Effect, Fiber, Schedule } from "effect"
import type { Database } from "../../database/database"
import { SessionRunCoordinator } from "../run-coordinator"
import { SessionExecutionClaim } from "./claim"

type DatabaseService = Database.Interface["db"]

export interface Dependencies {
  readonly db: DatabaseService
  readonly ownerID: string
  readonly run: (claim: SessionExecutionClaim.Claim) => Effect.Effect<void, SessionExecutionClaim.Lost>
}

export interface Interface {
  /** Acquires the Session's claim and starts a run; false when another owner holds it. */
  readonly wake: (sessionID: string) => Effect.Effect<boolean>
  /** Starts a run for a claim the caller already owns (startup recovery). */
  readonly resume: (claim: SessionExecutionClaim.Claim) => Effect.Effect<boolean>
  readonly interrupt: (sessionID: string) => Effect.Effect<void>
  readonly active: Effect.Effect<ReadonlySet<string>>
}

export const make = Effect.fn("SessionExecutionLocal.make")(function* (dependencies: Dependencies) {
  const { db, ownerID } = dependencies
  const coordinator = yield* SessionRunCoordinator.make<string>()
  const activeClaims = new Map<string, SessionExecutionClaim.Claim>()

  const drain = (claim: SessionExecutionClaim.Claim) =>
    Effect.scoped(
      Effect.gen(function* () {
        const heartbeat = yield* SessionExecutionClaim.renew(db, claim).pipe(
          Effect.repeat(Schedule.spaced("10 seconds")),
          Effect.forkScoped,
        )
        // A lost renewal wins the race and interrupts the run.
        yield* dependencies.run(claim).pipe(Effect.raceFirst(Fiber.join(heartbeat)))
      }),
    ).pipe(
      Effect.ensuring(
        Effect.suspend(() => {
          activeClaims.delete(claim.sessionID)
          return SessionExecutionClaim.clear(db, claim)
        }).pipe(Effect.orDie),
      ),
    )

  const resume = Effect.fn("SessionExecutionLocal.resume")(function* (claim: SessionExecutionClaim.Claim) {
    if (activeClaims.has(claim.sessionID)) return false
    activeClaims.set(claim.sessionID, claim)
    return yield* coordinator.start(claim.sessionID, drain(claim))
  })

  const wake = Effect.fn("SessionExecutionLocal.wake")(function* (sessionID: string) {
    const claim = yield* SessionExecutionClaim.acquire(db, sessionID, ownerID)
    if (claim === undefined) return false
    return yield* resume(claim)
  })

  const interrupt = Effect.fn("SessionExecutionLocal.interrupt")(function* (sessionID: string) {
    yield* coordinator.interrupt(sessionID, Effect.void)
  })

  return { wake, resume, interrupt, active: coordinator.active } satisfies Interface
})
