import { assert, describe, it } from "@effect/vitest"
import { Balance, PaymentRequests, Store, Transfers, unbalanced } from "@xaalis/engine"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { business, codeOf, testLayer } from "./setup.ts"

describe("stablecoin payment requests through the engine", () => {
  it.effect(
    "payments accumulate, charge.succeeded carries the running total and history, the fee is taken at completion",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const pr = yield* PaymentRequests.createPaymentRequest(live, {
          amount: 1000n,
          metadata: { order: "A-1", usd_amount: "caller's" },
          callback_url: "https://merchant.example/cb"
        })
        assert.strictEqual(pr.status, "pending")
        assert.strictEqual(pr.amount, 0)
        // decisions §4: the caller's keys plus the service's, a caller key of the same name overwritten
        assert.deepStrictEqual(pr.metadata as unknown, {
          order: "A-1",
          quote_id: pr.id,
          usd_amount: 10,
          gmd_rate: 70,
          fee: 0.1,
          fee_currency: "USD",
          fee_bearer: "business",
          payment_history: []
        })
        const store = yield* Store
        const addr = yield* store.transact((tx) => tx.get("payment_request", pr.id))
        assert.isDefined(addr)
        const trc = (addr!.data as { addresses: Array<{ network: string; coin: string; address: string }> })
          .addresses[0]!
        const pay = (amount: bigint, tx_hash: string) =>
          Transfers.applyChainTransfer({
            network: "TRC20",
            coin: "USDT",
            to_address: trc.address,
            amount,
            tx_hash,
            log_index: 0
          })
        assert.isTrue((yield* pay(4_000_000n, "0x1")).applied)
        assert.strictEqual((yield* PaymentRequests.getPaymentRequest(live, pr.id)).status, "partially_paid")
        yield* pay(6_000_000n, "0x2")
        const done = yield* PaymentRequests.getPaymentRequest(live, pr.id)
        assert.strictEqual(done.status, "completed")
        assert.strictEqual(done.amount, 10)
        const rows = yield* store.transact((tx) => tx.list("outbox", live, { limit: 10, offset: 0 }))
        const completed = rows.docs.find((d) => (d.data as { body: string }).body.includes('"completed"'))
        assert.isDefined(completed)
        const last = JSON.parse((completed!.data as { body: string }).body)
        assert.strictEqual(last.event, "charge.succeeded")
        assert.strictEqual(last.payload.amount, 10)
        assert.strictEqual(last.payload.metadata.payment_history.length, 2)
        assert.deepStrictEqual(last.payload.metadata.payment_history[1].amount_paid_gmd, 420)
        // the object's metadata is the one its events carry
        assert.deepStrictEqual(done.metadata as unknown, last.payload.metadata)
        // 10.00 received, 0.10 fee taken at completion
        assert.strictEqual((yield* Balance.getBalance(live)).balances[1]?.available, 9.9)
        assert.deepStrictEqual(unbalanced(yield* store.ledger), [])
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("expires_at passes: the request expires and later funds are not counted", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      assert.strictEqual(
        codeOf(yield* Effect.flip(PaymentRequests.createPaymentRequest(test, { amount: 1000n }))),
        "permission_denied"
      )
      const small = yield* Effect.flip(PaymentRequests.createPaymentRequest(live, { amount: 34000n, currency: "GMD" }))
      assert.include(small.message, "70")
      const pr = yield* PaymentRequests.createPaymentRequest(live, { amount: 1000n, expires_at: 60_000 })
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* PaymentRequests.expireDuePaymentRequests(), 1)
      assert.strictEqual((yield* PaymentRequests.getPaymentRequest(live, pr.id)).status, "expired")
    }).pipe(Effect.provide(testLayer()))
  )
})
