export * as SessionRunCoordinator from "./run-coordinator"

import { Deferred, Effect, Fiber, Scope } from "effect"

/** Runs at most one execution per key; different keys run concurrently. */
export interface Coordinator<Key> {
  /** Snapshots keys with an execution owned by this coordinator. */
  readonly active: Effect.Effect<ReadonlySet<Key>>
  /** Forks `run` for `key` unless an execution for it is already active. */
  readonly start: <E>(key: Key, run: Effect.Effect<void, E>) => Effect.Effect<boolean>
  /** Interrupts the active execution, waits for all of its finalizers, then runs `cleanup`. */
  readonly interrupt: <E>(key: Key, cleanup: Effect.Effect<void, E>) => Effect.Effect<void, E>
}

type Entry = {
  readonly fiber: Fiber.Fiber<void, unknown>
  stopping: boolean
}

export const make = Effect.fn("SessionRunCoordinator.make")(function* <Key>() {
  const scope = yield* Scope.Scope
  const entries = new Map<Key, Entry>()

  const start = Effect.fnUntraced(function* <E>(key: Key, run: Effect.Effect<void, E>) {
    if (entries.has(key)) return false
    const gate = yield* Deferred.make<void>()
    const fiber = yield* Deferred.await(gate).pipe(
      Effect.andThen(run),
      Effect.tapCause((cause) => Effect.logError("Session run failed", cause)),
      Effect.onExit(() => Effect.sync(() => entries.delete(key))),
      Effect.forkIn(scope),
    )
    entries.set(key, { fiber, stopping: false })
    yield* Deferred.succeed(gate, undefined)
    return true
  })

  const interrupt = <E>(key: Key, cleanup: Effect.Effect<void, E>) =>
    Effect.gen(function* () {
      const entry = entries.get(key)
      if (entry !== undefined) {
        // Both calls return only after the runner's finalizers have completed.
        if (entry.stopping) yield* Fiber.await(entry.fiber)
        else {
          entry.stopping = true
          yield* Fiber.interrupt(entry.fiber)
        }
      }
      yield* cleanup
    })

  return {
    active: Effect.sync(() => new Set(entries.keys()) as ReadonlySet<Key>),
    start,
    interrupt,
  } satisfies Coordinator<Key>
})
