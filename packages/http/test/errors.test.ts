import { MemoryStore, Store, StoreError, type Tx } from "@xaalis/engine"
import { internal_error_message } from "@xaalis/http"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { expectError, type Setup, setup } from "./helpers.ts"

let s: Setup
let expectedFaults = 0
afterEach(async () => {
  expect(s.faults).toHaveLength(expectedFaults)
  expectedFaults = 0
  await s.api.dispose()
})

const unknownId = "00000000-0000-4000-8000-00000000abcd"

describe("authentication", () => {
  it("answers 401 authentication_error to a missing, malformed or unknown key", async () => {
    s = setup()
    const { secret_key_test } = await s.business()
    const none = await s.call("GET", "/v1/balance")
    expectError(none, 401, "authentication_error")
    expect(none.headers.get("www-authenticate")).toBe("Bearer")
    expect(none.headers.get("x-content-type-options")).toBe("nosniff")
    for (const authorization of [
      "Basic dXNlcjpwYXNz",
      "Bearer",
      "Bearer ",
      `Bearer ${secret_key_test} extra`,
      secret_key_test,
      "Bearer sk_test_short",
      "Bearer pk_test_0123456789abcdef0123",
      // one character changed (never to the character it already was)
      `Bearer ${secret_key_test.slice(0, -1)}${secret_key_test.endsWith("x") ? "y" : "x"}`,
      "Bearer sk_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
    ]) {
      const res = await s.call("GET", "/v1/balance", { headers: { authorization } })
      expectError(res, 401, "authentication_error")
      expect(res.body.error.message).toBe("Invalid API key.")
      expect(res.headers.get("www-authenticate")).toBe("Bearer")
    }
    // the scheme is case-insensitive; only a 401 carries the challenge
    const ok = await s.call("GET", "/v1/balance", { headers: { authorization: `bearer ${secret_key_test}` } })
    expect(ok.status).toBe(200)
    expect(ok.headers.get("www-authenticate")).toBeNull()
  })

  it("answers a test key with 403 permission_denied on every /v1/minting/* operation, reads included", async () => {
    s = setup()
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const created = await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000 } })
    const request = await s.call("POST", "/v1/minting/intents", { key: live, body: { amount: 10 } })
    const calls: Array<[string, string, unknown]> = [
      ["POST", "/v1/minting/offramp", { gmd_amount: 5000 }],
      ["POST", "/v1/minting/offramp", { nonsense: true }],
      ["GET", `/v1/minting/ramps/${created.body.id}`, undefined],
      ["GET", "/v1/minting/ramps?limit=0", undefined],
      ["POST", "/v1/minting/intents", { amount: 10 }],
      ["GET", "/v1/minting/intents", undefined],
      ["GET", `/v1/minting/intents/${request.body.id}`, undefined]
    ]
    for (const [method, path, body] of calls) {
      expectError(await s.call(method, path, { key: test, body }), 403, "permission_denied")
    }
  })

  it("checks route, then key, then permission, then body, then the domain", async () => {
    s = setup()
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const bad = "Bearer sk_test_unknownunknownunknown"
    expectError(await s.call("POST", "/v1/nowhere", { headers: { authorization: bad } }), 404, "not_found")
    expectError(
      await s.call("POST", "/v1/minting/offramp", { headers: { authorization: bad }, raw: "{not json" }),
      401,
      "authentication_error"
    )
    expectError(await s.call("POST", "/v1/minting/offramp", { key: test, raw: "{not json" }), 403, "permission_denied")
    expectError(
      await s.call("POST", "/v1/minting/offramp", {
        key: live,
        raw: "{not json",
        headers: { "content-type": "application/json" }
      }),
      400,
      "validation_error"
    )
    expectError(
      await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5 } }),
      400,
      "validation_error"
    )
    expectError(await s.call("GET", `/v1/invoices/${unknownId}`, { key: test }), 404, "not_found")
  })
})

