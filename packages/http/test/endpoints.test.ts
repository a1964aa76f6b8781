import { Resources } from "@xaalis/core"
import { routes } from "@xaalis/http"
import { afterEach, describe, expect, it } from "vitest"
import { conforms, type Setup, setup } from "./helpers.ts"
import { everyOperation, hook } from "./scenario.ts"

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

describe("every operation of the route table", () => {
  it("answers its success status with a body its response schema accepts", async () => {
    s = setup()
    const { answers } = await everyOperation(s)
    for (const r of routes) {
      const seen = answers.get(r.operationId) ?? []
      expect({ operationId: r.operationId, calls: seen.length > 0 }).toEqual({
        operationId: r.operationId,
        calls: true
      })
      for (const a of seen) {
        expect({ operationId: r.operationId, ok: conforms(r.response, a.body) }).toEqual({
          operationId: r.operationId,
          ok: true
        })
        expect(a.headers.get("content-type")).toBe("application/json; charset=utf-8")
        expect(a.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
      }
      const statuses = new Set(seen.map((a) => a.status))
      expect([...statuses].sort()).toEqual(r.dry_run === true ? [200, 201] : [r.status])
    }
  })

  it("creates answer 201, everything else 200; lists are {data, meta} newest first with limit and offset", async () => {
    s = setup()
    const { answers, ids } = await everyOperation(s)
    for (const r of routes) {
      expect({ op: r.operationId, status: r.status }).toEqual({
        op: r.operationId,
        status: /^create/.test(r.operationId) ? 201 : 200
      })
    }
    const invoices = answers.get("listInvoices")?.[0]?.body
    expect(invoices.meta).toEqual({ total: 2, limit: 1, offset: 1 })
    expect(invoices.data).toHaveLength(1)
    expect([ids.invoice.id, ids.draft.id]).toContain(invoices.data[0].id)
    const intents = answers.get("listPaymentIntents")?.[0]?.body
    // listed right after the real create and the dry run: the dry run stored nothing
    expect(intents.meta).toEqual({ total: 1, limit: 5, offset: 0 })
    expect(intents.data[0].payment_intent_id).toBe(ids.pi.payment_intent_id)
    expect(answers.get("listConversions")?.[0]?.body.meta).toEqual({ total: 1, limit: 10, offset: 0 })
  })

  it("lists newest first", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const created: Array<string> = []
    for (let i = 0; i < 4; i++) {
      created.push((await s.call("POST", "/v1/payment-links", { key, body: { data: { amount: i + 1 } } })).body.id)
      // one sandbox second apart, so creation times differ
      await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 1 } })
    }
    const page = async (q: string) =>
      ((await s.call("GET", `/v1/payment-links?${q}`, { key })).body.data as Array<{ id: string }>).map((l) => l.id)
    expect(await page("")).toEqual([...created].reverse())
    expect(await page("limit=2&offset=1")).toEqual([created[2], created[1]])
    expect(await page("offset=4")).toEqual([])
  })

  it("answers with the spec's objects and transitions", async () => {
    s = setup()
    const { answers, biz, ids } = await everyOperation(s)
    const body = (op: string, i = 0) => answers.get(op)?.[i]?.body
    expect(Object.keys(biz).sort()).toEqual([
      "account_id",
      "id",
      "name",
      "secret_key_live",
      "secret_key_test",
      "webhook_secret"
    ])
    expect(biz.secret_key_test).toMatch(/^sk_test_/)
    expect(biz.secret_key_live).toMatch(/^sk_live_/)
    expect(body("setSandboxRate")).toEqual({ rate: 70 })
    expect(body("createPaymentIntent")).toMatchObject({
      amount: 100,
      currency: "GMD",
      status: "requires_payment_method"
    })
    expect(body("createPaymentIntent", 1)).toMatchObject({ amount: 100, status: "requires_payment_method" })
    expect(body("cancelPaymentIntent").status).toBe("cancelled")
    expect(body("sandboxSucceedPayment").status).toBe("successful")
    expect(body("sandboxFailPayment").status).toBe("failed")
    expect(body("createPaymentLink")).toMatchObject({ amount: 250, currency: "GMD", status: "active", title: "Coffee" })
    expect(body("createConversion")).toMatchObject({ status: "pending", gmd_amount: 5000, pay_amount: 73.64 })
    expect(body("sandboxChainTransfer")).toMatchObject({
      matched: { object: "conversion", id: ids.conversion.id },
      applied: true
    })
    expect(body("getConversion")).toMatchObject({ status: "underpaid", actually_paid: 36.82 })
    expect(Array.isArray(body("getConversion").events)).toBe(true)
    expect(body("createConversion").events).toBeUndefined()
    expect(body("createPaymentRequest")).toMatchObject({
      status: "pending",
      amount: 0,
      currency: "USD",
      metadata: { order: "A-1", usd_amount: 10 },
      callback_url: hook,
      payment_link_id: null,
      token: null
    })
    expect(body("sandboxPayPaymentRequest")).toMatchObject({
      matched: { object: "payment_request", id: ids.request.id }
    })
    expect(body("getPaymentRequest")).toMatchObject({ status: "partially_paid", amount: 4 })
    expect(body("createInvoice")).toMatchObject({
      status: "not-paid",
      type: "professional",
      sub_total: 301,
      total: 270.9,
      amount: 270.9,
      invoice_number: 1
    })
    expect(body("createDraftInvoice")).toMatchObject({ status: "draft", sent_date: null })
    expect(body("updateInvoice")).toMatchObject({ status: "draft", notes: "Thank you" })
    expect(body("sendInvoice")).toMatchObject({ status: "not-paid", invoice_number: 2 })
    expect(body("remindInvoice").reminder_count).toBe(1)
    expect(body("payInvoice").status).toBe("paid")
    expect(body("sandboxCustomerPaysInvoice").status).toBe("paid")
    // 100 - 1.5 fee from the intent, 270.90 from the invoice paid through its link
    expect(body("getBalance")).toMatchObject({ currency: "GMD", available: 369.4, test_mode: true })
    expect(body("getSandboxClock").now).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(body("resendWebhookDelivery")).toMatchObject({ status: "pending", event: "payment_intent.created" })
    expect(body("getOpenApi").openapi).toBe("3.1.0")
  })

  it("never applies server-owned fields sent in a create body", async () => {
    s = setup()
    const { secret_key_test: test, secret_key_live: live } = await s.business()
    const owned = {
      id: "00000000-0000-4000-8000-000000000000",
      status: "successful",
      createdAt: "2001-01-01T00:00:00.000Z",
      updatedAt: "2001-01-01T00:00:00.000Z",
      test_mode: false,
      business_id: "someone-else"
    }
    const pi = await s.call("POST", "/v1/payments", {
      key: test,
      body: { data: { amount: 100, ...owned, payment_intent_id: owned.id, transaction_fee: 0, intent_secret: "x" } }
    })
    expect(pi.status).toBe(201)
    expect(pi.body.payment_intent_id).not.toBe(owned.id)
    expect(pi.body).toMatchObject({ status: "requires_payment_method", transaction_fee: 1.5 })
    expect(pi.body.intent_secret).not.toBe("x")

    const link = await s.call("POST", "/v1/payment-links", {
      key: test,
      body: { data: { amount: 10, ...owned, status: "inactive", url: "https://evil.example" } }
    })
    expect(link.status).toBe(201)
    expect(link.body).toMatchObject({ status: "active" })
    expect(link.body.id).not.toBe(owned.id)
    expect(link.body.url).not.toBe("https://evil.example")
    expect(link.body.createdAt).not.toBe(owned.createdAt)

    const conv = await s.call("POST", "/v1/minting/offramp", {
      key: live,
      body: {
        gmd_amount: 5000,
        ...owned,
        status: "paid",
        actually_paid: 73.64,
        gmd_rate: 1,
        fee: 0,
        reference: "MP-X",
        pay_address: "mine",
        invoice_expires_at: "2100-01-01T00:00:00Z"
      }
    })
    expect(conv.status).toBe(201)
    expect(conv.body).toMatchObject({ status: "pending", actually_paid: 0, gmd_rate: 70, fee: 2.21 })
    expect(conv.body.id).not.toBe(owned.id)
    expect(conv.body.pay_address).not.toBe("mine")
    expect(conv.body.reference).toMatch(/^MP-\d{8}-\d{6}-[0-9A-F]{8}$/)
    // a zero markup is no markup: the same quote as without one
    for (const markup_config of [
      { type: "fixed", value: 0 },
      { type: "percentage", value: 0 }
    ]) {
      const zero = await s.call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000, markup_config } })
      expect(zero.status, zero.text).toBe(201)
      expect(zero.body).toMatchObject({ pay_amount: 73.64, fee: 2.21, markup_share_usd: 0 })
    }

    const pr = await s.call("POST", "/v1/minting/intents", {
      key: live,
      body: {
        amount: 10,
        ...owned,
        status: "completed",
        link: "https://evil.example",
        payment_link_id: "p",
        token: "t"
      }
    })
    expect(pr.status).toBe(201)
    expect(pr.body).toMatchObject({ status: "pending", amount: 0, payment_link_id: null, token: null })
    expect(pr.body.link).not.toBe("https://evil.example")

    for (const path of ["/v1/invoices", "/v1/invoices/draft"]) {
      const inv = await s.call("POST", path, {
        key: test,
        body: {
          data: {
            amount: 100,
            customer: "cus_9",
            ...owned,
            status: "paid",
            paid_date: "2001-01-01",
            sent_date: "2001-01-01T00:00:00Z",
            reminder_count: 7,
            merchant_name: "Evil",
            sub_total: 1,
            total: 1,
            reference: "INV-EVIL"
          }
        }
      })
      expect(inv.status).toBe(201)
      expect(inv.body).toMatchObject({
        reminder_count: 0,
        merchant_name: "Kairaba Coffee",
        amount: 100,
        test_mode: true
      })
      expect(inv.body.status).toBe(path.endsWith("draft") ? "draft" : "not-paid")
      expect(inv.body.paid_date).toBeUndefined()
      expect(inv.body.reference).not.toBe("INV-EVIL")
      expect(inv.body.business_id).not.toBe("someone-else")
    }

    const biz = await s.call("POST", "/v1/test_helpers/businesses", {
      body: { name: "Owned", id: owned.id, secret_key_test: "sk_test_mine_mine_mine_mine", webhook_secret: "whsec_x" }
    })
    expect(biz.status).toBe(201)
    expect(biz.body.id).not.toBe(owned.id)
    expect(biz.body.secret_key_test).not.toBe("sk_test_mine_mine_mine_mine")
    expect(biz.body.webhook_secret).not.toBe("whsec_x")
  })

  it("keeps exact amounts: a number with more places than its scale is refused, not rounded", async () => {
    s = setup()
    const { secret_key_test: test } = await s.business()
    const bad = await s.call("POST", "/v1/payments", {
      key: test,
      raw: '{"data":{"amount":100.10000000000000001}}',
      headers: { "content-type": "application/json" }
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.message).toContain("data.amount")
    const ok = await s.call("POST", "/v1/payments", {
      key: test,
      raw: '{"data":{"amount":100.10}}',
      headers: { "content-type": "application/json" }
    })
    expect(ok.status).toBe(201)
    expect(ok.body.amount).toBe(100.1)
    expect(conforms(Resources.PaymentIntent, ok.body)).toBe(true)
  })
})
