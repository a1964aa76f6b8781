import { assert, describe, it } from "@effect/vitest"
import { Decimal, Resources } from "@xaalis/core"
import { IdsAdapter, MemoryStore, Sandbox, Store } from "@xaalis/engine"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import * as PaymentLinks from "../src/usecases/PaymentLinks.ts"
import { business, codeOf, testLayer } from "./setup.ts"

/** The catalogue code of the failure of `effect` (fails the test if it succeeds). */
const failCode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), codeOf)

const isPaymentLink = Schema.is(Schema.toType(Resources.PaymentLink) as Schema.Codec<unknown>)
const page = { limit: 10, offset: 0 }

describe("payment links", () => {
  it.effect("create: an active link with its hosted url, stored in the caller's scope", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const link = yield* PaymentLinks.createPaymentLink(live, {
        amount: 150050n,
        title: "Coffee beans 1kg",
        description: "Single origin",
        metadata: { sku: "BEANS-1" }
      })
      assert.isTrue(isPaymentLink(link))
      assert.deepStrictEqual(link, {
        id: link.id,
        url: `http://127.0.0.1:3000/pay/links/${link.id}`,
        amount: 1500.5,
        currency: "GMD",
        title: "Coffee beans 1kg",
        description: "Single origin",
        metadata: { sku: "BEANS-1" },
        status: "active",
        createdAt: "1970-01-01T00:00:00.000Z"
      })
      const doc = yield* Effect.flatMap(Store, (s) => s.transact((tx) => tx.get("payment_link", link.id)))
      assert.strictEqual(doc?.business_id, live.business_id)
      assert.strictEqual(doc?.mode, "live")
      assert.deepStrictEqual(yield* PaymentLinks.getPaymentLink(live, link.id), link)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("minimal link: USD, null title and description, empty metadata", () =>
    Effect.gen(function* () {
      const { test } = yield* business()
      const link = yield* PaymentLinks.createPaymentLink(test, { amount: 1999n, currency: "USD" })
      assert.isTrue(isPaymentLink(link))
      assert.strictEqual(link.amount, 19.99)
      assert.strictEqual(link.currency, "USD")
      assert.strictEqual(link.title, null)
      assert.strictEqual(link.description, null)
      assert.deepStrictEqual(link.metadata, {})
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("invalid input is validation_error and stores nothing", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      for (const input of [
        { amount: 0n },
        { amount: -1n },
        { amount: 100n, currency: "EUR" as never },
        { amount: 100n, title: "" },
        { amount: 100n, metadata: [] as never }
      ]) {
        assert.strictEqual(yield* failCode(PaymentLinks.createPaymentLink(live, input)), "validation_error")
      }
      assert.strictEqual((yield* PaymentLinks.listPaymentLinks(live, page)).meta.total, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("another business's or the other mode's link is not_found; lists are scoped", () =>
    Effect.gen(function* () {
      const a = yield* business()
      const b = yield* business()
      const link = yield* PaymentLinks.createPaymentLink(a.live, { amount: 500n })
      for (const other of [b.live, b.test, a.test]) {
        assert.strictEqual(yield* failCode(PaymentLinks.getPaymentLink(other, link.id)), "not_found")
        assert.strictEqual((yield* PaymentLinks.listPaymentLinks(other, page)).meta.total, 0)
      }
      assert.strictEqual(yield* failCode(PaymentLinks.getPaymentLink(a.live, "nope")), "not_found")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("list: newest first, with meta and paging", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      for (const amount of [100n, 200n, 300n]) {
        yield* PaymentLinks.createPaymentLink(live, { amount })
        yield* TestClock.adjust("1 second")
      }
      const all = yield* PaymentLinks.listPaymentLinks(live, page)
      assert.deepStrictEqual(all.meta, { total: 3, limit: 10, offset: 0 })
      assert.deepStrictEqual(
        all.data.map((l) => l.amount),
        [3, 2, 1]
      )
      const last = yield* PaymentLinks.listPaymentLinks(live, { limit: 2, offset: 2 })
      assert.deepStrictEqual(last.meta, { total: 3, limit: 2, offset: 2 })
      assert.deepStrictEqual(
        last.data.map((l) => l.amount),
        [1]
      )
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("list: objects created in the same millisecond come back newest first (the ids are time-ordered)", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      // the TestClock stands still: every link has the same created_at, so only the ids order them
      const amounts = Array.from({ length: 40 }, (_, i) => BigInt(i + 1) * 100n)
      for (const amount of amounts) yield* PaymentLinks.createPaymentLink(live, { amount })
      const all = yield* PaymentLinks.listPaymentLinks(live, { limit: 100, offset: 0 })
      assert.strictEqual(new Set(all.data.map((l) => l.createdAt)).size, 1)
      assert.deepStrictEqual(
        all.data.map((l) => l.amount),
        amounts.map((a) => Number(a) / 100).reverse()
      )
    }).pipe(
      // the process's own ids (the crypto adapter), not the tests' counter
      Effect.provide(
        Layer.mergeAll(
          MemoryStore.layer,
          Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer))
        )
      )
    )
  )
})
