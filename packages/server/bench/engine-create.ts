/**
 * The engine's create-conversion path alone, in one process, with the layers
 * the HTTP API builds (memory store, sandbox world, crypto ids, sandbox clock),
 * for profiling: `BENCH_OPS` creates one at a time (after a warm-up), then,
 * with `BENCH_DUE_ROWS` conversions stored, the cost of one scheduler pass
 * (`Scheduler.runDue`, nothing due) — the work that runs every second beside
 * the requests.
 *
 * node --conditions=@xaalis/source packages/server/bench/engine-create.ts
 * Profile: add `--cpu-prof --cpu-prof-dir=<dir>`, then summarise the file with
 * `cpuprofile-summary.ts` and delete it.
 * BENCH_OPS (default 50000), BENCH_DUE_ROWS (default 100000; 0 skips).
 */
import { Decimal, decodeRequest, Requests } from "@xaalis/core"
import {
  Businesses,
  Conversions,
  EngineConfig,
  IdsAdapter,
  MemoryNotifier,
  MemoryStore,
  Sandbox,
  SandboxClock,
  Scheduler
} from "@xaalis/engine"
import { Layer, ManagedRuntime, Result } from "effect"

const ops = Number(process.env.BENCH_OPS ?? 50_000)
const dueRows = Number(process.env.BENCH_DUE_ROWS ?? 100_000)
const rate = Decimal.parse("70") as Decimal.Decimal

const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    Sandbox.layer({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    MemoryNotifier.layer,
    SandboxClock.layer,
    Layer.succeed(EngineConfig.Config, EngineConfig.defaultEngineConfig)
  ).pipe(Layer.provideMerge(MemoryStore.layer))
)
const biz = await runtime.runPromise(Businesses.createBusiness({ name: "bench" }))
const key = biz.secret_key_live
const caller = await runtime.runPromise(Businesses.authenticate(key))
const input = Result.getOrThrow(
  decodeRequest(Requests.CreateConversionBody, { gmd_amount: 5000, network: "TRC20" })
) as never

/** CPU and wall microseconds per call of `f`, `n` times in sequence. */
const time = async (label: string, n: number, f: () => Promise<unknown>) => {
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) await f()
  const cpu = process.cpuUsage(c0)
  console.log(
    `  ${label.padEnd(40)} ${(((performance.now() - t0) * 1000) / n).toFixed(1).padStart(8)} µs/op wall ${((cpu.user + cpu.system) / n).toFixed(1).padStart(8)} µs/op CPU`
  )
}

console.log(`engine create-conversion (memory store, ${ops} operations each, sequential)`)
await time("warm-up: createConversion", Math.min(5000, ops), () =>
  runtime.runPromise(Conversions.createConversion(caller, input))
)
await time("Businesses.authenticate", ops, () => runtime.runPromise(Businesses.authenticate(key)))
await time("Conversions.createConversion", ops, () => runtime.runPromise(Conversions.createConversion(caller, input)))

if (dueRows > 0) {
  const stored = ops + Math.min(5000, ops)
  for (let i = stored; i < dueRows; i++) await runtime.runPromise(Conversions.createConversion(caller, input))
  await time(`Scheduler.runDue, ${Math.max(dueRows, stored)} conversions`, 50, () =>
    runtime.runPromise(Scheduler.runDue())
  )
}
await runtime.dispose()
