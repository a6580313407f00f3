import { describe, expect, it } from "@effect/vitest"
import { sql } from "drizzle-orm"
import { Deferred, Effect, TestClock } from "effect"
import { Database } from "../src/database/database"
import { SessionExecutionLocal } from "../src/session/execution/local"
import { SessionExecutionTable } from "../src/session/sql"

const sessionID = "ses_local"

const insertSession = Effect.gen(function* () {
  const { db } = yield* Database.Service
  yield* db.run(sql`INSERT INTO project (id, worktree, time_created) VALUES ('prj_local', '/project', 0)`)
  yield* db.run(sql`INSERT INTO session (id, project_id, title, time_created) VALUES (${sessionID}, 'prj_local', 'test', 0)`)
})

const claims = Effect.gen(function* () {
  const { db } = yield* Database.Service
  return yield* db.select().from(SessionExecutionTable).all()
})

describe("SessionExecutionLocal", () => {
  it.effect("renews the claim while the run is active", () =>
    Effect.gen(function* () {
      yield* insertSession
      const { db } = yield* Database.Service
      const started = yield* Deferred.make<void>()
      const execution = yield* SessionExecutionLocal.make({
        db,
        ownerID: "owner",
        run: () => Deferred.succeed(started, undefined).pipe(Effect.andThen(Effect.never)),
      })
      expect(yield* execution.wake(sessionID)).toBe(true)
      yield* Deferred.await(started)
      const before = (yield* claims)[0]?.expires_at ?? 0
      yield* TestClock.adjust("10 seconds")
      yield* Effect.yieldNow

      expect((yield* claims)[0]?.expires_at).toBeGreaterThan(before)
    }).pipe(Effect.scoped, Effect.provide(Database.layerMemory)),
  )

  it.effect("refuses a second owner while the claim is live", () =>
    Effect.gen(function* () {
      yield* insertSession
      const { db } = yield* Database.Service
      const first = yield* SessionExecutionLocal.make({ db, ownerID: "first", run: () => Effect.never })
      const second = yield* SessionExecutionLocal.make({ db, ownerID: "second", run: () => Effect.never })
      expect(yield* first.wake(sessionID)).toBe(true)
      expect(yield* second.wake(sessionID)).toBe(false)
    }).pipe(Effect.scoped, Effect.provide(Database.layerMemory)),
  )

  it.effect("clears the claim once the run and its finalizers are done", () =>
    Effect.gen(function* () {
      yield* insertSession
      const { db } = yield* Database.Service
      const finalized = yield* Deferred.make<void>()
      const execution = yield* SessionExecutionLocal.make({
        db,
        ownerID: "owner",
        run: () => Effect.never.pipe(Effect.ensuring(Deferred.succeed(finalized, undefined))),
      })
      yield* execution.wake(sessionID)
      yield* execution.interrupt(sessionID)

      expect(yield* Deferred.isDone(finalized)).toBe(true)
      expect(yield* claims).toHaveLength(0)
    }).pipe(Effect.scoped, Effect.provide(Database.layerMemory)),
  )
})
