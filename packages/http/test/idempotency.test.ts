import { store_text_length_max } from "@xaalis/engine"
import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { expectError, type Setup, setup } from "./helpers.ts"

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

const hook = "http://127.0.0.1:9/hooks/idem"
const transactions = (entries: ReadonlyArray<{ transaction_id: string }>) =>
  new Set(entries.map((e) => e.transaction_id)).size

describe("Idempotency-Key", () => {
  it("replays the first response (status and body) with one side effect: one object, one posting, one event", async () => {
    s = setup()
    const biz = await s.business()
    const key = biz.secret_key_live
    const conversion = await s.call("POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 5000, callback_url: hook },
      headers: { "idempotency-key": "conv-1" }
    })
    const again = await s.call("POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 5000, callback_url: hook },
      headers: { "idempotency-key": "conv-1" }
    })
    expect(again.status).toBe(201)
    expect(again.text).toBe(conversion.text)
    expect((await s.call("GET", "/v1/minting/ramps", { key })).body.meta.total).toBe(1)

    // no tx_hash: each unkeyed report would be a new transfer; under one key it is applied once
    const transfer = {
      network: "TRC20",
      currency: "USDT",
      to_address: conversion.body.pay_address,
      amount: 73.64
    }
    const first = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: transfer,
      headers: { "idempotency-key": "tx-1" }
    })
    const replay = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: transfer,
      headers: { "idempotency-key": "tx-1" }
    })
    expect(first.body.applied).toBe(true)
    expect({ status: replay.status, text: replay.text }).toEqual({ status: first.status, text: first.text })
    const ramp = await s.call("GET", `/v1/minting/ramps/${conversion.body.id}`, { key })
    expect(ramp.body).toMatchObject({ status: "paid", actually_paid: 73.64 })
    expect(transactions(await s.ledger())).toBe(1)
    const events = (await s.outbox(biz.id, "live")).map((d) => (d.data as { event: string }).event)
    expect(events).toEqual(["ramp.paid"])
  })

  it("replays a recorded error, and answers a different request under the same key with 409 idempotency_conflict", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const bad = await s.call("POST", "/v1/payments", {
      key,
      body: { data: { amount: -1 } },
      headers: { "idempotency-key": "pay-1" }
    })
    expectError(bad, 400, "validation_error")
    const badAgain = await s.call("POST", "/v1/payments", {
      key,
      body: { data: { amount: -1 } },
      headers: { "idempotency-key": "pay-1" }
    })
    expect({ status: badAgain.status, text: badAgain.text }).toEqual({ status: 400, text: bad.text })
    expectError(
      await s.call("POST", "/v1/payments", {
        key,
        body: { data: { amount: 1 } },
        headers: { "idempotency-key": "pay-1" }
      }),
      409,
      "idempotency_conflict"
    )

    const ok = await s.call("POST", "/v1/payments", {
      key,
      body: { data: { amount: 100 } },
      headers: { "idempotency-key": "pay-2" }
    })
    expect(ok.status).toBe(201)
    // the same body on another path, or another body, under the same key
    expectError(
      await s.call("POST", "/v1/payment-links", {
        key,
        body: { data: { amount: 100 } },
        headers: { "idempotency-key": "pay-2" }
      }),
      409,
      "idempotency_conflict"
    )
    expectError(
      await s.call("POST", "/v1/payments", {
        key,
        body: { data: { amount: 101 } },
        headers: { "idempotency-key": "pay-2" }
      }),
      409,
      "idempotency_conflict"
    )
    // the body is compared as a JSON value: other spacing, member order or number spelling is the same request
    const first = await s.call("GET", "/v1/payments", { key })
    for (const raw of [
      '{ "data": { "amount": 100 } }',
      '{"data":{"amount":100.0}}',
      '{"data":{"amount":1e2}}',
      '{"data":{"metadata":{"b":1,"a":2},"amount":100}}'
    ]) {
      const again = await s.call("POST", "/v1/payments", {
        key,
        raw,
        headers: { "idempotency-key": raw.includes("metadata") ? "pay-3" : "pay-2", "content-type": "application/json" }
      })
      expect(again.status, raw).toBe(201)
      if (!raw.includes("metadata")) expect(again.text, raw).toBe(ok.text)
    }
    const reordered = await s.call("POST", "/v1/payments", {
      key,
      raw: '{"data":{"amount":100,"metadata":{"a":2,"b":1}}}',
      headers: { "idempotency-key": "pay-3", "content-type": "application/json" }
    })
    expect(reordered.status).toBe(201)
    // a member named __proto__ is a member like any other: with and without it are two requests
    expectError(
      await s.call("POST", "/v1/payments", {
        key,
        raw: '{"data":{"amount":100,"metadata":{"a":2,"b":1,"__proto__":{"x":1}}}}',
        headers: { "idempotency-key": "pay-3", "content-type": "application/json" }
      }),
      409,
      "idempotency_conflict"
    )
    expect((await s.call("GET", "/v1/payments", { key })).body.meta.total).toBe(first.body.meta.total + 1)
  })

  it("replays a clock advance byte for byte, the clock moved once", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const before = Date.parse((await s.call("GET", "/v1/test_helpers/clock", { key })).body.now)
    const advance = () =>
      s.call("POST", "/v1/test_helpers/clock/advance", {
        key,
        body: { seconds: 3600 },
        headers: { "idempotency-key": "clock-1" }
      })
    const first = await advance()
    expect(first.status).toBe(200)
    await new Promise((r) => setTimeout(r, 20)) // real time moves the sandbox clock on between the two
    const again = await advance()
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    const after = Date.parse((await s.call("GET", "/v1/test_helpers/clock", { key })).body.now)
    expect(after - before).toBeGreaterThanOrEqual(3_600_000)
    expect(after - before).toBeLessThan(2 * 3_600_000)
    expectError(
      await s.call("POST", "/v1/test_helpers/clock/advance", {
        key,
        body: { seconds: 60 },
        headers: { "idempotency-key": "clock-1" }
      }),
      409,
      "idempotency_conflict"
    )
  })

  it("concurrent identical requests under one key to a test helper: one payment, every answer its replay", async () => {
    s = setup()
    const { secret_key_live: live } = await s.business()
    const request = await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 10 } })
    const pay = () =>
      s.call("POST", `/v1/test_helpers/minting/intents/${request.body.id}/pay`, {
        key: live,
        body: { amount: 4.25, currency: "USDT", network: "TRC20" },
        headers: { "idempotency-key": "pay-at-once" }
      })
    const answers = await Promise.all(Array.from({ length: 8 }, pay))
    // one process: the later uses wait for the first and replay its answer
    for (const a of answers) {
      expect(a.status).toBe(200)
      expect(a.body).toEqual(answers[0]?.body)
    }
    // settled: the key replays, and the request was paid once
    expect((await pay()).status).toBe(200)
    const read = await s.call("GET", `/v1/minting/intents/${request.body.id}`, { key: live })
    expect(read.body.amount).toBe(4.25)
    expect(read.body.metadata.payment_history).toHaveLength(1)
  })

  it("is scoped to the business and mode", async () => {
    s = setup()
    const a = await s.business({ name: "A" })
    const b = await s.business({ name: "B" })
    const headers = { "idempotency-key": "same-key" }
    for (const key of [a.secret_key_test, a.secret_key_live, b.secret_key_test]) {
      const res = await s.call("POST", "/v1/payment-links", { key, body: { data: { amount: 5 } }, headers })
      expect(res.status).toBe(201)
    }
    for (const key of [a.secret_key_test, a.secret_key_live, b.secret_key_test]) {
      expect((await s.call("GET", "/v1/payment-links", { key })).body.meta.total).toBe(1)
    }
  })

  it("is kept 24 hours, then forgotten: the same key with another body is a new request", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const headers = { "idempotency-key": "a-day" }
    const create = (amount: number) => s.call("POST", "/v1/payment-links", { key, headers, body: { data: { amount } } })
    const first = await create(5)
    expect(first.status).toBe(201)
    const advance = (seconds: number) => s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds } })
    await advance(24 * 3600 - 60)
    expectError(await create(6), 409, "idempotency_conflict")
    await advance(60) // the day is over; the advance runs the scheduler, which forgets the key
    const again = await create(6)
    expect([again.status, again.body.amount]).toEqual([201, 6])
    expect(again.body.id).not.toBe(first.body.id)
    expect((await s.call("GET", "/v1/payment-links", { key })).body.meta.total).toBe(2)
  })

  it("a clock advance of days under a key is replayed, not run again (its answer is kept a day from then)", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const headers = { "idempotency-key": "two-days" }
    const clock = async () => Date.parse((await s.call("GET", "/v1/test_helpers/clock", { key })).body.now)
    const before = await clock()
    const advance = () =>
      s.call("POST", "/v1/test_helpers/clock/advance", { key, headers, body: { seconds: 2 * 86400 } })
    const first = await advance()
    const again = await advance()
    expect([again.status, again.body]).toEqual([200, first.body])
    const moved = (await clock()) - before
    expect(moved).toBeGreaterThanOrEqual(2 * 86_400_000)
    expect(moved).toBeLessThan(3 * 86_400_000)
  })

  it("refuses a key that breaks the length or charset limits with 400, before anything runs", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    for (const value of ["", " ", "a b", "x".repeat(256), "clé", "tab\there"]) {
      const res = await s.call("POST", "/v1/payments", {
        key,
        body: { data: { amount: 1 } },
        headers: { "idempotency-key": value }
      })
      expectError(res, 400, "validation_error")
    }
    expect(
      (
        await s.call("POST", "/v1/payments", {
          key,
          body: { data: { amount: 1 } },
          headers: { "idempotency-key": "x".repeat(255) }
        })
      ).status
    ).toBe(201)
    expect((await s.call("GET", "/v1/payments", { key })).body.meta.total).toBe(1)
    // business creation (no API key) honours the header too, per client address
    const create = (body: object, idem: string, remoteAddress = "203.0.113.7") =>
      s.call("POST", "/v1/test_helpers/businesses", { body, headers: { "idempotency-key": idem }, remoteAddress })
    const one = await create({ name: "Idem" }, "biz-1")
    const two = await create({ name: "Idem" }, "biz-1")
    expect([one.status, two.status]).toEqual([201, 201])
    expect(two.text).toBe(one.text)
    // the replayed keys are the business's working keys: one business was created
    expect((await s.call("GET", "/v1/balance", { key: two.body.secret_key_test })).status).toBe(200)
    expectError(await create({ name: "Other" }, "biz-1"), 409, "idempotency_conflict")
    const three = await create({ name: "Idem" }, "biz-2")
    expect(three.status).toBe(201)
    expect(three.body.id).not.toBe(one.body.id)
    expect(three.body.secret_key_test).not.toBe(one.body.secret_key_test)
    // a malformed key is refused before anything runs
    expectError(await create({ name: "Idem" }, "bad key"), 400, "validation_error")
    // from another address the same key and body neither replay (the answer holds secret keys) nor conflict
    const elsewhere = await create({ name: "Idem" }, "biz-1", "198.51.100.9")
    expect(elsewhere.status).toBe(201)
    expect(elsewhere.body.secret_key_live).not.toBe(one.body.secret_key_live)
    expect((await create({ name: "Other" }, "biz-1", "198.51.100.10")).status).toBe(201)
    // an address longer than an IP address's text (a mount's own remoteAddress) is scoped by its digest:
    // the key record's id stays within the Store's length, and it still replays and keeps addresses apart
    const longAddress = `client-${"a".repeat(200)}`
    const longKey = "k".repeat(255)
    const far = await create({ name: "Idem" }, longKey, longAddress)
    expect(far.status).toBe(201)
    expect((await create({ name: "Idem" }, longKey, longAddress)).text).toBe(far.text)
    const farOther = await create({ name: "Idem" }, longKey, `${longAddress}b`)
    expect(farOther.status).toBe(201)
    expect(farOther.body.id).not.toBe(far.body.id)
    const ids = await Effect.runPromise(s.store.transact((tx) => tx.due("idempotency", Number.MAX_SAFE_INTEGER, 1_000)))
    expect(ids.length).toBeGreaterThan(0)
    for (const { id } of ids) expect(id.length).toBeLessThanOrEqual(store_text_length_max)
  })
})

