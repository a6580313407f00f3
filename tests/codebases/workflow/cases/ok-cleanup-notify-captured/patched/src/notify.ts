/**
 * Tells the run's watchers (a webhook configured per deployment) how the run ended. Throws when the
 * webhook cannot be reached or does not accept the notification.
 */
export async function notifyRunFinished(runId: string, result: string): Promise<void> {
  const url = process.env.RUN_WEBHOOK_URL
  if (!url) return
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ runId, result }),
    signal: AbortSignal.timeout(5_000),
  })
  if (!res.ok) throw new Error(`run webhook answered ${res.status} for run ${runId}`)
}
