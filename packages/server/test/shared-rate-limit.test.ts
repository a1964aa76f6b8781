import { expect, it } from "vitest"
import { call, startServerProcess, tempDataDir } from "./harness.ts"
import { admin, describeWithSchema, inSchema, schema } from "./postgres.ts"

/**
 * Two reference servers on one PostgreSQL database share one rate limit
 * (buckets in the database): with the limit kept in each process, two
 * servers would let through twice the rate. Needs PostgreSQL (DATABASE_URL,
 * default 127.0.0.1:5432/test); required in CI (XAALIS_REQUIRE_POSTGRES=1).
 */
describeWithSchema("two reference servers on one PostgreSQL database", () => {
  it("share one rate limit: the burst is spent across both, then both answer 429", async () => {
    const database = inSchema()
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
