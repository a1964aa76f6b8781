import { assert, describe, it } from "@effect/vitest"
import {
  Balance,
  Businesses,
  Conversions,
  DuplicateKey,
  Idempotency,
  Invoices,
  MemoryNotifier,
  Scheduler,
  Store,
  Transfers
} from "@xaalis/engine"
import { Cause, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { unitOfWorkIn } from "../src/usecases/common.ts"
import { business, codeOf, testLayer } from "./setup.ts"

type Live = Effect.Success<ReturnType<typeof business>>["live"]

/** A create of key "k" whose effect commits, then is interrupted before its answer is recorded. */
const createCutOff = (live: Live) =>
  Effect.exit(
    Idempotency.idempotent(
      live,
      "k",
      "f",
      Effect.flatMap(Conversions.createConversion(live, { gmd_amount: 500000n }), () => Effect.interrupt)
    )
  )

/** A `recover` answering from the invoice a request wrote, as the HTTP routes' do. */
const invoiceRecover =
  (live: Live): Idempotency.Recover<unknown, Store> =>
  (touched) => {
    const made = touched.find((t) => t.kind === "invoice")
    return made === undefined ? Effect.succeed(undefined) : Invoices.getInvoice(live, made.id)
  }

describe("idempotency keys", () => {
  it.effect(
    "1 to 255 visible ASCII characters, as over HTTP: any other key is validation_error, and nothing runs",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        let ran = 0
        const request = Effect.sync(() => ++ran)
        for (const key of ["", " ", "a b", "é", "tab\tkey", "x".repeat(256)]) {
          const refused = yield* Effect.flip(Idempotency.idempotent(live, key, "f", request))
          assert.strictEqual(codeOf(refused), "validation_error", JSON.stringify(key))
        }
        assert.strictEqual(ran, 0)
        // a key the store keeps whole: 255 characters, under a record id of 297
        assert.strictEqual(yield* Idempotency.idempotent(live, "k".repeat(255), "f", request), 1)
        assert.strictEqual(yield* Idempotency.idempotent(live, "k".repeat(255), "f", request), 1)
        assert.strictEqual(yield* Idempotency.idempotent(live, "K".repeat(255), "f", request), 2)
        assert.strictEqual(ran, 2)
      }).pipe(Effect.provide(testLayer()))
  )
})

