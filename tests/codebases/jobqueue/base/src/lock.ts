import { Effect } from "effect"
import { and, eq, lt } from "drizzle-orm"
import { JobLockTable } from "./schema"

// How long a lock holds without a refresh.
export const LOCK_TTL = 30_000

export class LockGone extends Error {
  readonly _tag = "LockGone"
}

export const take = (db: any, jobID: string, holder: string) =>
  Effect.sync(() =>
    db.insert(JobLockTable).values({ job_id: jobID, holder, expires_at: Date.now() + LOCK_TTL }).run(),
  )

export const refresh = (db: any, jobID: string, holder: string) =>
  Effect.flatMap(
    Effect.sync(() =>
      db.update(JobLockTable).set({ expires_at: Date.now() + LOCK_TTL })
        .where(and(eq(JobLockTable.job_id, jobID), eq(JobLockTable.holder, holder))).run(),
    ),
    (result: { changes: number }) => (result.changes === 0 ? Effect.fail(new LockGone()) : Effect.void),
  )

export const unlock = (db: any, jobID: string) =>
  Effect.sync(() => db.delete(JobLockTable).where(eq(JobLockTable.job_id, jobID)).run())

export const expired = (db: any, jobID: string) =>
  Effect.sync(() =>
    db.select().from(JobLockTable)
      .where(and(eq(JobLockTable.job_id, jobID), lt(JobLockTable.expires_at, Date.now()))).get() !== undefined,
  )

export * as JobLock from "./lock"
