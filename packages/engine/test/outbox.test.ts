import { assert, describe, it } from "@effect/vitest"
import { DomainError } from "@xaalis/core"
import { Clock, Deferred, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryNotifier from "../src/adapters/memory/MemoryNotifier.ts"
import * as MemoryStore from "../src/adapters/memory/MemoryStore.ts"
import { base_delay_ms, delay_max_ms, horizon_ms, nextAttemptDelay, nextDue } from "../src/outbox/Backoff.ts"
import {
  claim_ms,
  type DeliveryAttempt,
  DeliveryObserver,
  type DispatchSummary,
  dispatchDue,
  listFailed,
  nothingDispatched,
  type OutboxDoc,
  resend
} from "../src/outbox/Dispatcher.ts"
import { enqueue, type OutboxRow, rowsOf } from "../src/outbox/Outbox.ts"
import { Notifier } from "../src/ports/Notifier.ts"
import { type Scope, Store } from "../src/ports/Store.ts"

/** An expected dispatch summary: the counts given, every other one 0. */
const dispatched = (counts: Partial<DispatchSummary>): DispatchSummary => ({ ...nothingDispatched, ...counts })

const TestLayer = Layer.mergeAll(MemoryStore.layer, MemoryNotifier.layer)

const bizA: Scope = { business_id: "biz_a", mode: "test" }
const hook = "https://a.example/webhooks"
const callback = "https://a.example/callback"
const second = 1000
const hour = 60 * 60 * second

const enqueueEvent = (input: {
  readonly event_id: string
  readonly ids: ReadonlyArray<string>
  readonly urls?: ReadonlyArray<{ readonly url: string; readonly target: OutboxRow["target"] }>
  readonly scope?: Scope
  readonly payload?: unknown
  readonly at?: number
}) =>
  Effect.gen(function* () {
    const store = yield* Store
    const now = input.at ?? (yield* Clock.currentTimeMillis)
    const scope = input.scope ?? bizA
    yield* store.transact((tx) =>
      enqueue(tx, {
        ids: input.ids,
        event_id: input.event_id,
        business_id: scope.business_id,
        mode: scope.mode,
        event: "ramp.paid",
        payload: input.payload ?? { id: "conv_1", status: "paid" },
        targets: input.urls ?? [{ url: hook, target: "webhook_url" }],
        now
      })
    )
  })

const getRow = (id: string) =>
  Effect.gen(function* () {
    const store = yield* Store
    const doc = yield* store.transact((tx) => tx.get("outbox", id))
    assert.isDefined(doc, `outbox row ${id}`)
    return doc as OutboxDoc
  })

const control = MemoryNotifier.MemoryNotifierControl

/** Moves the TestClock to the row's next due time and runs one dispatch; returns that time. */
const stepToDue = (id: string) =>
  Effect.gen(function* () {
    const row = yield* getRow(id)
    assert.isNotNull(row.due_at)
    const due = row.due_at as number
    const now = yield* Clock.currentTimeMillis
    yield* TestClock.adjust(due - now)
    yield* dispatchDue()
    return due
  })

/**
 * Keeps moving the TestClock to the earliest due outbox row and dispatching,
 * until no row has a due time left (every row delivered or failed).
 */
const runUntilIdle = Effect.gen(function* () {
  const store = yield* Store
  for (let guard = 0; guard < 1000; guard++) {
    const next = yield* store.transact((tx) => tx.due("outbox", Number.MAX_SAFE_INTEGER, 1))
    const due = next[0]?.due_at
    if (due === undefined || due === null) return
    const now = yield* Clock.currentTimeMillis
    if (due > now) yield* TestClock.adjust(due - now)
    yield* dispatchDue()
  }
  assert.fail("outbox never became idle")
})

/** The DomainError code resend fails with. */
const resendError = (scope: Scope, id: string) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(resend(scope, id))
    assert.instanceOf(error, DomainError)
    return (error as DomainError).code
  })

