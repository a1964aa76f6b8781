import { runDueEvery } from "@xaalis/http"
import { describe, expect, it } from "vitest"

describe("runDueEvery", () => {
  it("runs one run at a time, the next only after the previous ends, and stop waits for the run in flight", async () => {
    let active = 0
    let overlap = false
    let runs = 0
    let release: (() => void) | undefined
    const api = {
      runDue: () => {
        runs += 1
        active += 1
        if (active > 1) overlap = true
        return new Promise<void>((resolve) => {
          release = () => {
            active -= 1
            resolve()
          }
        })
      }
    }
    const loop = runDueEvery(api, 1)
    await new Promise((r) => setTimeout(r, 30))
    expect(runs).toBe(1) // the first run has not ended: no second one started
    release?.()
    await new Promise((r) => setTimeout(r, 30))
    expect(runs).toBe(2)
    let stopped = false
    const stopping = loop.stop().then(() => {
      stopped = true
    })
    await new Promise((r) => setTimeout(r, 10))
    expect(stopped).toBe(false) // waits for the run in flight
    release?.()
    await stopping
    await new Promise((r) => setTimeout(r, 20))
    expect(runs).toBe(2) // nothing after stop
    expect(overlap).toBe(false)
  })
})