describe("tenant and mode isolation", () => {
  it("answers 404 not_found for another business's object and for the other mode's object", async () => {
    s = setup()
    const a = await s.business({ name: "A" })
    const b = await s.business({ name: "B" })
    const pi = await s.call("POST", "/v1/payments", { key: a.secret_key_test, body: { data: { amount: 100 } } })
    const inv = await s.call("POST", "/v1/invoices", {
      key: a.secret_key_test,
      body: { data: { amount: 100, customer: "c" } }
    })
    const link = await s.call("POST", "/v1/payment-links", { key: a.secret_key_test, body: { data: { amount: 1 } } })
    const conv = await s.call("POST", "/v1/minting/offramp", { key: a.secret_key_live, body: { gmd_amount: 5000 } })
    const pr = await s.call("POST", "/v1/minting/intents", { key: a.secret_key_live, body: { amount: 10 } })
    const piId = pi.body.payment_intent_id as string
    const invId = inv.body.id as string
    for (const key of [b.secret_key_test, a.secret_key_live]) {
      for (const [method, path] of [
        ["GET", `/v1/payments/${piId}`],
        ["POST", `/v1/payments/${piId}/cancel`],
        ["GET", `/v1/payment-links/${link.body.id}`],
        ["GET", `/v1/invoices/${invId}`],
        ["PUT", `/v1/invoices/${invId}`],
        ["POST", `/v1/invoices/${invId}/pay`],
        ["POST", `/v1/invoices/${invId}/send-reminder`]
      ] as const) {
        const res = await s.call(method, path, { key, ...(method === "PUT" ? { body: { data: { notes: "x" } } } : {}) })
        expectError(res, 404, "not_found")
      }
      const list = await s.call("GET", "/v1/payments", { key })
      expect(list.body.meta.total).toBe(0)
    }
    // test helpers take any key of the business (decisions §9), so only another business's keys are refused
    for (const key of [b.secret_key_test, b.secret_key_live]) {
      for (const path of [
        `/v1/test_helpers/payments/${piId}/succeed`,
        `/v1/test_helpers/payments/${piId}/fail`,
        `/v1/test_helpers/invoices/${invId}/customer_pay`,
        `/v1/test_helpers/minting/intents/${pr.body.id}/pay`
      ]) {
        const body = path.endsWith("/pay") ? { amount: 1, currency: "USDC", network: "ARC" } : undefined
        expectError(await s.call("POST", path, { key, body }), 404, "not_found")
      }
    }
    expectError(await s.call("GET", `/v1/minting/ramps/${conv.body.id}`, { key: b.secret_key_live }), 404, "not_found")
    expectError(await s.call("GET", `/v1/minting/intents/${pr.body.id}`, { key: b.secret_key_live }), 404, "not_found")
    // the owner still sees everything, unchanged
    expect((await s.call("GET", `/v1/payments/${piId}`, { key: a.secret_key_test })).body.status).toBe(
      "requires_payment_method"
    )
    expect((await s.call("GET", `/v1/invoices/${invId}`, { key: a.secret_key_test })).body.status).toBe("not-paid")
  })

  it("answers a transfer to another business's address like one to an unknown address, and changes nothing", async () => {
    s = setup()
    const a = await s.business({ name: "A" })
    const b = await s.business({ name: "B" })
    const conv = await s.call("POST", "/v1/minting/offramp", { key: a.secret_key_live, body: { gmd_amount: 5000 } })
    const foreign = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: b.secret_key_live,
      body: { network: "TRC20", currency: "USDT", to_address: conv.body.pay_address, amount: 73.64, tx_hash: "0xb1" }
    })
    const unknown = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: b.secret_key_live,
      body: { network: "TRC20", currency: "USDT", to_address: "Tunknownaddress", amount: 73.64, tx_hash: "0xb2" }
    })
    expect(foreign.status).toBe(200)
    expect(foreign.body).toEqual({ tx_hash: "0xb1", matched: null, applied: false })
    expect(unknown.body).toEqual({ tx_hash: "0xb2", matched: null, applied: false })
    expect(foreign.text).not.toContain(conv.body.id)
    const after = await s.call("GET", `/v1/minting/ramps/${conv.body.id}`, { key: a.secret_key_live })
    expect(after.body).toMatchObject({ status: "pending", actually_paid: 0 })
    // the owner's report of the same transaction is still applied: nothing was recorded for it
    const own = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: a.secret_key_test,
      body: { network: "TRC20", currency: "USDT", to_address: conv.body.pay_address, amount: 73.64, tx_hash: "0xb1" }
    })
    expect(own.body).toEqual({ tx_hash: "0xb1", matched: { object: "conversion", id: conv.body.id }, applied: true })
    const again = await s.call("POST", "/v1/test_helpers/chain/transfers", {
      key: a.secret_key_live,
      body: { network: "trc20", currency: "USDT", to_address: conv.body.pay_address, amount: 73.64, tx_hash: "0xb1" }
    })
    expect(again.body).toMatchObject({ applied: false, matched: { id: conv.body.id } })
  })
})

