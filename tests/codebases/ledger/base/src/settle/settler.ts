import { Effect, Fiber, Option } from "effect"
import type { Db } from "../db/client"
import * as Hold from "../holds/Hold"
import { keepalive } from "../holds/keepalive"
import { publish, TransferEvent } from "./events"
import { loadTransfer, markStatus, writePostings } from "./postings"

export type Outcome = "settled" | "rejected" | "busy"

/** Posts the transfer and records its one outcome. Runs while we hold `transfer:<id>`. */
const settleHeld = (db: Db, transferId: string) =>
  Effect.gen(function* () {
    const transfer = yield* loadTransfer(db, transferId)
    if (transfer.status === "settled" || transfer.status === "rejected") return transfer.status
    yield* markStatus(db, transferId, "settling")

    const result = yield* writePostings(db, transfer).pipe(
      Effect.as("settled" as const),
      Effect.catchTag("InsufficientFunds", (e) =>
        Effect.gen(function* () {
          yield* markStatus(db, transferId, "rejected")
          yield* publish(db, TransferEvent.Rejected, { transferId, reason: e.reason })
          return "rejected" as const
        }),
      ),
    )
    if (result === "rejected") return result

    yield* markStatus(db, transferId, "settled")
    yield* publish(db, TransferEvent.Settled, { transferId })
    return result
  })

/**
 * Settles one transfer under a hold already taken (by `settleTransfer`, or by the sweeper's
 * take-over). The keepalive is forked into the scope and raced against the work, so a lost hold
 * stops the work; the hold is dropped by the scope's finalizer, after the keepalive fiber and the
 * work have both stopped.
 */
export const settleUnderHold = (db: Db, transferId: string, hold: Hold.Hold) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* Effect.addFinalizer(() => Hold.drop(db, hold).pipe(Effect.orDie))

      const alive = yield* keepalive(db, hold).pipe(Effect.forkScoped)
      const outcome: Outcome = yield* settleHeld(db, transferId).pipe(
        Effect.raceFirst(Fiber.join(alive).pipe(Effect.zipRight(Effect.never))),
      )
      return outcome
    }),
  ).pipe(Effect.withSpan("ledger.settleUnderHold", { attributes: { transferId, holder: hold.holder } }))

/** Takes the transfer's hold and settles it; "busy" while another process holds it. */
export const settleTransfer = (db: Db, transferId: string, holder: string) =>
  Effect.gen(function* () {
    const taken = yield* Hold.acquire(db, Hold.subjectOf(transferId), holder)
    if (Option.isNone(taken)) return "busy" as Outcome
    return yield* settleUnderHold(db, transferId, taken.value)
  })

