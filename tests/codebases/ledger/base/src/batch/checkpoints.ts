import { randomUUID } from "node:crypto"
import { and, eq } from "drizzle-orm"
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
 * The checkpoint a batch resumes from: the one the operator (or the batch's last run of
 * `settleBatch`) named, looked up by its id within the batch. No id: start at the beginning.
 */
export async function checkpointToResume(db: Db, batchId: string, checkpointId: string | undefined): Promise<Checkpoint | null> {
  if (checkpointId === undefined) return null
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
