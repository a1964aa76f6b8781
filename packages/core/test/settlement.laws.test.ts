import { Settlement } from "@xaalis/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./arbitraries.ts"

const G = fc.bigInt({ min: 1n, max: 10_000_000_000n })
const P = fc.bigInt({ min: 1n, max: 100_000_000n })
const parts = fc.array(fc.bigInt({ min: 1n, max: 200_000_000_000n }), { minLength: 1, maxLength: 12 })

describe("conversion settlement laws (decisions §3)", () => {
  it("increments are never negative and add up to credited(total), never above gmd_amount", () => {
    fc.assert(
      fc.property(G, P, parts, (g, p, xs) => {
        let arrived = 0n
        let sum = 0n
        for (const x of xs) {
          const inc = Settlement.increment(g, p, arrived, arrived + x)
          expect(inc >= 0n).toBe(true)
          arrived += x
          sum += inc
          expect(sum <= g).toBe(true)
        }
        expect(sum).toBe(Settlement.credited(g, p, arrived))
      }),
      { numRuns: runs(500) }
    )
  })

  it("credited equals gmd_amount once A >= pay_amount", () => {
    fc.assert(
      fc.property(G, P, fc.bigInt({ min: 0n, max: 10_000_000_000n }), (g, p, extra) => {
        expect(Settlement.credited(g, p, p * 10_000n + extra)).toBe(g)
      }),
      { numRuns: runs(300) }
    )
  })

  it("half of pay gives half of G, floored to the butut", () => {
    fc.assert(
      fc.property(G, P, (g, p) => {
        expect(Settlement.credited(g, p, p * 5_000n)).toBe(g / 2n)
      }),
      { numRuns: runs(300) }
    )
  })

  it("any order of splitting a payment gives the same total credit", () => {
    fc.assert(
      fc.property(G, P, parts, fc.infiniteStream(fc.nat()), (g, p, xs, seeds) => {
        const shuffled = [...xs]
        const it = seeds[Symbol.iterator]()
        for (let i = shuffled.length - 1; i > 0; i--) {
          const j = (it.next().value as number) % (i + 1)
          ;[shuffled[i], shuffled[j]] = [shuffled[j] as bigint, shuffled[i] as bigint]
        }
        const total = (order: ReadonlyArray<bigint>) => {
          let a = 0n
          let s = 0n
          for (const x of order) {
            s += Settlement.increment(g, p, a, a + x)
            a += x
          }
          return s
        }
        expect(total(shuffled)).toBe(total(xs))
      }),
      { numRuns: runs(300) }
    )
  })

  it("status follows arrived vs pay_amount", () => {
    fc.assert(
      fc.property(P, fc.bigInt({ min: 0n, max: 2_000_000_000_000n }), (p, a) => {
        const s = Settlement.statusFor(p, a)
        const due = p * 10_000n
        expect(s).toBe(a < due ? "underpaid" : a === due ? "paid" : "overpaid")
      }),
      { numRuns: runs(200) }
    )
  })

  it("markup share is credited the same way, capped at markup_share_usd", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 100_000n }), P, parts, (m, p, xs) => {
        let a = 0n
        let prev = 0n
        for (const x of xs) {
          a += x
          const c = Settlement.creditedMarkup(m, p, a)
          expect(c >= prev && c <= m).toBe(true)
          prev = c
        }
        if (a >= p * 10_000n) expect(prev).toBe(m)
      }),
      { numRuns: runs(200) }
    )
  })
})
