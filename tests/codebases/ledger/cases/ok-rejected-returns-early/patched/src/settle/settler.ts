import { Effect, Either, Fiber, Option } from "effect"

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

    // Each path records exactly one outcome and returns: a rejection never falls through.
    const posted = yield* Effect.either(writePostings(db, transfer))
    if (Either.isLeft(posted)) {
      const failure = posted.left
      if (failure._tag !== "InsufficientFunds") return yield* Effect.fail(failure)
      yield* markStatus(db, transferId, "rejected")
      yield* publish(db, TransferEvent.Rejected, { transferId, reason: failure.reason })
      return "rejected" as const
    }

    yield* markStatus(db, transferId, "settled")
    yield* publish(db, TransferEvent.Settled, { transferId }) // ok: terminal-commit-order/success-after-failure
    return "settled" as const
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

