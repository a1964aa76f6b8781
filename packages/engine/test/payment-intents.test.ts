import { assert, describe, it } from "@effect/vitest"
import { Resources } from "@xaalis/core"
import { Balance, Processor, ProcessorError, Store, unbalanced } from "@xaalis/engine"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { Caller } from "../src/usecases/common.ts"
import * as PaymentIntents from "../src/usecases/PaymentIntents.ts"
import { business, codeOf, testLayer } from "./setup.ts"

/** The catalogue code of the failure of `effect` (fails the test if it succeeds). */
const failCode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), codeOf)

/** The catalogue codes of commands that must fail on an intent: a cancel and/or reported outcomes. */
const refusedCodes = (
  caller: Parameters<typeof PaymentIntents.cancelPaymentIntent>[0],
  id: string,
  commands: ReadonlyArray<"cancel" | "succeeded" | "failed">
) =>
  Effect.forEach(commands, (c) =>
    failCode(
      c === "cancel"
        ? PaymentIntents.cancelPaymentIntent(caller, id)
        : PaymentIntents.reportPaymentOutcome(caller, id, c)
    )
  )

const isPaymentIntent = Schema.is(Schema.toType(Resources.PaymentIntent) as Schema.Codec<unknown>)
const wire_keys = [
  "amount",
  "cancellation_reason",
  "currency",
  "expires_at",
  "failure_reason",
  "intent_secret",
  "metadata",
  "payment_intent_id",
  "payment_link",
  "status",
  "transaction_fee",
  "transaction_fee_type"
]

const page = { limit: 10, offset: 0 }
const cb = "https://merchant.example/cb"

/** The outbox rows of a scope, oldest first, with their parsed bodies. */
const outbox = (scope: Caller) =>
  Effect.gen(function* () {
    const store = yield* Store
    const rows = yield* store.transact((tx) => tx.list("outbox", scope, { limit: 100, offset: 0 }))
    return rows.docs
      .map((d) => d.data as { event: string; url: string; event_id: string; body: string })
      .map((r) => ({ ...r, parsed: JSON.parse(r.body) as { event: string; payload: Record<string, unknown> } }))
      .reverse()
  })

/** Ledger sums of one scope per account (`account/currency` -> signed minor units). */
const sums = (scope: Caller) =>
  Effect.gen(function* () {
    const store = yield* Store
    const rows = yield* store.transact((tx) => tx.balances(scope))
    return Object.fromEntries(rows.map((r) => [`${r.account}/${r.currency}`, r.amount]))
  })

const balanced = Effect.gen(function* () {
  const store = yield* Store
  const entries = yield* store.ledger
  assert.deepStrictEqual(unbalanced(entries), [])
  return entries
})

