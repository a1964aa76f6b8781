import { Instant } from "@xaalis/core"
import { DeliveryFailed, MemoryStore, Notifier, Outbox, Store, StoreError } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { expectError, type Setup, setup } from "./helpers.ts"

const cleanup: Array<Setup> = []
const track = (s: Setup) => {
  cleanup.push(s)
  return s
}
afterEach(async () => {
  for (const s of cleanup.splice(0)) {
    expect(s.faults.map((f) => f.message)).toEqual([])
    await s.api.dispose()
  }
})

const hook = "http://127.0.0.1:9/hooks/sandbox"
const DAY = 86_400
const ms = (iso: string) => Date.parse(iso)
const eventsTo = async (s: Setup, url: string) =>
  (await s.deliveries()).filter((d) => d.url === url).map((d) => JSON.parse(d.body).event as string)

describe("sandbox clock", () => {
  it("reads and advances the clock: {now} in ISO 8601, real time plus every advance", async () => {
    const s = track(setup())
    const { secret_key_test: key } = await s.business()
    const t0 = Date.now()
    const read = await s.call("GET", "/v1/test_helpers/clock", { key })
    const t1 = Date.now()
    expect(read.status).toBe(200)
    expect(Object.keys(read.body)).toEqual(["now"])
    expect(read.body.now).toBe(Instant.toIso(ms(read.body.now)))
    expect(ms(read.body.now)).toBeGreaterThanOrEqual(t0)
    expect(ms(read.body.now)).toBeLessThanOrEqual(t1)
    const a0 = Date.now()
    const advanced = await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 3600 } })
    const a1 = Date.now()
    expect(advanced.status).toBe(200)
    expect(ms(advanced.body.now)).toBeGreaterThanOrEqual(a0 + 3_600_000)
    expect(ms(advanced.body.now)).toBeLessThanOrEqual(a1 + 3_600_000)
    for (const seconds of [0, -5, 1.5, "60", null]) {
      expectError(
        await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds } }),
        400,
        "validation_error"
      )
    }
    expectError(await s.call("POST", "/v1/test_helpers/clock/advance", { key }), 400, "validation_error")
  })

  it("keeps its time across a restart on the same store", async () => {
    const store = Effect.runSync(MemoryStore.makeMemoryStore)
    const first = track(setup({ store: Layer.succeed(Store, store) }))
    const { secret_key_test: key } = await first.business()
    await first.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 2 * DAY } })
    await first.api.dispose()
    cleanup.splice(cleanup.indexOf(first), 1)
    const second = track(setup({ store: Layer.succeed(Store, store) }))
    await second.api.ready()
    const t0 = Date.now()
    const read = await second.call("GET", "/v1/test_helpers/clock", { key })
    const t1 = Date.now()
    expect(ms(read.body.now)).toBeGreaterThanOrEqual(t0 + 2 * DAY * 1000)
    expect(ms(read.body.now)).toBeLessThanOrEqual(t1 + 2 * DAY * 1000)
  })

  it("does all work that falls due before answering: a conversion expires, a live invoice turns overdue", async () => {
    const s = track(setup())
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const conversion = await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000 } })
    const now = (await s.call("GET", "/v1/test_helpers/clock", { key: test })).body.now as string
    const today = now.slice(0, 10)
    const invoice = { data: { amount: 100, customer: "cus_1", due_date: today, callback_url: hook } }
    const liveInvoice = await s.call("POST", "/v1/invoices", { key: live, body: invoice })
    const testInvoice = await s.call("POST", "/v1/invoices", { key: test, body: invoice })
    expect([liveInvoice.body.status, testInvoice.body.status]).toEqual(["not-paid", "not-paid"])

    // a minute of real time to spare before the 10-minute window: the test does not depend on the machine's speed
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 540 } })
    expect((await s.call("GET", `/v1/minting/ramps/${conversion.body.id}`, { key: live })).body.status).toBe("pending")
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 60 } })
    const expired = await s.call("GET", `/v1/minting/ramps/${conversion.body.id}`, { key: live })
    expect(expired.body.status).toBe("expired")
    const late = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: live,
      body: { network: "TRC20", currency: "USDT", to_address: conversion.body.pay_address, amount: 73.64 }
    })
    expect(late.body).toMatchObject({ matched: { object: "conversion", id: conversion.body.id }, applied: false })
    expect((await s.call("GET", `/v1/minting/ramps/${conversion.body.id}`, { key: live })).body.actually_paid).toBe(0)

    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 2 * DAY } })
    // answered after the sweep and the webhook delivery: no waiting needed
    expect((await s.call("GET", `/v1/invoices/${liveInvoice.body.id}`, { key: live })).body.status).toBe("overdue")
    expect((await s.call("GET", `/v1/invoices/${testInvoice.body.id}`, { key: test })).body.status).toBe("not-paid")
    expect(await eventsTo(s, hook)).toEqual(["invoice.overdue"])
  })

  it("Create Invoice and Send Draft Invoice answer not-paid even when the due date has passed", async () => {
    const s = track(setup())
    const { secret_key_live: live } = await s.business()
    const invoice = { data: { amount: 100, customer: "cus_1", due_date: "2020-01-01" } }
    const created = await s.call("POST", "/v1/invoices", { key: live, body: invoice })
    expect([created.status, created.body.status]).toEqual([201, "not-paid"])
    const draft = await s.call("POST", "/v1/invoices/draft", { key: live, body: invoice })
    const sent = await s.call("POST", `/v1/invoices/${draft.body.id}/send`, { key: live })
    expect([sent.status, sent.body.status, typeof sent.body.sent_date]).toEqual([200, "not-paid", "string"])
    // the transition to overdue follows: a read shows it
    for (const id of [created.body.id, draft.body.id]) {
      expect((await s.call("GET", `/v1/invoices/${id}`, { key: live })).body.status).toBe("overdue")
    }
  })

  it("a rate set through the helper applies to new quotes and never goes stale", async () => {
    const s = track(setup())
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    expect((await s.call("POST", "/v1/test_helpers/rates", { key: test, body: { rate: 64.25 } })).body).toEqual({
      rate: 64.25
    })
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 30 * DAY } })
    const conversion = await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000 } })
    expect(conversion.status).toBe(201)
    expect(conversion.body.gmd_rate).toBe(64.25)
    expectError(
      await s.call("POST", "/v1/test_helpers/rates", { key: test, body: { rate: 0 } }),
      400,
      "validation_error"
    )
  })
})

