/**
 * What the request path leaves out, and what it must not: the key lookup of a
 * key already authenticated (the cache, and how it is emptied), and the webhook
 * dispatcher after a write that committed no outbox row.
 */
import { Businesses, IdsAdapter, MemoryStore, Store } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { HttpApiOptions } from "../src/HttpApi.ts"
import { expectError, type Setup, setup } from "./helpers.ts"

/** The memory store, counting key lookups and outbox scans (the dispatcher's). */
const counted = () => {
  const inner = Effect.runSync(MemoryStore.makeMemoryStore)
  const counts = { api_key_reads: 0, outbox_scans: 0 }
  const store = Store.of({
    ledger: inner.ledger,
    transact: (work) =>
      inner.transact((tx) =>
        work({
          ...tx,
          get: (kind, id) => {
            if (kind === "api_key") counts.api_key_reads += 1
            return tx.get(kind, id)
          },
          due: (kind, now, limit) => {
            if (kind === "outbox") counts.outbox_scans += 1
            return tx.due(kind, now, limit)
          }
        })
      )
  })
  return { inner, store, counts }
}

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

const withStore = (options: HttpApiOptions = {}) => {
  const c = counted()
  s = setup({ store: Layer.succeed(Store, c.store), ...options })
  return c
}

/** Rolls the business's key of `key`'s mode straight on the store, as an operator's back office would. */
const roll = (inner: Store["Service"], key: string, expires_in_seconds = 0) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const caller = yield* Businesses.authenticate(key)
      return yield* Businesses.rollApiKey({ business_id: caller.business_id, mode: caller.mode, expires_in_seconds })
    }).pipe(Effect.provide(Layer.merge(Layer.succeed(Store, inner), IdsAdapter.layer)))
  )

