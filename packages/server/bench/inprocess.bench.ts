/**
 * Where a create-conversion's time goes, in one process and without a network:
 * the engine alone (key lookup, create), the HTTP handler called with a
 * `Request` (`api.fetch`), and the handler's core as the node:http mount calls
 * it (no web `Request`/`Response`), each as wall and CPU microseconds per
 * operation, one at a time. Compare with the server bench's CPU µs per request
 * to see what node:http and the request log add (the same code also runs
 * slower there: it shares the caches with the kernel's socket work).
 *
 * node --conditions=@xaalis/source packages/server/bench/inprocess.bench.ts
 * BENCH_OPS (default 20000), BENCH_STORE (memory | embedded; default memory).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
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
  type Store
} from "@xaalis/engine"
import { makeHttpApi } from "@xaalis/http"
import { SqliteStore } from "@xaalis/store-sqlite"
import { Effect, Layer, ManagedRuntime, Result } from "effect"
// an internal of @xaalis/http (not exported): the core the node:http mount calls
import { apiHandlerOf } from "../../http/src/HttpApi.ts"

const ops = Number(process.env.BENCH_OPS ?? 20_000)
const storeKind = process.env.BENCH_STORE ?? "memory"
const dataDir = mkdtempSync(join(tmpdir(), "xaalis-inproc-"))
const storeLayer = (sub: string): Layer.Layer<Store, unknown> =>
  storeKind === "embedded" ? SqliteStore.layerFromDataDir(join(dataDir, sub)) : MemoryStore.layer

/** Wall and CPU (user + system) microseconds per operation; CPU moves less when other processes share the cores. */
const time = async (label: string, n: number, f: () => Promise<unknown>) => {
  for (let i = 0; i < Math.min(2000, n); i++) await f() // warm-up
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  for (let i = 0; i < n; i++) await f()
  const cpu = process.cpuUsage(c0)
  const wall = ((performance.now() - t0) * 1000) / n
  console.log(
    `  ${label.padEnd(52)} ${wall.toFixed(1).padStart(7)} µs/op wall ${((cpu.user + cpu.system) / n).toFixed(1).padStart(7)} µs/op CPU`
  )
}

const body = JSON.stringify({ gmd_amount: 5000, network: "TRC20" })
console.log(`in-process create-conversion costs (${storeKind} store, ${ops} operations each, sequential)`)
try {
  // ---- the engine alone, with the layers the HTTP API builds
  const rate = Decimal.parse("70") as Decimal.Decimal
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(
      Sandbox.layer({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer)),
      MemoryNotifier.layer,
      SandboxClock.layer,
      Layer.succeed(EngineConfig.Config, EngineConfig.defaultEngineConfig)
    ).pipe(Layer.provideMerge(storeLayer("engine")))
  )
  const biz = await runtime.runPromise(Businesses.createBusiness({ name: "bench" }))
  const key = (biz as { secret_key_live: string }).secret_key_live
  const caller = await runtime.runPromise(Businesses.authenticate(key))
  const input = Result.getOrThrow(decodeRequest(Requests.CreateConversionBody, JSON.parse(body))) as never
  await time("engine: Businesses.authenticate", ops, () => runtime.runPromise(Businesses.authenticate(key)))
  await time("engine: Conversions.createConversion", ops, () =>
    runtime.runPromise(Conversions.createConversion(caller, input))
  )
  await time("engine: authenticate + create in one run", ops, () =>
    runtime.runPromise(Effect.flatMap(Businesses.authenticate(key), (c) => Conversions.createConversion(c, input)))
  )
  await runtime.dispose()

  // ---- the HTTP handler, called with a Request
  const api = makeHttpApi({ sandbox: true, rateLimit: false, store: storeLayer("http") })
  const created = (await (
    await api.fetch(
      new Request("http://127.0.0.1/v1/test_helpers/businesses", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
    )
  ).json()) as { secret_key_live: string }
  const headers = { "content-type": "application/json", authorization: `Bearer ${created.secret_key_live}` }
  await time("http: api.fetch(POST /v1/minting/offramp)", ops, async () => {
    const res = await api.fetch(new Request("http://127.0.0.1/v1/minting/offramp", { method: "POST", headers, body }))
    if (res.status !== 201) throw new Error(`answered ${res.status}: ${await res.text()}`)
    await res.text()
  })
  const core = apiHandlerOf(api.fetch)
  if (core !== undefined) {
    const bytes = new TextEncoder().encode(body)
    const url = new URL("http://127.0.0.1/v1/minting/offramp")
    await time("http: the handler's core (no Request, no Response)", ops, async () => {
      const res = await core({
        method: "POST",
        href: url.href,
        pathname: url.pathname,
        url: () => url,
        header: (name) => (headers as Record<string, string>)[name] ?? null,
        read: () => Promise.resolve({ ok: true, bytes }),
        remoteAddress: "127.0.0.1"
      })
      if (res.status !== 201) throw new Error(`answered ${res.status}: ${res.body}`)
    })
  }
  await api.dispose()
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
