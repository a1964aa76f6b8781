import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { EntropyPool, layer, makeTimeOrderedUuid, uuidFrom } from "../src/adapters/Ids.ts"
import { Ids } from "../src/ports/Ids.ts"

/**
 * The crypto Ids adapter serves UUIDs, 32-bit numbers and secret bytes from a
 * pooled CSPRNG buffer. The pool must never hand out the same bytes twice: a
 * draw takes bytes no earlier draw took since the last refill, and a refill
 * overwrites the whole buffer before it is served again.
 */

/**
 * A pool whose refills write a stream of distinct 4-byte counters (never
 * repeated across refills), so every byte position ever served is named by
 * (refill, offset): a slice served twice shows up as a name served twice.
 */
const countingPool = (size: number) => {
  let fills = 0
  const pool = new EntropyPool(size, (buffer) => {
    fills += 1
    for (let at = 0; at + 4 <= buffer.length; at += 4) buffer.writeUInt32BE(fills * 1_000_000 + at, at)
  })
  return { pool, fills: () => fills }
}

describe("EntropyPool", () => {
  it("never serves the same bytes of a refill twice, and serves only refilled bytes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 64 }).map((n) => n * 4),
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 1, maxLength: 300 }),
        (size, draws) => {
          const { pool, fills } = countingPool(size)
          /** (refill, byte offset) of every byte served. */
          const served = new Set<string>()
          for (const n of draws) {
            if (n > size) {
              expect(() => pool.take(n)).toThrow(RangeError)
              continue
            }
            const at = pool.take(n)
            expect(at).toBeGreaterThanOrEqual(0)
            expect(at + n).toBeLessThanOrEqual(size)
            if (n > 0) expect(fills()).toBeGreaterThan(0) // never the zeros of a pool not filled yet
            for (let i = at; i < at + n; i++) {
              const name = `${fills()}:${i}`
              expect(served.has(name), `byte ${i} of refill ${fills()} served twice`).toBe(false)
              served.add(name)
            }
          }
        }
      )
    )
  })

  it("draws copies, never views of the pool, and distinct values across refills", () => {
    const { pool } = countingPool(64)
    const drawn: Array<string> = []
    for (let i = 0; i < 200; i++) {
      const b = pool.draw(8)
      expect(b.buffer).not.toBe(pool.bytes.buffer)
      drawn.push(Buffer.from(b).toString("hex"))
      b.fill(0) // a holder scribbling on its bytes changes nothing in the pool
    }
    expect(new Set(drawn).size).toBe(drawn.length)
    const numbers = Array.from({ length: 200 }, () => pool.uint32())
    expect(new Set(numbers).size).toBe(numbers.length)
    const uuids = Array.from({ length: 200 }, () => uuidFrom(pool))
    expect(new Set(uuids).size).toBe(uuids.length)
  })

  it("gives a draw larger than its share bytes of its own, and refuses sizes that are not sizes", () => {
    const { pool } = countingPool(64)
    const big = pool.draw(17) // past a quarter of the pool
    expect(big.length).toBe(17)
    expect(big.buffer).not.toBe(pool.bytes.buffer)
    expect(pool.draw(0).length).toBe(0)
    expect(() => pool.draw(-1)).toThrow(RangeError)
    expect(() => pool.draw(Number.NaN)).toThrow()
  })
})

/** The Unix milliseconds of a time-ordered UUID (its first 48 bits). */
const msOf = (u: string) => Number.parseInt(u.slice(0, 8) + u.slice(9, 13), 16)

describe("makeTimeOrderedUuid", () => {
  it("puts the clock's milliseconds first and orders ids within a millisecond by a sequence", () => {
    let t = 1_795_826_091_294
    const next = makeTimeOrderedUuid(new EntropyPool(4096), () => t)
    const a = next()
    const b = next()
    expect(msOf(a)).toBe(t)
    expect(msOf(b)).toBe(t)
    expect(b > a).toBe(true)
    // the sequence (12 bits after the version digit) goes up by one within the millisecond
    expect(Number.parseInt(b.slice(15, 18), 16)).toBe(Number.parseInt(a.slice(15, 18), 16) + 1)
    // it starts below the midpoint, so 2,048 more ids fit in the millisecond
    expect(Number.parseInt(a.slice(15, 18), 16)).toBeLessThan(0x800)
    t += 1
    expect(msOf(next())).toBe(t)
  })

  it("keeps increasing when the clock stands still, steps back, or 4,096 ids fall in one millisecond", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -5, max: 3 }), { minLength: 1, maxLength: 6000 }),
        fc.integer({ min: 0, max: 2 ** 47 }),
        (steps, start) => {
          let t = start
          const next = makeTimeOrderedUuid(new EntropyPool(4096), () => t)
          let previous = next()
          let clockMax = t
          for (const step of steps) {
            t = Math.max(0, t + step)
            clockMax = Math.max(clockMax, t)
            const u = next()
            expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
            if (!(u > previous)) return false
            // never behind the latest time the clock showed; ahead only by overflowed milliseconds
            if (msOf(u) < clockMax || msOf(u) > clockMax + Math.ceil(steps.length / 2048) + 1) return false
            previous = u
          }
          return true
        }
      ),
      { numRuns: 60 }
    )
  })

  it("keeps 62 random bits after the time and the sequence", () => {
    const next = makeTimeOrderedUuid(new EntropyPool(4096), () => 1_000)
    const tails = new Set(Array.from({ length: 3000 }, () => next().slice(19)))
    expect(tails.size).toBe(3000)
  })
})

describe("IdsAdapter.layer (pooled crypto)", () => {
  it.effect(
    "serves time-ordered UUIDs (version digit 4) in increasing order, 32-bit numbers and fresh secret bytes, none repeated",
    () =>
      Effect.gen(function* () {
        const ids = yield* Ids
        const uuids = new Set<string>()
        const numbers = new Set<number>()
        const secrets = new Set<string>()
        // several refills of the 4096-byte pool, draws of every kind interleaved
        let previous = ""
        for (let i = 0; i < 2000; i++) {
          const before = Date.now()
          const u = yield* ids.uuid
          expect(u).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
          expect(u > previous, `${u} after ${previous}`).toBe(true)
          // its time: the wall clock's, or ahead of it only if 2,048 ids fell in one millisecond
          expect(msOf(u)).toBeGreaterThanOrEqual(before - 1)
          previous = u
          uuids.add(u)
          const n = yield* ids.random32
          expect(Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff).toBe(true)
          numbers.add(n)
          const b = yield* ids.bytes(20 + (i % 13))
          expect(b).toBeInstanceOf(Uint8Array)
          expect(b.length).toBe(20 + (i % 13))
          secrets.add(Buffer.from(b).toString("hex"))
        }
        expect(uuids.size).toBe(2000)
        expect(secrets.size).toBe(2000)
        // 2000 draws of 32 bits: a collision is possible but has probability < 0.05%
        expect(numbers.size).toBeGreaterThan(1990)
        const big = yield* ids.bytes(5000)
        expect(big.length).toBe(5000)
      }).pipe(Effect.provide(layer))
  )
})
