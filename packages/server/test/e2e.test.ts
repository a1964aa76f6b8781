/**
 * End-to-end: the reference server started as `npm start` starts it (its own
 * process, real HTTP, real sockets), called as a client would call it.
 */
import { createHmac } from "node:crypto"
import { connect } from "node:net"
import { verify } from "@xaalis/webhooks"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { call, receiver, type ServerProcess, startServerProcess, tempDataDir } from "./harness.ts"

const errorShape = (body: unknown, code: string) => {
  expect(body).toStrictEqual({ error: { message: expect.any(String), code } })
  expect((body as { error: { message: string } }).error.message).not.toMatch(/at .*\.ts:\d+|node_modules|Error:/)
}

let server: ServerProcess
let data: ReturnType<typeof tempDataDir>
let hooks: Awaited<ReturnType<typeof receiver>>
let biz: {
  id: string
  account_id: string
  name: string
  secret_key_test: string
  secret_key_live: string
  webhook_secret: string
}
let other: typeof biz

beforeAll(async () => {
  data = tempDataDir()
  hooks = await receiver()
  server = await startServerProcess({ RATE_LIMIT_RPS: "0" }, data.dir)
  const created = await call(server.url, "POST", "/v1/test_helpers/businesses", {
    body: { name: "Kairaba Coffee", webhook_url: `${hooks.url}/business-hook` }
  })
  expect(created.status).toBe(201)
  biz = created.body
  other = (await call(server.url, "POST", "/v1/test_helpers/businesses", { body: { name: "Other" } })).body
}, 60_000)

afterAll(async () => {
  await server?.stop()
  await hooks?.close()
  data?.cleanup()
})

