import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import * as MemoryStore from "../src/adapters/memory/MemoryStore.ts"
import { business_concurrency_max, concurrency_max, defer_ms, dispatchDue } from "../src/outbox/Dispatcher.ts"
import { enqueue } from "../src/outbox/Outbox.ts"
import { DeliveryFailed, Notifier } from "../src/ports/Notifier.ts"
import { Store } from "../src/ports/Store.ts"

/**
 * One business's receiver that hangs (accepts the connection, never answers)
 * must not hold the delivery lane for the others. Before: its attempts took
 * every slot (`concurrency_max`, 8) until the notifier's 10 s deadline, wave
 * after wave, and the same lane runs the scheduler's sweeps; measured on the
 * reference server, business A created 80 payment intents whose callback_url
 * hangs, and business B's webhooks arrived 99.8 s later.
 */

const hanging = "https://a.example/hangs"
const healthy = "https://b.example/hooks"

/** `n` outbox rows of `business` to `url`, due at `at` (ids `ob_<tag><i>`, zero-padded so they sort in order). */
const enqueueRows = (tag: string, business: string, url: string, n: number, at: number) =>
  Effect.gen(function* () {
    const store = yield* Store
    for (let i = 0; i < n; i++) {
      yield* store.transact((tx) =>
        enqueue(tx, {
          ids: [`ob_${tag}${String(i).padStart(3, "0")}`],
          event_id: `evt_${tag}${i}`,
          business_id: business,
          mode: "live",
          event: "payment_intent.created",
          payload: { i },
          targets: [{ url, target: "callback_url" }],
          now: at
        })
      )
    }
  })

describe("webhook delivery isolation between receivers", () => {
  it.effect("a hanging receiver of one business does not hold back another business's webhook", () =>
    Effect.gen(function* () {
      yield* enqueueRows("a", "biz_a", hanging, 2 * concurrency_max, 0)
      yield* TestClock.adjust(1)
      yield* enqueueRows("b", "biz_b", healthy, 1, 1)
      const release = yield* Deferred.make<void>()
      const bDelivered = yield* Deferred.make<void>()
      const allSlotsHeldByA = yield* Deferred.make<void>()
      const aInFlight = yield* Ref.make(0)
      const notifier = Notifier.of({
        deliver: (d) =>
          d.url === healthy
            ? Deferred.succeed(bDelivered, undefined).pipe(Effect.asVoid)
            : Ref.updateAndGet(aInFlight, (n) => n + 1).pipe(
                Effect.tap((n) => (n >= concurrency_max ? Deferred.succeed(allSlotsHeldByA, undefined) : Effect.void)),
                Effect.andThen(Deferred.await(release))
              )
      })
      const dispatch = yield* Effect.forkChild(dispatchDue().pipe(Effect.provideService(Notifier, notifier)))
      const first = yield* Effect.raceFirst(
        Effect.as(Deferred.await(bDelivered), "B delivered while A hangs"),
        Effect.as(
          Deferred.await(allSlotsHeldByA),
          `all ${concurrency_max} slots held by A's hanging receiver, B waiting`
        )
      )
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(dispatch)
      assert.strictEqual(first, "B delivered while A hangs")
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect(
    "a failing receiver's other due rows are put off unattempted, so they do not fill the batch ahead of others",
    () =>
      Effect.gen(function* () {
        const store = yield* Store
        // more of A's rows than one call loads, all due before B's
        yield* enqueueRows("a", "biz_a", hanging, 150, 0)
        yield* TestClock.adjust(1)
        yield* enqueueRows("b", "biz_b", healthy, 1, 1)
        const attempts: Array<string> = []
        const notifier = Notifier.of({
          deliver: (d) =>
            Effect.suspend(() => {
              attempts.push(d.event_id)
              // A's receiver refuses (a hang ends the same way, at its deadline)
              return d.url === healthy ? Effect.void : Effect.fail(new DeliveryFailed({ message: "answered 503" }))
            })
        })
        const dispatch = dispatchDue({ limit: 100 }).pipe(Effect.provideService(Notifier, notifier))
        // A's first wave is attempted, the rest of the batch put off; B's row was not in the batch
        const first = yield* dispatch
        assert.isAtLeast(first.retried, 1)
        // (alone in the batch, A may use every slot before its first failure is known)
        assert.isAtMost(first.retried, concurrency_max)
        assert.strictEqual(first.retried + first.deferred, 100)
        assert.strictEqual(first.delivered, 0)
        // the next call (the scheduler loops while a call is full) reaches B
        const second = yield* dispatch
        assert.strictEqual(second.delivered, 1)
        assert.isTrue(attempts.includes("evt_b0"))
        assert.isAtMost(attempts.filter((id) => id.startsWith("evt_a")).length, 2 * concurrency_max)
        // the put-off rows come due again defer_ms later, their attempts unchanged
        const deferred = yield* store.transact((tx) => tx.get("outbox", "ob_a099"))
        assert.strictEqual(deferred?.due_at, 1 + defer_ms)
        assert.strictEqual((deferred?.data as { attempts: number } | undefined)?.attempts, 0)
      }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("two businesses with hanging receivers share the slots evenly; one alone may use every slot", () =>
    Effect.gen(function* () {
      const write = (business: string, n: number, at: number) =>
        enqueueRows(business, business, `https://${business}.example/hangs`, n, at)
      // A's rows are all older than B's: oldest first alone would give A every slot
      yield* write("a", 2 * concurrency_max, 0)
      yield* TestClock.adjust(1)
      yield* write("b", 2 * concurrency_max, 1)
      const release = yield* Deferred.make<void>()
      const full = yield* Deferred.make<void>()
      const inFlight = new Map<string, number>()
      const notifier = Notifier.of({
        deliver: (d) =>
          Effect.suspend(() => {
            inFlight.set(d.business_id, (inFlight.get(d.business_id) ?? 0) + 1)
            const total = [...inFlight.values()].reduce((x, y) => x + y, 0)
            return (total === concurrency_max ? Deferred.succeed(full, undefined) : Effect.void).pipe(
              Effect.andThen(Deferred.await(release))
            )
          })
      })
      const dispatch = yield* Effect.forkChild(dispatchDue().pipe(Effect.provideService(Notifier, notifier)))
      yield* Deferred.await(full)
      assert.deepStrictEqual(Object.fromEntries(inFlight), {
        a: business_concurrency_max,
        b: concurrency_max - business_concurrency_max
      })
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(dispatch)

      // alone, a business's rows fill every slot (no slot idles while rows wait)
      yield* write("c", concurrency_max, 2)
      const release2 = yield* Deferred.make<void>()
      const full2 = yield* Deferred.make<void>()
      let c = 0
      const alone = Notifier.of({
        deliver: () =>
          Effect.suspend(() => {
            c += 1
            return (c === concurrency_max ? Deferred.succeed(full2, undefined) : Effect.void).pipe(
              Effect.andThen(Deferred.await(release2))
            )
          })
      })
      yield* TestClock.adjust(2)
      const dispatch2 = yield* Effect.forkChild(dispatchDue().pipe(Effect.provideService(Notifier, alone)))
      yield* Deferred.await(full2)
      assert.strictEqual(c, concurrency_max)
      yield* Deferred.succeed(release2, undefined)
      yield* Fiber.join(dispatch2)
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})
