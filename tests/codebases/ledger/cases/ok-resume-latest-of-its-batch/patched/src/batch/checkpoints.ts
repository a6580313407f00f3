import { randomUUID } from "node:crypto"
import { and, desc, eq } from "drizzle-orm"

import type { Db } from "../db/client"
import { settlementCheckpoints } from "../db/schema"

export type Checkpoint = typeof settlementCheckpoints.$inferSelect

export class CheckpointMissing extends Error {
  constructor(
    readonly batchId: string,
    readonly checkpointId: string,
  ) {
    super(`checkpoint ${checkpointId} of batch ${batchId} does not exist`)
    this.name = "CheckpointMissing"
  }
}

/**
 * The checkpoint a batch resumes from: the one the operator named, looked up by its id within the
 * batch. No id: the batch's own latest checkpoint (checkpoints of one batch only ever move forward),
 * or the beginning when it has none.
 */
export async function checkpointToResume(db: Db, batchId: string, checkpointId: string | undefined): Promise<Checkpoint | null> {
  if (checkpointId === undefined) {
    // ok: resume-identity/newest-as-identity
    const [latest] = await db
      .select()
      .from(settlementCheckpoints)
      .where(eq(settlementCheckpoints.batchId, batchId))
      .orderBy(desc(settlementCheckpoints.createdAt))
      .limit(1)
    return latest ?? null
  }
  const [row] = await db
    .select()
    .from(settlementCheckpoints)
    .where(and(eq(settlementCheckpoints.id, checkpointId), eq(settlementCheckpoints.batchId, batchId)))
    .limit(1)
  if (!row) throw new CheckpointMissing(batchId, checkpointId)
  return row
}

export async function writeCheckpoint(db: Db, batchId: string, lastTransferId: string, settledCount: number): Promise<string> {
  const id = randomUUID()
  await db.insert(settlementCheckpoints).values({ id, batchId, lastTransferId, settledCount, createdAt: Date.now() })
  return id
}
