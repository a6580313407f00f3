import { randomUUID } from "node:crypto"
import { and, eq, sql as dsql } from "drizzle-orm"
import { Data, Effect } from "effect"
import type { Db } from "../db/client"
import { postings, transfers, type TransferStatus } from "../db/schema"
import { LedgerDbError, query } from "../holds/Hold"

export class InsufficientFunds extends Data.TaggedError("InsufficientFunds")<{
  readonly account: string
  readonly reason: string
}> {}

export class TransferMissing extends Data.TaggedError("TransferMissing")<{ readonly transferId: string }> {}

export type Transfer = typeof transfers.$inferSelect

export const loadTransfer = (db: Db, transferId: string) =>
  Effect.gen(function* () {
    const rows = yield* query(() => db.select().from(transfers).where(eq(transfers.id, transferId)).limit(1))
    if (rows.length === 0) return yield* Effect.fail(new TransferMissing({ transferId }))
    return rows[0]!
  })

export const markStatus = (db: Db, transferId: string, status: TransferStatus) =>
  query(() => db.update(transfers).set({ status, updatedAt: Date.now() }).where(eq(transfers.id, transferId)))

/** Debit and credit in one transaction; idempotent, so a re-driven transfer posts nothing twice. */
export const writePostings = (db: Db, transfer: Transfer) =>
  Effect.tryPromise({
    try: () =>
      db.transaction(async (tx) => {
        const [balance] = await tx
          .select({ total: dsql<string>`coalesce(sum(${postings.deltaMinor}), 0)` })
          .from(postings)
          .where(eq(postings.account, transfer.debitAccount))
        const already = await tx
          .select({ id: postings.id })
          .from(postings)
          .where(and(eq(postings.transferId, transfer.id), eq(postings.account, transfer.debitAccount)))
          .limit(1)
        if (already.length === 0 && BigInt(balance?.total ?? "0") < transfer.amountMinor) {
          return { ok: false as const, account: transfer.debitAccount }
        }
        const now = Date.now()
        await tx
          .insert(postings)
          .values([
            { id: randomUUID(), transferId: transfer.id, account: transfer.debitAccount, deltaMinor: -transfer.amountMinor, createdAt: now },
            { id: randomUUID(), transferId: transfer.id, account: transfer.creditAccount, deltaMinor: transfer.amountMinor, createdAt: now },
          ])
          .onConflictDoNothing()
        return { ok: true as const }
      }),
    catch: (cause) => new LedgerDbError({ cause }),
  }).pipe(
    Effect.flatMap((result) =>
      result.ok
        ? Effect.void
        : Effect.fail(new InsufficientFunds({ account: result.account, reason: "insufficient_funds" })),
    ),
  )
