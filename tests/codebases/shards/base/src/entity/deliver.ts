import { Cause, Effect, Exit } from "effect"
import type { Db } from "../db/ShardDb"
import type { MailboxRow } from "../db/schema"
import { EntityRegistry } from "./EntityRegistry"
import { EntityEvent, EventLog } from "./events"
import * as Mailbox from "./Mailbox"

/** Hands one inflight message to its entity and records how that ended: done + Completed, or failed + Faulted. */
export const deliver = (db: Db, message: MailboxRow) =>
  Effect.gen(function* () {
    const registry = yield* EntityRegistry
    const events = yield* EventLog
    const body = { messageId: message.id, entityId: message.entityId }

    const exit = yield* Effect.exit(registry.handle(message))
    if (Exit.isFailure(exit)) {
      yield* Mailbox.settle(db, message.id, "failed")
      yield* events.publish(EntityEvent.Faulted, { ...body, detail: Cause.pretty(exit.cause) })
      return
    }
    yield* Mailbox.settle(db, message.id, "done")
    yield* events.publish(EntityEvent.Completed, body)
  })
