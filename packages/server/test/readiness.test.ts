/**
 * The verdict of `GET /readyz` (`readinessOf`): the API's check, reused for a
 * second, one at a time, false while starting or stopping, and a change of
 * state logged once rather than on every probe.
 */
import type { HealthCheck, HttpApi } from "@xaalis/http"
import { afterEach, describe, expect, it, vi } from "vitest"
import { readinessOf, ready_cache_ms } from "../src/server.ts"

afterEach(() => {
  vi.useRealTimers()
})

const apiAnswering = (answers: Array<HealthCheck>) => {
  let calls = 0
  const api = {
    check: async () => {
      calls++
      return answers.shift() ?? { ok: true }
    }
  } as unknown as HttpApi
  return { api, calls: () => calls }
}

describe("readiness (GET /readyz)", () => {
  it("is false while the API is not built or the server is stopping, without asking the store", async () => {
    const { api, calls } = apiAnswering([])
    let current: HttpApi | undefined
    let stopping = false
    const ready = readinessOf(
      () => current,
      () => stopping,
      () => undefined
    )
    expect(await ready()).toBe(false)
    current = api
    expect(await ready()).toBe(true)
    stopping = true
    expect(await ready()).toBe(false)
    expect(calls()).toBe(1)
  })

  it("asks once per period however many probes come, and logs each change of state once", async () => {
    vi.useFakeTimers({ toFake: ["performance"] })
    const down: HealthCheck = { ok: false, reason: "the store did not answer within 2000 ms" }
    const { api, calls } = apiAnswering([{ ok: true }, down, down, { ok: true }])
    const lines: Array<Record<string, unknown>> = []
    const ready = readinessOf(
      () => api,
      () => false,
      (l) => lines.push({ ...l })
    )
    // concurrent probes share one look
    expect(await Promise.all([ready(), ready(), ready()])).toStrictEqual([true, true, true])
    expect(calls()).toBe(1)
    vi.advanceTimersByTime(ready_cache_ms - 1)
    expect(await ready()).toBe(true)
    expect(calls()).toBe(1)
    vi.advanceTimersByTime(1)
    expect(await ready()).toBe(false)
    vi.advanceTimersByTime(ready_cache_ms)
    expect(await ready()).toBe(false)
    vi.advanceTimersByTime(ready_cache_ms)
    expect(await ready()).toBe(true)
    expect(calls()).toBe(4)
    expect(lines).toStrictEqual([
      { level: "warn", msg: "not ready", reason: "the store did not answer within 2000 ms" },
      { level: "info", msg: "ready again" }
    ])
  })
})
