/**
 * A request under an Idempotency-Key whose effect committed but whose answer
 * was lost (the process stopped before recording it): a retry under the key is
 * answered from what the first one wrote, for the creates and for the actions
 * and helpers on one object or a chain transfer, never applying it again.
 * Before, every action and helper answered such a retry `409` for good (a
 * crash audit saw it after SIGKILLs).
 */
import { type Doc, MemoryStore, Store } from "@xaalis/engine"
import { makeHttpApi } from "@xaalis/http"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Setup, setup } from "./helpers.ts"

let s: Setup
afterEach(async () => {
  await s.api.dispose()
})

/**
 * A store whose recording of an answer fails while `cut` is on: the request's
 * own units commit (the key's row with them), the unit writing its answer
 * does not, as when the process stops between the two.
 */
const cuttable = () => {
  const inner = Effect.runSync(MemoryStore.makeMemoryStore)
  const state = { cut: false }
  const answering = (doc: Doc) =>
    state.cut && doc.kind === "idempotency" && (doc.data as { status?: string }).status === "completed"
  const store = Store.of({
    ledger: inner.ledger,
    transact: (work) =>
      inner.transact((tx) =>
        work({
          ...tx,
          insert: (doc) => (answering(doc) ? Effect.die(new Error("stopped before the answer")) : tx.insert(doc)),
          update: (doc) => (answering(doc) ? Effect.die(new Error("stopped before the answer")) : tx.update(doc))
        })
      )
  })
  return { layer: Layer.succeed(Store, store), state }
}

