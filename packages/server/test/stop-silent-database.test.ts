import { spawn } from "node:child_process"
import { once } from "node:events"
import { expect, it } from "vitest"
import { silentRelay } from "../../store-postgres/test/relay.ts"
import { drain_ms, stop_ms } from "../src/server.ts"
import { call, main, startServerProcess, tempDataDir } from "./harness.ts"
import { describeWithSchema, inSchema, url } from "./postgres.ts"

/**
 * A graceful stop while PostgreSQL has gone silent (a partition: packets
 * dropped, no reset). Before, the background loop's query and the pool's end
 * waited for an answer that never came, and a server given SIGTERM never
 * exited (an operations audit waited over two minutes). Now the stop gives up
 * after `stop_ms` and the process exits with 1 and a `shutdown failed` line.
 * Needs PostgreSQL (DATABASE_URL, default 127.0.0.1:5432/test).
 */
describeWithSchema("a graceful stop with PostgreSQL gone silent", () => {
  it("exits with 1 after stop_ms instead of waiting for ever", async () => {
    const proxy = await silentRelay(url)
    const database = inSchema(proxy.url)
    const data = tempDataDir()
    const server = await startServerProcess({ DATABASE_URL: database.toString(), RATE_LIMIT_RPS: "0" }, data.dir)
    try {
      const business = await call(server.url, "POST", "/v1/test_helpers/businesses", { body: { name: "Silent" } })
      expect(business.status).toBe(201)
      proxy.silence()
      // the background loop runs every second: its next run waits on the silent database
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      const started = performance.now()
      const code = await server.stop("SIGTERM")
      const took = performance.now() - started
      expect(code).toBe(1)
      expect(took).toBeLessThan(drain_ms + stop_ms + 5_000)
      expect(server.lines.some((l) => l.includes('"msg":"shutdown failed"') && l.includes("did not stop"))).toBe(true)
    } finally {
      if (server.child.exitCode === null) server.child.kill("SIGKILL")
      await proxy.close()
      data.cleanup()
    }
  }, 60_000)

  it("a stop during the start, while it waits on the silent database, exits with 1 after stop_ms", async () => {
    const proxy = await silentRelay(url)
    proxy.silenceOnceConnected() // the start connects, then its migration's first statement waits for ever
    const database = inSchema(proxy.url)
    const data = tempDataDir()
    const child = spawn(process.execPath, ["--conditions=@xaalis/source", main], {
      env: { ...process.env, DATABASE_URL: database.toString(), PORT: "0", DATA_DIR: data.dir, RATE_LIMIT_RPS: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout?.on("data", (c: Buffer) => {
      stdout += c.toString()
    })
    const exited = once(child, "exit") as Promise<[number | null]>
    try {
      // longer than the 10 s connect timeout: the start is past its connect, waiting in the migration
      await new Promise((resolve) => setTimeout(resolve, 11_000))
      expect(child.exitCode).toBe(null) // still starting
      expect(stdout).not.toContain('"msg":"listening"')
      const started = performance.now()
      child.kill("SIGTERM")
      const [code] = await exited
      const took = performance.now() - started
      expect(code).toBe(1)
      expect(took).toBeGreaterThanOrEqual(stop_ms - 100) // it gave the start its time
      expect(took).toBeLessThan(stop_ms + 5_000)
      expect(stdout).toContain('"msg":"shutting down"')
      expect(stdout).toMatch(/"msg":"shutdown failed".*the start did not finish/)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
      await proxy.close()
      data.cleanup()
    }
  }, 60_000)
})