describe("reference server over HTTP", () => {
  it("prints where it listens and how to create a sandbox business (stderr); stdout carries only JSON lines", () => {
    expect(server.stderr()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/)
    expect(server.stderr()).toContain("/v1/test_helpers/businesses")
    expect(server.lines.length).toBeGreaterThan(0)
    for (const line of server.lines) expect(() => JSON.parse(line), line).not.toThrow()
    expect(JSON.parse(server.lines[0] as string)).toMatchObject({ msg: "listening", url: server.url, sandbox: true })
  })

  it("answers a request node cannot parse with the error object, and logs it like any other", async () => {
    const { port } = new URL(server.url)
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write("GARBAGE /x HTTP/1.1\r\n\r\n"))
      let got = ""
      socket.on("data", (d) => {
        got += d.toString()
      })
      socket.on("close", () => resolve(got))
      socket.on("error", reject)
    })
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toEqual({
      error: { message: "The request is not valid HTTP.", code: "validation_error" }
    })
    await vi.waitFor(
      () =>
        expect(server.lines.map((l) => JSON.parse(l))).toContainEqual(
          expect.objectContaining({ msg: "request", status: 400, error: "The request is not valid HTTP." })
        ),
      { timeout: 10_000 }
    )
  })

  it("creates sandbox businesses with the §9 fields", () => {
    expect(Object.keys(biz).sort()).toStrictEqual(
      ["account_id", "id", "name", "secret_key_live", "secret_key_test", "webhook_secret"].sort()
    )
    expect(biz.secret_key_test).toMatch(/^sk_test_/)
    expect(biz.secret_key_live).toMatch(/^sk_live_/)
    expect(biz.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
    expect(Buffer.from(biz.webhook_secret.slice(6), "base64")).toHaveLength(32)
  })

  it("serves the OpenAPI description without a key", async () => {
    const r = await call(server.url, "GET", "/v1/openapi.json")
    expect(r.status).toBe(200)
    expect(r.body.openapi).toMatch(/^3\.1/)
    expect(r.body.info.version).toBe("1.0.0")
    for (const path of [
      "/v1/payments",
      "/v1/payment-links",
      "/v1/minting/offramp",
      "/v1/minting/ramps/{id}",
      "/v1/minting/intents",
      "/v1/invoices",
      "/v1/invoices/{id}/send-reminder",
      "/v1/balance"
    ]) {
      expect(Object.keys(r.body.paths)).toContain(path)
    }
  })

  it("payment intents: create 201, get, list, cancel, outcome helpers", async () => {
    const key = biz.secret_key_test
    const created = await call(server.url, "POST", "/v1/payments", {
      key,
      body: { data: { amount: 1000, currency: "GMD", callback_url: `${hooks.url}/pi` } }
    })
    expect(created.status).toBe(201)
    expect(created.body.amount).toBe(1000)
    expect(created.body.transaction_fee).toBe(15)
    expect(created.body.status).toBe("requires_payment_method")
    const id = created.body.payment_intent_id
    expect((await call(server.url, "GET", `/v1/payments/${id}`, { key })).body.payment_intent_id).toBe(id)
    const list = await call(server.url, "GET", "/v1/payments?limit=1", { key })
    expect(list.status).toBe(200)
    expect(list.body.meta).toStrictEqual({ total: 1, limit: 1, offset: 0 })
    const cancelled = await call(server.url, "POST", `/v1/payments/${id}/cancel`, { key })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body.status).toBe("cancelled")
    const again = await call(server.url, "POST", `/v1/test_helpers/payments/${id}/succeed`, { key })
    expect(again.status).toBe(409)
    errorShape(again.body, "invalid_state")
    const second = await call(server.url, "POST", "/v1/payments", { key, body: { data: { amount: 250.5 } } })
    const ok = await call(server.url, "POST", `/v1/test_helpers/payments/${second.body.payment_intent_id}/succeed`, {
      key
    })
    expect(ok.status).toBe(200)
    expect((await call(server.url, "GET", `/v1/payments/${second.body.payment_intent_id}`, { key })).body.status).toBe(
      "successful"
    )
    await hooks.waitFor((rs) =>
      rs.some((r) => r.path === "/pi" && JSON.parse(r.body).event === "payment_intent.cancelled")
    )
  })

  it("X-No-Effect: true is a dry run answered 200 that stores nothing", async () => {
    const key = biz.secret_key_test
    const before = (await call(server.url, "GET", "/v1/payments", { key })).body.meta.total
    const dry = await call(server.url, "POST", "/v1/payments", {
      key,
      body: { data: { amount: 500 } },
      headers: { "x-no-effect": "true" }
    })
    expect(dry.status).toBe(200)
    expect(dry.body.amount).toBe(500)
    expect((await call(server.url, "GET", "/v1/payments", { key })).body.meta.total).toBe(before)
  })

  it("payment links: create, get, list", async () => {
    const key = biz.secret_key_live
    const created = await call(server.url, "POST", "/v1/payment-links", {
      key,
      body: {
        data: { title: "Coffee beans", amount: 750, currency: "GMD", description: "1 kg", metadata: { sku: "b1" } }
      }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ amount: 750, currency: "GMD" })
    expect(created.body.url).toMatch(/^https?:\/\//)
    const got = await call(server.url, "GET", `/v1/payment-links/${created.body.id}`, { key })
    expect(got.body.id).toBe(created.body.id)
    expect((await call(server.url, "GET", "/v1/payment-links", { key })).body.data[0].id).toBe(created.body.id)
  })

  it("conversion: create, transfer, read, both webhooks signed, balance credited", async () => {
    const key = biz.secret_key_live
    const created = await call(server.url, "POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 5000, callback_url: `${hooks.url}/ramp` }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      status: "pending",
      gmd_amount: 5000,
      gmd_rate: 70,
      pay_amount: 73.64,
      fee: 2.21,
      pay_currency: "USDT",
      network: "TRC20",
      destination: "service_balance",
      actually_paid: 0
    })
    const sent = await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: {
        network: "TRC20",
        currency: "USDT",
        to_address: created.body.pay_address,
        amount: 73.64,
        tx_hash: "0xe2e1"
      }
    })
    expect(sent.status).toBe(200)
    expect(sent.body).toStrictEqual({
      tx_hash: "0xe2e1",
      matched: { object: "conversion", id: created.body.id },
      applied: true
    })
    const dup = await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: {
        network: "TRC20",
        currency: "USDT",
        to_address: created.body.pay_address,
        amount: 73.64,
        tx_hash: "0xe2e1"
      }
    })
    expect(dup.body.applied).toBe(false)
    const read = await call(server.url, "GET", `/v1/minting/ramps/${created.body.id}`, { key })
    expect(read.body.status).toBe("paid")
    expect(read.body.actually_paid).toBe(73.64)
    expect(Array.isArray(read.body.events)).toBe(true)
    const balance = await call(server.url, "GET", "/v1/balance", { key })
    expect(balance.status).toBe(200)
    expect(balance.body).toMatchObject({ currency: "GMD", available: 5000 })

    await hooks.waitFor(
      (rs) =>
        rs.some((r) => r.path === "/ramp") &&
        rs.some((r) => r.path === "/business-hook" && r.body.includes("ramp.paid"))
    )
    for (const r of hooks.received.filter((x) => x.path === "/ramp" || x.path === "/business-hook")) {
      const event = verify(r.body, r.headers, biz.webhook_secret)
      expect(event.event).toBe("ramp.paid")
      expect((event.payload as { id: string }).id).toBe(created.body.id)
      // the x-service-signature, checked independently of @xaalis/webhooks
      expect(r.headers["x-service-signature"]).toBe(
        createHmac("sha512", biz.webhook_secret).update(r.body).digest("hex")
      )
    }
  })

  it("concurrent uses of one Idempotency-Key on every create: one object; the same body replays it, another conflicts", async () => {
    const creates: Array<[string, string, (i: number) => unknown, string]> = [
      ["/v1/minting/intents", biz.secret_key_live, (i) => ({ amount: 10 + i }), "/v1/minting/intents"],
      ["/v1/minting/offramp", biz.secret_key_live, (i) => ({ gmd_amount: 5000 + i }), "/v1/minting/ramps"],
      ["/v1/payments", other.secret_key_test, (i) => ({ data: { amount: 100 + i } }), "/v1/payments"],
      ["/v1/payment-links", other.secret_key_test, (i) => ({ data: { amount: 5 + i } }), "/v1/payment-links"],
      ["/v1/invoices", other.secret_key_test, (i) => ({ data: { amount: 5 + i, customer: "c" } }), "/v1/invoices"]
    ]
    const rounds = 3
    for (const [path, key, body, list] of creates) {
      const before = (await call(server.url, "GET", list, { key })).body.meta.total
      for (const [bodies, round] of ["same", "different"].flatMap((b) => [0, 1, 2].map((r) => [b, r] as const))) {
        const headers = { "idempotency-key": `race-${path}-${bodies}-${round}` }
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            call(server.url, "POST", path, { key, headers, body: body(bodies === "same" ? 0 : i) })
          )
        )
        const statuses = answers.map((a) => a.status)
        if (bodies === "same") {
          // later uses wait for the first (one server process) and replay its answer
          expect(
            statuses.every((x) => x === 201),
            `${path} ${bodies}: ${statuses}`
          ).toBe(true)
          for (const a of answers) expect(a.body).toEqual(answers[0]?.body)
        } else {
          expect(statuses.filter((x) => x === 201).length, `${path} ${bodies}: ${statuses}`).toBe(1)
          expect(statuses.filter((x) => x === 409).length, `${path} ${bodies}: ${statuses}`).toBe(answers.length - 1)
          for (const a of answers.filter((x) => x.status === 409)) errorShape(a.body, "idempotency_conflict")
        }
      }
      // one object per key
      expect((await call(server.url, "GET", list, { key })).body.meta.total, path).toBe(before + 2 * rounds)
    }
  })

  it("metadata comes back untouched from the embedded store, numbers a double cannot hold included", async () => {
    const metadata = '{"big":12345678901234567890,"safe1":9007199254740993,"inf":1e400,"x":0.1,"nested":{"n":-0.5}}'
    const created = await call(server.url, "POST", "/v1/payments", {
      key: biz.secret_key_test,
      raw: `{"data":{"amount":100,"metadata":${metadata}}}`
    })
    expect(created.status).toBe(201)
    expect(created.text).toContain(`"metadata":${metadata}`)
    const read = await call(server.url, "GET", `/v1/payments/${created.body.payment_intent_id}`, {
      key: biz.secret_key_test
    })
    expect(read.text).toContain(`"metadata":${metadata}`)
  })

  it("minting answers test keys with 403 permission_denied, reads included", async () => {
    for (const [method, path] of [
      ["POST", "/v1/minting/offramp"],
      ["GET", "/v1/minting/ramps"],
      ["POST", "/v1/minting/intents"],
      ["GET", "/v1/minting/intents"]
    ] as const) {
      const r = await call(server.url, method, path, {
        key: biz.secret_key_test,
        ...(method === "POST" ? { body: { gmd_amount: 5000 } } : {})
      })
      expect(r.status).toBe(403)
      errorShape(r.body, "permission_denied")
    }
  })

  it("authentication: missing, malformed and unknown keys are 401", async () => {
    for (const headers of [{}, { authorization: "Basic abc" }, { authorization: "Bearer sk_live_nope" }]) {
      const r = await call(server.url, "GET", "/v1/balance", { headers })
      expect(r.status).toBe(401)
      errorShape(r.body, "authentication_error")
    }
  })

  it("another business's or the other mode's object is 404", async () => {
    const mine = await call(server.url, "POST", "/v1/payments", {
      key: biz.secret_key_test,
      body: { data: { amount: 100 } }
    })
    const id = mine.body.payment_intent_id
    for (const key of [other.secret_key_test, biz.secret_key_live]) {
      const r = await call(server.url, "GET", `/v1/payments/${id}`, { key })
      expect(r.status).toBe(404)
      errorShape(r.body, "not_found")
    }
  })

  it("stablecoin payment request: create, pay through the hosted page, charge.succeeded", async () => {
    const key = biz.secret_key_live
    const created = await call(server.url, "POST", "/v1/minting/intents", {
      key,
      body: { amount: 10, metadata: { order: "A-1" }, callback_url: `${hooks.url}/pr` }
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({
      status: "pending",
      amount: 0,
      currency: "USD",
      metadata: { order: "A-1", usd_amount: 10 }
    })
    const paid = await call(server.url, "POST", `/v1/test_helpers/minting/intents/${created.body.id}/pay`, {
      key,
      body: { amount: 4, currency: "USDT", network: "TRC20" }
    })
    expect(paid.status).toBe(200)
    const read = await call(server.url, "GET", `/v1/minting/intents/${created.body.id}`, { key })
    expect(read.body).toMatchObject({ status: "partially_paid", amount: 4 })
    await hooks.waitFor((rs) => rs.some((r) => r.path === "/pr"))
    const hook = hooks.received.find((r) => r.path === "/pr")
    const event = verify(hook?.body ?? "", hook?.headers ?? {}, biz.webhook_secret)
    expect(event.event).toBe("charge.succeeded")
    expect(event.payload).toMatchObject({ id: created.body.id, status: "partially_paid", amount: 4, currency: "USD" })
    const list = await call(server.url, "GET", "/v1/minting/intents", { key })
    expect(list.body.meta.total).toBeGreaterThanOrEqual(1)
  })

  it("invoices: create, draft, update, send, remind, pay, customer pay, list", async () => {
    const key = biz.secret_key_test
    const inv = await call(server.url, "POST", "/v1/invoices", {
      key,
      body: {
        data: {
          customer_email: "awa@example.gm",
          customer_name: "Awa",
          line_items: [{ item: "sku-1", quantity: 2, unit_price: 125.5 }],
          discount: { type: "percentage", amount: 10 }
        }
      }
    })
    expect(inv.status).toBe(201)
    expect(inv.body).toMatchObject({
      status: "not-paid",
      type: "professional",
      sub_total: 251,
      total: 225.9,
      amount: 225.9
    })
    const draft = await call(server.url, "POST", "/v1/invoices/draft", {
      key,
      body: { data: { amount: 300, customer: "cust-9" } }
    })
    expect(draft.status).toBe(201)
    expect(draft.body).toMatchObject({ status: "draft", sent_date: null })
    const remindDraft = await call(server.url, "POST", `/v1/invoices/${draft.body.id}/send-reminder`, { key })
    expect(remindDraft.status).toBe(409)
    errorShape(remindDraft.body, "invalid_state")
    const updated = await call(server.url, "PUT", `/v1/invoices/${draft.body.id}`, {
      key,
      body: { data: { amount: 320 } }
    })
    expect(updated.status).toBe(200)
    expect(updated.body.amount).toBe(320)
    const sent = await call(server.url, "POST", `/v1/invoices/${draft.body.id}/send`, { key })
    expect(sent.body.status).toBe("not-paid")
    const reminded = await call(server.url, "POST", `/v1/invoices/${draft.body.id}/send-reminder`, { key })
    expect(reminded.body.reminder_count).toBe(1)
    const paid = await call(server.url, "POST", `/v1/invoices/${draft.body.id}/pay`, { key })
    expect(paid.body.status).toBe("paid")
    const twice = await call(server.url, "POST", `/v1/invoices/${draft.body.id}/pay`, { key })
    expect(twice.status).toBe(409)
    errorShape(twice.body, "already_paid")
    const customer = await call(server.url, "POST", `/v1/test_helpers/invoices/${inv.body.id}/customer_pay`, { key })
    expect(customer.status).toBe(200)
    expect((await call(server.url, "GET", `/v1/invoices/${inv.body.id}`, { key })).body.status).toBe("paid")
    const list = await call(server.url, "GET", "/v1/invoices?limit=1&offset=1", { key })
    expect(list.body.meta).toStrictEqual({ total: 2, limit: 1, offset: 1 })
    expect(list.body.data).toHaveLength(1)
  })

  it("Idempotency-Key: same body replays status and body with one effect; another body conflicts", async () => {
    const key = biz.secret_key_test
    const before = (await call(server.url, "GET", "/v1/payment-links", { key })).body.meta.total
    const body = { data: { title: "Once", amount: 100, currency: "GMD" } }
    const headers = { "idempotency-key": "e2e-once-1" }
    const first = await call(server.url, "POST", "/v1/payment-links", { key, body, headers })
    const second = await call(server.url, "POST", "/v1/payment-links", { key, body, headers })
    expect(first.status).toBe(201)
    expect(second.status).toBe(201)
    expect(second.text).toBe(first.text)
    expect((await call(server.url, "GET", "/v1/payment-links", { key })).body.meta.total).toBe(before + 1)
    const conflict = await call(server.url, "POST", "/v1/payment-links", {
      key,
      body: { data: { title: "Other", amount: 100, currency: "GMD" } },
      headers
    })
    expect(conflict.status).toBe(409)
    errorShape(conflict.body, "idempotency_conflict")
  })

  it("malformed requests get the error object: bad JSON, wrong content type, unknown route, validation", async () => {
    const key = biz.secret_key_test
    const bad = await call(server.url, "POST", "/v1/payments", { key, raw: '{"data": {"amount": 10' })
    expect(bad.status).toBe(400)
    errorShape(bad.body, "validation_error")
    const type = await call(server.url, "POST", "/v1/payments", {
      key,
      raw: "amount=10",
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect(type.status).toBe(400)
    errorShape(type.body, "validation_error")
    const unknown = await call(server.url, "GET", "/v1/nothing-here", { key })
    expect(unknown.status).toBe(404)
    errorShape(unknown.body, "not_found")
    const tooSmall = await call(server.url, "POST", "/v1/minting/offramp", {
      key: biz.secret_key_live,
      body: { gmd_amount: 100 }
    })
    expect(tooSmall.status).toBe(400)
    errorShape(tooSmall.body, "validation_error")
    expect(tooSmall.body.error.message).toMatch(/400/)
    const tooPrecise = await call(server.url, "POST", "/v1/payments", { key, body: { data: { amount: 10.001 } } })
    expect(tooPrecise.status).toBe(400)
  })

  it("the sandbox clock: advancing expires a pending conversion; a late transfer is not applied", async () => {
    const key = biz.secret_key_live
    const clock = await call(server.url, "GET", "/v1/test_helpers/clock", { key })
    expect(clock.status).toBe(200)
    const t0 = Date.parse(clock.body.now)
    const created = await call(server.url, "POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 1000, network: "ARC" }
    })
    expect(created.status).toBe(201)
    const advanced = await call(server.url, "POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 601 } })
    expect(advanced.status).toBe(200)
    expect(Date.parse(advanced.body.now) - t0).toBeGreaterThanOrEqual(601_000)
    expect((await call(server.url, "GET", `/v1/minting/ramps/${created.body.id}`, { key })).body.status).toBe("expired")
    const late = await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: { network: "ARC", currency: "USDC", to_address: created.body.pay_address, amount: created.body.pay_amount }
    })
    expect(late.body.applied).toBe(false)
    expect((await call(server.url, "GET", `/v1/minting/ramps/${created.body.id}`, { key })).body.actually_paid).toBe(0)
  })

  it("webhook retries: a failing receiver gets the same event id again once the backoff falls due", async () => {
    const flaky = await receiver()
    try {
      let calls = 0
      flaky.setRespond(() => (++calls === 1 ? 500 : 200))
      const key = biz.secret_key_test
      const created = await call(server.url, "POST", "/v1/payments", {
        key,
        body: { data: { amount: 10, callback_url: `${flaky.url}/flaky` } }
      })
      expect(created.status).toBe(201)
      await flaky.waitFor((rs) => rs.length >= 1)
      await call(server.url, "POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 31 } })
      await flaky.waitFor((rs) => rs.length >= 2)
      const [a, b] = flaky.received
      expect(a?.headers["webhook-id"]).toBe(b?.headers["webhook-id"])
      expect(a?.body).toBe(b?.body)
      // the failed attempt is logged for the operator: which event, why, when next; never the URL or the body
      const warned = await server.logged(
        (l) => l.msg === "webhook attempt failed" && l.event_id === a?.headers["webhook-id"]
      )
      expect(warned).toHaveLength(1)
      expect(warned[0]).toMatchObject({
        level: "warn",
        event: "payment_intent.created",
        business_id: biz.id,
        mode: "test",
        target: "callback_url",
        attempt: 1,
        error: "HTTP 500"
      })
      // 30 s after the attempt, on the sandbox clock (which other tests of this file advanced)
      expect(warned[0].next_attempt_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(JSON.stringify(warned[0])).not.toContain(flaky.url.replace("http://", ""))
      expect(
        server.lines.some((l) => l.includes('"webhook given up"') && l.includes(a?.headers["webhook-id"] as string))
      ).toBe(false)
    } finally {
      await flaky.close()
    }
  })

  it("rates helper: a new rate is used by the next quote", async () => {
    const key = biz.secret_key_live
    const set = await call(server.url, "POST", "/v1/test_helpers/rates", { key, body: { rate: 80 } })
    expect(set.status).toBe(200)
    const c = await call(server.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 8000 } })
    expect(c.body.gmd_rate).toBe(80)
    // 8000/80 = 100.00 USD base; 1% = 1.00 service; + 1.50 TRC20 network fee
    expect(c.body.pay_amount).toBe(102.5)
    const bad = await call(server.url, "POST", "/v1/test_helpers/rates", { key, body: { rate: -1 } })
    errorShape(bad.body, "validation_error")
    await call(server.url, "POST", "/v1/test_helpers/rates", { key, body: { rate: 70 } })
  })

  it("mobile money: a paid-out increment leaves the balance; a failed payout keeps it there, on the timeline", async () => {
    const key = biz.secret_key_live
    const before = (await call(server.url, "GET", "/v1/balance", { key })).body.available
    const payout_method = { network: "wave", account_number: "7012345", account_name: "Awa Njie" }
    const ok = await call(server.url, "POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 1000, network: "ARC", destination: "mobile_money", payout_method }
    })
    expect(ok.status).toBe(201)
    expect(ok.body.payout_method).toStrictEqual(payout_method)
    await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: { network: "ARC", currency: "USDC", to_address: ok.body.pay_address, amount: ok.body.pay_amount }
    })
    expect((await call(server.url, "GET", "/v1/balance", { key })).body.available).toBe(before)

    const failNext = await call(server.url, "POST", "/v1/test_helpers/payouts/fail_next", { key, body: { count: 1 } })
    expect(failNext.status).toBe(200)
    const failing = await call(server.url, "POST", "/v1/minting/offramp", {
      key,
      body: { gmd_amount: 1000, network: "ARC", destination: "mobile_money", payout_method }
    })
    await call(server.url, "POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: { network: "ARC", currency: "USDC", to_address: failing.body.pay_address, amount: failing.body.pay_amount }
    })
    expect((await call(server.url, "GET", "/v1/balance", { key })).body.available).toBe(before + 1000)
    const read = await call(server.url, "GET", `/v1/minting/ramps/${failing.body.id}`, { key })
    expect(read.body.status).toBe("paid")
    expect(JSON.stringify(read.body.events)).toMatch(/payout/)
  })

  it("payment intent failure helper sends charge.failed", async () => {
    const key = biz.secret_key_test
    const created = await call(server.url, "POST", "/v1/payments", {
      key,
      body: { data: { amount: 75, callback_url: `${hooks.url}/fail` } }
    })
    const failed = await call(server.url, "POST", `/v1/test_helpers/payments/${created.body.payment_intent_id}/fail`, {
      key
    })
    expect(failed.status).toBe(200)
    expect((await call(server.url, "GET", `/v1/payments/${created.body.payment_intent_id}`, { key })).body.status).toBe(
      "failed"
    )
    await hooks.waitFor((rs) => rs.some((r) => r.path === "/fail" && JSON.parse(r.body).event === "charge.failed"))
  })

  it("failed webhook deliveries are listed after 3 days of retries and can be resent with the same event id", async () => {
    const dead = await receiver()
    try {
      dead.setRespond(() => 500)
      const key = biz.secret_key_test
      const created = await call(server.url, "POST", "/v1/payments", {
        key,
        body: { data: { amount: 20, callback_url: `${dead.url}/dead` } }
      })
      expect(created.status).toBe(201)
      await dead.waitFor((rs) => rs.length >= 1)
      // advance past the 3-day horizon step by step: every retry that falls due runs before each answer
      for (let i = 0; i < 16; i++) {
        await call(server.url, "POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 6 * 3600 } })
      }
      const failed = await call(server.url, "GET", "/v1/webhook-deliveries/failed", { key })
      expect(failed.status).toBe(200)
      const firstId = dead.received[0]?.headers["webhook-id"]
      const row = failed.body.data.find((d: { event_id: string }) => d.event_id === firstId)
      expect(row).toMatchObject({ event: "payment_intent.created", status: "failed", url: `${dead.url}/dead` })
      // every attempt of that event carried the same id and the same body
      const attempts = dead.received.filter((r) => r.headers["webhook-id"] === firstId)
      expect(attempts.length).toBe(row.attempts)
      expect(attempts.length).toBeGreaterThan(5)
      expect(new Set(attempts.map((r) => r.body)).size).toBe(1)
      const givenUp = await server.logged((l) => l.msg === "webhook given up" && l.event_id === firstId)
      expect(givenUp).toHaveLength(1)
      expect(givenUp[0]).toMatchObject({
        level: "error",
        attempt: row.attempts,
        error: "HTTP 500",
        next_attempt_at: null
      })
      dead.setRespond(() => 200)
      const resent = await call(server.url, "POST", `/v1/webhook-deliveries/${row.id}/resend`, { key })
      expect(resent.status).toBe(200)
      await dead.waitFor((rs) => rs.filter((r) => r.headers["webhook-id"] === firstId).length > attempts.length)
    } finally {
      await dead.close()
    }
  }, 60_000)

  it("answers the probes /healthz and /readyz outside the API (no key, no rate limit, no request log line)", async () => {
    const before = server.lines.length
    for (const path of ["/healthz", "/readyz", "/readyz?probe=lb"]) {
      const r = await call(server.url, "GET", path)
      expect(r.status, path).toBe(200)
      expect(r.body).toStrictEqual({ status: "ok" })
      expect(r.headers.get("cache-control")).toBe("no-store")
    }
    // the absolute form a proxy may send
    const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
    socket.write(`GET ${server.url}/readyz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    let raw = ""
    for await (const chunk of socket) raw += String(chunk)
    expect(raw).toMatch(/^HTTP\/1\.1 200 /)
    expect(raw).toContain('{"status":"ok"}')
    const head = await fetch(`${server.url}/readyz`, { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
    // other methods and neighbouring paths are the API's: its 404 error object
    errorShape((await call(server.url, "POST", "/readyz", { body: {} })).body, "not_found")
    errorShape((await call(server.url, "GET", "/v1/healthz")).body, "not_found")
    await new Promise((r) => setTimeout(r, 100))
    const logged = server.lines.slice(before).map((l) => JSON.parse(l))
    expect(logged.filter((l) => l.path === "/healthz" || l.path === "/readyz")).toStrictEqual([
      expect.objectContaining({ method: "POST", path: "/readyz", status: 404 })
    ])
  })

  it("serves the interactive docs page", async () => {
    const res = await fetch(`${server.url}/docs`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/text\/html/)
    expect(await res.text()).toContain("/v1/openapi.json")
  })

  it("fuzz over HTTP: malformed bodies at every create endpoint never give a 5xx, always the error object, store nothing", async () => {
    const endpoints = [
      ["/v1/payments", biz.secret_key_test, "/v1/payments"],
      ["/v1/payment-links", biz.secret_key_test, "/v1/payment-links"],
      ["/v1/invoices", biz.secret_key_test, "/v1/invoices"],
      ["/v1/invoices/draft", biz.secret_key_test, "/v1/invoices"],
      ["/v1/minting/offramp", biz.secret_key_live, "/v1/minting/ramps"],
      ["/v1/minting/intents", biz.secret_key_live, "/v1/minting/intents"]
    ] as const
    const totals = async () =>
      Promise.all(
        endpoints.map(
          async ([, key, list]) => (await call(server.url, "GET", `${list}?limit=1`, { key })).body.meta.total
        )
      )
    const before = await totals()
    const bodies = fc.oneof(
      fc.string().map((raw) => ({ raw })),
      fc
        .jsonValue()
        .filter((v) => v === null || typeof v !== "object" || Array.isArray(v) || !("data" in v))
        .map((v) => ({ raw: JSON.stringify(v) })),
      fc
        .record({
          data: fc.dictionary(
            fc.constantFrom("amount", "currency", "title", "customer", "line_items", "discount", "gmd_amount"),
            fc.oneof(fc.string(), fc.double(), fc.constant(null), fc.array(fc.integer()))
          )
        })
        .map((v) => ({ raw: JSON.stringify(v) }))
    )
    const created = endpoints.map(() => 0)
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: endpoints.length - 1 }), bodies, async (i, body) => {
        const [path, key] = endpoints[i] as (typeof endpoints)[number]
        const r = await call(server.url, "POST", path, { key, raw: body.raw })
        expect(r.status).toBeLessThan(500)
        if (r.status === 201) created[i] = (created[i] ?? 0) + 1
        else errorShape(r.body, r.body?.error?.code)
      }),
      { numRuns: 150 }
    )
    // a refused request stores nothing: the totals grew by the accepted ones only (drafts and invoices share a list)
    const after = await totals()
    const expected = before.map((n, i) => n + (created[i] ?? 0))
    expected[2] = (expected[2] ?? 0) + (created[3] ?? 0)
    expected[3] = (expected[3] ?? 0) + (created[2] ?? 0)
    expect(after).toStrictEqual(expected)
  }, 60_000)

  it("logs one structured line per request", () => {
    const requests = server.lines
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l))
      .filter((l) => l.msg === "request")
    expect(requests.length).toBeGreaterThan(20)
    expect(requests[0]).toMatchObject({
      method: expect.any(String),
      path: expect.any(String),
      status: expect.any(Number)
    })
  })
})

describe("reference server: rate limiting and shutdown", () => {
  it("answers 429 rate_limit_exceeded with Retry-After and RateLimit headers past the burst", async () => {
    const d = tempDataDir()
    const s = await startServerProcess({ RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "3", STORE: "memory" }, d.dir)
    try {
      const b = (await call(s.url, "POST", "/v1/test_helpers/businesses", { body: {} })).body
      const replies = []
      for (let i = 0; i < 6; i++) replies.push(await call(s.url, "GET", "/v1/balance", { key: b.secret_key_test }))
      const limited = replies.find((r) => r.status === 429)
      expect(limited).toBeDefined()
      errorShape(limited?.body, "rate_limit_exceeded")
      expect(Number(limited?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
      expect(replies[0]?.headers.get("ratelimit-limit")).toBeTruthy()
      expect(replies[0]?.headers.get("ratelimit-remaining")).toBeTruthy()
    } finally {
      await s.stop()
      d.cleanup()
    }
  }, 30_000)

  it("TRUST_PROXY: behind a trusted proxy each client of X-Forwarded-For has its own bucket; otherwise the header is ignored", async () => {
    // keyless requests (hosted pages, docs, business creation) are limited per client address: behind a
    // reverse proxy every client would share the proxy's bucket
    const from = (url: string, client: string) =>
      fetch(`${url}/v1/openapi.json`, { headers: { "x-forwarded-for": `${client}, 127.0.0.1` } }).then((r) => r.status)
    const burst = async (url: string) => {
      const first = [await from(url, "203.0.113.1"), await from(url, "203.0.113.1"), await from(url, "203.0.113.1")]
      return { first, other: await from(url, "203.0.113.2") }
    }
    const d = tempDataDir()
    const env = { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "2", STORE: "memory" }
    const trusted = await startServerProcess({ ...env, TRUST_PROXY: "loopback" }, d.dir)
    try {
      expect(await burst(trusted.url)).toStrictEqual({ first: [200, 200, 429], other: 200 })
    } finally {
      await trusted.stop()
    }
    const plain = await startServerProcess(env, d.dir)
    try {
      // the socket's peer is the client: one bucket for both, whatever the header says
      expect(await burst(plain.url)).toStrictEqual({ first: [200, 200, 429], other: 429 })
    } finally {
      await plain.stop()
      d.cleanup()
    }
  }, 30_000)

  it("SANDBOX=0 hides the test helpers (404)", async () => {
    const d = tempDataDir()
    const s = await startServerProcess({ SANDBOX: "0", STORE: "memory" }, d.dir)
    try {
      const r = await call(s.url, "POST", "/v1/test_helpers/businesses", { body: {} })
      expect(r.status).toBe(404)
      errorShape(r.body, "not_found")
    } finally {
      await s.stop()
      d.cleanup()
    }
  }, 30_000)

  it("stops gracefully on SIGTERM (exit 0) and refuses a malformed environment with exit 2", async () => {
    const d = tempDataDir()
    const s = await startServerProcess({ STORE: "memory" }, d.dir)
    const code = await s.stop("SIGTERM")
    expect(code, s.lines.join("\n")).toBe(0)
    expect(s.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true)
    await expect(startServerProcess({ PORT: "99999" }, d.dir)).rejects.toThrow(/PORT/)
    d.cleanup()
  }, 30_000)
})