describe("a retry after the answer was lost", () => {
  it("is answered from what the first request wrote: actions, helpers and chain transfers, one effect each", async () => {
    const c = cuttable()
    s = setup({ store: c.layer, idempotencyWaitMs: 50 })
    const { secret_key_live: live, secret_key_test: test } = await s.business()

    /** The first call is cut off after its effect (500); the retry under its key answers. */
    let calls = 0
    const cutThenRetry = async (path: string, key: string, body?: unknown) => {
      const headers = { "idempotency-key": `k-${++calls}` }
      c.state.cut = true
      const first = await s.call("POST", path, { key, headers, ...(body === undefined ? {} : { body }) })
      c.state.cut = false
      expect({ path, status: first.status }).toEqual({ path, status: 500 })
      const retry = await s.call("POST", path, { key, headers, ...(body === undefined ? {} : { body }) })
      const again = await s.call("POST", path, { key, headers, ...(body === undefined ? {} : { body }) })
      expect(again.body).toEqual(retry.body)
      return retry
    }

    // a chain transfer: its answer rebuilt from its identity row, applied once
    const conv = (await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000 } })).body
    const transfer = { network: "TRC20", currency: "USDT", to_address: conv.pay_address, amount: 30, tx_hash: "0xAbC" }
    const applied = await cutThenRetry("/v1/test_helpers/chain/transfers", live, transfer)
    expect([applied.status, applied.body]).toEqual([
      200,
      { tx_hash: "0xAbC", matched: { object: "conversion", id: conv.id }, applied: true }
    ])
    const read = (await s.call("GET", `/v1/minting/ramps/${conv.id}`, { key: live })).body
    expect([read.status, read.actually_paid]).toEqual(["underpaid", 30])

    // a late transfer: recorded as late funds, not applied
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: live, body: { seconds: 600 } })
    const late = await cutThenRetry("/v1/test_helpers/chain/transfers", live, { ...transfer, tx_hash: "0xlate" })
    expect([late.status, late.body]).toEqual([
      200,
      { tx_hash: "0xlate", matched: { object: "conversion", id: conv.id }, applied: false }
    ])
    expect((await s.call("GET", `/v1/minting/ramps/${conv.id}`, { key: live })).body.actually_paid).toBe(30)

    // a payer paying a payment request (the helper picks the hash)
    const pr = (await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 10 } })).body
    const paid = await cutThenRetry(`/v1/test_helpers/minting/intents/${pr.id}/pay`, test, {
      amount: 4,
      currency: "USDC",
      network: "ARC"
    })
    expect([paid.status, paid.body.matched, paid.body.applied]).toEqual([
      200,
      { object: "payment_request", id: pr.id },
      true
    ])
    expect((await s.call("GET", `/v1/minting/intents/${pr.id}`, { key: live })).body.amount).toBe(4)

    // actions on one object: the object as the action left it
    const pi = (await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })).body
    const cancelled = await cutThenRetry(`/v1/payments/${pi.payment_intent_id}/cancel`, test)
    expect([cancelled.status, cancelled.body.payment_intent_id, cancelled.body.status]).toEqual([
      200,
      pi.payment_intent_id,
      "cancelled"
    ])
    const pi2 = (await s.call("POST", "/v1/payments", { key: live, body: { data: { amount: 100 } } })).body
    const balance = async () => Math.round((await s.call("GET", "/v1/balance", { key: live })).body.available * 100)
    const before = await balance()
    const succeeded = await cutThenRetry(`/v1/test_helpers/payments/${pi2.payment_intent_id}/succeed`, test)
    expect([succeeded.status, succeeded.body.status]).toEqual([200, "successful"])
    expect((await balance()) - before).toBe(9850) // 100 less the 1.5% fee, credited once

    const draft = (
      await s.call("POST", "/v1/invoices/draft", { key: test, body: { data: { amount: 10, customer: "c-1" } } })
    ).body
    const sent = await cutThenRetry(`/v1/invoices/${draft.id}/send`, test)
    expect([sent.status, sent.body.status, sent.body.invoice_number]).toEqual([200, "not-paid", 1])
    const reminded = await cutThenRetry(`/v1/invoices/${draft.id}/send-reminder`, test)
    expect([reminded.status, reminded.body.reminder_count]).toEqual([200, 1])
    const customerPaid = await cutThenRetry(`/v1/test_helpers/invoices/${draft.id}/customer_pay`, test)
    expect([customerPaid.status, customerPaid.body.status]).toEqual([200, "paid"])
    const other = (await s.call("POST", "/v1/invoices", { key: test, body: { data: { amount: 20, customer: "c-2" } } }))
      .body
    const manual = await cutThenRetry(`/v1/invoices/${other.id}/pay`, test)
    expect([manual.status, manual.body.status]).toEqual([200, "paid"])

    // a create: answered from the object it created, and that answer is kept: later replays show it as
    // given, not the changes made to the object since
    const created = await cutThenRetry("/v1/payments", live, { data: { amount: 250 } })
    expect([created.status, created.body.status]).toEqual([201, "requires_payment_method"])
    await s.call("POST", `/v1/test_helpers/payments/${created.body.payment_intent_id}/succeed`, { key: live })
    const replayed = await s.call("POST", "/v1/payments", {
      key: live,
      headers: { "idempotency-key": `k-${calls}` },
      body: { data: { amount: 250 } }
    })
    expect([replayed.status, replayed.body]).toEqual([201, created.body])
    expect((await s.call("GET", `/v1/payments/${created.body.payment_intent_id}`, { key: live })).body.status).toBe(
      "successful"
    )

    // every cut was a server fault, reported once each, and nothing else went wrong
    expect(s.faults).toHaveLength(calls)
  })
})

