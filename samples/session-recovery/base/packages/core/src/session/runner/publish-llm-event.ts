import { Clock, Effect } from "effect"
import type { SessionExecutionClaim } from "../execution/claim"
import { SessionEvent } from "../event"

export type LLMEvent =
  | { readonly type: "text-delta"; readonly text: string }
  | {
      readonly type: "tool-call"
      readonly id: string
      readonly name: string
      readonly input: unknown
      readonly providerExecuted: boolean
    }
  | { readonly type: "tool-result"; readonly id: string; readonly output: unknown }
  | { readonly type: "step-finish"; readonly reason: string }
  | { readonly type: "provider-error"; readonly message: string }

export type ToolCall = { readonly id: string; readonly name: string; readonly input: unknown }

type Commit = Effect.Effect<void, SessionExecutionClaim.Lost>

export interface Hooks {
  readonly sessionID: string
  readonly startCommit: (assistantMessageID: string) => Commit
  /** Marks the execution safe: every durable outcome of the step is recorded. */
  readonly terminalCommit: () => Commit
  readonly interruptedCommit: () => Commit
  readonly eventCommit: () => Commit
  /** Forks a local tool; `settle` records its outcome. */
  readonly startTool: (call: ToolCall, settle: (output: unknown) => Commit) => Effect.Effect<void>
  /** Waits until every forked local tool fiber has completed. */
  readonly awaitToolFibers: () => Effect.Effect<void>
}

export const createLLMEventPublisher = (events: SessionEvent.Publisher, hooks: Hooks) => {
  const { sessionID, awaitToolFibers } = hooks
  const tools = new Map<string, { readonly name: string; settled: boolean }>()
  let assistantMessageID: string | undefined
  let assistantFailed = false
  let providerFailed = false

  const startAssistant = Effect.fnUntraced(function* () {
    if (assistantMessageID !== undefined) return assistantMessageID
    const id = crypto.randomUUID()
    yield* events.publish(
      SessionEvent.Step.Started,
      { sessionID, timestamp: yield* Clock.currentTimeMillis, assistantMessageID: id },
      { commit: () => hooks.startCommit(id) },
    )
    assistantMessageID = id
    return id
  })

  const settleTool = Effect.fnUntraced(function* (callID: string, output: unknown) {
    const tool = tools.get(callID)
    if (tool === undefined) return yield* Effect.die(`Tool result before call: ${callID}`)
    if (tool.settled) return
    tool.settled = true
    yield* events.publish(
      SessionEvent.Tool.Completed,
      { sessionID, timestamp: yield* Clock.currentTimeMillis, callID, output },
      { commit: hooks.eventCommit },
    )
  })

  const failUnsettledTools = Effect.fnUntraced(function* (message: string) {
    for (const [callID, tool] of tools) {
      if (tool.settled) continue
      tool.settled = true
      yield* events.publish(
        SessionEvent.Tool.Failed,
        { sessionID, timestamp: yield* Clock.currentTimeMillis, callID, message },
        { commit: hooks.eventCommit },
      )
    }
  })

  const failAssistant = Effect.fnUntraced(function* (message: string) {
    if (assistantFailed) return
    const id = yield* startAssistant()
    assistantFailed = true
    yield* events.publish(
      SessionEvent.Step.Failed,
      {
        sessionID,
        timestamp: yield* Clock.currentTimeMillis,
        assistantMessageID: id,
        error: { type: "provider", message },
      },
      { commit: () => hooks.terminalCommit() },
    )
  })

  const interruptAssistant = Effect.fnUntraced(function* (reason: string) {
    if (assistantFailed || assistantMessageID === undefined) return
    const id = assistantMessageID
    assistantFailed = true
    yield* events.publish(
      SessionEvent.Step.Interrupted,
      { sessionID, timestamp: yield* Clock.currentTimeMillis, assistantMessageID: id, reason },
      { commit: () => hooks.interruptedCommit() },
    )
  })

  const endAssistant = Effect.fnUntraced(function* (finish: string) {
    if (assistantFailed) return yield* Effect.die("Step ended after it failed")
    const id = yield* startAssistant()
    yield* events.publish(
      SessionEvent.Step.Ended,
      { sessionID, timestamp: yield* Clock.currentTimeMillis, assistantMessageID: id, finish },
      { commit: () => hooks.terminalCommit() },
    )
  })

  const publish = Effect.fnUntraced(function* (event: LLMEvent) {
    switch (event.type) {
      case "text-delta":
        yield* startAssistant()
        return
      case "tool-call": {
        yield* startAssistant()
        tools.set(event.id, { name: event.name, settled: false })
        yield* events.publish(
          SessionEvent.Tool.Called,
          {
            sessionID,
            timestamp: yield* Clock.currentTimeMillis,
            callID: event.id,
            name: event.name,
            input: event.input,
          },
          { commit: hooks.eventCommit },
        )
        if (!event.providerExecuted) yield* hooks.startTool(event, (output) => settleTool(event.id, output))
        return
      }
      case "tool-result":
        yield* settleTool(event.id, event.output)
        return
      case "step-finish":
        if (providerFailed) return
        yield* awaitToolFibers()
        yield* failUnsettledTools("Provider finished the step without a tool result")
        yield* endAssistant(event.reason)
        return
      case "provider-error":
        providerFailed = true
        yield* awaitToolFibers()
        yield* failUnsettledTools("Tool outcome unknown after provider error")
        yield* failAssistant(event.message)
        return
    }
  })

  return {
    publish,
    failAssistant,
    interruptAssistant,
    failUnsettledTools,
    hasProviderError: () => providerFailed,
  }
}