describe("X-No-Effect", () => {
  it("is a dry run: 200 with the would-be object, nothing stored or sent, and the key not consumed", async () => {
    s = setup()
    const biz = await s.business()
    const key = biz.secret_key_test
    const dry = await s.call("POST", "/v1/payments", {
      key,
      body: { data: { amount: 250, callback_url: hook } },
      headers: { "x-no-effect": "true", "idempotency-key": "dry-1" }
    })
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ amount: 250, transaction_fee: 3.75, status: "requires_payment_method" })
    expectError(await s.call("GET", `/v1/payments/${dry.body.payment_intent_id}`, { key }), 404, "not_found")
    expect((await s.call("GET", "/v1/payments", { key })).body.meta.total).toBe(0)
    expect(await s.outbox(biz.id, "test")).toEqual([])
    await s.api.runDue()
    expect(await s.deliveries()).toEqual([])
    // X-No-Effect: false is a real create; the dry run did not use the idempotency key
    const real = await s.call("POST", "/v1/payments", {
      key,
      body: { data: { amount: 250, callback_url: hook } },
      headers: { "x-no-effect": "FALSE", "idempotency-key": "dry-1" }
    })
    expect(real.status).toBe(201)
    await vi.waitFor(async () => expect((await s.deliveries()).map((d) => d.url)).toEqual([hook]), { timeout: 10_000 })
    expectError(
      await s.call("POST", "/v1/payments", { key, body: { data: { amount: 1 } }, headers: { "x-no-effect": "yes" } }),
      400,
      "validation_error"
    )
    // a dry run validates like the real thing
    expectError(
      await s.call("POST", "/v1/payments", { key, body: { data: { amount: 0 } }, headers: { "x-no-effect": "true" } }),
      400,
      "validation_error"
    )
  })

  it("is refused, changing nothing, on an operation that has no dry run; false is ignored there", async () => {
    const s = setup()
    const { secret_key_test: key } = await s.business()
    const pi = await s.call("POST", "/v1/payments", { key, body: { data: { amount: 100 } } })
    const id = pi.body.payment_intent_id
    for (const value of ["true", "TRUE", "yes"]) {
      const cancel = await s.call("POST", `/v1/payments/${id}/cancel`, { key, headers: { "x-no-effect": value } })
      expectError(cancel, 400, "validation_error")
      expect(cancel.body.error.message).toContain("X-No-Effect")
      const link = await s.call("POST", "/v1/payment-links", {
        key,
        body: { data: { amount: 9 } },
        headers: { "x-no-effect": value }
      })
      expectError(link, 400, "validation_error")
    }
    expect((await s.call("GET", `/v1/payments/${id}`, { key })).body.status).toBe("requires_payment_method")
    expect((await s.call("GET", "/v1/payment-links", { key })).body.meta.total).toBe(0)
    // false asks for the real thing, and reads have no effect to avoid
    const real = await s.call("POST", "/v1/payment-links", {
      key,
      body: { data: { amount: 9 } },
      headers: { "x-no-effect": "false" }
    })
    expect(real.status).toBe(201)
    expect((await s.call("GET", "/v1/payment-links", { key, headers: { "x-no-effect": "true" } })).status).toBe(200)
    await s.api.dispose()
  })
})