describe("a retry of a sandbox setting or a webhook resend after the answer was lost", () => {
  it("is answered, never taking effect again: rate, fail_next, clock advance (shared sandbox), resend", async () => {
    const c = cuttable()
    s = setup({ store: c.layer, idempotencyWaitMs: 50, sharedSandbox: true })
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    let calls = 0
    const cutThenRetry = async (path: string, body?: unknown) => {
      const headers = { "idempotency-key": `s-${++calls}` }
      c.state.cut = true
      const first = await s.call("POST", path, { key: test, headers, ...(body === undefined ? {} : { body }) })
      c.state.cut = false
      expect({ path, status: first.status }).toEqual({ path, status: 500 })
      const retry = await s.call("POST", path, { key: test, headers, ...(body === undefined ? {} : { body }) })
      const again = await s.call("POST", path, { key: test, headers, ...(body === undefined ? {} : { body }) })
      expect(again.body).toEqual(retry.body)
      return retry
    }
    const rate = await cutThenRetry("/v1/test_helpers/rates", { rate: 71.5 })
    expect([rate.status, rate.body]).toEqual([200, { rate: 71.5 }])
    const failNext = await cutThenRetry("/v1/test_helpers/payouts/fail_next", { count: 2 })
    expect([failNext.status, failNext.body]).toEqual([200, { count: 2 }])

    // a failure asked for, used by a payout before the retry comes: the retry does not ask for it again
    await s.call("POST", "/v1/test_helpers/payouts/fail_next", { key: test, body: { count: 0 } })
    const wallet = { network: "wave", account_number: "7654321", account_name: "Awa Jallow" }
    const conv = (
      await s.call("POST", "/v1/minting/offramp", {
        key: live,
        body: { gmd_amount: 5000, destination: "mobile_money", payout_method: wallet }
      })
    ).body
    const pay = (amount: number, tx_hash: string) =>
      s.call("POST", "/v1/test_helpers/chain/transfers", {
        key: live,
        body: { network: "TRC20", currency: "USDT", to_address: conv.pay_address, amount, tx_hash }
      })
    const headers = { "idempotency-key": "fail-once" }
    c.state.cut = true
    expect(
      (await s.call("POST", "/v1/test_helpers/payouts/fail_next", { key: test, headers, body: { count: 1 } })).status
    ).toBe(500)
    c.state.cut = false
    await pay(30, "0xf1") // its payout takes the failure
    const retried = await s.call("POST", "/v1/test_helpers/payouts/fail_next", {
      key: test,
      headers,
      body: { count: 1 }
    })
    expect([retried.status, retried.body]).toEqual([200, { count: 1 }])
    await pay(30, "0xf2") // paid out: the failure was not asked for a second time
    const outcomes = (await s.call("GET", `/v1/minting/ramps/${conv.id}`, { key: live })).body.events
      .filter((e: { type: string }) => e.type === "payout")
      .map((e: { outcome: string }) => e.outcome)
    expect(outcomes).toEqual(["failed", "succeeded"])
    calls += 1 // the cut above is a fault too

    // the clock moved once, not once per try
    const clock = async () => Date.parse((await s.call("GET", "/v1/test_helpers/clock", { key: test })).body.now)
    const before = await clock()
    const advanced = await cutThenRetry("/v1/test_helpers/clock/advance", { seconds: 3600 })
    expect(advanced.status).toBe(200)
    const moved = (await clock()) - before
    expect(moved).toBeGreaterThanOrEqual(3_600_000)
    expect(moved).toBeLessThan(2 * 3_600_000)
    expect(Date.parse(advanced.body.now) - before).toBeGreaterThanOrEqual(3_600_000)

    // a delivery that gave up, resent: the delivery, pending again once
    const hook = "http://127.0.0.1:9/never"
    await Effect.runPromise(s.notifier.failFor(hook, "always"))
    await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 20, callback_url: hook } } })
    let failed: Array<{ id: string; attempts: number }> = []
    for (let i = 0; i < 40 && failed.length === 0; i++) {
      await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 6 * 3600 } })
      failed = (await s.call("GET", "/v1/webhook-deliveries/failed", { key: test })).body.data
    }
    expect(failed).toHaveLength(1)
    const resent = await cutThenRetry(`/v1/webhook-deliveries/${failed[0]?.id}/resend`)
    expect([resent.status, resent.body.id, resent.body.status]).toEqual([200, failed[0]?.id, "pending"])
    expect(s.faults).toHaveLength(calls)
  })
})

describe("idempotencyWaitMs", () => {
  it("is a number of milliseconds >= 0", () => {
    expect(() => makeHttpApi({ idempotencyWaitMs: -1 })).toThrow(RangeError)
    expect(() => makeHttpApi({ idempotencyWaitMs: Number.NaN })).toThrow(RangeError)
  })
})
