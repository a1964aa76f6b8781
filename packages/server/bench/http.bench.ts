/**
 * Create-conversion requests per second through the reference server
 * (`POST /v1/minting/offramp`, live key, rate limiting off) against a bare
 * node:http server that reads the body, parses it and answers a JSON of the
 * same size, with the same load generator (autocannon, in this process) and the
 * same settings, in one run. Each server runs in its own process.
 * Target: at least 50% of the bare server's rate, p99 latency within 5x.
 *
 * node --conditions=@xaalis/source packages/server/bench/http.bench.ts
 *
 * How it measures (the same for both sides):
 * - a warm-up run per server (discarded), then `BENCH_ROUNDS` rounds of one run
 *   per server, interleaved and alternating which goes first, so drift and other
 *   load on the machine hit both; the figures are the medians of the rounds, every
 *   run is printed too;
 * - latency is taken from every response (autocannon's `response` event, which
 *   carries the hrtime duration), in microseconds: autocannon's own histogram
 *   counts whole milliseconds, where a bare server reads "p99 0 ms";
 * - the saturated runs (closed loop, `BENCH_CONNECTIONS`) give the rates and the
 *   p99 the target is judged on; a probe with one connection (no queueing) gives
 *   each server's own latency, for comparison;
 * - server CPU per request (user + system time of the server process from
 *   /proc, Linux) is printed beside each rate: unlike the rate it barely moves
 *   when other processes share the cores;
 * - logging: both servers' stdout go to /dev/null. The reference server writes
 *   its JSON request log line for every request there, as `npm start` does (the
 *   cost is included); the bare server logs nothing;
 * - stores: the embedded store (`npm start`'s default: every create is an
 *   fsynced SQLite transaction) gives the headline of the summary; the memory
 *   store isolates the HTTP layer and the engine from storage.
 *
 * - the floor: beside the memory store, `minimal-server.ts` (the same work done
 *   by the project's pure functions straight from node:http: authenticate,
 *   parse, decode, quote, store in Maps, present, log) runs in the same rounds.
 *   It is not judged; it tells what share of the gap to bare is the work itself
 *   on this machine and what share the layers (HTTP API, engine, Effect runtime,
 *   Store port) add. A second floor, `KEEP_ROWS=0` (the same, but each row is
 *   dropped instead of kept), tells what keeping a growing set of rows in the
 *   heap costs under load: every in-memory store pays it.
 *
 * BENCH_SECONDS (default 5) per run, BENCH_WARMUP (default 3) seconds,
 * BENCH_ROUNDS (default 3), BENCH_CONNECTIONS (default 10), BENCH_STORE
 * (comma-separated: memory, embedded; default both), BENCH_PROBE_SECONDS
 * (default 3; 0 skips the one-connection probe), BENCH_FLOOR (default 1; 0
 * leaves the floor out).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, openSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"

const seconds = Number(process.env.BENCH_SECONDS ?? 5)
const warmup = Number(process.env.BENCH_WARMUP ?? 3)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)
const probeSeconds = Number(process.env.BENCH_PROBE_SECONDS ?? 3)
const stores = (process.env.BENCH_STORE ?? "memory,embedded").split(",").map((s) => s.trim())
const withFloor = process.env.BENCH_FLOOR !== "0"
const here = fileURLToPath(new URL(".", import.meta.url))

/** A port free right now (the servers' stdout goes to /dev/null, so they cannot tell us theirs). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const address = s.address()
      s.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(address)))
    })
  })

interface Child {
  readonly child: ChildProcess
  readonly url: string
}

/** Starts `script` with node on a free port, stdout to /dev/null; resolves once it answers HTTP. */
const startChild = async (script: string, env: Record<string, string>): Promise<Child> => {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ["--disable-warning=ExperimentalWarning", "--conditions=@xaalis/source", script],
    {
      env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1" },
      // stderr kept, not shown: the reference server's start banner is there; shown if it fails to start
      stdio: ["ignore", openSync("/dev/null", "w"), "pipe"]
    }
  )
  let stderr = ""
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  let exited: number | null | undefined
  child.once("exit", (code) => {
    exited = code
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 30_000
  for (;;) {
    if (exited !== undefined) throw new Error(`${script} exited early with ${exited}: ${stderr}`)
    try {
      await (await fetch(`${url}/v1/openapi.json`)).arrayBuffer()
      return { child, url }
    } catch {
      if (Date.now() > deadline) throw new Error(`${script} did not answer within 30 s`)
      await new Promise((r) => setTimeout(r, 50))
    }
  }
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const clockTicks = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
  } catch {
    return 100
  }
})()

