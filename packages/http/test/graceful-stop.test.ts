/**
 * A graceful stop with a backlog of webhooks: the deliveries in flight finish
 * and are recorded, no other starts, and the rest stays due for the next
 * start, however long the backlog (found by a crash audit: a SIGTERM used to
 * work through every due delivery before the process could exit).
 */
import { type Delivery, Notifier, Outbox } from "@xaalis/engine"
import { runDueEvery } from "@xaalis/http"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { type Setup, setup } from "./helpers.ts"

/** A notifier whose attempts all wait for `open()`: what is in flight can be counted and held. */
const gatedNotifier = () => {
  let open: () => void = () => {}
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  const started: Array<string> = []
  const finished: Array<string> = []
  const notifier = Notifier.of({
    deliver: (d: Delivery) =>
      Effect.promise(async () => {
        started.push(d.event_id)
        await gate
        finished.push(d.event_id)
      })
  })
  return { layer: Layer.succeed(Notifier, notifier), open: () => open(), started, finished }
}

/** An API whose webhook attempts wait at the gate; disposed after the test. */
const gatedSetup = () => {
  const gated = gatedNotifier()
  const setupNow = setup({ notifier: gated.layer })
  s = setupNow
  return { gated, setupNow }
}

/** With 8 attempts held at the gate, `stop()` then the gate opened: the 8 finish and none starts after them. */
const stopWithEightInFlight = async (gated: ReturnType<typeof gatedNotifier>, stop: () => Promise<unknown>) => {
  await vi.waitFor(() => expect(gated.started).toHaveLength(8))
  const stopping = stop()
  gated.open()
  await stopping
  expect(gated.started).toHaveLength(8)
  expect(gated.finished).toHaveLength(8)
}

let s: Setup | undefined
afterEach(async () => {
  await s?.api.dispose()
  s = undefined
})

const statuses = async (setup: Setup, business_id: string, mode: "test" | "live") => {
  const rows = (await setup.outbox(business_id, mode)) as ReadonlyArray<{ readonly data: { readonly status: string } }>
  return {
    delivered: rows.filter((r) => r.data.status === "delivered").length,
    pending: rows.filter((r) => r.data.status === "pending").length
  }
}

/** `n` due events of `business_id` (test mode) written straight to the outbox: no request kicks a dispatch. */
const backlog = async (setup: Setup, business_id: string, n: number) => {
  for (let i = 0; i < n; i++) {
    await Effect.runPromise(
      setup.store.transact((tx) =>
        Outbox.enqueue(tx, {
          ids: [`ob_${business_id}_${i}`],
          event_id: `evt_${business_id}_${i}`,
          business_id,
          mode: "test",
          event: "charge.succeeded",
          payload: { i },
          targets: [{ url: "https://merchant.example/hooks", target: "callback_url" }],
          now: 0
        })
      )
    )
  }
}

describe("graceful stop with a webhook backlog", () => {
  it("dispose: the request-kicked dispatch finishes its attempts in flight, starts no more, leaves the rest due", async () => {
    const { gated, setupNow } = gatedSetup()
    const biz = await setupNow.business()
    await backlog(setupNow, biz.id, 20)
    // one create commits an event and kicks a dispatch, which takes the whole backlog in its batch
    const created = await setupNow.call("POST", "/v1/payments", {
      key: biz.secret_key_test,
      body: { data: { amount: 100, callback_url: "https://merchant.example/hooks" } }
    })
    expect(created.status).toBe(201)
    // its eight slots hold an attempt each, waiting at the gate
    await stopWithEightInFlight(gated, () => setupNow.api.dispose())
    s = undefined
    expect(await statuses(setupNow, biz.id, "test")).toEqual({ delivered: 8, pending: 13 })
  })

  it("runDue with a signal, and runDueEvery's stop: the run in flight ends after its attempts in flight", async () => {
    const { gated, setupNow } = gatedSetup()
    // a backlog written straight to the store, so no request kicks a dispatch: only runDue sends
    const business_id = "biz_backlog"
    await backlog(setupNow, business_id, 30)
    const loop = runDueEvery(setupNow.api, 1)
    await stopWithEightInFlight(gated, () => loop.stop())
    expect(await statuses(setupNow, business_id, "test")).toEqual({ delivered: 8, pending: 22 })
    // a run without a signal (the next start) sends the rest, each event once
    await setupNow.api.runDue()
    expect(await statuses(setupNow, business_id, "test")).toEqual({ delivered: 30, pending: 0 })
    expect(new Set(gated.finished).size).toBe(30)
    expect(gated.finished).toHaveLength(30)
  })

  it("stopBackground: requests are still served, but neither their kicks nor runDue start a delivery", async () => {
    const { gated, setupNow } = gatedSetup()
    const biz = await setupNow.business()
    await setupNow.api.stopBackground()
    // a request in flight during a server's drain: answered, its event committed, and left due
    const created = await setupNow.call("POST", "/v1/payments", {
      key: biz.secret_key_test,
      body: { data: { amount: 100, callback_url: "https://merchant.example/hooks" } }
    })
    expect(created.status).toBe(201)
    await setupNow.api.runDue()
    await new Promise((r) => setTimeout(r, 50))
    expect(gated.started).toHaveLength(0)
    expect(await setupNow.api.check()).toStrictEqual({ ok: false, reason: "stopping" })
    expect(await statuses(setupNow, biz.id, "test")).toEqual({ delivered: 0, pending: 1 })
  })

  it("stopBackground stops a runDue called without a signal, and waits for its attempts in flight", async () => {
    const { gated, setupNow } = gatedSetup()
    const business_id = "biz_unsignalled"
    await backlog(setupNow, business_id, 30)
    const run = setupNow.api.runDue()
    await vi.waitFor(() => expect(gated.started).toHaveLength(8))
    let stopped = false
    const stopping = setupNow.api.stopBackground().then(() => {
      stopped = true
    })
    await new Promise((r) => setTimeout(r, 20))
    expect(stopped).toBe(false)
    gated.open()
    await stopping
    await run
    expect(gated.finished).toHaveLength(8)
    expect(await statuses(setupNow, business_id, "test")).toEqual({ delivered: 8, pending: 22 })
  })

  it("stopBackground: a sandbox clock advance still answers but starts no delivery", async () => {
    const { gated, setupNow } = gatedSetup()
    const biz = await setupNow.business()
    await backlog(setupNow, biz.id, 3)
    await setupNow.api.stopBackground()
    const advanced = await setupNow.call("POST", "/v1/test_helpers/clock/advance", {
      key: biz.secret_key_test,
      body: { seconds: 60 }
    })
    expect(advanced.status).toBe(200)
    await new Promise((r) => setTimeout(r, 50))
    expect(gated.started).toHaveLength(0)
    expect(await statuses(setupNow, biz.id, "test")).toEqual({ delivered: 0, pending: 3 })
  })

  it("runDue with a signal aborted before it starts does nothing", async () => {
    const gated = gatedNotifier()
    s = setup({ notifier: gated.layer })
    const stop = new AbortController()
    stop.abort()
    await s.api.runDue({ signal: stop.signal })
    expect(gated.started).toHaveLength(0)
  })
})
