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
 * The checkpoint a batch resumes from. Operators rarely know the checkpoint id after a crash, so
 * resume from the most recent checkpoint written: that is where the crashed process stopped.
 */
export async function checkpointToResume(db: Db, batchId: string, checkpointId: string | undefined): Promise<Checkpoint | null> {
  if (checkpointId !== undefined) {
    const [named] = await db
      .select()
      .from(settlementCheckpoints)
      .where(and(eq(settlementCheckpoints.id, checkpointId), eq(settlementCheckpoints.batchId, batchId)))
      .limit(1)
    if (!named) throw new CheckpointMissing(batchId, checkpointId)
    return named
  }
  // ruleid: resume-identity/newest-as-identity
  const [latest] = await db.select().from(settlementCheckpoints).orderBy(desc(settlementCheckpoints.createdAt)).limit(1)
  return latest ?? null
}

export async function writeCheckpoint(db: Db, batchId: string, lastTransferId: string, settledCount: number): Promise<string> {
  const id = randomUUID()
  await db.insert(settlementCheckpoints).values({ id, batchId, lastTransferId, settledCount, createdAt: Date.now() })
  return id
}
