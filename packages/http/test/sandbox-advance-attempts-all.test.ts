import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Setup, setup } from "./helpers.ts"

/**
 * Decisions §9: POST /v1/test_helpers/clock/advance does "all work that falls
 * due (expiries, overdue, webhook retries) ... before the answer". The
 * dispatcher's per-destination deferral (a destination whose attempt failed
 * has its other rows of the pass put off 30 s, unattempted) would push rows
 * that fell due at the advanced time past it, neither attempted nor given up
 * before the answer: the sandbox attempts every due row.
 */

const hook = "http://127.0.0.1:9/hooks/always-failing"
const today = () => new Date().toISOString().slice(0, 10)

let s: Setup
afterEach(async () => {
  await s.api.dispose()
})

/** A business whose six live invoices, due today, go overdue tomorrow at 00:00 UTC to a receiver that always fails. */
const sixInvoicesToAFailingReceiver = async () => {
  s = setup()
  const { secret_key_live: key } = await s.business()
  await Effect.runPromise(s.notifier.failFor(hook, "always"))
  for (let i = 0; i < 6; i++) {
    const created = await s.call("POST", "/v1/invoices", {
      key,
      body: { data: { amount: 100, customer: `c-${i}`, due_date: today(), callback_url: hook } }
    })
    expect(created.status).toBe(201)
  }
  return key
}

describe("the sandbox clock advance attempts every due webhook", () => {
  it("attempts every webhook that fell due before answering, even to a failing receiver", async () => {
    const key = await sixInvoicesToAFailingReceiver()
    const advanced = await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 2 * 86_400 } })
    expect(advanced.status).toBe(200)
    // before the answer: six invoice.overdue events fell due, and each was attempted once
    const attempts = (await Effect.runPromise(s.notifier.attempts)).filter((a) => a.url === hook)
    expect(attempts.length).toBe(6)
  })

  it("a 4-day advance gives up every delivery past the 3-day horizon before answering", async () => {
    const key = await sixInvoicesToAFailingReceiver()
    // the overdue events are written (first attempt due) at the advanced time
    expect(
      (await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 2 * 86_400 } })).status
    ).toBe(200)
    // past every row's 3-day horizon: each row's retry (and each put-off row) fell due, and an attempt now gives up
    expect(
      (await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 4 * 86_400 } })).status
    ).toBe(200)
    const failed = await s.call("GET", "/v1/webhook-deliveries/failed", { key })
    expect(failed.status).toBe(200)
    expect(failed.body.meta.total).toBe(6)
  })
})
