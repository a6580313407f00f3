// How the HTTP API reports a Session's recovery to clients.
export const RecoveryStatus = {
  fromOutcome: (outcome: "resumed" | "cleared" | "failed") => (outcome === "failed" ? 503 : 200),
}

export type RecoveryStatus = typeof RecoveryStatus