describe("payment intents", () => {
  it.effect("create: fee from the core, hosted link from the processor, stored with due_at, event in the outbox", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(live, {
        amount: 10000n,
        callback_url: cb,
        network: "wave",
        account_number: "7654321",
        metadata: { order: "A-1" }
      })
      assert.isTrue(isPaymentIntent(pi))
      assert.deepStrictEqual(Object.keys(pi).sort(), wire_keys)
      assert.strictEqual(pi.amount, 100)
      assert.deepStrictEqual(pi.metadata, { order: "A-1" })
      assert.strictEqual(pi.transaction_fee, 1.5)
      assert.strictEqual(pi.transaction_fee_type, "business")
      assert.strictEqual(pi.currency, "GMD")
      assert.strictEqual(pi.status, "requires_payment_method")
      assert.strictEqual(pi.cancellation_reason, null)
      assert.strictEqual(pi.failure_reason, null)
      assert.strictEqual(pi.expires_at, "1970-01-01T00:30:00.000Z")
      assert.strictEqual(pi.payment_link, `http://127.0.0.1:3000/pay/${pi.payment_intent_id}`)
      assert.match(pi.intent_secret, /^pi_secret_[A-Za-z0-9_-]{32}$/)
      const store = yield* Store
      const doc = yield* store.transact((tx) => tx.get("payment_intent", pi.payment_intent_id))
      assert.strictEqual(doc?.due_at, 30 * 60_000)
      assert.strictEqual(doc?.business_id, live.business_id)
      assert.strictEqual(doc?.mode, "live")
      const rows = yield* outbox(live)
      assert.strictEqual(rows.length, 1)
      assert.strictEqual(rows[0]?.event, "payment_intent.created")
      assert.strictEqual(rows[0]?.url, cb)
      assert.deepStrictEqual(rows[0]?.parsed, { event: "payment_intent.created", payload: pi })
      assert.deepStrictEqual(yield* PaymentIntents.getPaymentIntent(live, pi.payment_intent_id), pi)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("the hosted link is the processor's, in the object and in the event; the customer's charge is opened", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const opened: Array<{ amount: bigint; currency: string; network: string | null }> = []
      const processor = Layer.succeed(
        Processor,
        Processor.of({
          open: (input) =>
            Effect.sync(() => {
              opened.push({ amount: input.amount, currency: input.currency, network: input.network })
              return { payment_link: `https://checkout.processor.example/c/${input.payment_intent_id}` }
            })
        })
      )
      const pi = yield* PaymentIntents.createPaymentIntent(live, {
        amount: 10000n,
        transaction_fee_type: "customer",
        network: "afrimoney",
        callback_url: cb
      }).pipe(Effect.provide(processor))
      assert.strictEqual(pi.payment_link, `https://checkout.processor.example/c/${pi.payment_intent_id}`)
      assert.deepStrictEqual(opened, [{ amount: 10150n, currency: "GMD", network: "afrimoney" }])
      const rows = yield* outbox(live)
      assert.strictEqual(rows[0]?.parsed.payload.payment_link, pi.payment_link)
      assert.strictEqual(
        (yield* PaymentIntents.getPaymentIntent(live, pi.payment_intent_id)).payment_link,
        pi.payment_link
      )
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("without a callback_url nothing goes to the outbox", () =>
    Effect.gen(function* () {
      const { live } = yield* business("https://merchant.example/hooks")
      yield* PaymentIntents.createPaymentIntent(live, { amount: 10000n })
      assert.strictEqual((yield* outbox(live)).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("business bears the fee: success credits amount - fee, fee to fee_revenue, charge.succeeded sent", () =>
    Effect.gen(function* () {
      const { live, created } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(live, { amount: 10000n, callback_url: cb })
      const done = yield* PaymentIntents.reportPaymentOutcome(live, pi.payment_intent_id, "succeeded")
      assert.strictEqual(done.status, "successful")
      assert.strictEqual((yield* Balance.getBalance(live)).available, 98.5)
      assert.deepStrictEqual(yield* sums(live), {
        "processor_clearing/GMD": 10000n,
        "business_balance/GMD": -9850n,
        "fee_revenue/GMD": -150n
      })
      const entries = yield* balanced
      assert.isTrue(entries.every((e) => e.cause === `payment_intent/${pi.payment_intent_id}`))
      const rows = yield* outbox(live)
      assert.deepStrictEqual(
        rows.map((r) => r.event),
        ["payment_intent.created", "charge.succeeded"]
      )
      // the intent, plus the charge keys of the spec's Events rule 3 (the TestClock stands at 0)
      assert.deepStrictEqual(rows[1]?.parsed.payload, {
        id: pi.payment_intent_id,
        type: "payment",
        ...done,
        payment_method: null,
        reference: pi.payment_intent_id,
        transaction_reference: null,
        account_id: created.account_id,
        business_id: created.id,
        test_mode: false,
        createdAt: "1970-01-01T00:00:00.000Z",
        updatedAt: "1970-01-01T00:00:00.000Z"
      })
      const doc = yield* Effect.flatMap(Store, (s) =>
        s.transact((tx) => tx.get("payment_intent", pi.payment_intent_id))
      )
      assert.strictEqual(doc?.due_at, null)
      // final: every further outcome and cancel is invalid_state, and nothing more is booked
      const again = yield* failCode(PaymentIntents.reportPaymentOutcome(live, pi.payment_intent_id, "succeeded"))
      assert.strictEqual(again, "invalid_state")
      const failLater = yield* failCode(PaymentIntents.reportPaymentOutcome(live, pi.payment_intent_id, "failed"))
      assert.strictEqual(failLater, "invalid_state")
      const cancel = yield* failCode(PaymentIntents.cancelPaymentIntent(live, pi.payment_intent_id))
      assert.strictEqual(cancel, "invalid_state")
      assert.strictEqual((yield* Balance.getBalance(live)).available, 98.5)
      assert.strictEqual((yield* outbox(live)).length, 2)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("customer bears the fee: the customer pays amount + fee, the business gets amount", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(live, {
        amount: 10000n,
        transaction_fee_type: "customer"
      })
      assert.strictEqual(pi.transaction_fee_type, "customer")
      yield* PaymentIntents.reportPaymentOutcome(live, pi.payment_intent_id, "succeeded")
      assert.strictEqual((yield* Balance.getBalance(live)).available, 100)
      assert.deepStrictEqual(yield* sums(live), {
        "processor_clearing/GMD": 10150n,
        "business_balance/GMD": -10000n,
        "fee_revenue/GMD": -150n
      })
      yield* balanced
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("USD intents are booked in micro-dollars", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(live, { amount: 1999n, currency: "USD" })
      assert.strictEqual(pi.amount, 19.99)
      assert.strictEqual(pi.transaction_fee, 0.3)
      yield* PaymentIntents.reportPaymentOutcome(live, pi.payment_intent_id, "succeeded")
      assert.deepStrictEqual(yield* sums(live), {
        "processor_clearing/USD": 19_990_000n,
        "business_balance/USD": -19_690_000n,
        "fee_revenue/USD": -300_000n
      })
      const balance = yield* Balance.getBalance(live)
      assert.strictEqual(balance.available, 0)
      assert.strictEqual(balance.balances[1]?.available, 19.69)
      yield* balanced
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("failure: charge.failed, nothing booked, then final", () =>
    Effect.gen(function* () {
      const { test, created } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(test, {
        amount: 5000n,
        callback_url: cb,
        network: "wave",
        account_number: "7012345"
      })
      const failed = yield* PaymentIntents.reportPaymentOutcome(
        test,
        pi.payment_intent_id,
        "failed",
        "insufficient funds"
      )
      assert.strictEqual(failed.status, "failed")
      const store = yield* Store
      assert.strictEqual((yield* store.ledger).length, 0)
      const rows = yield* outbox(test)
      assert.deepStrictEqual(
        rows.map((r) => r.event),
        ["payment_intent.created", "charge.failed"]
      )
      assert.deepStrictEqual(rows[1]?.parsed.payload, {
        id: pi.payment_intent_id,
        type: "payment",
        ...failed,
        payment_method: "wave",
        reference: pi.payment_intent_id,
        transaction_reference: null,
        account_id: created.account_id,
        business_id: created.id,
        test_mode: true,
        createdAt: "1970-01-01T00:00:00.000Z",
        updatedAt: "1970-01-01T00:00:00.000Z"
      })
      const doc = yield* store.transact((tx) => tx.get("payment_intent", pi.payment_intent_id))
      assert.strictEqual((doc?.data as { failure_reason: string } | undefined)?.failure_reason, "insufficient funds")
      // shown on the object and in the charge.failed payload
      assert.strictEqual(
        (yield* PaymentIntents.getPaymentIntent(test, pi.payment_intent_id)).failure_reason,
        "insufficient funds"
      )
      assert.strictEqual(rows[1]?.parsed.payload.failure_reason, "insufficient funds")
      const late = yield* failCode(PaymentIntents.reportPaymentOutcome(test, pi.payment_intent_id, "succeeded"))
      assert.strictEqual(late, "invalid_state")
      assert.strictEqual((yield* store.ledger).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("cancel: payment_intent.cancelled; cancelling again or paying a cancelled intent is invalid_state", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(live, { amount: 2500n, callback_url: cb })
      const cancelled = yield* PaymentIntents.cancelPaymentIntent(live, pi.payment_intent_id)
      assert.strictEqual(cancelled.status, "cancelled")
      assert.strictEqual(cancelled.cancellation_reason, "requested")
      const rows = yield* outbox(live)
      assert.deepStrictEqual(
        rows.map((r) => r.event),
        ["payment_intent.created", "payment_intent.cancelled"]
      )
      assert.deepStrictEqual(rows[1]?.parsed.payload, cancelled)
      assert.deepStrictEqual(yield* refusedCodes(live, pi.payment_intent_id, ["cancel", "succeeded"]), [
        "invalid_state",
        "invalid_state"
      ])
      assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("another business's or the other mode's intent is not_found for every operation", () =>
    Effect.gen(function* () {
      const a = yield* business()
      const b = yield* business()
      const pi = yield* PaymentIntents.createPaymentIntent(a.live, { amount: 1000n })
      const id = pi.payment_intent_id
      for (const other of [b.live, b.test, a.test]) {
        assert.strictEqual(yield* failCode(PaymentIntents.getPaymentIntent(other, id)), "not_found")
        assert.strictEqual(yield* failCode(PaymentIntents.cancelPaymentIntent(other, id)), "not_found")
        assert.strictEqual(yield* failCode(PaymentIntents.reportPaymentOutcome(other, id, "succeeded")), "not_found")
        assert.strictEqual((yield* PaymentIntents.listPaymentIntents(other, page)).meta.total, 0)
      }
      assert.strictEqual(
        yield* failCode(PaymentIntents.getPaymentIntent(a.live, "00000000-0000-4000-8000-ffffffffffff")),
        "not_found"
      )
      assert.strictEqual((yield* PaymentIntents.getPaymentIntent(a.live, id)).status, "requires_payment_method")
      assert.strictEqual((yield* Balance.getBalance(b.live)).available, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("invalid input is validation_error and stores nothing", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const bad = [
        { amount: 0n },
        { amount: -5n },
        { amount: 100n, network: "mpesa" as never },
        { amount: 100n, account_number: "12345" },
        { amount: 100n, callback_url: "not a url" },
        { amount: 100n, currency: "EUR" as never },
        { amount: 100n, transaction_fee_type: "nobody" as never }
      ]
      for (const input of bad) {
        const err = yield* failCode(PaymentIntents.createPaymentIntent(live, input))
        assert.strictEqual(
          err,
          "validation_error",
          JSON.stringify(input, (_, v) => (typeof v === "bigint" ? `${v}` : v))
        )
      }
      assert.strictEqual((yield* PaymentIntents.listPaymentIntents(live, page)).meta.total, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("dry run (X-No-Effect): the would-be object, nothing stored or sent, the processor not called", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const refusing = Layer.succeed(
        Processor,
        Processor.of({ open: () => Effect.die(new Error("the processor must not be called on a dry run")) })
      )
      const pi = yield* PaymentIntents.createPaymentIntent(
        live,
        { amount: 10000n, transaction_fee_type: "customer", callback_url: cb },
        { dry_run: true }
      ).pipe(Effect.provide(refusing))
      assert.isTrue(isPaymentIntent(pi))
      assert.strictEqual(pi.transaction_fee, 1.5)
      assert.strictEqual(pi.status, "requires_payment_method")
      assert.strictEqual(pi.payment_link, `http://127.0.0.1:3000/pay/${pi.payment_intent_id}`)
      assert.strictEqual((yield* PaymentIntents.listPaymentIntents(live, page)).meta.total, 0)
      assert.strictEqual((yield* outbox(live)).length, 0)
      assert.strictEqual(yield* failCode(PaymentIntents.getPaymentIntent(live, pi.payment_intent_id)), "not_found")
      // a dry run still validates
      const err = yield* failCode(PaymentIntents.createPaymentIntent(live, { amount: 0n }, { dry_run: true }))
      assert.strictEqual(err, "validation_error")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a processor failure is internal_error and stores nothing", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const down = Layer.succeed(
        Processor,
        Processor.of({ open: () => Effect.fail(new ProcessorError({ message: "timeout" })) })
      )
      const err = yield* failCode(
        PaymentIntents.createPaymentIntent(live, { amount: 10000n, callback_url: cb }).pipe(Effect.provide(down))
      )
      assert.strictEqual(err, "internal_error")
      assert.strictEqual((yield* PaymentIntents.listPaymentIntents(live, page)).meta.total, 0)
      assert.strictEqual((yield* outbox(live)).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "expiry: after 30 minutes an unpaid intent is cancelled with payment_intent.cancelled; paid ones are left",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const open = yield* PaymentIntents.createPaymentIntent(live, { amount: 1000n, callback_url: cb })
        const paid = yield* PaymentIntents.createPaymentIntent(live, { amount: 1000n })
        yield* PaymentIntents.reportPaymentOutcome(live, paid.payment_intent_id, "succeeded")
        yield* TestClock.adjust("29 minutes")
        assert.strictEqual(yield* PaymentIntents.expireDuePaymentIntents(), 0)
        assert.strictEqual(
          (yield* PaymentIntents.getPaymentIntent(live, open.payment_intent_id)).status,
          "requires_payment_method"
        )
        yield* TestClock.adjust("1 minute")
        assert.strictEqual(yield* PaymentIntents.expireDuePaymentIntents(), 1)
        assert.strictEqual(yield* PaymentIntents.expireDuePaymentIntents(), 0)
        const expired = yield* PaymentIntents.getPaymentIntent(live, open.payment_intent_id)
        assert.strictEqual(expired.status, "cancelled")
        assert.strictEqual(expired.cancellation_reason, "expired")
        assert.strictEqual((yield* PaymentIntents.getPaymentIntent(live, paid.payment_intent_id)).status, "successful")
        const rows = yield* outbox(live)
        assert.deepStrictEqual(
          rows.map((r) => r.event),
          ["payment_intent.created", "payment_intent.cancelled"]
        )
        assert.strictEqual(rows[1]?.parsed.payload.status, "cancelled")
        // a receiver tells a closed checkout from a cancel it asked for
        assert.strictEqual(rows[1]?.parsed.payload.cancellation_reason, "expired")
        const late = yield* failCode(PaymentIntents.reportPaymentOutcome(live, open.payment_intent_id, "succeeded"))
        assert.strictEqual(late, "invalid_state")
        assert.strictEqual((yield* Balance.getBalance(live)).available, 9.85)
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "after expires_at, before the sweep: cancel and outcomes meet the expired intent; the sweep books it once",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const pi = yield* PaymentIntents.createPaymentIntent(live, { amount: 1000n, callback_url: cb })
        yield* TestClock.adjust("31 minutes")
        assert.deepStrictEqual(yield* refusedCodes(live, pi.payment_intent_id, ["cancel", "succeeded", "failed"]), [
          "invalid_state",
          "invalid_state",
          "invalid_state"
        ])
        // nothing was booked by the refused commands: no credit, no event yet
        assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
        assert.deepStrictEqual(
          (yield* outbox(live)).map((r) => r.event),
          ["payment_intent.created"]
        )
        assert.strictEqual(yield* PaymentIntents.expireDuePaymentIntents(), 1)
        const rows = yield* outbox(live)
        assert.deepStrictEqual(
          rows.map((r) => r.event),
          ["payment_intent.created", "payment_intent.cancelled"]
        )
        assert.strictEqual(rows[1]?.parsed.payload.status, "cancelled")
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("not_found echoes the id sent at most 64 characters long, control characters escaped", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const message = (id: string) =>
        Effect.map(Effect.flip(PaymentIntents.getPaymentIntent(live, id)), (e) => (e as { message: string }).message)
      assert.strictEqual(
        yield* message("00000000-0000-4000-8000-000000000000"),
        "No payment intent with id 00000000-0000-4000-8000-000000000000."
      )
      assert.strictEqual(yield* message("x".repeat(5000)), `No payment intent with id ${"x".repeat(64)}….`)
      assert.strictEqual(yield* message("a\u0000b\nc"), "No payment intent with id a\\u0000b\\nc.")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("list: newest first with meta, paged, per mode", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      const created = []
      for (const amount of [100n, 200n, 300n]) {
        created.push(yield* PaymentIntents.createPaymentIntent(live, { amount }))
        yield* TestClock.adjust("1 second")
      }
      yield* PaymentIntents.createPaymentIntent(test, { amount: 999n })
      const all = yield* PaymentIntents.listPaymentIntents(live, page)
      assert.deepStrictEqual(all.meta, { total: 3, limit: 10, offset: 0 })
      assert.deepStrictEqual(
        all.data.map((p) => p.amount),
        [3, 2, 1]
      )
      assert.isTrue(all.data.every(isPaymentIntent))
      const second = yield* PaymentIntents.listPaymentIntents(live, { limit: 1, offset: 1 })
      assert.deepStrictEqual(second.meta, { total: 3, limit: 1, offset: 1 })
      assert.deepStrictEqual(second.data, [created[1]])
      assert.strictEqual((yield* PaymentIntents.listPaymentIntents(test, page)).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )
})