describe("idempotency records", () => {
  it.effect("a key whose first use is still running is never forgotten, however far the clock moves", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const gate = yield* Deferred.make<void>()
      const tookEffect = yield* Deferred.make<void>()
      // a first use whose effect committed, still running
      const first = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "long",
          "f",
          Effect.gen(function* () {
            const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
            yield* Deferred.succeed(tookEffect, undefined)
            yield* Deferred.await(gate)
            return c
          })
        )
      )
      yield* Deferred.await(tookEffect)
      // the clock moves two days meanwhile: the row has no answer yet, so it is kept
      yield* TestClock.adjust(2 * Idempotency.retention_ms)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 0)
      // a retry of it from another process waits for its answer instead of running again
      const store = yield* Store
      const retry = yield* Effect.forkChild(
        Idempotency.idempotent(live, "long", "f", Conversions.createConversion(live, { gmd_amount: 500000n })).pipe(
          Effect.provideService(Store, Store.of({ ...store }))
        )
      )
      yield* Deferred.succeed(gate, undefined)
      const answer = yield* Fiber.join(first)
      assert.deepStrictEqual(yield* Fiber.join(retry), answer)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
      // kept a day from its answer
      yield* TestClock.adjust(Idempotency.retention_ms - 1)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 0)
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 1)
    }).pipe(Effect.provide(MemoryNotifier.layer), Effect.provide(testLayer()))
  )

  it.effect("a key's row names the caller's objects and system rows it wrote, never another business's", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const other = yield* business()
      const row = (id: string, business_id: string | null) => ({
        kind: "invoice" as const,
        id,
        business_id,
        mode: business_id === null ? null : ("live" as const),
        created_at: 0,
        version: 1,
        due_at: null,
        keys: [],
        data: {}
      })
      // a request that writes one of its own rows, a system row and another business's (as the due payouts
      // a transfer's request sends may be)
      yield* Idempotency.idempotent(
        live,
        "scope-key",
        "f",
        Effect.flatMap(Store, (store) =>
          store.transact((tx) =>
            Effect.all([
              tx.insert(row("mine", live.business_id)),
              tx.insert(row("system", null)),
              tx.insert(row("theirs", other.live.business_id))
            ])
          )
        ).pipe(Effect.orDie)
      )
      const store = yield* Store
      const key = yield* store.transact((tx) => tx.get("idempotency", `${live.business_id}:live:scope-key`))
      assert.deepStrictEqual((key?.data as { touched?: ReadonlyArray<string> } | undefined)?.touched, [
        "invoice mine",
        "invoice system"
      ])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a key is kept 24 hours, then the scheduler forgets it: used again, it is a new request", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const create = (gmd_amount: bigint) =>
        Idempotency.idempotent(
          live,
          "day-key",
          `offramp ${gmd_amount}`,
          Conversions.createConversion(live, { gmd_amount })
        )
      const first = yield* create(500000n)
      // a day less a millisecond: kept (another body is a conflict, the same one replays)
      yield* TestClock.adjust(Idempotency.retention_ms - 1)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 0)
      assert.strictEqual(codeOf(yield* Effect.flip(create(600000n))), "idempotency_conflict")
      assert.deepStrictEqual(yield* create(500000n), first)
      // the day is over: the next pass deletes the key's row, and the key is free
      yield* TestClock.adjust(1)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 1)
      const fresh = yield* create(600000n)
      assert.notStrictEqual(fresh.id, first.id)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 2)
      // and it is kept again, a day from its new first use
      assert.deepStrictEqual(yield* create(600000n), fresh)
      assert.strictEqual((yield* Scheduler.runDue()).idempotency_keys_purged, 0)
    }).pipe(Effect.provide(MemoryNotifier.layer), Effect.provide(testLayer()))
  )

  it.effect("same key and request: the first result, one effect; different request: idempotency_conflict", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const create = Conversions.createConversion(live, { gmd_amount: 500000n })
      const first = yield* Idempotency.idempotent(live, "key-1", "POST /v1/minting/offramp {gmd_amount:5000}", create)
      const again = yield* Idempotency.idempotent(live, "key-1", "POST /v1/minting/offramp {gmd_amount:5000}", create)
      assert.deepStrictEqual(again, first)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
      const other = yield* Effect.flip(
        Idempotency.idempotent(
          live,
          "key-1",
          "POST /v1/minting/offramp {gmd_amount:6000}",
          Conversions.createConversion(live, { gmd_amount: 600000n })
        )
      )
      assert.strictEqual(codeOf(other), "idempotency_conflict")
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
      // a key is scoped to its business and mode
      const b = yield* business()
      yield* Idempotency.idempotent(
        b.live,
        "key-1",
        "anything",
        Conversions.createConversion(b.live, { gmd_amount: 500000n })
      )
      assert.strictEqual((yield* Conversions.listConversions(b.live, { limit: 10, offset: 0 })).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a refused request is replayed with the same error; the record commits with the effect", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const bad = Conversions.createConversion(live, { gmd_amount: 100n })
      const e1 = yield* Effect.flip(Idempotency.idempotent(live, "k", "f", bad))
      const e2 = yield* Effect.flip(
        Idempotency.idempotent(live, "k", "f", Conversions.createConversion(live, { gmd_amount: 500000n }))
      )
      assert.strictEqual(codeOf(e1), "validation_error")
      assert.strictEqual(codeOf(e2), "validation_error")
      assert.strictEqual(e1.message, e2.message)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 0)
      // the record was written in the same unit of work as the conversion: after the create,
      // the row exists and counts one committed unit
      const c = yield* Idempotency.idempotent(
        live,
        "k2",
        "f",
        Conversions.createConversion(live, { gmd_amount: 500000n })
      )
      const store = yield* Store
      const row = yield* store.transact((tx) => tx.get("idempotency", `${live.business_id}:live:k2`))
      assert.isDefined(row)
      assert.strictEqual((row!.data as { units: number }).units, 1)
      assert.strictEqual((row!.data as { status: string }).status, "completed")
      yield* Transfers.applyChainTransfer({
        network: "TRC20",
        coin: "USDT",
        to_address: c.pay_address,
        amount: 73_640_000n,
        tx_hash: "0x1",
        log_index: 0
      })
      assert.strictEqual((yield* Balance.getBalance(live)).available, 5000)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a key left in progress (interrupted request) is refused, never re-applied", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      // the request's effect commits, then it is interrupted before its outcome is recorded
      yield* createCutOff(live)
      const retry = yield* Effect.flip(
        Idempotency.idempotent(live, "k", "f", Conversions.createConversion(live, { gmd_amount: 500000n }))
      )
      assert.strictEqual(codeOf(retry), "idempotency_conflict")
      const listed = yield* Conversions.listConversions(live, { limit: 10, offset: 0 })
      assert.strictEqual(listed.meta.total, 1)
      // the refusal names the object the lost request wrote (committed with it), so the caller can read it
      assert.include(retry.message, `it took effect on conversion ${listed.data[0]?.id}`)
      assert.notInclude(retry.message, "outbox")
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("idempotency after a crash before any effect", () => {
  it.effect(
    "a request cut off after a unit that only read leaves the key free: the retry runs and takes effect once",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        // a helper's shape: a read-only unit (finding an owner), then the effect; cut off between the two
        const readThenCut = Effect.andThen(
          Effect.flatMap(Store, (store) =>
            unitOfWorkIn(store, (tx) => tx.list("conversion", live, { limit: 1, offset: 0 }))
          ),
          Effect.interrupt
        )
        yield* Effect.exit(Idempotency.idempotent(live, "k", "f", readThenCut))
        const retried = yield* Idempotency.idempotent(
          live,
          "k",
          "f",
          Conversions.createConversion(live, { gmd_amount: 500000n })
        )
        assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
        // and from then on the key replays that one outcome
        const replayed = yield* Idempotency.idempotent(
          live,
          "k",
          "f",
          Conversions.createConversion(live, { gmd_amount: 500000n })
        )
        assert.strictEqual(replayed.id, retried.id)
        assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
      }).pipe(Effect.provide(testLayer()))
  )
})

