import { assert, describe, it } from "@effect/vitest"
import {
  Conversions,
  Dispatcher,
  HostedPages,
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

/** An expected dispatch summary: the counts given, every other one 0. */
const dispatched = (counts: Partial<Dispatcher.DispatchSummary>): Dispatcher.DispatchSummary => ({
  ...Dispatcher.nothingDispatched,
  ...counts
})

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
      assert.deepStrictEqual(first.webhooks, dispatched({ delivered: 1, retried: 1 }))
      assert.strictEqual(first.conversions_expired, 0)
      // nothing more is due one second later
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual((yield* Scheduler.runDue()).webhooks, dispatched({}))
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

describe("reads between a due moment and the sweep", () => {
  it.effect("show what fell due (get, list, hosted page), and the sweep then stores exactly that", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const conversion = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const intent = yield* PaymentIntents.createPaymentIntent(live, { amount: 10000n })
      const request = yield* PaymentRequests.createPaymentRequest(live, { amount: 1000n, expires_at: 20 * 60_000 })
      const invoice = yield* Invoices.createInvoice(live, { amount: 10000n, customer: "cus_1", due_date: "1970-01-01" })
      const page = { limit: 10, offset: 0 }
      const reads = Effect.all({
        conversion: Conversions.getConversion(live, conversion.id),
        conversions: Conversions.listConversions(live, page),
        intent: PaymentIntents.getPaymentIntent(live, intent.payment_intent_id),
        intents: PaymentIntents.listPaymentIntents(live, page),
        request: PaymentRequests.getPaymentRequest(live, request.id),
        requests: PaymentRequests.listPaymentRequests(live, page),
        invoice: Invoices.getInvoice(live, invoice.id),
        invoices: Invoices.listInvoices(live, page),
        intentPage: HostedPages.hostedPage("payment_intent", intent.payment_intent_id),
        requestPage: HostedPages.hostedPage("payment_request", request.id),
        invoicePage: HostedPages.hostedPage("invoice", invoice.id)
      })
      const before = yield* reads
      assert.strictEqual(before.conversion.status, "pending")
      assert.strictEqual(before.intent.status, "requires_payment_method")
      assert.strictEqual(before.request.status, "pending")
      assert.strictEqual(before.invoice.status, "not-paid")
      // every moment has passed, and the sweep has not run
      yield* TestClock.adjust("1 day")
      const due = yield* reads
      assert.strictEqual(due.conversion.status, "expired")
      assert.deepStrictEqual(due.conversion.events?.slice(-1), [{ type: "expired", at: "1970-01-01T00:10:00.000Z" }])
      assert.strictEqual(due.conversions.data[0]?.status, "expired")
      assert.strictEqual(due.intent.status, "cancelled")
      assert.strictEqual(due.intents.data[0]?.status, "cancelled")
      assert.strictEqual(due.request.status, "expired")
      assert.strictEqual(due.requests.data[0]?.status, "expired")
      assert.strictEqual(due.invoice.status, "overdue")
      assert.strictEqual(due.invoices.data[0]?.status, "overdue")
      assert.strictEqual(due.intentPage.status, "cancelled")
      assert.strictEqual(due.requestPage.status, "expired")
      assert.strictEqual(due.invoicePage.status, "overdue")
      // the sweep, an hour later still, stores what the reads showed
      yield* TestClock.adjust("1 hour")
      const run = yield* Scheduler.runDue()
      assert.strictEqual(run.conversions_expired, 1)
      assert.strictEqual(run.payment_intents_expired, 1)
      assert.strictEqual(run.payment_requests_expired, 1)
      assert.strictEqual(run.invoices_overdue, 1)
      assert.deepStrictEqual(yield* reads, due)
    }).pipe(Effect.provide(layer))
  )
})
