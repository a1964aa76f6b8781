/**
 * Profiles the reference server under the bench's load: starts `src/main.ts`
 * with `--cpu-prof` (STORE=memory unless set, rate limiting off unless set),
 * drives create-conversion requests at it with autocannon, stops it, prints
 * the summary of `cpuprofile-summary.ts` and deletes the profile.
 *
 * node --conditions=@xaalis/source packages/server/bench/profile.ts
 * PROFILE_SECONDS (default 8), PROFILE_CONNECTIONS (default 10), PROFILE_TOP
 * (default 45), INCLUSIVE_MATCH (see cpuprofile-summary.ts), STORE, RATE_LIMIT_RPS.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"

const here = fileURLToPath(new URL(".", import.meta.url))
const seconds = Number(process.env.PROFILE_SECONDS ?? 8)
const connections = Number(process.env.PROFILE_CONNECTIONS ?? 10)
const work = mkdtempSync(join(tmpdir(), "xaalis-profile-"))
try {
  const child = spawn(
    process.execPath,
    [
      "--cpu-prof",
      `--cpu-prof-dir=${join(work, "profile")}`,
      "--disable-warning=ExperimentalWarning",
      "--conditions=@xaalis/source",
      join(here, "../src/main.ts")
    ],
    {
      env: {
        ...process.env,
        PORT: "0",
        STORE: process.env.STORE ?? "memory",
        RATE_LIMIT_RPS: process.env.RATE_LIMIT_RPS ?? "0",
        DATA_DIR: join(work, "data")
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  const url = await new Promise<string>((resolve, reject) => {
    let seen = ""
    const onData = (chunk: Buffer) => {
      seen += chunk.toString()
      const m = /listening on (http:\/\/\S+)/.exec(seen)
      if (m?.[1] !== undefined) {
        child.stderr?.off("data", onData)
        child.stderr?.pipe(process.stderr)
        resolve(m[1])
      }
    }
    // the banner is on stderr; the request log on stdout is read and dropped
    child.stderr?.on("data", onData)
    child.stdout?.resume()
    child.once("exit", (code) => reject(new Error(`server exited with ${code}`)))
  })
  const biz = (await (
    await fetch(`${url}/v1/test_helpers/businesses`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"profile"}'
    })
  ).json()) as { secret_key_live: string }
  const result = await autocannon({
    url: `${url}/v1/minting/offramp`,
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${biz.secret_key_live}` },
    body: JSON.stringify({ gmd_amount: 5000, network: "TRC20" }),
    connections,
    duration: seconds
  })
  console.log(
    `${result.requests.total} requests in ${seconds} s (${result.requests.average.toFixed(0)} req/s), non-2xx ${result.non2xx}, errors ${result.errors}`
  )
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })
  for (const file of readdirSync(join(work, "profile"))) {
    process.stdout.write(
      execFileSync(
        process.execPath,
        [join(here, "cpuprofile-summary.ts"), join(work, "profile", file), process.env.PROFILE_TOP ?? "45"],
        { encoding: "utf8" }
      )
    )
  }
} finally {
  if (process.env.PROFILE_KEEP === undefined) rmSync(work, { recursive: true, force: true })
  else console.log(`kept ${work}`)
}