describe("routing and bodies", () => {
  it("answers 404 not_found to an unknown route, and to a wrong method with Allow", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    for (const path of ["/", "/v1", "/v2/payments", "/v1/payments/", "/v1/paymentz", "/v1/invoices/x/y/z"]) {
      expectError(await s.call("GET", path, { key }), 404, "not_found")
    }
    const wrong = await s.call("DELETE", "/v1/invoices/abc", { key })
    expectError(wrong, 404, "not_found")
    expect(wrong.headers.get("allow")).toBe("GET, PUT")
    const patch = await s.call("PATCH", "/v1/payments", { key })
    expectError(patch, 404, "not_found")
    expect(patch.headers.get("allow")).toBe("POST, GET")
    expect((await s.call("GET", "/v1/nowhere", { key })).headers.get("allow")).toBeNull()
  })

  it("refuses malformed JSON, a non-JSON content type, a missing body and invalid UTF-8 with 400", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const json = { "content-type": "application/json" }
    for (const raw of ["{", "{'data': 1}", '{"data":{"amount":1}} trailing', "NaN", '{"data":'])
      expectError(await s.call("POST", "/v1/payments", { key, raw, headers: json }), 400, "validation_error")
    // a member named twice: a proxy in front may read the first, JSON.parse keeps the last; refused, nothing stored
    for (const raw of ['{"data":{"amount":100},"data":{"amount":5}}', '{"data":{"amount":100,"amount":5}}']) {
      const twice = await s.call("POST", "/v1/payments", { key, raw, headers: json })
      expectError(twice, 400, "validation_error")
      expect(twice.body.error.message).toMatch(/names "(data|amount)" twice/)
    }
    expect((await s.call("GET", "/v1/payments", { key })).body.meta.total).toBe(0)
    const plain = await s.call("POST", "/v1/payments", {
      key,
      raw: '{"data":{"amount":100}}',
      headers: { "content-type": "text/plain" }
    })
    expectError(plain, 400, "validation_error")
    expect(plain.body.error.message).toContain("Content-Type: application/json")
    expectError(
      await s.call("POST", "/v1/payments", { key, raw: '{"data":{"amount":100}}', headers: {} }),
      400,
      "validation_error"
    )
    expectError(
      await s.call("POST", "/v1/payments", {
        key,
        raw: '{"data":{"amount":100}}',
        headers: { "content-type": "application/x-www-form-urlencoded" }
      }),
      400,
      "validation_error"
    )
    const missing = await s.call("POST", "/v1/payments", { key, headers: json })
    expectError(missing, 400, "validation_error")
    expect(missing.body.error.message).toContain("required")
    expectError(
      await s.call("POST", "/v1/payments", { key, raw: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), headers: json }),
      400,
      "validation_error"
    )
    // charset parameters and letter case of the media type are fine
    const ok = await s.call("POST", "/v1/payments", {
      key,
      raw: '{"data":{"amount":100}}',
      headers: { "content-type": "Application/JSON; charset=UTF-8" }
    })
    expect(ok.status).toBe(201)
    // a bodyless operation accepts an empty body, or {} as JSON
    const draft = await s.call("POST", "/v1/invoices/draft", { key, body: { data: { amount: 1, customer: "c" } } })
    expect((await s.call("POST", `/v1/invoices/${draft.body.id}/send`, { key, body: {} })).status).toBe(200)
    expect((await s.call("POST", `/v1/invoices/${draft.body.id}/send-reminder`, { key })).status).toBe(200)
    expectError(
      await s.call("POST", `/v1/invoices/${draft.body.id}/pay`, {
        key,
        raw: "x",
        headers: { "content-type": "text/plain" }
      }),
      400,
      "validation_error"
    )
  })

  it("refuses a body sent with a Content-Encoding (none is decoded), and stores nothing", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const raw = '{"data":{"amount":100}}'
    for (const encoding of ["gzip", "br", "deflate", "GZIP", "identity, gzip"]) {
      const res = await s.call("POST", "/v1/payment-links", {
        key,
        raw,
        headers: { "content-type": "application/json", "content-encoding": encoding }
      })
      expectError(res, 400, "validation_error")
      expect(res.body.error.message, encoding).toContain("must not be compressed")
    }
    expect((await s.call("GET", "/v1/payment-links", { key })).body.meta.total).toBe(0)
    // identity is no coding at all
    const plain = await s.call("POST", "/v1/payment-links", {
      key,
      raw,
      headers: { "content-type": "application/json", "content-encoding": " Identity " }
    })
    expect(plain.status).toBe(201)
    // an operation without a body does not care
    const draft = await s.call("POST", "/v1/invoices/draft", { key, body: { data: { amount: 1, customer: "c" } } })
    const sent = await s.call("POST", `/v1/invoices/${draft.body.id}/send`, {
      key,
      headers: { "content-encoding": "gzip" }
    })
    expect(sent.status).toBe(200)
  })

  it("refuses malformed JSON on an operation that takes no body, and nothing changes", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const json = { "content-type": "application/json" }
    const draft = await s.call("POST", "/v1/invoices/draft", { key, body: { data: { amount: 1, customer: "c" } } })
    const sent = await s.call("POST", "/v1/invoices", { key, body: { data: { amount: 1, customer: "c" } } })
    const pi = await s.call("POST", "/v1/payments", { key, body: { data: { amount: 100 } } })
    const actions: Array<[string, string]> = [
      [`/v1/invoices/${draft.body.id}/send`, `/v1/invoices/${draft.body.id}`],
      [`/v1/invoices/${sent.body.id}/pay`, `/v1/invoices/${sent.body.id}`],
      [`/v1/invoices/${sent.body.id}/send-reminder`, `/v1/invoices/${sent.body.id}`],
      [`/v1/test_helpers/invoices/${sent.body.id}/customer_pay`, `/v1/invoices/${sent.body.id}`],
      [`/v1/payments/${pi.body.payment_intent_id}/cancel`, `/v1/payments/${pi.body.payment_intent_id}`],
      [`/v1/test_helpers/payments/${pi.body.payment_intent_id}/succeed`, `/v1/payments/${pi.body.payment_intent_id}`],
      [`/v1/test_helpers/payments/${pi.body.payment_intent_id}/fail`, `/v1/payments/${pi.body.payment_intent_id}`]
    ]
    for (const [action, read] of actions) {
      const before = (await s.call("GET", read, { key })).body
      for (const raw of ['{"data":', "{bad", "xx", '{"a":1} trailing']) {
        const refused = await s.call("POST", action, { key, raw, headers: json })
        expectError(refused, 400, "validation_error")
        expect(refused.body.error.message, `${action} ${raw}`).toMatch(/JSON/)
      }
      expect((await s.call("GET", read, { key })).body, action).toStrictEqual(before)
    }
    // well-formed JSON is still accepted and ignored
    expect(
      (await s.call("POST", `/v1/invoices/${sent.body.id}/pay`, { key, raw: '{"note":1}', headers: json })).status
    ).toBe(200)
  })

  it("refuses a body over the limit, read with a cap whatever Content-Length says", async () => {
    s = setup({ bodyLimitBytes: 1024 })
    const { secret_key_test: key } = await s.business()
    const big = JSON.stringify({ data: { amount: 1, metadata: { pad: "x".repeat(2000) } } })
    const declared = await s.call("POST", "/v1/payments", {
      key,
      raw: big,
      headers: { "content-type": "application/json" }
    })
    expectError(declared, 400, "validation_error")
    expect(declared.body.error.message).toBe("The request body must not exceed 1024 bytes.")
    // a streamed body with no Content-Length: the reader stops past the limit and the rest is never read
    let pulled = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1
        if (pulled > 1000) controller.close()
        else controller.enqueue(new TextEncoder().encode(" ".repeat(512)))
      }
    })
    const res = await s.api.fetch(
      new Request("http://api.test/v1/payments", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: stream,
        duplex: "half"
      } as RequestInit)
    )
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("validation_error")
    expect(pulled).toBeLessThan(10)
    // a lying Content-Length (smaller than the body) does not get past the cap either
    const lying = await s.api.fetch(
      new Request("http://api.test/v1/payments", {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": "10" },
        body: big
      })
    )
    expect(lying.status).toBe(400)
    // within the limit all is well
    expect((await s.call("POST", "/v1/payments", { key, body: { data: { amount: 1 } } })).status).toBe(201)
    expect((await s.call("GET", "/v1/payments", { key })).body.meta.total).toBe(1)
  })

  it("ignores unknown query parameters and validates limit and offset", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const ok = await s.call("GET", "/v1/invoices?limit=100&offset=0&status=paid&expand[]=x", { key })
    expect(ok.status).toBe(200)
    expect(ok.body.meta).toEqual({ total: 0, limit: 100, offset: 0 })
    for (const q of ["limit=0", "limit=101", "limit=abc", "offset=-1", "limit=1.5", "offset=9007199254740992"]) {
      expectError(await s.call("GET", `/v1/invoices?${q}`, { key }), 400, "validation_error")
    }
    // any offset >= 0 a JSON number carries exactly: past the end, an empty page
    for (const offset of [100_000_001, Number.MAX_SAFE_INTEGER]) {
      const deep = await s.call("GET", `/v1/invoices?offset=${offset}`, { key })
      expect(deep.status).toBe(200)
      expect(deep.body).toEqual({ data: [], meta: { total: 0, limit: 10, offset } })
    }
  })

  it("answers every catalogue error of the state machines with its status", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const inv = await s.call("POST", "/v1/invoices", { key, body: { data: { amount: 100, customer: "c" } } })
    expect((await s.call("POST", `/v1/invoices/${inv.body.id}/pay`, { key })).status).toBe(200)
    expectError(await s.call("POST", `/v1/invoices/${inv.body.id}/pay`, { key }), 409, "already_paid")
    expectError(
      await s.call("PUT", `/v1/invoices/${inv.body.id}`, { key, body: { data: { notes: "x" } } }),
      409,
      "already_paid"
    )
    expectError(await s.call("POST", `/v1/invoices/${inv.body.id}/send`, { key }), 409, "invalid_state")
    const pi = await s.call("POST", "/v1/payments", { key, body: { data: { amount: 100 } } })
    expect((await s.call("POST", `/v1/payments/${pi.body.payment_intent_id}/cancel`, { key })).status).toBe(200)
    expectError(await s.call("POST", `/v1/payments/${pi.body.payment_intent_id}/cancel`, { key }), 409, "invalid_state")
    expectError(await s.call("POST", `/v1/webhook-deliveries/${unknownId}/resend`, { key }), 404, "not_found")
    expectError(await s.call("GET", `/v1/payments/${unknownId}`, { key }), 404, "not_found")
  })

  it("serves no test helper when the sandbox is off", async () => {
    s = setup({ sandbox: false })
    for (const [method, path] of [
      ["POST", "/v1/test_helpers/businesses"],
      ["POST", "/v1/test_helpers/rates"],
      ["GET", "/v1/test_helpers/clock"],
      ["POST", "/v1/test_helpers/clock/advance"],
      ["POST", "/v1/test_helpers/chain/transfers"],
      ["POST", `/v1/test_helpers/minting/intents/${unknownId}/pay`],
      ["POST", `/v1/test_helpers/payments/${unknownId}/succeed`],
      ["POST", `/v1/test_helpers/payments/${unknownId}/fail`],
      ["POST", `/v1/test_helpers/invoices/${unknownId}/customer_pay`],
      ["POST", "/v1/test_helpers/payouts/fail_next"]
    ]) {
      expectError(
        await s.call(method as string, path as string, method === "GET" ? {} : { body: {} }),
        404,
        "not_found"
      )
    }
    const doc = await s.call("GET", "/v1/openapi.json")
    expect(Object.keys(doc.body.paths).some((p) => p.includes("test_helpers"))).toBe(false)
    expect(Object.keys(doc.body.paths)).toContain("/v1/payments")
  })
})

