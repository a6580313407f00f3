import { Context, Effect } from "effect"
import type { DbError } from "../db/ShardDb"

/** How handling one mailbox message ended. Exactly one of the two is published per delivery. */
export const EntityEvent = {
  Completed: "entity.message.completed",
  Faulted: "entity.message.faulted",
} as const

export type EntityEventType = (typeof EntityEvent)[keyof typeof EntityEvent]

export interface EntityEventBody {
  readonly messageId: string
  readonly entityId: string
  readonly detail?: string
}

export class EventLog extends Context.Tag("shards/EventLog")<
  EventLog,
  { readonly publish: (type: EntityEventType, body: EntityEventBody) => Effect.Effect<void, DbError> }
>() {}
