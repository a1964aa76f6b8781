import { Effect } from "effect"
import { expect } from "vitest"
import { type Answer, type Setup, setup } from "./helpers.ts"

export const hook = "http://127.0.0.1:9/hooks/xaalis"
export const failingHook = "http://127.0.0.1:9/hooks/broken"

/**
 * Calls every operation of the route table at least once, on its success
 * path, and records each answer under its operationId (for the endpoint and
 * OpenAPI tests). Each step checks its status so a broken step is named.
 */
export const everyOperation = async (s: Setup = setup()) => {
  const answers = new Map<string, Array<Answer>>()
  const record = async (operationId: string, status: number, pending: Promise<Answer>) => {
    const res = await pending
    expect({ operationId, status: res.status, body: res.status === status ? "" : res.body }).toEqual({
      operationId,
      status,
      body: ""
    })
    answers.set(operationId, [...(answers.get(operationId) ?? []), res])
    return res.body
  }
  const { call } = s

  const biz = await record(
    "createSandboxBusiness",
    201,
    call("POST", "/v1/test_helpers/businesses", { body: { name: "Kairaba Coffee" } })
  )
  const live = biz.secret_key_live as string
  const test = biz.secret_key_test as string
  await record("setSandboxRate", 200, call("POST", "/v1/test_helpers/rates", { key: test, body: { rate: 70 } }))
  await record("getSandboxClock", 200, call("GET", "/v1/test_helpers/clock", { key: test }))

  // payment intents
  const pi = await record(
    "createPaymentIntent",
    201,
    call("POST", "/v1/payments", { key: test, body: { data: { amount: 100, callback_url: hook } } })
  )
  await record(
    "createPaymentIntent",
    200,
    call("POST", "/v1/payments", { key: test, body: { data: { amount: 100 } }, headers: { "x-no-effect": "true" } })
  )
  await record("getPaymentIntent", 200, call("GET", `/v1/payments/${pi.payment_intent_id}`, { key: test }))
  await record("listPaymentIntents", 200, call("GET", "/v1/payments?limit=5", { key: test }))
  const pi2 = await record(
    "createPaymentIntent",
    201,
    call("POST", "/v1/payments", { key: test, body: { data: { amount: 50 } } })
  )
  await record("cancelPaymentIntent", 200, call("POST", `/v1/payments/${pi2.payment_intent_id}/cancel`, { key: test }))
  await record(
    "sandboxSucceedPayment",
    200,
    call("POST", `/v1/test_helpers/payments/${pi.payment_intent_id}/succeed`, { key: test })
  )
  const pi3 = await record(
    "createPaymentIntent",
    201,
    call("POST", "/v1/payments", { key: test, body: { data: { amount: 75 } } })
  )
  await record(
    "sandboxFailPayment",
    200,
    call("POST", `/v1/test_helpers/payments/${pi3.payment_intent_id}/fail`, { key: test })
  )

  // payment links
  const link = await record(
    "createPaymentLink",
    201,
    call("POST", "/v1/payment-links", { key: test, body: { data: { title: "Coffee", amount: 250, currency: "GMD" } } })
  )
  await record("getPaymentLink", 200, call("GET", `/v1/payment-links/${link.id}`, { key: test }))
  await record("listPaymentLinks", 200, call("GET", "/v1/payment-links", { key: test }))

  // conversions
  await record(
    "sandboxFailNextPayouts",
    200,
    call("POST", "/v1/test_helpers/payouts/fail_next", { key: test, body: { count: 0 } })
  )
  const conversion = await record(
    "createConversion",
    201,
    call("POST", "/v1/minting/offramp", { key: live, body: { gmd_amount: 5000, callback_url: hook } })
  )
  await record(
    "sandboxChainTransfer",
    200,
    call("POST", "/v1/test_helpers/chain/transfers", {
      key: live,
      body: { network: "TRC20", currency: "USDT", to_address: conversion.pay_address, amount: 36.82 }
    })
  )
  await record("getConversion", 200, call("GET", `/v1/minting/ramps/${conversion.id}`, { key: live }))
  await record("listConversions", 200, call("GET", "/v1/minting/ramps", { key: live }))

  // payment requests
  const request = await record(
    "createPaymentRequest",
    201,
    call("POST", "/v1/minting/intents", {
      key: live,
      body: { amount: 10, metadata: { order: "A-1" }, callback_url: hook }
    })
  )
  await record(
    "sandboxPayPaymentRequest",
    200,
    call("POST", `/v1/test_helpers/minting/intents/${request.id}/pay`, {
      key: live,
      body: { amount: 4, currency: "USDC", network: "ARC" }
    })
  )
  await record("getPaymentRequest", 200, call("GET", `/v1/minting/intents/${request.id}`, { key: live }))
  await record("listPaymentRequests", 200, call("GET", "/v1/minting/intents", { key: live }))

  // invoices
  const invoice = await record(
    "createInvoice",
    201,
    call("POST", "/v1/invoices", {
      key: test,
      body: {
        data: {
          customer_email: "awa@example.gm",
          customer_name: "Awa Jallow",
          line_items: [{ item: "SKU-1", quantity: 2, unit_price: 150.5 }],
          discount: { type: "percentage", amount: 10 },
          due_date: "2030-01-31",
          callback_url: hook
        }
      }
    })
  )
  const draft = await record(
    "createDraftInvoice",
    201,
    call("POST", "/v1/invoices/draft", { key: test, body: { data: { amount: 500, customer: "cus_1" } } })
  )
  await record("getInvoice", 200, call("GET", `/v1/invoices/${invoice.id}`, { key: test }))
  await record(
    "updateInvoice",
    200,
    call("PUT", `/v1/invoices/${draft.id}`, { key: test, body: { data: { notes: "Thank you" } } })
  )
  await record("sendInvoice", 200, call("POST", `/v1/invoices/${draft.id}/send`, { key: test }))
  await record("remindInvoice", 200, call("POST", `/v1/invoices/${draft.id}/send-reminder`, { key: test }))
  await record("payInvoice", 200, call("POST", `/v1/invoices/${draft.id}/pay`, { key: test }))
  await record(
    "sandboxCustomerPaysInvoice",
    200,
    call("POST", `/v1/test_helpers/invoices/${invoice.id}/customer_pay`, { key: test })
  )
  await record("listInvoices", 200, call("GET", "/v1/invoices?limit=1&offset=1", { key: test }))

  await record("getBalance", 200, call("GET", "/v1/balance", { key: test }))
  await record("getOpenApi", 200, call("GET", "/v1/openapi.json"))

  // a webhook receiver that never answers 2xx: its delivery gives up after 3 days, then is resent
  await Effect.runPromise(s.notifier.failFor(failingHook, "always"))
  await record(
    "createPaymentIntent",
    201,
    call("POST", "/v1/payments", { key: test, body: { data: { amount: 20, callback_url: failingHook } } })
  )
  let failed: Array<{ id: string }> = []
  for (let i = 0; i < 40 && failed.length === 0; i++) {
    await record(
      "advanceSandboxClock",
      200,
      call("POST", "/v1/test_helpers/clock/advance", { key: test, body: { seconds: 6 * 3600 } })
    )
    failed = (
      await record("listFailedWebhookDeliveries", 200, call("GET", "/v1/webhook-deliveries/failed", { key: test }))
    ).data
  }
  expect(failed).toHaveLength(1)
  await Effect.runPromise(s.notifier.succeedFor(failingHook))
  await record(
    "resendWebhookDelivery",
    200,
    call("POST", `/v1/webhook-deliveries/${failed[0]?.id}/resend`, { key: test })
  )
  return { answers, biz, live, test, ids: { pi, link, conversion, request, invoice, draft } }
}
