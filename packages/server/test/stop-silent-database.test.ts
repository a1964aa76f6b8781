import { randomBytes } from "node:crypto"
import { userInfo } from "node:os"
import { Pool } from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { silentRelay } from "../../store-postgres/test/relay.ts"
import { drain_ms, stop_ms } from "../src/server.ts"
import { call, startServerProcess, tempDataDir } from "./harness.ts"

/**
 * A graceful stop while PostgreSQL has gone silent (a partition: packets
 * dropped, no reset). Before, the background loop's query and the pool's end
 * waited for an answer that never came, and a server given SIGTERM never
 * exited (an operations audit waited over two minutes). Now the stop gives up
 * after `stop_ms` and the process exits with 1 and a `shutdown failed` line.
 * Needs PostgreSQL (DATABASE_URL, default 127.0.0.1:5432/test).
 */
const url = process.env.DATABASE_URL || "postgres://127.0.0.1:5432/test"
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username
const required = process.env.XAALIS_REQUIRE_POSTGRES === "1"
const schema = `${process.env.XAALIS_TEST_SCHEMA_PREFIX ?? "xaalis_t_"}${randomBytes(6).toString("hex")}`
const admin = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 3_000 })
admin.on("error", () => undefined)
const reachable = await admin.query("SELECT 1").then(
  () => true,
  () => false
)

describe.skipIf(!reachable && !required)("a graceful stop with PostgreSQL gone silent", () => {
  beforeAll(async () => {
    await admin.query(`CREATE SCHEMA ${schema}`)
  })
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.end()
  })

  it("exits with 1 after stop_ms instead of waiting for ever", async () => {
    const proxy = await silentRelay(url)
    const database = new URL(proxy.url)
    database.searchParams.set("options", `-c search_path=${schema}`)
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
})
