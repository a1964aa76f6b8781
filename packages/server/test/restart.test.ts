/**
 * The reference server restarted on the same DATA_DIR (embedded store, the
 * default) serves the same objects and balances — after a graceful stop and
 * after SIGKILL.
 */
import { describe, expect, it } from "vitest"
import { call, startServerProcess, tempDataDir } from "./harness.ts"

describe("reference server restarted on the same DATA_DIR", () => {
  it.each(["SIGTERM", "SIGKILL"] as const)(
    "serves the same objects, balances and sandbox time after %s",
    async (signal) => {
      const data = tempDataDir()
      try {
        const first = await startServerProcess({}, data.dir)
        const biz = (await call(first.url, "POST", "/v1/test_helpers/businesses", { body: { name: "Restart" } })).body
        const key = biz.secret_key_live
        const conversion = (await call(first.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } }))
          .body
        const half = await call(first.url, "POST", "/v1/test_helpers/chain/transfers", {
          key,
          body: {
            network: "TRC20",
            currency: "USDT",
            to_address: conversion.pay_address,
            amount: 36.82,
            tx_hash: "0xr1"
          }
        })
        expect(half.body.applied).toBe(true)
        const invoice = (
          await call(first.url, "POST", "/v1/invoices", { key, body: { data: { amount: 99.5, customer: "c-1" } } })
        ).body
        await call(first.url, "POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 60 } })
        const before = {
          conversion: (await call(first.url, "GET", `/v1/minting/ramps/${conversion.id}`, { key })).body,
          invoice: (await call(first.url, "GET", `/v1/invoices/${invoice.id}`, { key })).body,
          balance: (await call(first.url, "GET", "/v1/balance", { key })).body,
          clock: Date.parse((await call(first.url, "GET", "/v1/test_helpers/clock", { key })).body.now)
        }
        expect(before.balance.available).toBe(2500)
        await first.stop(signal)

        const second = await startServerProcess({}, data.dir)
        try {
          expect((await call(second.url, "GET", `/v1/minting/ramps/${conversion.id}`, { key })).body).toStrictEqual(
            before.conversion
          )
          expect((await call(second.url, "GET", `/v1/invoices/${invoice.id}`, { key })).body).toStrictEqual(
            before.invoice
          )
          expect((await call(second.url, "GET", "/v1/balance", { key })).body).toStrictEqual(before.balance)
          // the sandbox clock keeps its advance across restarts
          const now = Date.parse((await call(second.url, "GET", "/v1/test_helpers/clock", { key })).body.now)
          expect(now).toBeGreaterThanOrEqual(before.clock)
          // the same transfer reported again after the restart is still not applied twice
          const again = await call(second.url, "POST", "/v1/test_helpers/chain/transfers", {
            key,
            body: {
              network: "TRC20",
              currency: "USDT",
              to_address: conversion.pay_address,
              amount: 36.82,
              tx_hash: "0xr1"
            }
          })
          expect(again.body.applied).toBe(false)
          expect((await call(second.url, "GET", "/v1/balance", { key })).body.available).toBe(2500)
        } finally {
          await second.stop()
        }
      } finally {
        data.cleanup()
      }
    },
    60_000
  )

  it("idempotent creates cut off by SIGKILL mid-stream: every key, retried after the restart, answers 201 with one object", async () => {
    const data = tempDataDir()
    try {
      const first = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
      const key = (await call(first.url, "POST", "/v1/test_helpers/businesses", { body: { name: "Crash" } })).body
        .secret_key_test
      const create = (url: string, n: number) =>
        call(url, "POST", "/v1/payments", {
          key,
          body: { data: { amount: 100 } },
          headers: { "idempotency-key": `k-${n}` }
        })
      const sent: Array<number> = []
      let stop = false
      const worker = async (w: number) => {
        for (let n = w; !stop; n += 16) {
          sent.push(n)
          await create(first.url, n).catch(() => undefined)
        }
      }
      const workers = Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)))
      await new Promise((r) => setTimeout(r, 500))
      await first.stop("SIGKILL")
      stop = true
      await workers

      const second = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
      try {
        const ids = new Set<string>()
        for (const n of sent) {
          const again = await create(second.url, n)
          expect(again.status, `key k-${n}: ${again.text}`).toBe(201)
          ids.add(again.body.payment_intent_id)
        }
        // one object per key: a key whose first answer was lost is answered from the object it created
        const listed = await call(second.url, "GET", "/v1/payments?limit=1", { key })
        expect(ids.size).toBe(sent.length)
        expect(listed.body.meta.total).toBe(sent.length)
      } finally {
        await second.stop()
      }
    } finally {
      data.cleanup()
    }
  }, 60_000)
})