describe("idempotency after a crash before any effect (a refused write)", () => {
  it.effect(
    "a request cut off after a unit whose only write was refused (a transfer seen before) leaves the key free",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
        const transfer = {
          network: "TRC20" as const,
          coin: "USDT" as const,
          to_address: c.pay_address,
          amount: 10_000_000n,
          tx_hash: "0xfeed",
          log_index: 0
        }
        // a DuplicateKey would be a defect here (only the identity insert may be refused, and that is caught)
        const apply = () => Transfers.applyChainTransfer(transfer).pipe(Effect.catchTag("DuplicateKey", Effect.die))
        assert.isTrue((yield* apply()).applied)
        // reported again under a key: its identity insert is refused, nothing is written; then it is cut off
        const again = Effect.andThen(
          Effect.tap(apply(), (o) => Effect.sync(() => assert.isFalse(o.applied))),
          Effect.interrupt
        )
        yield* Effect.exit(Idempotency.idempotent(live, "k", "f", again))
        // the key was left free: the retry runs (it would be idempotency_conflict, "cut off after it took effect")
        const retried = yield* Idempotency.idempotent(live, "k", "f", apply())
        assert.isFalse(retried.applied)
        assert.strictEqual((yield* Conversions.getConversion(live, c.id)).actually_paid, 10)
      }).pipe(Effect.provide(testLayer()))
  )
})