describe("webhooks", () => {
  it("kicks the dispatcher after a write: the delivery goes out without runDue", async () => {
    const s = track(setup())
    const { secret_key_live: live } = await s.business()
    const conversion = await s.call("POST", "/v1/minting/offramp", {
      key: live,
      body: { gmd_amount: 5000, callback_url: hook }
    })
    await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: live,
      body: { network: "TRC20", currency: "USDT", to_address: conversion.body.pay_address, amount: 73.64 }
    })
    await vi.waitFor(async () => expect(await eventsTo(s, hook)).toEqual(["ramp.paid"]), { timeout: 10_000 })
    const delivered = (await s.deliveries())[0]
    expect(JSON.parse(delivered?.body ?? "").payload).toMatchObject({ id: conversion.body.id, status: "paid" })
  })

  it("a clock advance drains due retries before answering", async () => {
    const s = track(setup())
    const { secret_key_test: test } = await s.business()
    await Effect.runPromise(s.notifier.failNext(1))
    await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100, callback_url: hook } } })
    await vi.waitFor(async () => expect(await Effect.runPromise(s.notifier.attempts)).toHaveLength(1), {
      timeout: 10_000
    })
    expect(await eventsTo(s, hook)).toEqual([])
    await s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 30 } })
    expect(await eventsTo(s, hook)).toEqual(["payment_intent.created"])
  })

  it("a clock advance made while a delivery is in flight still drains the retry that delivery schedules", async () => {
    // the first attempt hangs until the test releases it, then fails; later attempts succeed
    let release: () => void = () => {}
    const hanging = new Promise<void>((r) => {
      release = r
    })
    const attempts: Array<string> = []
    const notifier = Notifier.of({
      deliver: (d) =>
        Effect.suspend(() => {
          attempts.push(d.event_id)
          return attempts.length === 1
            ? Effect.andThen(
                Effect.promise(() => hanging),
                Effect.fail(new DeliveryFailed({ message: "HTTP 500" }))
              )
            : Effect.void
        })
    })
    const s = track(setup({ notifier: Layer.succeed(Notifier, notifier) }))
    const { secret_key_test: test } = await s.business()
    await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100, callback_url: hook } } })
    await vi.waitFor(() => expect(attempts).toHaveLength(1), { timeout: 10_000 })
    // the advance is asked for while the attempt is in flight; the attempt ends (its retry due 30 s later) after
    const advanced = s.call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 31 } })
    await new Promise((r) => setTimeout(r, 50))
    release()
    expect((await advanced).status).toBe(200)
    // answered after the retry: 30 s after the failed attempt is within the 31 s the clock moved
    expect(attempts).toHaveLength(2)
    expect(attempts[1]).toBe(attempts[0])
  })

  it("runDue() delivers what is due, and reports a fault to onError without rejecting", async () => {
    const base = Effect.runSync(MemoryStore.makeMemoryStore)
    let broken = false
    const flaky = Store.of({
      ledger: base.ledger,
      transact: (work) => (broken ? Effect.fail(new StoreError({ message: "connection reset" })) : base.transact(work))
    })
    const s = track(setup({ store: Layer.succeed(Store, flaky) }))
    const biz = await s.business()
    // an outbox row written by another process (so no kick): due since the epoch
    await Effect.runPromise(
      base.transact((tx) =>
        Outbox.enqueue(tx, {
          ids: ["row-1"],
          event_id: "evt-1",
          business_id: biz.id,
          mode: "test",
          event: "payment_intent.created",
          payload: { id: "x" },
          targets: [{ url: hook, target: "callback_url" }],
          now: 0
        })
      )
    )
    expect(await eventsTo(s, hook)).toEqual([])
    await s.api.runDue()
    expect(await eventsTo(s, hook)).toEqual(["payment_intent.created"])
    broken = true
    await expect(s.api.runDue()).resolves.toBeUndefined()
    expect(s.faults.map((f) => [f.context, f.request_id])).toEqual([["runDue", null]])
    expect(s.faults[0]?.message).toContain("connection reset")
    s.faults.length = 0
  })
})

