export * as SessionEvent from "./event"

import { Effect, Schema } from "effect"

const define = <const Type extends string, Fields extends Schema.Struct.Fields>(type: Type, fields: Fields) => ({
  type,
  schema: Schema.Struct(fields),
})

const step = {
  sessionID: Schema.String,
  timestamp: Schema.Number,
  assistantMessageID: Schema.String,
}

const tool = {
  sessionID: Schema.String,
  timestamp: Schema.Number,
  callID: Schema.String,
}

export const Step = {
  Started: define("session.next.step.started", step),
  Ended: define("session.next.step.ended", { ...step, finish: Schema.String }),
  Failed: define("session.next.step.failed", {
    ...step,
    error: Schema.Struct({ type: Schema.String, message: Schema.String }),
  }),
  Interrupted: define("session.next.step.interrupted", { ...step, reason: Schema.String }),
}

export const Tool = {
  Called: define("session.next.tool.called", { ...tool, name: Schema.String, input: Schema.Unknown }),
  Completed: define("session.next.tool.completed", { ...tool, output: Schema.Unknown }),
  Failed: define("session.next.tool.failed", { ...tool, message: Schema.String }),
}

export type Definition = (typeof Step)[keyof typeof Step] | (typeof Tool)[keyof typeof Tool]

export interface PublishOptions<E> {
  /** Runs in the same transaction that appends the event. */
  readonly commit?: () => Effect.Effect<void, E>
}

export interface Publisher {
  readonly publish: <D extends Definition, E = never>(
    definition: D,
    data: D["schema"]["Type"],
    options?: PublishOptions<E>,
  ) => Effect.Effect<void, E>
}
