import { assert, describe, it } from "@effect/vitest"
import { Dispatcher, Outbox, Store } from "@xaalis/engine"
import { verify } from "@xaalis/webhooks"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { HttpNotifier } from "../src/notifier/index.ts"
import { createBusiness, startReceiver, storeLayer } from "./notifier-helpers.ts"

/** An expected dispatch summary: the counts given, every other one 0. */
const dispatched = (counts: Partial<Dispatcher.DispatchSummary>): Dispatcher.DispatchSummary => ({
  ...Dispatcher.nothingDispatched,
  ...counts
})

/** The engine's dispatcher over the HTTP notifier, the in-memory store and the TestClock. */
const layer = (options: HttpNotifier.HttpNotifierOptions) =>
  HttpNotifier.layer(options).pipe(Layer.provideMerge(storeLayer))

/** An outbox row, which must exist. */
const getRow = (id: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    const doc = yield* store.transact((tx) => tx.get("outbox", id))
    assert.isDefined(doc, `outbox row ${id}`)
    return doc as Dispatcher.OutboxDoc
  })

describe("HttpNotifier with the engine's dispatcher", () => {
  it.effect("a receiver failing its first attempt gets the same event again after the backoff", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver((_, i) => ({ status: i === 0 ? 503 : 204 }))
      const business = yield* createBusiness
      const store = yield* Store
      const payload = { id: "conv_1", reference: "RMP-1", status: "paid", actually_paid: 73.64 }
      yield* store.transact((tx) =>
        Outbox.enqueue(tx, {
          ids: ["ob_1"],
          event_id: "evt_1",
          business_id: business.id,
          mode: "test",
          event: "ramp.paid",
          payload,
          targets: [{ url: receiver.url(), target: "webhook_url" }],
          now: 0
        })
      )

      assert.deepStrictEqual(yield* Dispatcher.dispatchDue(), dispatched({ retried: 1 }))
      const first = yield* getRow("ob_1")
      assert.strictEqual(first.data.status, "pending")
      assert.strictEqual(first.data.last_error, "HTTP 503")
      assert.strictEqual(first.due_at, 30_000)

      // not yet due: nothing is sent
      yield* TestClock.adjust("29 seconds")
      assert.deepStrictEqual(yield* Dispatcher.dispatchDue(), dispatched({}))
      assert.strictEqual(receiver.received.length, 1)

      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* Dispatcher.dispatchDue(), dispatched({ delivered: 1 }))
      const row = yield* getRow("ob_1")
      assert.strictEqual(row.data.status, "delivered")
      assert.strictEqual(row.data.attempts, 2)
      assert.strictEqual(row.due_at, null)

      assert.strictEqual(receiver.received.length, 2)
      const [a, b] = receiver.received as [(typeof receiver.received)[0], (typeof receiver.received)[0]]
      assert.strictEqual(a.headers["webhook-id"], "evt_1")
      assert.strictEqual(b.headers["webhook-id"], "evt_1")
      assert.isTrue(a.body.equals(b.body))
      assert.strictEqual(a.body.toString("utf8"), JSON.stringify({ event: "ramp.paid", payload }))
      // each attempt is signed at its own real time, so standard verifiers accept a late retry
      for (const r of [a, b]) {
        assert.deepStrictEqual(verify(r.body, r.headers, business.webhook_secret), { event: "ramp.paid", payload })
      }
    }).pipe(Effect.provide(layer({ allowLoopbackHttp: true })))
  )

  it.effect("a refused live URL is retried like any failed attempt, with the refusal as last_error", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ status: 200 }))
      const business = yield* createBusiness
      const store = yield* Store
      yield* store.transact((tx) =>
        Outbox.enqueue(tx, {
          ids: ["ob_live"],
          event_id: "evt_live",
          business_id: business.id,
          mode: "live",
          event: "charge.succeeded",
          payload: { id: "pr_1" },
          targets: [{ url: receiver.url(), target: "callback_url" }],
          now: 0
        })
      )
      assert.deepStrictEqual(yield* Dispatcher.dispatchDue(), dispatched({ retried: 1 }))
      const row = yield* getRow("ob_live")
      assert.strictEqual(row.data.last_error, "refused: live deliveries must use https")
      assert.strictEqual(receiver.connections(), 0)
    }).pipe(Effect.provide(layer({})))
  )
})
