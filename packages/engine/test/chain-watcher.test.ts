import { assert, describe, it } from "@effect/vitest"
import { Balance, Conversions, runChainWatcher, Sandbox } from "@xaalis/engine"
import { Effect } from "effect"
import { business, testLayer } from "./setup.ts"

describe("chain watcher", () => {
  it.effect("applies transfers from the Chain feed, each at most once, even when reported twice", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const control = yield* Sandbox.SandboxControl
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      yield* Effect.forkChild(runChainWatcher)
      const t = {
        network: "TRC20" as const,
        coin: "USDT" as const,
        to_address: c.pay_address,
        amount: 36_820_000n,
        log_index: 0
      }
      yield* control.pushTransfer({ ...t, tx_hash: "0x1" })
      yield* control.pushTransfer({ ...t, tx_hash: "0x1" }) // the same transfer reported again
      yield* control.pushTransfer({ ...t, tx_hash: "0x2" })
      yield* control.pushTransfer({ ...t, to_address: "nowhere", tx_hash: "0x3" })
      for (let i = 0; i < 10_000 && (yield* Conversions.getConversion(live, c.id)).status !== "paid"; i++)
        yield* Effect.yieldNow
      const read = yield* Conversions.getConversion(live, c.id)
      assert.strictEqual(read.status, "paid")
      assert.strictEqual(read.actually_paid, 73.64)
      assert.strictEqual((yield* Balance.getBalance(live)).available, 5000)
    }).pipe(Effect.provide(testLayer()))
  )
})
