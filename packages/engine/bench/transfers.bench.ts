/**
 * `npm run bench` (engine part): confirmed chain transfers applied through the
 * engine with in-memory adapters, side by side in one run with a hand-written
 * baseline doing the same state update on a Map without the engine (same core
 * rule, same ledger lines and outbox body, no unit of work, no copies, no ports).
 * Target: the engine at >= 25% of the baseline's rate.
 */

import { Conversion, Decimal, Quote } from "@xaalis/core"
import { Businesses, Conversions, IdsAdapter, MemoryStore, Present, Sandbox, Transfers } from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"

const N = Number(process.env.BENCH_TRANSFERS ?? 2000)
const rate = Decimal.parse("70") as Decimal.Decimal
const amount = 10_000_000n // 10.00 USD, a partial payment of 73.64

const engineRun = async (): Promise<number> => {
  const layer = Layer.mergeAll(MemoryStore.layer, Sandbox.layer({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer)))
  const runtime = ManagedRuntime.make(layer)
  const addresses = await runtime.runPromise(
    Effect.gen(function* () {
      const biz = yield* Businesses.createBusiness({ name: "bench", webhook_url: "https://merchant.example/hooks" })
      const live = yield* Businesses.authenticate(biz.secret_key_live)
      return yield* Effect.forEach(Array.from({ length: N }), () =>
        Effect.map(Conversions.createConversion(live, { gmd_amount: 500000n }), (c) => c.pay_address)
      )
    })
  )
  const start = performance.now()
  await runtime.runPromise(
    Effect.forEach(
      addresses,
      (to_address, i) =>
        Transfers.applyChainTransfer({
          network: "TRC20",
          coin: "USDT",
          to_address,
          amount,
          tx_hash: `0x${i.toString(16)}`,
          log_index: 0
        }),
      { discard: true }
    )
  )
  const seconds = (performance.now() - start) / 1000
  await runtime.dispose()
  return N / seconds
}

const baselineRun = (): number => {
  const byAddress = new Map<string, Conversion.Conversion>()
  const applied = new Set<string>()
  const ledger: Array<{ account: string; amount: bigint }> = []
  const outbox: Array<string> = []
  for (let i = 0; i < N; i++) {
    const created = Conversion.create(
      { gmd_amount: 500000n },
      {
        id: `c${i}`,
        reference: `MP-20261121-000000-${i.toString(16).padStart(8, "0").toUpperCase()}`,
        pay_address: `addr${i}`,
        now: 0,
        rate,
        config: Quote.defaultConversionConfig
      }
    )
    if (created._tag === "Success") byAddress.set(`addr${i}`, created.success.state)
  }
  const start = performance.now()
  for (let i = 0; i < N; i++) {
    const key = `TRC20:0x${i.toString(16)}:0`
    if (applied.has(key)) continue
    const state = byAddress.get(`addr${i}`)
    if (state === undefined) continue
    const step = Conversion.applyTransfer(
      state,
      { network: "TRC20", coin: "USDT", tx_hash: `0x${i.toString(16)}`, log_index: 0, amount },
      1
    )
    if (step._tag === "Failure") continue
    applied.add(key)
    byAddress.set(`addr${i}`, step.success.state)
    for (const e of step.success.effects) {
      if (e.type === "credit")
        ledger.push({ account: "conversion_clearing", amount: e.gmd }, { account: "business_balance", amount: -e.gmd })
    }
    for (const e of step.success.events) {
      const body = JSON.stringify({ event: e.type, payload: Present.conversion(e.conversion, { timeline: false }) })
      outbox.push(body, body)
    }
  }
  return N / ((performance.now() - start) / 1000)
}

const best = async (f: () => number | Promise<number>, rounds = 3) => {
  let top = 0
  for (let r = 0; r < rounds; r++) top = Math.max(top, await f())
  return top
}

const engine = await best(engineRun)
const baseline = await best(baselineRun)
const ratio = engine / baseline
console.log(`@xaalis/engine chain transfers, ${N} transfers to ${N} conversions, best of 3, Node ${process.version}`)
console.table([
  { side: "engine (memory store, sandbox, ledger, outbox)", "transfers/s": Math.round(engine) },
  { side: "baseline (Map + same core rule)", "transfers/s": Math.round(baseline) }
])
console.log(`engine/baseline: ${(ratio * 100).toFixed(1)}% (target >= 25%): ${ratio >= 0.25 ? "MET" : "MISSED"}`)
if (ratio < 0.25) process.exitCode = 1