describe("Outbox rows", () => {
  const input = (targets: ReadonlyArray<{ readonly url: string; readonly target: OutboxRow["target"] }>) => ({
    ids: ["row_1", "row_2"],
    event_id: "evt_1",
    business_id: "biz_a",
    mode: "test" as const,
    event: "ramp.paid" as const,
    payload: { id: "conv_1" },
    targets,
    now: 0
  })

  it("writes one row per distinct URL: a callback_url equal to the webhook URL is delivered to once", () => {
    /** The rows of one event for a callback URL and the business's webhook URL. */
    const rowsFor = (callback_url: string) =>
      rowsOf(
        input([
          { url: callback_url, target: "callback_url" },
          { url: hook, target: "webhook_url" }
        ])
      )
    const summary = (rows: ReadonlyArray<OutboxDoc>) => rows.map((r) => [r.id, r.data.url, r.data.target])
    assert.deepStrictEqual(summary(rowsFor(hook)), [["row_1", hook, "callback_url"]])
    const both = rowsFor(callback)
    assert.deepStrictEqual(summary(both), [
      ["row_1", callback, "callback_url"],
      ["row_2", hook, "webhook_url"]
    ])
    // one event: the same id and the same bytes to every target
    assert.deepStrictEqual(new Set(both.map((r) => r.data.event_id)), new Set(["evt_1"]))
    assert.strictEqual(both[0]?.data.body, both[1]?.data.body)
  })
})

describe("Backoff", () => {
  it("doubles from 30 s and caps at 6 h", () => {
    assert.deepStrictEqual([1, 2, 3, 4, 10, 11, 12, 100, 5000].map(nextAttemptDelay), [
      30_000,
      60_000,
      120_000,
      240_000,
      15_360_000,
      delay_max_ms,
      delay_max_ms,
      delay_max_ms,
      delay_max_ms
    ])
    assert.strictEqual(nextAttemptDelay(0), base_delay_ms)
    assert.strictEqual(horizon_ms, 259_200_000)
  })

  it("schedules from the attempt time, clamps the last attempt to the horizon, then gives up", () => {
    const row = { attempts: 1, first_attempt_due: 1_000 }
    assert.strictEqual(nextDue(row, 1_000), 31_000)
    assert.strictEqual(nextDue({ ...row, attempts: 20 }, 1_000 + horizon_ms - 1), 1_000 + horizon_ms)
    assert.strictEqual(nextDue({ ...row, attempts: 20 }, 1_000 + horizon_ms), null)
    assert.strictEqual(nextDue({ ...row, attempts: 20 }, 1_000 + horizon_ms + 5), null)
  })
})

