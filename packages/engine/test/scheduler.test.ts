import { assert, describe, it } from "@effect/vitest"
import {
  Conversions,
  Invoices,
  MemoryNotifier,
  PaymentIntents,
  PaymentRequests,
  Scheduler,
  Transfers
} from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { business, testLayer } from "./setup.ts"

const layer = Layer.mergeAll(testLayer(), MemoryNotifier.layer)

describe("scheduler driven by the clock", () => {
  it.effect("advancing the clock runs exactly what fell due: webhooks, retries, expiries", () =>
    Effect.gen(function* () {
      const control = yield* MemoryNotifier.MemoryNotifierControl
      const { live } = yield* business("https://merchant.example/hooks")
      const c = yield* Conversions.createConversion(live, {
        gmd_amount: 500000n,
        callback_url: "https://merchant.example/cb"
      })
      const open = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      yield* control.failFor("https://merchant.example/cb", 1)
      yield* Transfers.applyChainTransfer({
        network: "TRC20",
        coin: "USDT",
        to_address: c.pay_address,
        amount: 73_640_000n,
        tx_hash: "0x1",
        log_index: 0
      })
      const first = yield* Scheduler.runDue()
      assert.deepStrictEqual(first.webhooks, { delivered: 1, retried: 1, failed: 0, skipped: 0 })
      assert.strictEqual(first.conversions_expired, 0)
      // nothing more is due one second later
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Scheduler.runDue()).webhooks, { delivered: 0, retried: 0, failed: 0, skipped: 0 })
      // the retry falls due 30 s after the failed attempt
      yield* TestClock.adjust("30 seconds")
      assert.strictEqual((yield* Scheduler.runDue()).webhooks.delivered, 1)
      const delivered = yield* control.deliveries
      assert.strictEqual(delivered.length, 2)
      assert.strictEqual(delivered[0]?.event_id, delivered[1]?.event_id)
      assert.strictEqual(JSON.parse(delivered[0]?.body ?? "{}").event, "ramp.paid")
      // the open conversion expires at 10 minutes, with no webhook
      yield* TestClock.adjust("10 minutes")
      const later = yield* Scheduler.runDue()
      assert.strictEqual(later.conversions_expired, 1)
      assert.strictEqual(later.webhooks.delivered, 0)
      assert.strictEqual((yield* Conversions.getConversion(live, open.id)).status, "expired")
      assert.strictEqual((yield* Conversions.getConversion(live, c.id)).status, "paid")
      const pr = yield* PaymentRequests.createPaymentRequest(live, { amount: 1000n, expires_at: 2 * 3_600_000 })
      yield* TestClock.adjust("2 hours")
      assert.strictEqual((yield* Scheduler.runDue()).payment_requests_expired, 1)
      assert.strictEqual((yield* PaymentRequests.getPaymentRequest(live, pr.id)).status, "expired")
    }).pipe(Effect.provide(layer))
  )
})

describe("scheduler: intents and invoices", () => {
  it.effect("a payment intent expires after 30 minutes; a live invoice goes overdue the day after its due date", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(test, {
        amount: 10000n,
        currency: "GMD",
        skip_url_validation: false
      })
      const inv = yield* Invoices.createInvoice(live, { amount: 5000n, customer: "cus_1", due_date: "1970-01-01" })
      yield* TestClock.adjust("29 minutes")
      const early = yield* Scheduler.runDue()
      assert.strictEqual(early.payment_intents_expired, 0)
      assert.strictEqual(early.invoices_overdue, 0)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Scheduler.runDue()).payment_intents_expired, 1)
      assert.strictEqual((yield* PaymentIntents.getPaymentIntent(test, pi.payment_intent_id)).status, "cancelled")
      yield* TestClock.adjust("1410 minutes")
      assert.strictEqual((yield* Scheduler.runDue()).invoices_overdue, 1)
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).status, "overdue")
    }).pipe(Effect.provide(layer))
  )
})
