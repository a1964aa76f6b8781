import type { HttpApi } from "./HttpApi.ts"

/** A running due-work loop; `stop` ends the run in flight early (see `runDue`'s `signal`) and waits for it. */
export interface DueLoop {
  readonly stop: () => Promise<void>
}

/**
 * Runs `api.runDue()` (expiries, overdue marks, payouts, webhook retries) every
 * `ms` milliseconds on Node-like runtimes: one run at a time, the next scheduled
 * after the previous ends, so a slow run never piles up. `runDue` never rejects
 * (its faults go to `onError`). On Workers use a cron trigger instead.
 */
export const runDueEvery = (api: Pick<HttpApi, "runDue">, ms: number): DueLoop => {
  let stopped = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> = Promise.resolve()
  // a graceful stop: the deliveries and payouts in flight finish, the rest of a long backlog waits
  // for the next start instead of holding the process
  const stopping = new AbortController()
  const loop = () => {
    if (stopped) return
    running = api.runDue({ signal: stopping.signal }).finally(() => {
      if (!stopped) timer = setTimeout(loop, ms)
    })
  }
  timer = setTimeout(loop, ms)
  return {
    stop: async () => {
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      stopping.abort()
      await running
    }
  }
}
