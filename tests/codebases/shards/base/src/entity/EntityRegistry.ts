import { Context, Data, Effect } from "effect"
import type { MailboxRow } from "../db/schema"

export class EntityFailure extends Data.TaggedError("EntityFailure")<{ readonly reason: string }> {}

/** Behaviours by entity type; `handle` runs one message against the entity it is addressed to. */
export class EntityRegistry extends Context.Tag("shards/EntityRegistry")<
  EntityRegistry,
  { readonly handle: (message: MailboxRow) => Effect.Effect<void, EntityFailure> }
>() {}