describe("the authenticated-key cache", () => {
  it("looks a key up in the store once, then answers from the cache", async () => {
    const c = withStore()
    const { secret_key_test: key } = await s.business()
    const before = c.counts.api_key_reads
    for (let i = 0; i < 3; i++) expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
    expect(c.counts.api_key_reads - before).toBe(1)
  })

  it("never keeps an unknown or malformed key: each one is looked up (and refused) every time", async () => {
    const c = withStore()
    await s.business()
    const before = c.counts.api_key_reads
    for (let i = 0; i < 3; i++) {
      expectError(
        await s.call("GET", "/v1/balance", { key: "sk_test_unknownunknownunknown" }),
        401,
        "authentication_error"
      )
    }
    expect(c.counts.api_key_reads - before).toBe(3)
  })

  it("forgetKeys() makes the next request read the store: a key rolled at once stops working at once", async () => {
    const c = withStore()
    const { secret_key_test: key } = await s.business()
    expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
    const rolled = await roll(c.inner, key)
    s.api.forgetKeys()
    expectError(await s.call("GET", "/v1/balance", { key }), 401, "authentication_error")
    expect((await s.call("GET", "/v1/balance", { key: rolled.secret_key })).status).toBe(200)
  })

  it("keeps a key for ttlMs only: a key rolled elsewhere stops here within it, without forgetKeys()", async () => {
    const c = withStore({ authCache: { ttlMs: 5_000 } })
    const { secret_key_test: key } = await s.business()
    vi.useFakeTimers({ toFake: ["performance"] })
    try {
      expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
      await roll(c.inner, key)
      // still within ttlMs: the cache answers (this is the staleness the ttl bounds)
      vi.advanceTimersByTime(4_999)
      expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
      vi.advanceTimersByTime(1)
      expectError(await s.call("GET", "/v1/balance", { key }), 401, "authentication_error")
    } finally {
      vi.useRealTimers()
    }
  })

  it("never keeps a key in its grace period: its expiry is checked on every request, on the sandbox clock", async () => {
    const c = withStore()
    const { secret_key_test: key } = await s.business()
    const rolled = await roll(c.inner, key, 3600)
    const before = c.counts.api_key_reads
    for (let i = 0; i < 3; i++) expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
    expect(c.counts.api_key_reads - before).toBe(3)
    const advanced = await s.call("POST", "/v1/test_helpers/clock/advance", {
      key: rolled.secret_key,
      body: { seconds: 3600 }
    })
    expect(advanced.status).toBe(200)
    expectError(await s.call("GET", "/v1/balance", { key }), 401, "authentication_error")
    expect((await s.call("GET", "/v1/balance", { key: rolled.secret_key })).status).toBe(200)
  })

  it("authCache: false reads the store on every request (a revoked key fails at once without forgetKeys)", async () => {
    const c = withStore({ authCache: false })
    const { secret_key_test: key } = await s.business()
    const before = c.counts.api_key_reads
    for (let i = 0; i < 3; i++) expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
    expect(c.counts.api_key_reads - before).toBe(3)
    await roll(c.inner, key)
    expectError(await s.call("GET", "/v1/balance", { key }), 401, "authentication_error")
  })

  it("keeps at most `max` keys, dropping the oldest first", async () => {
    const c = withStore({ authCache: { max: 2 } })
    const { secret_key_test: a, secret_key_live: b } = await s.business()
    const { secret_key_test: d } = await s.business()
    for (const key of [a, b, d]) expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200)
    const before = c.counts.api_key_reads
    expect((await s.call("GET", "/v1/balance", { key: d })).status).toBe(200) // kept
    expect(c.counts.api_key_reads - before).toBe(0)
    expect((await s.call("GET", "/v1/balance", { key: a })).status).toBe(200) // dropped: read again
    expect(c.counts.api_key_reads - before).toBe(1)
  })

  it("forgets every key when the sandbox clock moves: a key cached before its roll ends with its grace period", async () => {
    const c = withStore()
    const { secret_key_test: key } = await s.business()
    expect((await s.call("GET", "/v1/balance", { key })).status).toBe(200) // cached, no expiry yet
    const rolled = await roll(c.inner, key, 3600)
    const advanced = await s.call("POST", "/v1/test_helpers/clock/advance", {
      key: rolled.secret_key,
      body: { seconds: 3600 }
    })
    expect(advanced.status).toBe(200)
    expectError(await s.call("GET", "/v1/balance", { key }), 401, "authentication_error")
  })

  it("refuses a max or a ttlMs below 1", () => {
    expect(() => setup({ authCache: { max: 0 } })).toThrow(RangeError)
    expect(() => setup({ authCache: { ttlMs: 0 } })).toThrow(RangeError)
    s = setup()
  })
})

describe("the webhook dispatcher after a write", () => {
  const hook = "http://127.0.0.1:9/hooks/kick"

  it("is not run after a write that committed no outbox row", async () => {
    const c = withStore()
    const { secret_key_live: key } = await s.business()
    const created = await s.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
    expect(created.status).toBe(201)
    const failed = await s.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: -1 } })
    expectError(failed, 400, "validation_error")
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(c.counts.outbox_scans).toBe(0)
  })

  it("delivers at once, without the periodic run, an event a write committed", async () => {
    const c = withStore()
    const { secret_key_live: key } = await s.business()
    const conversion = await s.call("POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 5000, callback_url: hook }
    })
    expect(c.counts.outbox_scans).toBe(0)
    const paid = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: { network: "TRC20", currency: "USDT", to_address: conversion.body.pay_address, amount: 73.64 }
    })
    expect(paid.body.applied).toBe(true)
    await vi.waitFor(
      async () => {
        const deliveries = await s.deliveries()
        expect(deliveries.map((d) => [(JSON.parse(d.body) as { event: string }).event, d.url])).toEqual([
          ["ramp.paid", hook]
        ])
      },
      { timeout: 10_000 }
    )
    expect(c.counts.outbox_scans).toBeGreaterThan(0)
  })
})