describe("idempotency after a lost answer", () => {
  it.effect("with recover, a retry is answered from the object the interrupted request wrote, never a second one", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const create = Conversions.createConversion(live, { gmd_amount: 500000n })
      yield* Effect.exit(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.flatMap(create, () => Effect.interrupt)
        )
      )
      const seen: Array<ReadonlyArray<{ kind: string; id: string }>> = []
      const recovered = yield* Idempotency.idempotent(live, "k", "f", create, (touched) => {
        seen.push(touched)
        const made = touched.find((t) => t.kind === "conversion")
        return made === undefined ? Effect.succeed(undefined) : Conversions.getConversion(live, made.id)
      })
      const listed = yield* Conversions.listConversions(live, { limit: 10, offset: 0 })
      assert.strictEqual(listed.meta.total, 1)
      assert.strictEqual(recovered.id, listed.data[0]?.id)
      assert.deepStrictEqual(seen, [[{ kind: "conversion", id: recovered.id }]])
      // a different request under the key is still a conflict
      const other = yield* Effect.flip(
        Idempotency.idempotent(live, "k", "another", create, () => Effect.succeed(undefined))
      )
      assert.strictEqual(codeOf(other), "idempotency_conflict")
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("idempotency under concurrency", () => {
  it.effect(
    "another use's claim on the key is never a DuplicateKey to the request (which may take it as its own)",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        // the shape of the sandbox helpers: a DuplicateKey inside the request is the request's own, else a bug
        const slowCreate = Effect.andThen(
          Effect.yieldNow,
          Conversions.createConversion(live, { gmd_amount: 500000n })
        ).pipe(
          Effect.catchIf(
            (e: unknown) => e instanceof DuplicateKey,
            (e) => Effect.die(e)
          )
        )
        const results = yield* Effect.all(
          Array.from({ length: 5 }, () => Effect.exit(Idempotency.idempotent(live, "k", "f", slowCreate))),
          { concurrency: 5 }
        )
        for (const r of results) {
          if (r._tag === "Failure") assert.strictEqual(codeOf(Cause.squash(r.cause)), "idempotency_conflict")
        }
        assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("concurrent first uses of one key: exactly one effect", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      // the yield lets every concurrent request pass its first lookup before any of them commits
      const slowCreate = Effect.andThen(Effect.yieldNow, Conversions.createConversion(live, { gmd_amount: 500000n }))
      const attempt = Idempotency.idempotent(live, "k", "f", slowCreate)
      const results = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.exit(attempt)),
        { concurrency: 5 }
      )
      const listed = yield* Conversions.listConversions(live, { limit: 10, offset: 0 })
      assert.strictEqual(listed.meta.total, 1)
      // in one process the later uses wait for the first and replay its answer: none is told "in progress"
      for (const r of results) {
        assert.strictEqual(r._tag, "Success")
        if (r._tag === "Success") assert.deepStrictEqual(r.value, listed.data[0])
      }
      // once settled, a retry replays the recorded result
      const replayed = yield* attempt
      assert.strictEqual(replayed.id, listed.data[0]?.id)
    }).pipe(Effect.provide(testLayer()))
  )
})

/**
 * Uses of one key in two processes on one store: each process has its own
 * view of the store (another object, so its own queue of running keys). A
 * later use waits for the first one's answer and replays it, instead of
 * `409` "in progress" (decisions §7: the same key with the same body replays
 * the first response).
 */
