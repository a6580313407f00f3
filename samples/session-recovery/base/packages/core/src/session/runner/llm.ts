export * as SessionRunnerLLM from "./llm"

import { Effect, FiberSet, Stream } from "effect"
import type { Database } from "../../database/database"
import { SessionExecutionClaim } from "../execution/claim"
import type { SessionEvent } from "../event"
import { createLLMEventPublisher, type LLMEvent, type ToolCall } from "./publish-llm-event"

type DatabaseService = Database.Interface["db"]

export class LLMError extends Error {
  readonly _tag = "LLMError"
  constructor(
    readonly provider: string,
    message: string,
  ) {
    super(message)
  }
}

export interface Dependencies {
  readonly db: DatabaseService
  readonly events: SessionEvent.Publisher
  readonly stream: (sessionID: string) => Stream.Stream<LLMEvent, LLMError>
  readonly executeTool: (call: ToolCall) => Effect.Effect<unknown>
}

export const make = (dependencies: Dependencies) => {
  const { db, events } = dependencies

  const run = Effect.fn("SessionRunnerLLM.run")(function* (claim: SessionExecutionClaim.Claim) {
    const updateExecution = (values: SessionExecutionClaim.Values = {}) =>
      SessionExecutionClaim.renew(db, claim, values)
    const toolFibers = yield* FiberSet.make<void, SessionExecutionClaim.Lost>()
    const awaitToolFibers = () => FiberSet.awaitEmpty(toolFibers)

    const publisher = createLLMEventPublisher(events, {
      sessionID: claim.sessionID,
      startCommit: (assistantMessageID) =>
        updateExecution({ phase: "running", assistant_message_id: assistantMessageID }),
      terminalCommit: () => updateExecution({ phase: "safe", assistant_message_id: null }),
      interruptedCommit: () => updateExecution({ phase: "interrupted" }),
      eventCommit: () => updateExecution(),
      startTool: (call, settle) =>
        FiberSet.run(toolFibers, dependencies.executeTool(call).pipe(Effect.flatMap(settle))).pipe(Effect.asVoid),
      awaitToolFibers,
    })

    yield* dependencies.stream(claim.sessionID).pipe(
      Stream.runForEach(publisher.publish),
      Effect.catchTag("LLMError", (error) =>
        Effect.gen(function* () {
          yield* awaitToolFibers()
          yield* publisher.failUnsettledTools(`Tool outcome unknown after ${error.provider} failed`)
          yield* publisher.failAssistant(error.message)
        }),
      ),
      Effect.onInterrupt(() =>
        Effect.gen(function* () {
          yield* publisher.interruptAssistant("Interrupted by user")
          // Interrupts local tools and waits for their finalizers (process kill, temp file cleanup).
          yield* FiberSet.clear(toolFibers)
          yield* publisher.failUnsettledTools("Tool execution outcome unknown after interruption")
        }).pipe(Effect.orDie),
      ),
    )
  })

  return { run }
}
