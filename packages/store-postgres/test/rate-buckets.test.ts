import { RateLimiter } from "@xaalis/http"
import { Effect, Exit, type Layer, Scope } from "effect"
import { Pool } from "pg"
import { afterEach, expect, it } from "vitest"
import { RateBuckets } from "../src/index.ts"
import { withPostgres } from "./pg.ts"
import { silentRelay } from "./relay.ts"

/** Scopes opened by a test, closed after it (each holds a pool). */
const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** `take` of the limiter `layer` builds (built in a scope closed after the test). */
const takeOf = async (layer: Layer.Layer<RateLimiter.RateLimiter>) => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const limiter = await Effect.runPromise(
    Scope.provide(scope)(Effect.provide(RateLimiter.RateLimiter.use(Effect.succeed), layer))
  )
  return (key: string) => Effect.runPromise(limiter.take(key))
}

withPostgres("RateBuckets (rate limits shared through PostgreSQL)", (db) => {
  /** Shared buckets over a pool of their own: one per simulated process. */
  const open = async (options: Partial<RateBuckets.RateBucketsOptions> = {}) => {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    return Effect.runPromise(
      Scope.provide(scope)(RateBuckets.make({ connectionString: db.url, schema: db.schema, ...options }))
    )
  }
  /** The limiter the API would use over `buckets`. */
  const limiterOf = async (rps: number, burst: number, buckets = open()) => {
    const shared = await buckets
    return takeOf(RateLimiter.layerShared({ rps, burst }, Effect.succeed(shared)))
  }

  it("spends a bucket of burst tokens, then refuses with Retry-After until a token has come back", async () => {
    const take = await limiterOf(0.5, 3)
    const key = `k-${Math.random()}`
    const answers = [await take(key), await take(key), await take(key), await take(key)]
    expect(answers.map((a) => a.allowed)).toStrictEqual([true, true, true, false])
    expect(answers.map((a) => a.remaining)).toStrictEqual([2, 1, 0, 0])
    expect(answers[3]).toMatchObject({ limit: 3, retry_after_seconds: 2, reset_seconds: 6 })
    // another key has its own full bucket
    expect(await take(`${key}-other`)).toMatchObject({ allowed: true, remaining: 2 })
  })

  it("is one limit for every process on the database: two pools spend one bucket", async () => {
    const a = await limiterOf(0.001, 4)
    const b = await limiterOf(0.001, 4)
    const key = `shared-${Math.random()}`
    const order = [a, b, a, b, a, b]
    const allowed: Array<boolean> = []
    for (const take of order) allowed.push((await take(key)).allowed)
    expect(allowed).toStrictEqual([true, true, true, true, false, false])
  })

  it("takes exactly burst tokens from many requests at once on several connections (the upsert is atomic)", async () => {
    const buckets = await open({ poolMax: 8 })
    const key = `burst-${Math.random()}`
    const spent = await Promise.all(Array.from({ length: 60 }, () => buckets.spend(key, 0.001, 10)))
    expect(spent.filter((s) => s.allowed)).toHaveLength(10)
    const [row] = await db.query<{ tokens: number }>("SELECT tokens FROM rate_buckets WHERE key = $1", [key])
    expect(row?.tokens).toBeLessThan(1)
  })

  it("refills by the database's clock since the last spend, never above burst", async () => {
    const buckets = await open()
    const key = `refill-${Math.random()}`
    for (let i = 0; i < 5; i++) await buckets.spend(key, 2, 5)
    expect((await buckets.spend(key, 2, 5)).allowed).toBe(false)
    // 1.5 s ago: 3 tokens back
    await db.query("UPDATE rate_buckets SET at = at - interval '1.5 seconds' WHERE key = $1", [key])
    const after = await buckets.spend(key, 2, 5)
    expect(after.allowed).toBe(true)
    // 3 back, one spent; the statements between take some time of a loaded machine too
    expect(after.tokens).toBeGreaterThanOrEqual(2)
    expect(after.tokens).toBeLessThan(2.6)
    // an hour idle: full, not more
    await db.query("UPDATE rate_buckets SET at = at - interval '1 hour' WHERE key = $1", [key])
    expect((await buckets.spend(key, 2, 5)).tokens).toBeCloseTo(4, 1)
  })

  it("sweeps the buckets that are full again and keeps the busy ones", async () => {
    const buckets = await open({ sweepEveryMs: 50 })
    const idle = `idle-${Math.random()}`
    const busy = `busy-${Math.random()}`
    // one rate for both, as the API spends every bucket at its one configured rate
    await buckets.spend(idle, 0.01, 2)
    await buckets.spend(busy, 0.01, 2)
    await db.query("UPDATE rate_buckets SET at = at - interval '1000 seconds' WHERE key = $1", [idle])
    const keys = async () =>
      (
        await db.query<{ key: string }>("SELECT key FROM rate_buckets WHERE key = ANY($1) ORDER BY key", [[idle, busy]])
      ).map((r) => r.key)
    const deadline = Date.now() + 5_000
    while ((await keys()).includes(idle) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(await keys()).toStrictEqual([busy])
  })

  it("sweeps each bucket by its own rate: another server's other settings never empty a busy bucket", async () => {
    const a = await open({ sweepEveryMs: 50 })
    const b = await open({ sweepEveryMs: 50 })
    const key = `own-${Math.random()}`
    for (let i = 0; i < 60; i++) await a.spend(key, 0.01, 100)
    await b.spend(`other-${Math.random()}`, 1, 10)
    await new Promise((r) => setTimeout(r, 400))
    // 40 tokens left (and a little refill), not a full bucket of 100 made by a sweep that measured it by (1, 10)
    const next = await a.spend(key, 0.01, 100)
    expect(next.tokens).toBeGreaterThanOrEqual(38.9)
    expect(next.tokens).toBeLessThan(39.5)
  })

  it("fails within its timeout when the database stops answering altogether (no reset: a partition)", async () => {
    const relay = await silentRelay(db.url)
    try {
      const buckets = await open({ connectionString: relay.url, timeoutMs: 500 })
      const key = `silent-${Math.random()}`
      expect((await buckets.spend(key, 1, 5)).allowed).toBe(true)
      relay.silence()
      const started = Date.now()
      await expect(buckets.spend(key, 1, 5)).rejects.toThrow()
      expect(Date.now() - started).toBeLessThan(3_000)
    } finally {
      await relay.close()
    }
  })

  it("migrates however long another process holds the migration lock (its timeouts are for requests only)", async () => {
    const holder = new Pool({ connectionString: db.url, max: 1 })
    holder.on("error", () => undefined)
    const client = await holder.connect()
    try {
      await client.query("BEGIN")
      await client.query("SELECT pg_advisory_xact_lock(hashtextextended('xaalis.migrations:' || $1, 0))", [db.schema])
      const started = Date.now()
      const opening = open({ timeoutMs: 300 })
      await new Promise((r) => setTimeout(r, 1_500))
      await client.query("COMMIT")
      const buckets = await opening
      expect(Date.now() - started).toBeGreaterThanOrEqual(1_400)
      expect((await buckets.spend(`after-${Math.random()}`, 1, 2)).allowed).toBe(true)
    } finally {
      client.release()
      await holder.end()
    }
  })

  it("counts in the process's own bucket while the database fails, and says so", async () => {
    const failures: Array<unknown> = []
    const failing: RateLimiter.SharedBuckets = {
      spend: () => Promise.reject(new Error("connection terminated"))
    }
    const take = await takeOf(
      RateLimiter.layerShared({ rps: 0.001, burst: 2, onUnavailable: (e) => failures.push(e) }, Effect.succeed(failing))
    )
    const allowed = []
    for (let i = 0; i < 3; i++) allowed.push((await take("k")).allowed)
    expect(allowed).toStrictEqual([true, true, false])
    expect(failures).toHaveLength(3)
    expect(String(failures[0])).toContain("connection terminated")
  })

  it("fails fast when the database does not answer, so the fallback takes over", async () => {
    const buckets = await open({ timeoutMs: 300 })
    // a statement that waits on a lock held by another session: cut off by statement_timeout
    const key = `locked-${Math.random()}`
    await buckets.spend(key, 1, 2)
    const started = Date.now()
    const locker = db.query(
      "BEGIN; SELECT * FROM rate_buckets WHERE key = $1 FOR UPDATE; SELECT pg_sleep(2); COMMIT".replace(
        "$1",
        `'${key}'`
      )
    )
    await new Promise((r) => setTimeout(r, 200))
    await expect(buckets.spend(key, 1, 2)).rejects.toThrow(/statement timeout|canceling statement|Query read timeout/)
    expect(Date.now() - started).toBeLessThan(1_900)
    await locker
  })
})