/** User + system CPU seconds of a process so far (Linux /proc); undefined elsewhere. */
const cpuSeconds = (pid: number | undefined): number | undefined => {
  if (pid === undefined) return undefined
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) / clockTicks // utime, stime (fields 14 and 15)
  } catch {
    return undefined
  }
}

interface Run {
  /** 2xx answers per second over the run. */
  readonly rps: number
  readonly p50_us: number
  readonly p99_us: number
  /** Server CPU microseconds per answered request. */
  readonly cpu_us: number | undefined
  /** CPU microseconds of this process (the load generator) per answered request. */
  readonly gen_cpu_us: number
  readonly bad: number
}

const percentile = (sorted: Float64Array, p: number) =>
  sorted.length === 0 ? Number.NaN : (sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] ?? 0)

/** One autocannon run against `target`, latencies in µs from every response. */
const load = (
  target: Child,
  path: string,
  headers: Record<string, string>,
  body: string,
  duration: number,
  conns: number
) =>
  new Promise<Run>((resolve, reject) => {
    const latencies: Array<number> = []
    let ok = 0
    let bad = 0
    const cpuBefore = cpuSeconds(target.child.pid)
    const genBefore = process.cpuUsage()
    const started = performance.now()
    const instance = autocannon(
      { url: `${target.url}${path}`, method: "POST", headers, body, connections: conns, duration },
      (err: Error | null, result: autocannon.Result) => {
        if (err) return reject(err)
        const elapsed = (performance.now() - started) / 1000
        const cpuAfter = cpuSeconds(target.child.pid)
        const gen = process.cpuUsage(genBefore)
        const sorted = Float64Array.from(latencies).sort()
        resolve({
          rps: ok / elapsed,
          p50_us: percentile(sorted, 0.5),
          p99_us: percentile(sorted, 0.99),
          cpu_us:
            cpuBefore === undefined || cpuAfter === undefined || ok === 0
              ? undefined
              : ((cpuAfter - cpuBefore) * 1e6) / ok,
          gen_cpu_us: ok === 0 ? Number.NaN : (gen.user + gen.system) / ok,
          bad: bad + result.errors + result.timeouts
        })
      }
    )
    // The typings omit the first argument: autocannon emits (client, statusCode, bytes, responseTime in ms).
    ;(instance as unknown as NodeJS.EventEmitter).on(
      "response",
      (_client: unknown, status: number, _bytes: number, ms: number) => {
        if (status >= 200 && status < 300) {
          ok += 1
          latencies.push(ms * 1000)
        } else bad += 1
      }
    )
  })

const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

const f0 = (x: number | undefined, width = 7) => (x === undefined ? "n/a" : x.toFixed(0)).padStart(width)

const cores = availableParallelism()

/**
 * The most any server with `server`'s CPU per request could answer on this
 * machine: every core busy, shared between it and the load generator (at its own
 * CPU per request), the server's work spread perfectly over the cores. The
 * reference server runs on one thread; this bounds what a multi-process or
 * multi-threaded design of the same cost per request could reach.
 */
const ceilingOf = (server: Run, bareRps: number): { readonly rps: number; readonly ratio: number } | undefined => {
  if (server.cpu_us === undefined || !Number.isFinite(server.gen_cpu_us)) return undefined
  const rps = (cores * 1e6) / (server.cpu_us + server.gen_cpu_us)
  return { rps, ratio: rps / bareRps }
}

interface Verdict {
  readonly store: string
  readonly ratio: number
  readonly p99x: number
  readonly server_cpu_us: number | undefined
  readonly bare_cpu_us: number | undefined
  readonly ceiling: number | undefined
}

