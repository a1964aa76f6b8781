import { assert, describe, it } from "@effect/vitest"
import { Conversion, Decimal, Quote } from "@xaalis/core"
import {
  Balance,
  Conversions,
  type Doc,
  MemoryStore,
  Payouts,
  Present,
  Store,
  Timeline,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Clock, Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { it as vit } from "vitest"
import { business, gatedRail, testLayer, toWallet } from "./setup.ts"

/** Plain data, for a deep comparison that ignores how an array was built. */
const plain = (c: Conversion.Conversion) => {
  const { sealed: _, ...rest } = c as Timeline.StoredConversion
  return JSON.parse(JSON.stringify(rest, (_k, v) => (typeof v === "bigint" ? `${v}n` : v)))
}

const created = (): Conversion.Conversion => {
  const step = Conversion.create(
    {
      gmd_amount: 500000n,
      destination: "mobile_money",
      payout_method: { network: "wave", account_number: "7654321", account_name: "Awa Jallow" }
    },
    {
      id: "conv-1",
      reference: "MP-20261128-000000-00000000",
      pay_address: "TXYZ",
      now: 1_000_000,
      rate: Decimal.parse("70") as Decimal.Decimal,
      config: Quote.defaultConversionConfig
    }
  )
  if (step._tag === "Failure") throw new Error("the fixture conversion is valid")
  return step.success.state
}

/** The stored row of conversion `id` (its latest entries and `sealed`), as the store holds it. */
const rowOf = (id: string) =>
  Effect.flatMap(Store, (store) =>
    Effect.map(
      store.transact((tx) => tx.get("conversion", id)),
      (row) => (row as Doc<Timeline.StoredConversion>).data
    )
  )

/** A confirmed USDT transfer on TRC20. */
const usdt = (to_address: string, amount: bigint, tx_hash: string) => ({
  network: "TRC20" as const,
  coin: "USDT" as const,
  to_address,
  amount,
  tx_hash,
  log_index: 0
})

type Step =
  | { readonly type: "transfer"; readonly permille: number; readonly late: boolean }
  | { readonly type: "expire" }
  | { readonly type: "payout"; readonly ok: boolean }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant("transfer" as const),
      permille: fc.integer({ min: 1, max: 400 }),
      late: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.constant({ type: "expire" as const }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant("payout" as const), ok: fc.boolean() }) }
)

/** The machine's step for `s` at `t`, or undefined when the machine refuses it. */
const next = (s: Conversion.Conversion, command: Step, i: number, t: number) => {
  const result =
    command.type === "transfer"
      ? Conversion.applyTransfer(
          s,
          {
            network: s.network,
            coin: s.pay_currency,
            tx_hash: `0x${i.toString(16)}`,
            log_index: 0,
            amount: (s.pay_amount * 10_000n * BigInt(command.permille)) / 1_000n || 1n
          },
          command.late ? Math.max(t, s.invoice_expires_at) : t
        )
      : command.type === "expire"
        ? Conversion.expire(s, Math.max(t, s.invoice_expires_at))
        : Conversion.recordPayout(
            s,
            command.ok ? { gmd: 100n, outcome: "succeeded" } : { gmd: 100n, outcome: "failed", detail: "declined" },
            t
          )
  return result._tag === "Success" ? result.success : undefined
}

