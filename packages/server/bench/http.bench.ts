/**
 * `npm run bench` (server part): create-conversion requests per second through
 * the reference server (`POST /v1/minting/offramp`, live key, default embedded
 * store, rate limiting off) against a bare node:http server that reads the body
 * and answers a JSON of the same size, with the same load generator (autocannon)
 * and the same settings, in one run. Each server runs in its own process; the
 * load generator in this one.
 * Target: at least 50% of the bare server's rate, p99 latency within 5x.
 *
 * BENCH_SECONDS (default 10), BENCH_CONNECTIONS (default 10), BENCH_STORE
 * (embedded | memory; default embedded, the server's default).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"

const seconds = Number(process.env.BENCH_SECONDS ?? 10)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10)
const storeKind = process.env.BENCH_STORE ?? "embedded"
const here = fileURLToPath(new URL(".", import.meta.url))

/** Starts `args` with node; resolves with the child and the URL it prints ("listening on <url>"). */
const startChild = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@xaalis/source", ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let seen = ""
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const m = /listening on (http:\/\/[^\s]+)/.exec(seen)
      if (m?.[1] !== undefined) {
        child.stdout?.off("data", onData)
        child.stdout?.resume() // keep draining the request log
        resolve({ child, url: m[1] })
      }
    }
    child.stdout?.on("data", onData)
    child.once("exit", (code) => reject(new Error(`child exited early with ${code}: ${seen}`)))
  })

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const load = (url: string, headers: Record<string, string>, body: string) =>
  new Promise<autocannon.Result>((resolve, reject) => {
    autocannon(
      { url, method: "POST", headers, body, connections, duration: seconds },
      (err: Error | null, result: autocannon.Result) => (err ? reject(err) : resolve(result))
    )
  })

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "xaalis-bench-"))
  const body = JSON.stringify({ gmd_amount: 5000, network: "TRC20" })
  try {
    const server = await startChild([join(here, "../src/main.ts")], {
      PORT: "0",
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
    if (sample.status !== 201) throw new Error(`create-conversion answered ${sample.status}: ${await sample.text()}`)
    const size = (await sample.text()).length

    const bare = await startChild([join(here, "bare-server.ts")], { PORT: "0", BODY_SIZE: String(size) })

    // warm-up both, then measure bare, server, bare, server; keep each side's best
    await load(`${bare.url}/`, headers, body)
    await load(`${server.url}/v1/minting/offramp`, headers, body)
    const runs = { bare: [] as autocannon.Result[], server: [] as autocannon.Result[] }
    for (let round = 0; round < 2; round++) {
      runs.bare.push(await load(`${bare.url}/`, headers, body))
      runs.server.push(await load(`${server.url}/v1/minting/offramp`, headers, body))
    }
    await stop(bare.child)
    await stop(server.child)

    const best = (rs: autocannon.Result[]) =>
      rs.reduce((a, b) => (b.requests.average > a.requests.average ? b : a), rs[0] as autocannon.Result)
    const b = best(runs.bare)
    const s = best(runs.server)
    const non2xx = runs.server.reduce((n, r) => n + r.non2xx + r.errors, 0)
    const ratio = s.requests.average / b.requests.average
    const p99 = s.latency.p99 / Math.max(b.latency.p99, 1)
    console.log(
      `server bench: create-conversion through the reference server (${storeKind} store) vs bare node:http, ${connections} connections, ${seconds} s per run, best of 2`
    )
    console.log(`  body size ${size} B; server non-2xx/errors over all runs: ${non2xx}`)
    console.log(`  bare node:http   ${b.requests.average.toFixed(0).padStart(7)} req/s   p99 ${b.latency.p99} ms`)
    console.log(`  reference server ${s.requests.average.toFixed(0).padStart(7)} req/s   p99 ${s.latency.p99} ms`)
    console.log(
      `  ratio ${(ratio * 100).toFixed(1)}% (target >= 50%: ${ratio >= 0.5 ? "MET" : "NOT MET"}); p99 ${p99.toFixed(2)}x (target <= 5x: ${p99 <= 5 ? "MET" : "NOT MET"})`
    )
    if (non2xx > 0) process.exitCode = 1
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

await main()
