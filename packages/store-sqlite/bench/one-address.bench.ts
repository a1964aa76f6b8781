/**
 * Many transfers to one deposit address: does a transfer cost the same whether
 * it is the conversion's first or its thousandth? (A flood of dust to one
 * address is cheap on some chains.) The engine on the SQLite file store
 * (`synchronous=FULL`, the store's default) applies BLOCKS blocks of 500
 * transfers of 0.01 USD, one at a time, to one conversion, and prints each
 * block's rate. Target: the median rate of the last three blocks at >= 50%
 * of the median of the three after the first (which warms the JIT up):
 * medians, because one block can lose half its rate to an fsync stall on a
 * shared machine. Before a conversion's timeline was kept in sealed rows
 * (`Timeline` in @xaalis/engine), the rate fell with every block.
 *
 *     node --conditions=@xaalis/source packages/store-sqlite/bench/one-address.bench.ts
 */

import { join } from "node:path"
import { Businesses, Conversions, Transfers } from "@xaalis/engine"
import { Effect, ManagedRuntime } from "effect"
import { dir, engineLayer } from "./recorded.ts"

const BLOCK = 500
const BLOCKS = Math.max(7, Number(process.env.BENCH_BLOCKS ?? 10))

const runtime = ManagedRuntime.make(engineLayer(join(dir, "one-address.sqlite"), "FULL"))
const { address, live, id } = await runtime.runPromise(
  Effect.gen(function* () {
    const biz = yield* Businesses.createBusiness({ name: "bench", webhook_url: "https://merchant.example/hooks" })
    const live = yield* Businesses.authenticate(biz.secret_key_live)
    const c = yield* Conversions.createConversion(live, { gmd_amount: 50_000_000n }) // 500,000 GMD: never paid up
    return { address: c.pay_address, live, id: c.id }
  })
)

const rates: Array<number> = []
for (let b = 0; b < BLOCKS; b++) {
  const start = performance.now()
  await runtime.runPromise(
    Effect.forEach(
      Array.from({ length: BLOCK }, (_, k) => b * BLOCK + k),
      (i) =>
        Transfers.applyChainTransfer({
          network: "TRC20",
          coin: "USDT",
          to_address: address,
          amount: 10_000n,
          tx_hash: `0x${(i + 1).toString(16)}`,
          log_index: 0
        }),
      { discard: true }
    )
  )
  rates.push(BLOCK / ((performance.now() - start) / 1000))
}
const lookupStart = performance.now()
const read = await runtime.runPromise(Conversions.getConversion(live, id))
const lookupMs = performance.now() - lookupStart
await runtime.dispose()

const total = BLOCK * BLOCKS
if (read.events?.filter((e) => e.type === "transfer").length !== total) {
  throw new Error(`the conversion shows ${read.events?.length} events, not every one of ${total} transfers`)
}
console.log(`@xaalis/store-sqlite: ${total} transfers to one conversion, ${BLOCK} per block, Node ${process.version}`)
console.table(rates.map((r, b) => ({ block: `${b * BLOCK}-${(b + 1) * BLOCK}`, "transfers/s": Math.round(r) })))
console.log(`lookup of the conversion with its ${read.events?.length} events: ${lookupMs.toFixed(1)} ms`)
const median3 = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[1] as number
const early = median3(rates.slice(1, 4))
const late = median3(rates.slice(-3))
const ratio = late / early
console.log(
  `one address, last 3 blocks/blocks 2-4 (medians ${Math.round(late)} vs ${Math.round(early)} transfers/s): ${(ratio * 100).toFixed(1)}% (target >= 50%): ${ratio >= 0.5 ? "MET" : "MISSED"}`
)
if (ratio < 0.5) process.exitCode = 1