describe("test helpers", () => {
  it("make payouts fail, pay payment requests, and report processor and invoice outcomes", async () => {
    const s = track(setup())
    const biz = await s.business()
    const { secret_key_test: test, secret_key_live: live } = biz
    // payouts: the next one fails, the dalasi stays in the balance
    expect(
      (await s.call("POST", "/v1/test_helpers/payouts/fail_next", { key: test, body: { count: 1 } })).body
    ).toEqual({
      count: 1
    })
    const wallet = { network: "wave", account_number: "7654321", account_name: "Awa Jallow" }
    const toWallet = await s.call("POST", "/v1/minting/offramp", {
      key: live,
      body: { gmd_amount: 5000, destination: "mobile_money", payout_method: wallet }
    })
    await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: live,
      body: { network: "TRC20", currency: "USDT", to_address: toWallet.body.pay_address, amount: 73.64 }
    })
    const timeline = (await s.call("GET", `/v1/minting/ramps/${toWallet.body.id}`, { key: live })).body.events
    expect(timeline.filter((e: { type: string }) => e.type === "payout")).toMatchObject([{ outcome: "failed" }])
    expect((await s.call("GET", "/v1/balance", { key: live })).body.available).toBe(5000)

    // another business's fail_next fails its own payouts only, never this one's
    const other = await s.business({ name: "Other" })
    await s.call("POST", "/v1/test_helpers/payouts/fail_next", { key: other.secret_key_test, body: { count: 5 } })
    /** A conversion to the wallet, paid in full: the outcomes of its payouts. */
    const payoutsOf = async (key: string) => {
      const c = await s.call("POST", "/v1/minting/offramp", {
        key,
        body: { gmd_amount: 5000, destination: "mobile_money", payout_method: wallet }
      })
      await s.call("POST", "/v1/test_helpers/chain/transfers", {
        key,
        body: { network: "TRC20", currency: "USDT", to_address: c.body.pay_address, amount: 73.64 }
      })
      const events = (await s.call("GET", `/v1/minting/ramps/${c.body.id}`, { key })).body.events
      return events.filter((e: { type: string }) => e.type === "payout").map((e: { outcome: string }) => e.outcome)
    }
    expect(await payoutsOf(live)).toEqual(["succeeded"])
    expect((await s.call("GET", "/v1/balance", { key: live })).body.available).toBe(5000)
    expect(await payoutsOf(other.secret_key_live)).toEqual(["failed"])

    // a payment request paid through its hosted page, in two payments
    const request = await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 10, callback_url: hook } })
    const pay = (amount: number) =>
      s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
        key: live,
        body: { amount, currency: "USDT", network: "TRC20" }
      })
    expect((await pay(4)).body).toMatchObject({
      matched: { object: "payment_request", id: request.body.id },
      applied: true
    })
    // §9: test helpers take any key of the business, its test key too (the request itself is live)
    const byTestKey = await s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
      key: test,
      body: { amount: 6, currency: "USDT", network: "TRC20" }
    })
    expect(byTestKey.status).toBe(200)
    expect(byTestKey.body).toMatchObject({ matched: { object: "payment_request", id: request.body.id }, applied: true })
    expect((await s.call("GET", `/v1/minting/intents/${request.body.id}`, { key: live })).body).toMatchObject({
      status: "completed",
      amount: 10
    })
    // another business's keys do not reach it, whatever their mode
    const stranger = await s.business()
    for (const key of [stranger.secret_key_test, stranger.secret_key_live]) {
      expectError(
        await s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
          key,
          body: { amount: 1, currency: "USDT", network: "TRC20" }
        }),
        404,
        "not_found"
      )
    }
    expectError(
      await s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
        key: live,
        body: { amount: 1, currency: "USDT", network: "ARC" }
      }),
      400,
      "validation_error"
    )
    await vi.waitFor(async () => expect(await eventsTo(s, hook)).toEqual(["charge.succeeded", "charge.succeeded"]), {
      timeout: 10_000
    })

    // processor outcomes and the customer paying an invoice
    const pi = await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })
    const failed = await s.call("POST", `/v1/test_helpers/payments/${pi.body.payment_intent_id}/fail`, { key: test })
    expect([failed.body.status, failed.body.failure_reason]).toEqual(["failed", null])
    // the processor's reason, when the helper is given one, is the intent's failure_reason
    const pi2 = await s.call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } } })
    const fail2 = `/v1/test_helpers/payments/${pi2.body.payment_intent_id}/fail`
    expectError(await s.call("POST", fail2, { key: test, body: { reason: "" } }), 400, "validation_error")
    expect((await s.call("GET", `/v1/payments/${pi2.body.payment_intent_id}`, { key: test })).body.status).toBe(
      "requires_payment_method"
    )
    const declined = await s.call("POST", fail2, { key: test, body: { reason: "insufficient_funds" } })
    expect([declined.body.status, declined.body.failure_reason]).toEqual(["failed", "insufficient_funds"])
    expectError(
      await s.call("POST", `/v1/test_helpers/payments/${pi.body.payment_intent_id}/succeed`, { key: test }),
      409,
      "invalid_state"
    )
    const inv = await s.call("POST", "/v1/invoices", {
      key: test,
      body: { data: { amount: 300, customer: "cus_2", callback_url: hook } }
    })
    const paid = await s.call("POST", `/v1/test_helpers/invoices/${inv.body.id}/customer_pay`, { key: test })
    expect(paid.body).toMatchObject({ status: "paid" })
    expect(typeof paid.body.paid_date).toBe("string")
    expect((await s.call("GET", "/v1/balance", { key: test })).body.available).toBe(300)
    await vi.waitFor(async () => expect(await eventsTo(s, hook)).toContain("paymentrequest.success"), {
      timeout: 10_000
    })
  })

  it("a test helper takes either key of the business and acts in the mode of the object it names", async () => {
    const s = track(setup())
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const liveBefore = (await s.call("GET", "/v1/balance", { key: live })).body.available
    // a test-mode invoice paid through the helper with the live key: the test balance moves, not the live one
    const inv = await s.call("POST", "/v1/invoices", { key: test, body: { data: { amount: 250, customer: "c" } } })
    const paid = await s.call("POST", `/v1/test_helpers/invoices/${inv.body.id}/customer_pay`, { key: live })
    expect(paid.status).toBe(200)
    expect(paid.body).toMatchObject({ id: inv.body.id, status: "paid" })
    expect((await s.call("GET", "/v1/balance", { key: test })).body.available).toBe(250)
    expect((await s.call("GET", "/v1/balance", { key: live })).body.available).toBe(liveBefore)
    // a live-mode payment intent settled with the test key; another with a test key fails
    const pi = await s.call("POST", "/v1/payments", { key: live, body: { data: { amount: 100 } } })
    const ok = await s.call("POST", `/v1/test_helpers/payments/${pi.body.payment_intent_id}/succeed`, { key: test })
    expect(ok.status).toBe(200)
    expect(ok.body.status).toBe("successful")
    expect((await s.call("GET", `/v1/payments/${pi.body.payment_intent_id}`, { key: live })).body.status).toBe(
      "successful"
    )
    const other = await s.call("POST", "/v1/payments", { key: live, body: { data: { amount: 100 } } })
    const failed = await s.call("POST", `/v1/test_helpers/payments/${other.body.payment_intent_id}/fail`, { key: test })
    expect(failed.body.status).toBe("failed")
    expect((await s.call("GET", "/v1/balance", { key: test })).body.available).toBe(250)
    // the API itself still keeps the modes apart
    expectError(await s.call("GET", `/v1/invoices/${inv.body.id}`, { key: live }), 404, "not_found")
  })
})
