import { Effect } from "effect"

export const JobEvent = {
  Done: "job.done",
  Crashed: "job.crashed",
} as const

export const emit = (bus: any, type: string, jobID: string) => Effect.promise(() => bus.publish({ type, jobID }))