describe("idempotency across processes on one store", () => {
  /** Real time: the wait for another process is in real time, whatever the test clock says. */
  const realSleep = (ms: number) => Effect.promise(() => new Promise<void>((r) => setTimeout(r, ms)))
  /** Another process's view of the same store. */
  const otherProcess = Effect.map(Store, (store) => Store.of({ transact: store.transact, ledger: store.ledger }))
  const rowOf = (caller: { business_id: string }, key: string, mode = "live") =>
    Effect.flatMap(Store, (store) =>
      store.transact((tx) => tx.get("idempotency", `${caller.business_id}:${mode}:${key}`))
    )

  /**
   * An invoice; a `recover` answering from it (as the HTTP routes' do); and a
   * first use of key "k" in another process that reminds it and is held before
   * its answer is recorded, until `release` (its row is there on return).
   */
  const remindHeldElsewhere = Effect.gen(function* () {
    const { live } = yield* business()
    const other = yield* otherProcess
    const inv = yield* Invoices.createInvoice(live, { amount: 50000n, customer: "cus_1" })
    const recover = invoiceRecover(live)
    const gate = yield* Deferred.make<void>()
    const first = yield* Effect.forkChild(
      Idempotency.idempotent(
        live,
        "k",
        "f",
        Effect.tap(Invoices.remindInvoice(live, inv.id), () => Deferred.await(gate)),
        recover
      ).pipe(Effect.provideService(Store, other))
    )
    while ((yield* rowOf(live, "k")) === undefined) yield* realSleep(5)
    const remind = (wait_ms?: number) =>
      Effect.map(
        Idempotency.idempotent(live, "k", "f", Invoices.remindInvoice(live, inv.id), recover, wait_ms),
        (answer) => (answer as { reminder_count: number }).reminder_count
      )
    return {
      live,
      inv,
      recover,
      remind,
      release: Deferred.succeed(gate, undefined),
      first: Effect.map(Fiber.join(first), (answer) => (answer as { reminder_count: number }).reminder_count)
    }
  })

  it.effect("a use that finds the key's row still running waits for the first's answer and replays it", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const other = yield* otherProcess
      const gate = yield* Deferred.make<void>()
      // the first use commits its conversion (and the key's row), then waits before its answer is recorded
      const first = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.tap(Conversions.createConversion(live, { gmd_amount: 500000n }), () => Deferred.await(gate))
        )
      )
      while ((yield* rowOf(live, "k")) === undefined) yield* realSleep(5)
      // no recover given: only the recorded answer can answer the second use
      const second = yield* Effect.forkChild(
        Idempotency.idempotent(live, "k", "f", Conversions.createConversion(live, { gmd_amount: 500000n })).pipe(
          Effect.provideService(Store, other)
        )
      )
      yield* realSleep(100)
      assert.isUndefined(second.pollUnsafe()) // still waiting
      yield* Deferred.succeed(gate, undefined)
      const a = yield* Fiber.join(first)
      const b = yield* Fiber.join(second)
      assert.deepStrictEqual(b, a)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "a retry while the first use still runs elsewhere waits for its answer; it recovers only after the wait",
    () =>
      Effect.gen(function* () {
        const held = yield* remindHeldElsewhere
        yield* Invoices.remindInvoice(held.live, held.inv.id) // another client reminds, with no key
        // a retry of the first: a review saw it answer at once from the invoice as it now is (2 reminders)
        const retry = yield* Effect.forkChild(held.remind())
        yield* realSleep(100)
        assert.isUndefined(retry.pollUnsafe())
        yield* held.release
        assert.deepStrictEqual([yield* held.first, yield* Fiber.join(retry), yield* held.remind()], [1, 1, 1])
        assert.strictEqual((yield* Invoices.getInvoice(held.live, held.inv.id)).reminder_count, 2)
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a first use that ends after a retry recovered its answer answers that one: one answer per key", () =>
    Effect.gen(function* () {
      const held = yield* remindHeldElsewhere
      yield* Invoices.remindInvoice(held.live, held.inv.id) // another client, no key
      // the first use runs past the retry's wait: the retry is answered from the invoice as it is (2)
      assert.strictEqual(yield* held.remind(50), 2)
      yield* held.release
      assert.deepStrictEqual([yield* held.first, yield* held.remind()], [2, 2])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a use past its deadline that meets the key just taken waits a whole wait before recovering", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const other = yield* otherProcess
      const inv = yield* Invoices.createInvoice(live, { amount: 50000n, customer: "cus_1" })
      const recover = invoiceRecover(live)
      const count = (answer: unknown) => (answer as { reminder_count: number }).reminder_count
      const start = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      // this process's use found no row, and reaches its first write only after its own wait (400 ms) is over
      const late = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.andThen(Effect.andThen(Deferred.await(start), realSleep(450)), Invoices.remindInvoice(live, inv.id)),
          recover,
          400
        )
      )
      // the other process's use takes the key, reminds, waits at the gate, reminds again: its answer is 2
      const early = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.andThen(
            Effect.andThen(Invoices.remindInvoice(live, inv.id), Deferred.await(gate)),
            Invoices.remindInvoice(live, inv.id)
          ),
          recover
        ).pipe(Effect.provideService(Store, other))
      )
      while ((yield* rowOf(live, "k")) === undefined) yield* realSleep(5)
      yield* Deferred.succeed(start, undefined)
      yield* realSleep(500) // the late use met the key taken, past its deadline: a review saw it recover at once (1)
      assert.isUndefined(late.pollUnsafe())
      yield* Deferred.succeed(gate, undefined)
      assert.deepStrictEqual([count(yield* Fiber.join(early)), count(yield* Fiber.join(late))], [2, 2])
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).reminder_count, 2)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a key cut off after its effect is answered from it after the wait, and that answer is kept", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, { amount: 50000n, customer: "cus_1" })
      const recover = invoiceRecover(live)
      const cut = Effect.flatMap(Invoices.remindInvoice(live, inv.id), () => Effect.interrupt)
      yield* Effect.exit(Idempotency.idempotent(live, "k", "f", cut, recover))
      const retry = Idempotency.idempotent(live, "k", "f", Invoices.remindInvoice(live, inv.id), recover, 50)
      const first = (yield* retry) as { reminder_count: number }
      assert.strictEqual(first.reminder_count, 1)
      yield* Invoices.remindInvoice(live, inv.id) // a change after the recovered answer
      assert.deepStrictEqual(yield* retry, first)
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).reminder_count, 2)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("uses queued behind a key cut off after its effect give up together (the wait counts from arrival)", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      yield* createCutOff(live)
      const settled: Array<number> = []
      const retry = Idempotency.idempotent(
        live,
        "k",
        "f",
        Conversions.createConversion(live, { gmd_amount: 500000n })
      ).pipe(
        Effect.flip,
        Effect.tap(() => Effect.sync(() => settled.push(performance.now())))
      )
      const errors = yield* Effect.all([retry, retry, retry], { concurrency: 3 })
      assert.deepStrictEqual(errors.map(codeOf), [
        "idempotency_conflict",
        "idempotency_conflict",
        "idempotency_conflict"
      ])
      // before, each waited its own in_flight_wait_ms after the one ahead of it: 3, 6 and 9 s
      const spread = Math.max(...settled) - Math.min(...settled)
      assert.isBelow(spread, Idempotency.in_flight_wait_ms / 2)
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a sandbox business creation whose first write finds the key taken waits and replays its answer", () =>
    Effect.gen(function* () {
      const other = yield* otherProcess
      const scope = { business_id: "address:127.0.0.1", account_id: "address:127.0.0.1", mode: "test" as const }
      const start = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      // this process's use found no row for the key; it creates once `start` opens
      const late = yield* Effect.forkChild(
        Idempotency.idempotent(
          scope,
          "k",
          "f",
          Effect.andThen(Deferred.await(start), Businesses.createBusiness({ name: "Kairaba Coffee" }))
        )
      )
      const early = yield* Effect.forkChild(
        Idempotency.idempotent(
          scope,
          "k",
          "f",
          Effect.tap(Businesses.createBusiness({ name: "Kairaba Coffee" }), () => Deferred.await(finish))
        ).pipe(Effect.provideService(Store, other))
      )
      while ((yield* rowOf(scope, "k", "test")) === undefined) yield* realSleep(5)
      // its first write finds the key taken (before: a defect inside the creation, a 500)
      yield* Deferred.succeed(start, undefined)
      yield* realSleep(100)
      assert.isUndefined(late.pollUnsafe())
      yield* Deferred.succeed(finish, undefined)
      const b = yield* Fiber.join(early)
      const a = yield* Fiber.join(late)
      assert.deepStrictEqual(a, b)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a use whose first write finds the key taken by another process rolls back and replays its answer", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const other = yield* otherProcess
      const start = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      // this use has read the key's row (none yet) and runs its request once `start` opens
      const late = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.andThen(Deferred.await(start), Conversions.createConversion(live, { gmd_amount: 500000n }))
        )
      )
      // meanwhile the other process takes the key: its conversion and row commit, its answer waits for `finish`
      const early = yield* Effect.forkChild(
        Idempotency.idempotent(
          live,
          "k",
          "f",
          Effect.tap(Conversions.createConversion(live, { gmd_amount: 500000n }), () => Deferred.await(finish))
        ).pipe(Effect.provideService(Store, other))
      )
      while ((yield* rowOf(live, "k")) === undefined) yield* realSleep(5)
      yield* Deferred.succeed(start, undefined)
      yield* realSleep(100)
      assert.isUndefined(late.pollUnsafe()) // its write was refused; it waits for the other's answer
      yield* Deferred.succeed(finish, undefined)
      const b = yield* Fiber.join(early)
      const a = yield* Fiber.join(late)
      assert.deepStrictEqual(a, b)
      // one effect: the late use's conversion was rolled back with its unit
      assert.strictEqual((yield* Conversions.listConversions(live, { limit: 10, offset: 0 })).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )
})