const benchStore = async (storeKind: string): Promise<Verdict> => {
  const dataDir = mkdtempSync(join(tmpdir(), "xaalis-bench-"))
  const body = JSON.stringify({ gmd_amount: 5000, network: "TRC20" })
  let server: Child | undefined
  let bare: Child | undefined
  let floor: Child | undefined
  let floorNoRows: Child | undefined
  try {
    server = await startChild(join(here, "../src/main.ts"), {
      DATA_DIR: dataDir,
      STORE: storeKind,
      RATE_LIMIT_RPS: "0"
    })
    const biz = (await (
      await fetch(`${server.url}/v1/test_helpers/businesses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "bench" })
      })
    ).json()) as { secret_key_live: string }
    const headers = { "content-type": "application/json", authorization: `Bearer ${biz.secret_key_live}` }
    const sample = await fetch(`${server.url}/v1/minting/offramp`, { method: "POST", headers, body })
    const sampleText = await sample.text()
    if (sample.status !== 201) throw new Error(`create-conversion answered ${sample.status}: ${sampleText}`)
    const size = Buffer.byteLength(sampleText)
    bare = await startChild(join(here, "bare-server.ts"), { BODY_SIZE: String(size) })
    // the floor beside the memory store: the same work without the layers (see minimal-server.ts)
    if (storeKind === "memory" && withFloor) {
      floor = await startChild(join(here, "minimal-server.ts"), { BENCH_KEY: biz.secret_key_live })
      floorNoRows = await startChild(join(here, "minimal-server.ts"), {
        BENCH_KEY: biz.secret_key_live,
        KEEP_ROWS: "0"
      })
    }

    const sides = {
      bare: { target: bare, path: "/" },
      server: { target: server, path: "/v1/minting/offramp" },
      floor: { target: floor, path: "/v1/minting/offramp" },
      floorNoRows: { target: floorNoRows, path: "/v1/minting/offramp" }
    }
    type Side = keyof typeof sides
    const present: Array<Side> = floor === undefined ? ["bare", "server"] : ["bare", "server", "floor", "floorNoRows"]
    const run = (side: Side, duration: number, conns = connections) =>
      load(sides[side].target as Child, sides[side].path, headers, body, duration, conns)

    for (const side of present) await run(side, warmup)
    const runs: Record<Side, Array<Run>> = { bare: [], server: [], floor: [], floorNoRows: [] }
    for (let round = 0; round < rounds; round++) {
      // each side goes first in turn, so drift and other load on the machine hit all of them
      const order = present.map((_, i) => present[(i + round) % present.length] as Side)
      for (const side of order) runs[side].push(await run(side, seconds))
    }
    const probe =
      probeSeconds > 0
        ? { bare: await run("bare", probeSeconds, 1), server: await run("server", probeSeconds, 1) }
        : undefined

    console.log(
      `\n${storeKind} store: ${connections} connections, ${seconds} s per run after a ${warmup} s warm-up, ${rounds} rounds interleaved; response ${size} B; stdout of both servers to /dev/null (the reference server writes its request log line there)`
    )
    console.log(
      "  run   bare req/s  p50 µs  p99 µs  CPU µs/req | server req/s  p50 µs  p99 µs  CPU µs/req |  rate   p99"
    )
    const line = (label: string, b: Run | undefined, s: Run | undefined, ratio: number, p99x: number) =>
      console.log(
        `  ${label.padEnd(6)}${f0(b?.rps, 10)} ${f0(b?.p50_us)} ${f0(b?.p99_us)} ${f0(b?.cpu_us, 11)} | ${f0(s?.rps, 12)} ${f0(s?.p50_us)} ${f0(s?.p99_us)} ${f0(s?.cpu_us, 11)} | ${(ratio * 100).toFixed(1).padStart(5)}% ${p99x.toFixed(2).padStart(5)}x`
      )
    runs.bare.forEach((b, i) => {
      const s = runs.server[i] as Run
      line(String(i + 1), b, s, s.rps / b.rps, s.p99_us / b.p99_us)
    })
    const med = (side: Side, k: "rps" | "p50_us" | "p99_us") => median(runs[side].map((r) => r[k]))
    const cpus = (side: Side) => runs[side].flatMap((r) => (r.cpu_us === undefined ? [] : [r.cpu_us]))
    const medRun = (side: Side): Run => ({
      rps: med(side, "rps"),
      p50_us: med(side, "p50_us"),
      p99_us: med(side, "p99_us"),
      cpu_us: cpus(side).length === 0 ? undefined : median(cpus(side)),
      gen_cpu_us: median(runs[side].map((r) => r.gen_cpu_us)),
      bad: 0
    })
    const ratio = med("server", "rps") / med("bare", "rps")
    const p99x = med("server", "p99_us") / med("bare", "p99_us")
    line("median", medRun("bare"), medRun("server"), ratio, p99x)
    const ceiling = ceilingOf(medRun("server"), med("bare", "rps"))
    const bareCeiling = ceilingOf(medRun("bare"), med("bare", "rps"))
    if (ceiling !== undefined && bareCeiling !== undefined) {
      console.log(
        `  the machine's ceiling: the load generator took ${f0(medRun("bare").gen_cpu_us, 0)} µs of CPU per request against bare, ${f0(medRun("server").gen_cpu_us, 0)} µs against the server; with the server's ${f0(medRun("server").cpu_us, 0)} µs, ${cores} cores serve at most ${f0(ceiling.rps, 0)} req/s even with every core busy and the server's work spread over all of them: ${(ceiling.ratio * 100).toFixed(1)}% of bare (the same bound for bare: ${f0(bareCeiling.rps, 0)} req/s; it answered ${f0(med("bare", "rps"), 0)})`
      )
    }
    if (runs.floor.length > 0) {
      const f = medRun("floor")
      console.log(
        `  floor (minimal-server.ts: the same work from the project's pure functions, no HTTP layer, engine or Effect runtime): ${f0(f.rps, 0)} req/s, CPU ${f0(f.cpu_us, 0)} µs/req, ${((f.rps / med("bare", "rps")) * 100).toFixed(1)}% of bare; the reference server is ${((med("server", "rps") / f.rps) * 100).toFixed(1)}% of the floor`
      )
      const n = medRun("floorNoRows")
      console.log(
        `  floor with rows dropped instead of kept (KEEP_ROWS=0): ${f0(n.rps, 0)} req/s, CPU ${f0(n.cpu_us, 0)} µs/req, ${((n.rps / med("bare", "rps")) * 100).toFixed(1)}% of bare: keeping the rows costs the floor ${f0((f.cpu_us ?? Number.NaN) - (n.cpu_us ?? Number.NaN), 0)} µs of CPU per request`
      )
    }
    if (probe !== undefined) {
      console.log(
        `  1 connection, ${probeSeconds} s: bare ${f0(probe.bare.rps, 0)} req/s p50 ${f0(probe.bare.p50_us, 0)} µs p99 ${f0(probe.bare.p99_us, 0)} µs; server ${f0(probe.server.rps, 0)} req/s p50 ${f0(probe.server.p50_us, 0)} µs p99 ${f0(probe.server.p99_us, 0)} µs (p99 ${(probe.server.p99_us / probe.bare.p99_us).toFixed(2)}x)`
      )
    }
    const bad = [
      ...runs.server,
      ...runs.bare,
      ...runs.floor,
      ...runs.floorNoRows,
      ...(probe === undefined ? [] : [probe.bare, probe.server])
    ].reduce((n, r) => n + r.bad, 0)
    console.log(
      `  ${storeKind}: rate ${(ratio * 100).toFixed(1)}% of bare (target >= 50%: ${ratio >= 0.5 ? "MET" : "NOT MET"}); p99 ${p99x.toFixed(2)}x (target <= 5x: ${p99x <= 5 ? "MET" : "NOT MET"}); non-2xx or errors: ${bad}`
    )
    if (bad > 0) process.exitCode = 1
    return {
      store: storeKind,
      ratio,
      p99x,
      server_cpu_us: medRun("server").cpu_us,
      bare_cpu_us: medRun("bare").cpu_us,
      ceiling: ceiling?.ratio
    }
  } finally {
    if (floorNoRows !== undefined) await stop(floorNoRows.child)
    if (floor !== undefined) await stop(floor.child)
    if (bare !== undefined) await stop(bare.child)
    if (server !== undefined) await stop(server.child)
    rmSync(dataDir, { recursive: true, force: true })
  }
}

console.log(
  "server bench: create-conversion (POST /v1/minting/offramp) through the reference server vs a bare node:http server answering a same-size JSON; autocannon, same settings both sides"
)
const verdicts: Array<Verdict> = []
for (const storeKind of stores) verdicts.push(await benchStore(storeKind))
// The headline is the store `npm start` runs (embedded) when it was measured; the memory store isolates HTTP + engine.
console.log("\nsummary (medians; the headline is npm start's default store, embedded, when measured)")
for (const v of verdicts) {
  console.log(
    `  ${v.store === "embedded" ? "headline " : "         "}${v.store.padEnd(9)} rate ${(v.ratio * 100).toFixed(1).padStart(5)}% of bare (>= 50%: ${v.ratio >= 0.5 ? "MET" : "NOT MET"})  p99 ${v.p99x.toFixed(2).padStart(6)}x (<= 5x: ${v.p99x <= 5 ? "MET" : "NOT MET"})  CPU per request: server ${f0(v.server_cpu_us, 0)} µs, bare ${f0(v.bare_cpu_us, 0)} µs; ceiling on ${cores} cores ${v.ceiling === undefined ? "n/a" : `${(v.ceiling * 100).toFixed(1)}%`}`
  )
}
