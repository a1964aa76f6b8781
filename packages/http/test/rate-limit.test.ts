import { RateLimiter } from "@xaalis/http"
import { Effect, type Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { expectError, type Setup, setup } from "./helpers.ts"

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

/** A limiter on a clock the test moves by hand. */
const manual = (rps: number, burst: number) => {
  const clock = { ms: 1_000_000 }
  return { clock, layer: RateLimiter.layerMemory({ rps, burst, now: () => clock.ms }) }
}

describe("rate limiting", () => {
  it("answers 429 rate_limit_exceeded with Retry-After and RateLimit headers, and recovers after the refill", async () => {
    const { clock, layer } = manual(1, 3)
    s = setup({ rateLimit: { rps: 1, burst: 3 }, rateLimiter: layer })
    const { secret_key_test: key } = await s.business() // no key: counted against the client address
    const seen: Array<[number, string | null, string | null, string | null]> = []
    for (let i = 0; i < 4; i++) {
      const res = await s.call("GET", "/v1/balance", { key })
      seen.push([
        res.status,
        res.headers.get("ratelimit-limit"),
        res.headers.get("ratelimit-remaining"),
        res.headers.get("ratelimit-reset")
      ])
    }
    expect(seen).toEqual([
      [200, "3", "2", "1"],
      [200, "3", "1", "2"],
      [200, "3", "0", "3"],
      [429, "3", "0", "3"]
    ])
    const refused = await s.call("GET", "/v1/balance", { key })
    expectError(refused, 429, "rate_limit_exceeded")
    expect(refused.headers.get("retry-after")).toBe("1")
    expect(refused.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
    clock.ms += 999
    expect((await s.call("GET", "/v1/balance", { key })).status).toBe(429)
    clock.ms += 1
    const back = await s.call("GET", "/v1/balance", { key })
    expect(back.status).toBe(200)
    expect(back.headers.get("ratelimit-remaining")).toBe("0")
    clock.ms += 10_000
    expect((await s.call("GET", "/v1/balance", { key })).headers.get("ratelimit-remaining")).toBe("2")
  })

  it("counts per API key, and per client address for requests without a valid key", async () => {
    const { layer } = manual(1, 2)
    s = setup({ rateLimit: { rps: 1, burst: 2 }, rateLimiter: layer })
    // created without a key and without an address: they spend the "unknown address" bucket
    const a = await s.business({ name: "A" })
    const b = await s.business({ name: "B" })
    for (let i = 0; i < 2; i++)
      expect((await s.call("GET", "/v1/balance", { key: a.secret_key_test })).status).toBe(200)
    expect((await s.call("GET", "/v1/balance", { key: a.secret_key_test })).status).toBe(429)
    // the other mode's key and another business's key have their own buckets
    expect((await s.call("GET", "/v1/balance", { key: a.secret_key_live })).status).toBe(200)
    expect((await s.call("GET", "/v1/balance", { key: b.secret_key_test })).status).toBe(200)
    // without a valid key: per client address; junk keys share their address's bucket
    const from = (remoteAddress: string, key?: string) =>
      key === undefined
        ? s.call("GET", "/v1/openapi.json", { remoteAddress })
        : s.call("GET", "/v1/balance", { remoteAddress, key })
    expect((await from("10.0.0.1")).status).toBe(200)
    expectError(await from("10.0.0.1", "sk_test_junkjunkjunkjunkjunk1"), 401, "authentication_error")
    const third = await from("10.0.0.1", "sk_test_junkjunkjunkjunkjunk2")
    expectError(third, 429, "rate_limit_exceeded")
    expect((await from("10.0.0.2")).status).toBe(200)
  })

  it("uses real time, not the sandbox clock: advancing the sandbox does not refill a bucket", async () => {
    const { layer } = manual(1, 1)
    s = setup({ rateLimit: { rps: 1, burst: 1 }, rateLimiter: layer })
    const a = await s.business({ name: "A" })
    expect((await s.call("GET", "/v1/balance", { key: a.secret_key_test })).status).toBe(200)
    expect((await s.call("GET", "/v1/balance", { key: a.secret_key_test })).status).toBe(429)
    const advanced = await s.call("POST", "/v1/test_helpers/clock/advance", {
      key: a.secret_key_live,
      body: { seconds: 86_400 }
    })
    expect(advanced.status).toBe(200)
    expect((await s.call("GET", "/v1/balance", { key: a.secret_key_test })).status).toBe(429)
  })

  it("is off with rateLimit: false: no headers, no 429", async () => {
    s = setup({ rateLimit: false })
    const { secret_key_test: key } = await s.business()
    for (let i = 0; i < 300; i++) {
      const res = await s.call("GET", "/v1/balance", { key })
      if (res.status !== 200 || res.headers.get("ratelimit-limit") !== null)
        throw new Error(`request ${i}: ${res.status}`)
    }
  })
})

describe("token bucket", () => {
  it("rounds Retry-After and RateLimit-Reset up to whole seconds and never holds more than the burst", () => {
    let now = 0
    const bucket = RateLimiter.makeTokenBucket({ rps: 0.5, burst: 2, now: () => now })
    const take = () => Effect.runSync(bucket.take("k"))
    expect(take()).toEqual({ allowed: true, limit: 2, remaining: 1, reset_seconds: 2, retry_after_seconds: 0 })
    expect(take()).toEqual({ allowed: true, limit: 2, remaining: 0, reset_seconds: 4, retry_after_seconds: 0 })
    expect(take()).toEqual({ allowed: false, limit: 2, remaining: 0, reset_seconds: 4, retry_after_seconds: 2 })
    now = 500 // a quarter token back
    expect(take()).toMatchObject({ allowed: false, retry_after_seconds: 2, reset_seconds: 4 })
    now = 2_000
    expect(take()).toMatchObject({ allowed: true, remaining: 0 })
    now = 1_000_000
    expect(take()).toMatchObject({ allowed: true, remaining: 1 })
    expect(() => RateLimiter.makeTokenBucket({ rps: 0, burst: 1 })).toThrow(RangeError)
    expect(() => RateLimiter.makeTokenBucket({ rps: 1, burst: 0 })).toThrow(RangeError)
  })

  it("keeps memory bounded: full buckets are swept when the table is full", () => {
    let now = 0
    const bucket = RateLimiter.makeTokenBucket({ rps: 1, burst: 1, now: () => now, buckets_max: 3 })
    for (const k of ["a", "b", "c"]) expect(Effect.runSync(bucket.take(k)).allowed).toBe(true)
    now = 5_000 // every bucket is full again
    expect(Effect.runSync(bucket.take("d")).allowed).toBe(true)
    expect(Effect.runSync(bucket.take("d")).allowed).toBe(false)
    // "a" was swept as full: it starts with a full bucket, exactly as if it had been kept
    expect(Effect.runSync(bucket.take("a")).allowed).toBe(true)
  })
})

describe("shared limiter (layerShared)", () => {
  /** Shared buckets in a Map (a stand-in for the database), counting the statements they would run. */
  const sharedOn = (clock: { ms: number }) => {
    const rows = new Map<string, { tokens: number; at: number }>()
    let spends = 0
    const buckets: RateLimiter.SharedBuckets = {
      spend: async (key, rps, burst) => {
        spends++
        const row = rows.get(key) ?? { tokens: burst, at: clock.ms }
        const tokens = Math.min(burst, row.tokens + ((clock.ms - row.at) / 1000) * rps)
        const allowed = tokens >= 1
        rows.set(key, { tokens: allowed ? tokens - 1 : tokens, at: clock.ms })
        return { tokens: allowed ? tokens - 1 : tokens, allowed }
      }
    }
    return { buckets, spends: () => spends }
  }
  const takeOf = (layer: Layer.Layer<RateLimiter.RateLimiter>) => {
    const limiter = Effect.runSync(Effect.provide(RateLimiter.RateLimiter.use(Effect.succeed), layer))
    return (key: string) => Effect.runPromise(limiter.take(key))
  }

  it("answers a key it was refused for without asking again until a token comes back, then asks", async () => {
    const clock = { ms: 1_000_000 }
    const shared = sharedOn(clock)
    const take = takeOf(
      RateLimiter.layerShared({ rps: 2, burst: 2, now: () => clock.ms }, Effect.succeed(shared.buckets))
    )
    expect([(await take("k")).allowed, (await take("k")).allowed]).toStrictEqual([true, true])
    const refused = await take("k")
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retry_after_seconds: 1 })
    expect(shared.spends()).toBe(3)
    // a flood within the next half second (one token takes 0.5 s at 2/s) costs the shared buckets nothing
    for (let i = 0; i < 50; i++) {
      clock.ms += 9
      expect((await take("k")).allowed).toBe(false)
    }
    expect(shared.spends()).toBe(3)
    // another key is asked as usual
    expect((await take("other")).allowed).toBe(true)
    expect(shared.spends()).toBe(4)
    // once the token is back, the shared buckets are asked again and allow it: nothing allowed was refused
    clock.ms = 1_000_000 + 500
    expect((await take("k")).allowed).toBe(true)
    expect(shared.spends()).toBe(5)
  })
})