describe("a conversion's timeline kept in sealed rows", () => {
  vit("stored as its latest entries plus sealed rows, read back whole, it is the machine's whole state", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 6 }), async (steps, max) => {
        const problem = await Effect.runPromise(
          Effect.gen(function* () {
            const store = yield* Store
            // the model: the machine on its whole state; the row: the machine on what the row holds
            let model = created()
            const start = model
            yield* store.transact((tx) =>
              tx.insert({
                kind: "conversion",
                id: start.id,
                business_id: "biz",
                mode: "live",
                created_at: start.created_at,
                version: 1,
                due_at: null,
                keys: [],
                data: start
              })
            )
            let t = start.created_at
            for (const [i, command] of steps.entries()) {
              t += 30_000
              const expected = next(model, command, i, t)
              const refused = yield* store.transact((tx) =>
                Effect.gen(function* () {
                  const doc = (yield* tx.get("conversion", start.id)) as Doc<Conversion.Conversion>
                  const got = next(doc.data, command, i, t)
                  if (got === undefined) return true
                  // the same events (as webhooks present them: without the timeline) and effects
                  const sent = (e: Conversion.ConversionEvent) => [
                    e.type,
                    Present.conversion(e.conversion, { timeline: false })
                  ]
                  assert.deepStrictEqual(got.events.map(sent), expected?.events.map(sent))
                  assert.deepStrictEqual(got.effects, expected?.effects)
                  yield* Timeline.write(tx, doc, got.state, null, t, max)
                  return false
                })
              )
              assert.strictEqual(refused, expected === undefined, `step ${i} refused by one side only`)
              if (expected !== undefined) model = expected.state
              const row = yield* store.transact((tx) => tx.get("conversion", start.id))
              const head = row?.data as Timeline.StoredConversion
              assert.isAtMost(head.timeline.length, max, "the row keeps at most `max` entries")
              assert.isAtLeast(head.timeline.length, 1, "the row keeps the last entry")
            }
            const whole = yield* store.transact((tx) => Timeline.getWhole(tx, start.id))
            assert.deepStrictEqual(plain(whole?.data as Conversion.Conversion), plain(model))
            return undefined
          }).pipe(Effect.provide(MemoryStore.layer))
        )
        return problem === undefined
      }),
      { numRuns: 200 }
    )
  })

  it.effect(
    "thousands of entries: transfers rewrite a bounded row, a sealed transfer is still applied once, lookup shows every entry",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business("https://merchant.example/hooks")
        const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
        // 0.01 USD: 7,364 of them pay 73.64
        const transfer = (i: number) => usdt(c.pay_address, 10_000n, `0x${i.toString(16).padStart(4, "0")}`)
        const n = 300
        for (let i = 0; i < n; i++) assert.isTrue((yield* Transfers.applyChainTransfer(transfer(i))).applied)
        const store = yield* Store
        const row = (yield* store.transact((tx) => tx.get("conversion", c.id))) as Doc<Timeline.StoredConversion>
        assert.isAtMost(row.data.timeline.length, Timeline.open_timeline_max)
        assert.isAtMost(row.data.applied_transfers.length, Timeline.open_timeline_max)
        assert.isAbove(row.data.sealed ?? 0, 10)
        // the first transfer's record is in a sealed row: reported again, it changes nothing
        const before = yield* Balance.getBalance(live)
        assert.isFalse((yield* Transfers.applyChainTransfer(transfer(0))).applied)
        assert.deepStrictEqual(yield* Balance.getBalance(live), before)
        const read = yield* Conversions.getConversion(live, c.id)
        const events = read.events ?? []
        assert.strictEqual(read.actually_paid, 3)
        assert.deepStrictEqual(
          events.filter((e) => e.type === "transfer").map((e) => (e as { tx_hash: string }).tx_hash),
          Array.from({ length: n }, (_, i) => transfer(i).tx_hash)
        )
        assert.strictEqual(events[0]?.type, "created")
        // each transfer credits its share: "transfer", "credit", and the first one's status change
        assert.strictEqual(events.length, 1 + 2 * n + 1)
        const whole = yield* store.transact((tx) => Timeline.getWhole(tx, c.id))
        assert.strictEqual(new Set(whole?.data.applied_transfers).size, n)
        // the window closes: late funds after it are recorded once, on a row that stays bounded
        yield* TestClock.adjust("11 minutes")
        assert.isFalse((yield* Transfers.applyChainTransfer(transfer(n))).applied)
        assert.isFalse((yield* Transfers.applyChainTransfer(transfer(n))).applied)
        const after = yield* Conversions.getConversion(live, c.id)
        assert.strictEqual(after.status, "expired")
        assert.deepStrictEqual(
          (after.events ?? []).slice(events.length).map((e) => e.type),
          ["status", "expired", "late_funds"]
        )
        assert.deepStrictEqual(unbalanced(yield* store.ledger), [])
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("every writer keeps the row bounded: payouts recorded after each transfer, and the expiry sweep", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n, ...toWallet })
      const head = rowOf(c.id)
      const pay = (i: number) =>
        // 1 micro-dollar credits nothing: no credit, no payout
        Transfers.applyChainTransfer(usdt(c.pay_address, i % 3 === 0 ? 1n : 100_000n, `0x${(i + 1).toString(16)}`))
      // each transfer writes its entries, then its payout's outcome in a unit of its own
      for (let i = 0; i < 40; i++) {
        assert.isTrue((yield* pay(i)).applied)
        assert.isAtMost((yield* head).timeline.length, Timeline.open_timeline_max, `after transfer ${i}`)
      }
      const read = yield* Conversions.getConversion(live, c.id)
      assert.strictEqual(read.events?.filter((e) => e.type === "payout").length, 26)
      // another conversion's row one entry short of full: the sweep's two entries (status, expired) must seal
      const d = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const headOf = rowOf(d.id)
      for (let k = 0; (yield* headOf).timeline.length !== Timeline.open_timeline_max - 1; k++) {
        assert.isBelow(k, 100, "the row reaches 31 entries")
        yield* Transfers.applyChainTransfer(usdt(d.pay_address, 10_000n, `0xd${k.toString(16)}`))
      }
      yield* TestClock.adjust("11 minutes")
      assert.strictEqual(yield* Conversions.expireDueConversions(), 2)
      const swept = yield* headOf
      assert.isAtMost(swept.timeline.length, Timeline.open_timeline_max)
      assert.strictEqual(swept.timeline.at(-1)?.type, "expired")
      const after = yield* Conversions.getConversion(live, d.id)
      assert.deepStrictEqual(
        after.events?.slice(-2).map((e) => e.type),
        ["status", "expired"]
      )
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a payout whose send took a while is booked after the transfers applied meanwhile", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { rail, sends } = gatedRail(gate, { firstOnly: true }) // the first send takes its time
      yield* Effect.gen(function* () {
        const { live } = yield* business()
        const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n, ...toWallet })
        const paying = yield* Effect.forkChild(Transfers.applyChainTransfer(usdt(c.pay_address, 30_000_000n, "0x1")))
        while (sends() === 0) yield* Effect.yieldNow
        // a minute later, while the first payout is still being sent, another transfer is applied
        yield* TestClock.adjust("1 minute")
        yield* Transfers.applyChainTransfer(usdt(c.pay_address, 30_000_000n, "0x2"))
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(paying)
        const events = (yield* Conversions.getConversion(live, c.id)).events ?? []
        const at = events.map((e) => Date.parse(e.at))
        assert.deepStrictEqual(
          at.filter((x, i) => i > 0 && x < (at[i - 1] as number)),
          [],
          "timeline in time order"
        )
        assert.strictEqual(events.filter((e) => e.type === "payout").length, 2)
      }).pipe(Effect.provideService(Payouts, rail))
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "a transfer that arrived before the window closed counts, though its unit ran after (its entries stamped then)",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
        const inner = yield* Store
        // the conversion's read takes 5 ms (a wait for its lock, say)
        const slow = Store.of({
          ledger: inner.ledger,
          transact: (work) =>
            inner.transact((tx) =>
              work({
                ...tx,
                getByKey: (kind, key) =>
                  kind === "conversion"
                    ? Effect.andThen(TestClock.adjust(5), tx.getByKey(kind, key))
                    : tx.getByKey(kind, key)
              })
            )
        })
        // 2 ms before the window closes
        yield* TestClock.adjust(Date.parse(c.invoice_expires_at) - (yield* Clock.currentTimeMillis) - 2)
        const arrived = yield* Clock.currentTimeMillis
        const outcome = yield* Transfers.applyChainTransfer(usdt(c.pay_address, 30_000_000n, "0xedge")).pipe(
          Effect.provideService(Store, slow)
        )
        assert.isTrue(outcome.applied)
        const read = yield* Conversions.getConversion(live, c.id)
        assert.strictEqual(read.actually_paid, 30)
        const transfer = read.events?.find((e) => e.type === "transfer")
        assert.strictEqual(Date.parse(transfer?.at ?? ""), arrived + 5, "stamped when its unit ran")
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("late funds an older version recorded under another spelling are not recorded again once sealed", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const store = yield* Store
      const t = (tx_hash: string) => usdt(c.pay_address, 1_000_000n, tx_hash)
      // an older version's rows: late funds of `abcd` on an expired conversion's timeline, its identity row
      // under the merely lowercased key, and enough entries after it that the next step seals it away
      yield* store.transact((tx) =>
        Effect.gen(function* () {
          const doc = (yield* tx.get("conversion", c.id)) as Doc<Conversion.Conversion>
          const at = doc.data.created_at
          const timeline: Array<Conversion.TimelineEntry> = [
            ...doc.data.timeline,
            { type: "status", at, from: "pending", to: "expired" },
            { type: "expired", at },
            { type: "late_funds", at, tx_hash: "abcd", log_index: 0, amount: 1_000_000n },
            ...Array.from({ length: 30 }, (_, i) => ({
              type: "payout" as const,
              at,
              gmd: 1n,
              outcome: "failed" as const,
              detail: `old ${i}`
            }))
          ]
          // (an older version's row: without the mark of a conversion created by this one)
          const { canonical_keys: _, ...older } = doc.data as Timeline.StoredConversion
          const data = { ...older, status: "expired" as const, invoice_expires_at: at - 1, timeline }
          yield* tx.update({ ...doc, version: doc.version + 1, due_at: null, data })
          yield* tx.insert({
            kind: "transfer",
            id: "TRC20:abcd:0",
            business_id: null,
            mode: null,
            created_at: at,
            version: 1,
            due_at: null,
            keys: [],
            data: { ...t("abcd"), matched: { object: "conversion", id: c.id } }
          })
        })
      )
      assert.isFalse((yield* Transfers.applyChainTransfer(t("0x1111"))).applied) // late too: seals the old entries
      assert.strictEqual((yield* rowOf(c.id)).sealed, 1)
      assert.isFalse((yield* Transfers.applyChainTransfer(t("0xabcd"))).applied)
      const read = yield* Conversions.getConversion(live, c.id)
      const late = (read.events ?? [])
        .filter((e) => e.type === "late_funds")
        .map((e) => (e as { tx_hash: string }).tx_hash)
      assert.deepStrictEqual(late, ["abcd", "0x1111"])
      const kept = yield* store.transact((tx) => tx.list("late_funds", live, { limit: 10, offset: 0 }))
      assert.strictEqual(kept.total, 1, "one late-funds record: the new transfer's")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a row stored whole by an earlier version is sealed at its next step and reads the same", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const store = yield* Store
      // an earlier version's row: 100 entries kept in the row itself, no `sealed`
      const padded = yield* store.transact((tx) =>
        Effect.gen(function* () {
          const doc = (yield* tx.get("conversion", c.id)) as Doc<Conversion.Conversion>
          const timeline = [
            ...doc.data.timeline,
            ...Array.from({ length: 99 }, (_, i) => ({
              type: "payout" as const,
              at: doc.data.created_at + i,
              gmd: 1n,
              outcome: "failed" as const,
              detail: `old ${i}`
            }))
          ]
          yield* tx.update({ ...doc, version: doc.version + 1, data: { ...doc.data, timeline } })
          return timeline.length
        })
      )
      assert.strictEqual(padded, 100)
      const before = yield* Conversions.getConversion(live, c.id)
      assert.strictEqual(before.events?.length, 100)
      yield* Transfers.applyChainTransfer(usdt(c.pay_address, 73_640_000n, "0xpaid"))
      const row = yield* rowOf(c.id)
      assert.strictEqual(row.sealed, 1)
      assert.strictEqual(row.timeline.length, 1)
      const after = yield* Conversions.getConversion(live, c.id)
      assert.deepStrictEqual(after.events?.slice(0, 100), before.events)
      assert.deepStrictEqual(
        after.events?.slice(100).map((e) => e.type),
        ["transfer", "credit", "status"]
      )
      assert.strictEqual(after.status, "paid")
    }).pipe(Effect.provide(testLayer()))
  )
})
