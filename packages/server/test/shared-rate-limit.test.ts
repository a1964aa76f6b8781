import { randomBytes } from "node:crypto"
import { userInfo } from "node:os"
import { Pool } from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, startServerProcess, tempDataDir } from "./harness.ts"

/**
 * Two reference servers on one PostgreSQL database share one rate limit
 * (buckets in the database): with the limit kept in each process, two
 * servers would let through twice the rate. Needs PostgreSQL (DATABASE_URL,
 * default 127.0.0.1:5432/test); required in CI (XAALIS_REQUIRE_POSTGRES=1).
 */
const url = process.env.DATABASE_URL || "postgres://127.0.0.1:5432/test"
// node-postgres takes the user from the URL, PGUSER or USER only (the servers themselves fall back to the OS user)
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username
const required = process.env.XAALIS_REQUIRE_POSTGRES === "1"
const schema = `xaalis_t_${randomBytes(6).toString("hex")}`
const admin = new Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 3_000 })
admin.on("error", () => undefined)
const reachable = await admin.query("SELECT 1").then(
  () => true,
  () => false
)

describe.skipIf(!reachable && !required)("two reference servers on one PostgreSQL database", () => {
  beforeAll(async () => {
    await admin.query(`CREATE SCHEMA ${schema}`)
  })
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => undefined)
    await admin.end()
  })

  it("share one rate limit: the burst is spent across both, then both answer 429", async () => {
    const database = new URL(url)
    database.searchParams.set("options", `-c search_path=${schema}`)
    const env = { DATABASE_URL: database.toString(), RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "4" }
    const data = tempDataDir()
    const a = await startServerProcess(env, data.dir)
    const b = await startServerProcess(env, data.dir)
    try {
      // requests without a key count in their client address's bucket: one address, both servers
      const statuses: Array<number> = []
      for (const server of [a, b, a, b, a, b]) statuses.push((await call(server.url, "GET", "/v1/nope")).status)
      expect(statuses).toStrictEqual([404, 404, 404, 404, 429, 429])
      const refused = await call(a.url, "GET", "/v1/nope")
      expect(refused.status).toBe(429)
      expect(refused.headers.get("retry-after")).toBe("1")
      expect(refused.body.error.code).toBe("rate_limit_exceeded")
      const [row] = (await admin.query(`SELECT count(*)::int AS n FROM ${schema}.rate_buckets`)).rows
      expect(row.n).toBe(1)
    } finally {
      await a.stop()
      await b.stop()
      data.cleanup()
    }
  }, 30_000)
})