describe("server faults", () => {
  /** The in-memory store, but every insert fails (`fail`) or throws (`die`) while `state.mode` says so. */
  const flakyStore = (state: { mode: "ok" | "fail" | "die" }) =>
    Layer.effect(
      Store,
      Effect.map(MemoryStore.makeMemoryStore, (base) =>
        Store.of({
          ledger: base.ledger,
          transact: (work) =>
            base.transact((tx) =>
              work({
                ...tx,
                insert: (doc) =>
                  state.mode === "fail"
                    ? Effect.fail(new StoreError({ message: "disk full at /var/lib/xaalis/secret.db" }))
                    : state.mode === "die"
                      ? Effect.die(new Error("segfault in /internal/driver.c"))
                      : tx.insert(doc)
              } satisfies Tx)
            )
        })
      )
    )

  it("answers 500 internal_error with a fixed message, and hands the fault to onError", async () => {
    const state: { mode: "ok" | "fail" | "die" } = { mode: "ok" }
    s = setup({ store: flakyStore(state) })
    const { secret_key_test: key } = await s.business()
    for (const mode of ["fail", "die"] as const) {
      state.mode = mode
      const res = await s.call("POST", "/v1/payment-links", { key, body: { data: { amount: 10 } } })
      expectError(res, 500, "internal_error")
      expect(res.body.error.message).toBe(internal_error_message)
      expect(res.body.error.message).not.toMatch(/secret|driver|disk|segfault|stack|\bat /i)
    }
    expectedFaults = 2
    expect(s.faults[0]?.message).toContain("disk full")
    expect(s.faults[1]?.message).toContain("segfault")
    expect(s.faults.map((f) => f.context)).toEqual(["POST /v1/payment-links", "POST /v1/payment-links"])
    expect(s.faults.every((f) => /^[0-9a-f-]{36}$/.test(f.request_id ?? ""))).toBe(true)
    state.mode = "ok"
    expect((await s.call("GET", "/v1/payment-links", { key })).body.meta.total).toBe(0)
  })

  it("a store that cannot start: ready() rejects, requests answer 500, the fault is reported once per attempt", async () => {
    const cause = new Error("connect ECONNREFUSED 10.0.0.7:5432")
    s = setup({
      store: Layer.effect(Store, Effect.fail(new StoreError({ message: "cannot open the database", cause })))
    })
    await expect(s.api.ready()).rejects.toBeDefined()
    const res = await s.call("GET", "/v1/balance", { key: "sk_test_AAAAAAAAAAAAAAAAAAAAAAAA" })
    expectError(res, 500, "internal_error")
    expect(res.body.error.message).toBe(internal_error_message)
    expect(res.text).not.toContain("10.0.0.7")
    // the operator's report names the error and its cause: what could not be reached
    const startUp = s.faults.filter((f) => f.context === "start-up")
    expect(startUp.length).toBeGreaterThan(0)
    for (const f of startUp)
      expect(f.message).toMatch(/cannot open the database[\s\S]*connect ECONNREFUSED 10\.0\.0\.7:5432/)
    expectedFaults = s.faults.length
  })
})
