import { MemoryStore, Store } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { expectError, setup } from "./helpers.ts"

/** Decisions §8: a live-mode callback_url must be https, not to a private address; the sandbox allows http to loopback. */
describe("live-mode callback_url rule at creation", () => {
  const creates = (callback_url: string) =>
    [
      ["POST", "/v1/minting/offramp", { gmd_amount: 5000, callback_url }],
      ["POST", "/v1/minting/intents", { amount: 10, callback_url }],
      ["POST", "/v1/payments", { data: { amount: 100, callback_url } }],
      ["POST", "/v1/invoices", { data: { amount: 100, customer: "c-1", callback_url } }]
    ] as const

  it.each([
    "http://merchant.example/hook",
    "https://10.0.0.7/hook",
    "https://192.168.1.20/hook",
    "https://169.254.169.254/latest",
    "https://billing.corp.internal/hook",
    "ftp://merchant.example/hook"
  ])("refuses %s with validation_error on every live create, storing nothing", async (url) => {
    const s = setup({ sandbox: true })
    const biz = await s.business()
    for (const [method, path, body] of creates(url)) {
      const res = await s.call(method, path, { key: biz.secret_key_live, body })
      expectError(res, 400, "validation_error")
      expect(res.body.error.message).toMatch(/callback_url/)
      const list = await s.call("GET", path.replace("/offramp", "/ramps"), { key: biz.secret_key_live })
      expect(list.body.meta.total).toBe(0)
    }
    await s.api.dispose()
  })

  it("accepts https to a public host, and http to loopback in the sandbox", async () => {
    const s = setup({ sandbox: true })
    const biz = await s.business()
    for (const url of [
      "https://merchant.example/hook",
      "http://127.0.0.1:4000/hook",
      "http://[::1]:4000/hook",
      "http://localhost:4000/hook",
      "https://[::1]/hook"
    ]) {
      for (const [method, path, body] of creates(url)) {
        const res = await s.call(method, path, { key: biz.secret_key_live, body })
        expect(res.status, `${path} ${url}: ${res.text}`).toBe(201)
      }
    }
    await s.api.dispose()
  })

  it("with the sandbox off, refuses https to localhost names too (they always resolve to loopback)", async () => {
    const store = Layer.succeed(Store, Effect.runSync(MemoryStore.makeMemoryStore))
    const sandboxed = setup({ sandbox: true, store })
    const biz = await sandboxed.business()
    const s = setup({ sandbox: false, store })
    for (const url of ["https://localhost/hook", "https://LocalHost./hook", "https://127.0.0.1/hook"]) {
      for (const [method, path, body] of creates(url)) {
        const res = await s.call(method, path, { key: biz.secret_key_live, body })
        expectError(res, 400, "validation_error")
        expect(res.body.error.message).toContain("loopback")
      }
    }
    const accepted = await s.call("POST", "/v1/payments", {
      key: biz.secret_key_live,
      body: { data: { amount: 100, callback_url: "https://merchant.example/hook" } }
    })
    expect(accepted.status).toBe(201)
    await s.api.dispose()
    await sandboxed.api.dispose()
  })

  it("leaves test-mode creates alone (the rule is for live mode; deliveries are vetted anyway)", async () => {
    const s = setup({ sandbox: true })
    const biz = await s.business()
    const res = await s.call("POST", "/v1/payments", {
      key: biz.secret_key_test,
      body: { data: { amount: 100, callback_url: "http://merchant.example/hook" } }
    })
    expect(res.status).toBe(201)
    await s.api.dispose()
  })
})

describe("a sandbox business's webhook_url", () => {
  it("takes the live callback rules at creation (it receives live events)", async () => {
    const s = setup({ sandbox: true })
    for (const url of [
      "http://merchant.example/hook",
      "http://10.1.2.3/hook",
      "https://10.0.0.7/hook",
      "https://169.254.169.254/latest",
      "https://billing.corp.internal/hook"
    ]) {
      const res = await s.call("POST", "/v1/test_helpers/businesses", { body: { name: "Hooked", webhook_url: url } })
      expectError(res, 400, "validation_error")
      expect(res.body.error.message).toMatch(/^webhook_url is not allowed in live mode/)
    }
    for (const url of ["https://merchant.example/hook", "http://127.0.0.1:4000/hook", "http://localhost:4000/hook"]) {
      const res = await s.call("POST", "/v1/test_helpers/businesses", { body: { name: "Hooked", webhook_url: url } })
      expect(res.status, `${url}: ${res.text}`).toBe(201)
    }
    await s.api.dispose()
  })
})
