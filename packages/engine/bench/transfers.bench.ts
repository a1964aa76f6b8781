/**
 * `npm run bench` (engine part): confirmed chain transfers applied through the
 * engine with in-memory adapters, side by side in one run with a hand-written
 * baseline doing the same state update on a Map without the engine (same core
 * rule, same ledger lines and outbox body, no unit of work, no copies, no ports).
 * Target: the engine at >= 25% of the baseline's rate.
 *
 * Method. Both sides apply the same N transfers to N fresh conversions per
 * round, in the same process. `BENCH_WARMUP` untimed rounds of each come first
 * (the JIT sees both sides before anything is timed); then `BENCH_ROUNDS` timed
 * rounds alternate the two sides, the side that goes first switching every
 * round, so drift in the machine's speed (other processes, CPU frequency, heap
 * growth) reaches both. Setup (creating the N conversions) is never timed, and
 * each side's work is checked after its timed section. Each round gives a ratio
 * engine/baseline; the verdict is on the median of the per-round ratios, and
 * the worst round is printed too.
 *
 * Garbage collection: before each timed section, two minor collections (not
 * timed) empty the young generation, so a side never pays for garbage its setup
 * or the other side left there, nor for copying its setup's objects; a
 * collection its own allocation triggers while timed is on its time. At the
 * default N a timed section seldom fills the young generation, on either side,
 * so the default compares the code of the two sides; with
 * `BENCH_TRANSFERS=20000` each side triggers and pays its own collections
 * (young and old generation) as in a long run. A full collection before each
 * section was tried and dropped: it leaves sweeping running into the timed
 * section and invalidates optimized code that referenced objects of the
 * previous round, which made the engine's next few thousand transfers a third
 * slower than in a long-running process.
 */

import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { Conversion, Decimal, Quote } from "@xaalis/core"
import { Businesses, Conversions, IdsAdapter, MemoryStore, Present, Sandbox, Store, Transfers } from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"

const N = Number(process.env.BENCH_TRANSFERS ?? 2000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 6)
const rate = Decimal.parse("70") as Decimal.Decimal
const amount = 10_000_000n // 10.00 USD, a partial payment of 73.64

/** V8's `gc`, from the command line's `--expose-gc` or enabled here (same flag, set at run time). */
const gc = (() => {
  type Gc = (options: { readonly type: "minor" }) => void
  if (typeof globalThis.gc === "function") return globalThis.gc as unknown as Gc
  setFlagsFromString("--expose-gc")
  return runInNewContext("gc") as Gc
})()

/** Times `run`: transfers per second, on the wall clock, from an empty young generation. */
const timed = async (run: () => void | Promise<void>): Promise<number> => {
  gc({ type: "minor" })
  gc({ type: "minor" }) // promotes what survived the first: the setup's objects are not copied on this section's time
  const start = performance.now()
  await run()
  return N / ((performance.now() - start) / 1000)
}

/** One engine round: N conversions created (untimed), then N transfers to them applied (timed). */
const engineRound = async (): Promise<number> => {
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
  let outcomes: ReadonlyArray<Transfers.TransferOutcome> = []
  const perSecond = await timed(async () => {
    outcomes = await runtime.runPromise(
      Effect.forEach(addresses, (to_address, i) =>
        Transfers.applyChainTransfer({
          network: "TRC20",
          coin: "USDT",
          to_address,
          amount,
          tx_hash: `0x${i.toString(16)}`,
          log_index: 0
        })
      )
    )
  })
  const applied = outcomes.filter((o) => o.applied).length
  const lines = await runtime.runPromise(
    Effect.gen(function* () {
      return yield* (yield* Store).ledger
    })
  )
  if (applied !== N || lines.length !== 2 * N) throw new Error("engine round incomplete")
  await runtime.dispose()
  return perSecond
}

/** One baseline round: the same N conversions on a Map (untimed), then the same N transfers (timed). */
const baselineRound = async (): Promise<number> => {
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
  const perSecond = await timed(() => {
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
          ledger.push(
            { account: "conversion_clearing", amount: e.gmd },
            { account: "business_balance", amount: -e.gmd }
          )
      }
      for (const e of step.success.events) {
        const body = JSON.stringify({ event: e.type, payload: Present.conversion(e.conversion, { timeline: false }) })
        outbox.push(body, body)
      }
    }
  })
  if (applied.size !== N || ledger.length !== 2 * N || outbox.length !== 2 * N) throw new Error("baseline incomplete")
  return perSecond
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

for (let w = 0; w < WARMUP; w++) {
  await engineRound()
  await baselineRound()
}
const rounds: Array<{ readonly engine: number; readonly baseline: number }> = []
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    const engine = await engineRound()
    rounds.push({ engine, baseline: await baselineRound() })
  } else {
    const baseline = await baselineRound()
    rounds.push({ engine: await engineRound(), baseline })
  }
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`
const side = (name: string, rates: ReadonlyArray<number>) => ({
  side: name,
  "median transfers/s": Math.round(median(rates)),
  "min transfers/s": Math.round(Math.min(...rates)),
  "max transfers/s": Math.round(Math.max(...rates))
})
const ratios = rounds.map((r) => r.engine / r.baseline)
const ratio = median(ratios)
console.log(
  `@xaalis/engine chain transfers: ${N} transfers to ${N} conversions per round, ${WARMUP} warm-up + ${ROUNDS} timed rounds alternating engine and baseline, Node ${process.version}`
)
console.table([
  side(
    "engine (memory store, sandbox, ledger, outbox)",
    rounds.map((r) => r.engine)
  ),
  side(
    "baseline (Map + same core rule)",
    rounds.map((r) => r.baseline)
  )
])
console.log(`per-round engine/baseline: ${ratios.map(pct).join(" ")}`)
console.log(
  `engine/baseline: median ${pct(ratio)}, worst round ${pct(Math.min(...ratios))}, best round ${pct(Math.max(...ratios))} (target: median >= 25%): ${ratio >= 0.25 ? "MET" : "MISSED"}`
)
if (ratio < 0.25) process.exitCode = 1
