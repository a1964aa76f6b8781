import { RateLimiter } from "@xaalis/http"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"

/**
 * The token bucket sweeps its table once it holds `buckets_max` buckets, and a
 * sweep only drops *full* buckets. When the keys seen in the last `burst / rps`
 * seconds outnumber `buckets_max` (many client addresses, e.g. an IPv6 /64),
 * nothing is dropped; before, every request with a new key then walked the
 * whole table again: O(n) per request, O(n^2) overall, on the event loop
 * (measured, rps 1, burst 10, 100,000 new keys per second of limiter time:
 * 10,000 keys 26 ms, the next 10,000 4.2 s, the 20,000 after that 22 s).
 *
 * Counted deterministically: the steps taken by iterators over large Maps (the
 * bucket table is the only Map of that size in play) while 1,000 new keys
 * arrive after the table filled.
 */

const countLargeMapIteration = <A>(threshold: number, run: () => A): { result: A; steps: number } => {
  const proto = Map.prototype as unknown as Record<symbol, (this: Map<unknown, unknown>) => Iterator<unknown>>
  const original = proto[Symbol.iterator] as (this: Map<unknown, unknown>) => Iterator<unknown>
  let steps = 0
  proto[Symbol.iterator] = function (this: Map<unknown, unknown>) {
    const inner = original.call(this)
    if (this.size < threshold) return inner
    return {
      next: () => {
        steps += 1
        return inner.next()
      },
      [Symbol.iterator]() {
        return this
      }
    } as Iterator<unknown>
  }
  try {
    return { result: run(), steps }
  } finally {
    proto[Symbol.iterator] = original
  }
}

describe("token bucket sweep", () => {
  it("admitting new keys past buckets_max costs amortised O(1) per request, not a full sweep each", () => {
    let now = 0
    const buckets_max = 100
    const bucket = RateLimiter.makeTokenBucket({ rps: 1, burst: 10, now: () => now, buckets_max })
    const take = (k: string) => Effect.runSync(bucket.take(k))
    // the table fills with buckets that are not full (one request each, refilled after 1 s)
    for (let i = 0; i < buckets_max; i++) expect(take(`ip:10.0.0.${i}`).allowed).toBe(true)
    const newKeys = 1_000
    const { result: allowed, steps } = countLargeMapIteration(buckets_max, () => {
      let n = 0
      for (let i = 0; i < newKeys; i++) {
        now += 1 // 1 000 new addresses per second
        if (take(`ip:10.1.${i >> 8}.${i & 255}`).allowed) n += 1
      }
      return n
    })
    expect(allowed).toBe(newKeys)
    // a whole-table sweep on each of the 1,000 requests would be ~600,000 steps
    expect(steps).toBeLessThan(20 * newKeys)
    // memory: at most twice the busy buckets; once they are idle (full again) the next sweep drops them
    expect(bucket.size()).toBeLessThanOrEqual(2 * (buckets_max + newKeys))
    now += 60_000
    // one new key a second from here: each bucket is full again a second after its one request
    for (let i = 0; bucket.size() > buckets_max && i < 10 * (buckets_max + newKeys); i++) {
      now += 1_000
      take(`late:${i}`)
    }
    expect(bucket.size()).toBeLessThanOrEqual(buckets_max)
  })
})
