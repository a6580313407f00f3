import { Effect } from "effect"
import type { Db } from "../db/ShardDb"
import type { MailboxRow } from "../db/schema"
import { EntityRegistry } from "./EntityRegistry"
import { EntityEvent, EventLog } from "./events"
import * as Mailbox from "./Mailbox"

/** Hands one inflight message to its entity and records how that ended. */
export const deliver = (db: Db, message: MailboxRow) =>
  Effect.gen(function* () {
    const registry = yield* EntityRegistry
    const events = yield* EventLog
    const body = { messageId: message.id, entityId: message.entityId }

    yield* registry.handle(message).pipe(
      Effect.catchAll((failure) =>
        Mailbox.settle(db, message.id, "failed").pipe(
          Effect.zipRight(events.publish(EntityEvent.Faulted, { ...body, detail: failure.reason })),
        ),
      ),
    )
    yield* Mailbox.settle(db, message.id, "done")
    // ruleid: terminal-commit-order/success-after-failure
    yield* events.publish(EntityEvent.Completed, body)
  })
