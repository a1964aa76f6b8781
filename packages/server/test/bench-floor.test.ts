/**
 * The server bench's floor (bench/minimal-server.ts) answers a create-conversion
 * as the reference server does: same status, same headers, same members in the
 * same order, same size. Otherwise the bench would compare unlike work.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess, tempDataDir } from "./harness.ts"

const minimal = fileURLToPath(new URL("../bench/minimal-server.ts", import.meta.url))

const startMinimal = (key: string) =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--conditions=@xaalis/source", minimal], {
      env: { ...process.env, PORT: "0", BENCH_KEY: key },
      stdio: ["ignore", "ignore", "pipe"]
    })
    let err = ""
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString()
      const m = /listening on (http:\/\/\S+)/.exec(err)
      if (m?.[1] !== undefined) resolve({ url: m[1], stop: () => child.kill("SIGKILL") })
    })
    child.once("exit", (code) => reject(new Error(`minimal server exited with ${code}: ${err}`)))
  })

describe("the server bench's floor", () => {
  const data = tempDataDir()
  let server: ServerProcess
  let floor: { url: string; stop: () => void }
  let key: string
  beforeAll(async () => {
    server = await startServerProcess({ STORE: "memory", RATE_LIMIT_RPS: "0" }, data.dir)
    const biz = (await (
      await fetch(`${server.url}/v1/test_helpers/businesses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
    ).json()) as { secret_key_live: string }
    key = biz.secret_key_live
    floor = await startMinimal(key)
  }, 20_000)
  afterAll(async () => {
    floor?.stop()
    await server?.stop()
    data.cleanup()
  })

  it("answers a create-conversion with the reference server's status, headers, members and size", async () => {
    const post = (base: string, authorization = `Bearer ${key}`) =>
      fetch(`${base}/v1/minting/offramp`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify({ gmd_amount: 5000, network: "TRC20" })
      })
    const [a, b] = await Promise.all([post(server.url), post(floor.url)])
    const [ta, tb] = [await a.text(), await b.text()]
    expect(b.status).toBe(a.status)
    expect(a.status).toBe(201)
    for (const h of ["content-type", "cache-control", "x-content-type-options"])
      expect(b.headers.get(h), h).toBe(a.headers.get(h))
    expect(b.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
    const [ja, jb] = [JSON.parse(ta) as Record<string, unknown>, JSON.parse(tb) as Record<string, unknown>]
    expect(Object.keys(jb)).toEqual(Object.keys(ja))
    for (const k of ["status", "gmd_amount", "gmd_rate", "fee", "pay_amount", "pay_currency", "network"]) {
      expect(jb[k], k).toEqual(ja[k])
    }
    expect(Buffer.byteLength(tb)).toBe(Buffer.byteLength(ta))
    // it authenticates: another key is refused
    expect((await post(floor.url, "Bearer sk_live_nope")).status).toBe(401)
  })
})