describe("Outbox dispatcher", () => {
  it.effect("delivers an enqueued event once, with its event id and exact body", () =>
    Effect.gen(function* () {
      const payload = { id: "conv_1", amount: "70.00", currency: "GMD", note: "é ✓" }
      yield* enqueueEvent({ event_id: "evt_1", ids: ["ob_1"], payload })

      const summary = yield* dispatchDue()
      assert.deepStrictEqual(summary, dispatched({ delivered: 1 }))
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({}))

      const deliveries = yield* (yield* control).deliveries
      assert.strictEqual(deliveries.length, 1)
      const d = deliveries[0]!
      assert.strictEqual(d.event_id, "evt_1")
      assert.strictEqual(d.url, hook)
      assert.strictEqual(d.business_id, "biz_a")
      assert.strictEqual(d.attempt, 1)
      assert.strictEqual(d.body, JSON.stringify({ event: "ramp.paid", payload }))

      const row = yield* getRow("ob_1")
      assert.strictEqual(row.data.status, "delivered")
      assert.strictEqual(row.data.delivered_at, 0)
      assert.strictEqual(row.data.attempts, 1)
      assert.strictEqual(row.due_at, null)
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("retries a failing receiver exactly at the backoff times", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* ctl.failFor(hook, "always")
      yield* enqueueEvent({ event_id: "evt_r", ids: ["ob_r"] })

      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ retried: 1 }))
      let row = yield* getRow("ob_r")
      assert.strictEqual(row.data.status, "pending")
      assert.strictEqual(row.data.attempts, 1)
      assert.strictEqual(row.due_at, 30 * second)
      assert.strictEqual(row.data.last_error, MemoryNotifier.simulated_failure_message)

      // one millisecond early: nothing happens
      yield* TestClock.adjust(30 * second - 1)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({}))
      assert.strictEqual((yield* getRow("ob_r")).data.attempts, 1)

      yield* TestClock.adjust(1)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ retried: 1 }))
      row = yield* getRow("ob_r")
      assert.strictEqual(row.data.attempts, 2)
      assert.strictEqual(row.due_at, 90 * second)

      yield* TestClock.adjust(60 * second)
      yield* dispatchDue()
      row = yield* getRow("ob_r")
      assert.strictEqual(row.data.attempts, 3)
      assert.strictEqual(row.due_at, 210 * second)

      // the receiver recovers: the 4th attempt, at 210 s, succeeds
      yield* ctl.succeedFor(hook)
      yield* TestClock.adjust(120 * second)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ delivered: 1 }))
      row = yield* getRow("ob_r")
      assert.strictEqual(row.data.status, "delivered")
      assert.strictEqual(row.data.attempts, 4)
      assert.strictEqual(row.data.delivered_at, 210 * second)
      assert.strictEqual(row.due_at, null)

      const attempts = yield* ctl.attempts
      assert.deepStrictEqual(
        attempts.map((a) => [a.at, a.attempt, a.ok, a.event_id]),
        [
          [0, 1, false, "evt_r"],
          [30 * second, 2, false, "evt_r"],
          [90 * second, 3, false, "evt_r"],
          [210 * second, 4, true, "evt_r"]
        ]
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("tells the DeliveryObserver of every recorded attempt, and an observer that throws changes nothing", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      const told: Array<DeliveryAttempt> = []
      yield* ctl.failFor(hook, "always")
      yield* enqueueEvent({ event_id: "evt_o", ids: ["ob_o"] })
      yield* dispatchDue().pipe(Effect.provideService(DeliveryObserver, (a) => told.push(a)))
      yield* TestClock.adjust(30 * second)
      yield* ctl.succeedFor(hook)
      yield* dispatchDue().pipe(Effect.provideService(DeliveryObserver, (a) => told.push(a)))
      assert.deepStrictEqual(told, [
        {
          event_id: "evt_o",
          event: "ramp.paid",
          business_id: "biz_a",
          mode: "test",
          target: "webhook_url",
          attempt: 1,
          outcome: "retried",
          error: MemoryNotifier.simulated_failure_message,
          next_attempt_at: 30 * second
        },
        {
          event_id: "evt_o",
          event: "ramp.paid",
          business_id: "biz_a",
          mode: "test",
          target: "webhook_url",
          attempt: 2,
          outcome: "delivered",
          error: null,
          next_attempt_at: null
        }
      ])
      yield* enqueueEvent({ event_id: "evt_t", ids: ["ob_t"] })
      const throwing = () => {
        throw new Error("the observer's own fault")
      }
      assert.deepStrictEqual(
        yield* dispatchDue().pipe(Effect.provideService(DeliveryObserver, throwing)),
        dispatched({ delivered: 1 })
      )
      assert.strictEqual((yield* getRow("ob_t")).data.status, "delivered")
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("gives up after 3 days, lists the row as failed, and resend delivers it with the same event id", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* ctl.failFor(hook, "always")
      yield* enqueueEvent({ event_id: "evt_f", ids: ["ob_f"] })

      const times: Array<number> = []
      for (let guard = 0; guard < 100; guard++) {
        const row = yield* getRow("ob_f")
        if (row.due_at === null) break
        times.push(yield* stepToDue("ob_f"))
      }
      assert.deepStrictEqual(
        times.map((t) => t / second),
        [
          0, 30, 90, 210, 450, 930, 1890, 3810, 7650, 15330, 30690, 52290, 73890, 95490, 117090, 138690, 160290, 181890,
          203490, 225090, 246690, 259200
        ]
      )
      const failed = yield* getRow("ob_f")
      assert.strictEqual(failed.data.status, "failed")
      assert.strictEqual(failed.data.attempts, 22)
      assert.strictEqual(failed.due_at, null)
      assert.strictEqual(yield* Clock.currentTimeMillis, horizon_ms)

      const listed = yield* listFailed(bizA, { limit: 10, offset: 0 })
      assert.strictEqual(listed.total, 1)
      assert.deepStrictEqual(
        listed.docs.map((d) => d.id),
        ["ob_f"]
      )
      assert.strictEqual((yield* listFailed({ business_id: "biz_b", mode: "test" }, { limit: 10, offset: 0 })).total, 0)
      assert.strictEqual((yield* listFailed({ business_id: "biz_a", mode: "live" }, { limit: 10, offset: 0 })).total, 0)

      // the merchant fixes the endpoint a day later and resends
      yield* ctl.succeedFor(hook)
      yield* TestClock.adjust(24 * hour)
      const now = yield* Clock.currentTimeMillis
      const resent = yield* resend(bizA, "ob_f")
      assert.strictEqual(resent.data.status, "pending")
      assert.strictEqual(resent.data.attempts, 22)
      assert.strictEqual(resent.data.first_attempt_due, now)
      assert.strictEqual(resent.due_at, now)
      assert.strictEqual((yield* listFailed(bizA, { limit: 10, offset: 0 })).total, 0)

      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ delivered: 1 }))
      const deliveries = yield* ctl.deliveries
      assert.strictEqual(deliveries.length, 1)
      assert.strictEqual(deliveries[0]!.event_id, "evt_f")
      assert.strictEqual(deliveries[0]!.attempt, 23)
      assert.strictEqual(deliveries[0]!.at, now)
      assert.isTrue((yield* ctl.attempts).every((a) => a.event_id === "evt_f"))
      assert.strictEqual((yield* getRow("ob_f")).data.status, "delivered")
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("a failed resend keeps retrying for a new 3-day window", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* ctl.failFor(hook, "always")
      yield* enqueueEvent({ event_id: "evt_w", ids: ["ob_w"] })
      yield* runUntilIdle
      assert.strictEqual((yield* getRow("ob_w")).data.status, "failed")

      yield* resend(bizA, "ob_w")
      const start = yield* Clock.currentTimeMillis
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ retried: 1 }))
      const row = yield* getRow("ob_w")
      assert.strictEqual(row.data.attempts, 23)
      assert.strictEqual(row.due_at, start + delay_max_ms)
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("the two targets of one event are independent rows sharing the event id and body", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* enqueueEvent({
        event_id: "evt_2",
        ids: ["ob_cb", "ob_wh"],
        urls: [
          { url: callback, target: "callback_url" },
          { url: hook, target: "webhook_url" }
        ]
      })
      const cb = yield* getRow("ob_cb")
      const wh = yield* getRow("ob_wh")
      assert.strictEqual(cb.data.event_id, "evt_2")
      assert.strictEqual(wh.data.event_id, "evt_2")
      assert.strictEqual(cb.data.body, wh.data.body)
      assert.strictEqual(cb.data.target, "callback_url")
      assert.strictEqual(wh.data.target, "webhook_url")

      yield* ctl.failFor(callback, 1)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ delivered: 1, retried: 1 }))
      assert.strictEqual((yield* getRow("ob_wh")).data.status, "delivered")
      const retried = yield* getRow("ob_cb")
      assert.strictEqual(retried.data.status, "pending")
      assert.strictEqual(retried.due_at, 30 * second)

      yield* TestClock.adjust(30 * second)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ delivered: 1 }))
      const deliveries = yield* ctl.deliveries
      assert.deepStrictEqual(
        deliveries.map((d) => [d.url, d.event_id, d.attempt, d.at]),
        [
          [hook, "evt_2", 1, 0],
          [callback, "evt_2", 2, 30 * second]
        ]
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("does not attempt a row before it is due", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* enqueueEvent({ event_id: "evt_later", ids: ["ob_later"], at: 10 * second })
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({}))
      yield* TestClock.adjust(10 * second - 1)
      yield* dispatchDue()
      assert.strictEqual((yield* ctl.attempts).length, 0)
      assert.strictEqual((yield* getRow("ob_later")).data.attempts, 0)

      yield* TestClock.adjust(1)
      assert.deepStrictEqual(yield* dispatchDue(), dispatched({ delivered: 1 }))
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("processes at most `limit` rows per call, oldest due first", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* TestClock.adjust(5 * second)
      yield* enqueueEvent({ event_id: "evt_b", ids: ["ob_b"], at: 2 * second })
      yield* enqueueEvent({ event_id: "evt_a", ids: ["ob_a"], at: 1 * second })
      assert.deepStrictEqual(yield* dispatchDue({ limit: 1 }), dispatched({ delivered: 1 }))
      assert.deepStrictEqual(
        (yield* ctl.deliveries).map((d) => d.event_id),
        ["evt_a"]
      )
      yield* dispatchDue({ limit: 1 })
      assert.deepStrictEqual(
        (yield* ctl.deliveries).map((d) => d.event_id),
        ["evt_a", "evt_b"]
      )
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("never delivers twice when two dispatches run at the same time", () =>
    Effect.gen(function* () {
      const { notifier, control: ctl } = yield* MemoryNotifier.make
      // a receiver that takes a moment (like real I/O), so the two dispatches interleave
      const async = Notifier.of({ deliver: (d) => Effect.yieldNow.pipe(Effect.andThen(notifier.deliver(d))) })
      yield* Effect.gen(function* () {
        yield* enqueueEvent({
          event_id: "evt_x",
          ids: ["ob_x1", "ob_x2"],
          urls: [
            { url: callback, target: "callback_url" },
            { url: hook, target: "webhook_url" }
          ]
        })
        const [a, b] = yield* Effect.all([dispatchDue(), dispatchDue()], { concurrency: "unbounded" })
        assert.strictEqual(a.delivered + b.delivered, 2)
        assert.strictEqual(a.retried + b.retried + a.failed + b.failed, 0)
        // and once more, sequentially, at the same instant
        assert.deepStrictEqual(yield* dispatchDue(), dispatched({}))
        const deliveries = yield* ctl.deliveries
        assert.deepStrictEqual(deliveries.map((d) => d.url).sort(), [callback, hook].sort())
      }).pipe(Effect.provideService(Notifier, async))
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("a row claimed by an in-flight dispatch is invisible to a second dispatch", () =>
    Effect.gen(function* () {
      const { notifier, control: ctl } = yield* MemoryNotifier.make
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const slow = Notifier.of({
        deliver: (d) =>
          Deferred.succeed(entered, undefined).pipe(
            Effect.andThen(Deferred.await(release)),
            Effect.andThen(notifier.deliver(d))
          )
      })
      yield* Effect.gen(function* () {
        yield* enqueueEvent({ event_id: "evt_s", ids: ["ob_s"] })
        const first = yield* Effect.forkChild(dispatchDue())
        yield* Deferred.await(entered)
        // the first dispatch is mid-delivery: the row is claimed, not due
        const claimed = yield* getRow("ob_s")
        assert.strictEqual(claimed.due_at, claim_ms)
        assert.deepStrictEqual(yield* dispatchDue(), dispatched({}))
        yield* Deferred.succeed(release, undefined)
        assert.deepStrictEqual(yield* Fiber.join(first), dispatched({ delivered: 1 }))
        assert.strictEqual((yield* ctl.deliveries).length, 1)
        assert.strictEqual((yield* getRow("ob_s")).data.status, "delivered")
      }).pipe(Effect.provideService(Notifier, slow))
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect(
    "asked to stop (a graceful stop), a dispatch finishes and records its attempts in flight and starts no more",
    () =>
      Effect.gen(function* () {
        const { notifier, control: ctl } = yield* MemoryNotifier.make
        let entered = 0
        const allIn = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const slow = Notifier.of({
          deliver: (d) =>
            Effect.sync(() => {
              entered += 1
            }).pipe(
              Effect.andThen(Effect.suspend(() => (entered === 8 ? Deferred.succeed(allIn, undefined) : Effect.void))),
              Effect.andThen(Deferred.await(release)),
              Effect.andThen(notifier.deliver(d))
            )
        })
        yield* Effect.gen(function* () {
          const ids = Array.from({ length: 20 }, (_, i) => `ob_${String(i).padStart(2, "0")}`)
          for (const id of ids) yield* enqueueEvent({ event_id: `evt_${id}`, ids: [id] })
          let stop = false
          const run = yield* Effect.forkChild(dispatchDue({ concurrency: 8, stopping: () => stop }))
          yield* Deferred.await(allIn)
          // the stop, asked while eight attempts are in flight, waits for them…
          stop = true
          yield* Deferred.succeed(release, undefined)
          assert.deepStrictEqual(yield* Fiber.join(run), dispatched({ delivered: 8 }))
          assert.strictEqual(entered, 8)
          // …which are delivered and recorded; the twelve others were never claimed and are still due
          const rows = yield* Effect.forEach(ids, getRow)
          assert.strictEqual(rows.filter((r) => r.data.status === "delivered").length, 8)
          const waiting = rows.filter((r) => r.data.status === "pending")
          assert.strictEqual(waiting.length, 12)
          assert.isTrue(waiting.every((r) => r.data.attempts === 0 && r.due_at === 0))
          // the next run delivers exactly those: every event once
          assert.deepStrictEqual(yield* dispatchDue({ concurrency: 8 }), dispatched({ delivered: 12 }))
          const delivered = (yield* ctl.deliveries).map((d) => d.event_id).sort()
          assert.deepStrictEqual(
            delivered,
            ids.map((id) => `evt_${id}`)
          )
        }).pipe(Effect.provideService(Notifier, slow))
      }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("skips recording when another writer changed the row during the attempt", () =>
    Effect.gen(function* () {
      const { notifier, control: ctl } = yield* MemoryNotifier.make
      const store = yield* Store
      // while the attempt is in flight, someone else writes the row (say, a dispatcher whose claim won later)
      const meddling = Notifier.of({
        deliver: (d) =>
          Effect.gen(function* () {
            yield* store.transact((tx) =>
              Effect.gen(function* () {
                const doc = (yield* tx.get("outbox", "ob_m")) as OutboxDoc
                yield* tx.update({ ...doc, version: doc.version + 1, data: { ...doc.data, last_error: "theirs" } })
              })
            )
            yield* notifier.deliver(d)
          }).pipe(Effect.orDie)
      })
      yield* Effect.gen(function* () {
        yield* enqueueEvent({ event_id: "evt_m", ids: ["ob_m"] })
        assert.deepStrictEqual(yield* dispatchDue(), dispatched({ skipped: 1 }))
        const row = yield* getRow("ob_m")
        assert.strictEqual(row.data.last_error, "theirs")
        assert.strictEqual(row.data.status, "pending")
        assert.strictEqual((yield* ctl.deliveries).length, 1)
      }).pipe(Effect.provideService(Notifier, meddling))
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("another business, or the other mode, cannot resend a row; a pending row cannot be resent", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      yield* ctl.failFor(hook, "always")
      yield* enqueueEvent({ event_id: "evt_o", ids: ["ob_o"] })
      yield* runUntilIdle
      const before = yield* getRow("ob_o")
      assert.strictEqual(before.data.status, "failed")

      for (const scope of [
        { business_id: "biz_b", mode: "test" },
        { business_id: "biz_a", mode: "live" }
      ] as const) {
        assert.strictEqual(yield* resendError(scope, "ob_o"), "not_found")
      }
      assert.strictEqual(yield* resendError(bizA, "ob_nope"), "not_found")
      assert.deepStrictEqual(yield* getRow("ob_o"), before)

      yield* resend(bizA, "ob_o")
      assert.strictEqual(yield* resendError(bizA, "ob_o"), "invalid_state")
    }).pipe(Effect.provide(TestLayer))
  )

  it.effect("listFailed pages the failed rows of the scope, newest first", () =>
    Effect.gen(function* () {
      const ctl = yield* control
      const bad = "https://down.example/hook"
      yield* ctl.failFor(bad, "always")
      yield* enqueueEvent({ event_id: "evt_1", ids: ["ob_1"], urls: [{ url: bad, target: "webhook_url" }], at: 0 })
      yield* enqueueEvent({ event_id: "evt_2", ids: ["ob_2"], at: 0 })
      yield* enqueueEvent({ event_id: "evt_3", ids: ["ob_3"], urls: [{ url: bad, target: "webhook_url" }], at: 1 })
      yield* enqueueEvent({
        event_id: "evt_4",
        ids: ["ob_4"],
        urls: [{ url: bad, target: "webhook_url" }],
        scope: { business_id: "biz_b", mode: "test" },
        at: 2
      })
      yield* runUntilIdle
      const all = yield* listFailed(bizA, { limit: 10, offset: 0 })
      assert.strictEqual(all.total, 2)
      assert.deepStrictEqual(
        all.docs.map((d) => d.id),
        ["ob_3", "ob_1"]
      )
      const page2 = yield* listFailed(bizA, { limit: 1, offset: 1 })
      assert.strictEqual(page2.total, 2)
      assert.deepStrictEqual(
        page2.docs.map((d) => d.id),
        ["ob_1"]
      )
      assert.deepStrictEqual(
        (yield* listFailed({ business_id: "biz_b", mode: "test" }, { limit: 10, offset: 0 })).docs.map((d) => d.id),
        ["ob_4"]
      )
    }).pipe(Effect.provide(TestLayer))
  )
})
