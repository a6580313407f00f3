import { Cause, Effect, Schedule } from "effect"
import type { Db } from "../db/ShardDb"
import type { MailboxRow } from "../db/schema"
import { EntityRegistry } from "./EntityRegistry"
import { EntityEvent, EventLog } from "./events"
import * as Mailbox from "./Mailbox"

/** A failing handler gets two more tries, a second apart, before the message is settled as failed. */
const handlerRetries = Schedule.spaced("1 second").pipe(Schedule.intersect(Schedule.recurs(2)))

/** Hands one inflight message to its entity and records how that ended: done + Completed, or failed + Faulted. */
export const deliver = (db: Db, message: MailboxRow) =>
  Effect.gen(function* () {
    const registry = yield* EntityRegistry
    const events = yield* EventLog
    const body = { messageId: message.id, entityId: message.entityId }

    yield* registry.handle(message).pipe(
      Effect.retry(handlerRetries),
      Effect.matchCauseEffect({
        onFailure: (cause) =>
          Mailbox.settle(db, message.id, "failed").pipe(
            Effect.zipRight(events.publish(EntityEvent.Faulted, { ...body, detail: Cause.pretty(cause) })),
          ),
        onSuccess: () =>
          Mailbox.settle(db, message.id, "done").pipe(
            // ok: terminal-commit-order/success-after-failure
            Effect.zipRight(events.publish(EntityEvent.Completed, body)),
          ),
      }),
    )
  })
