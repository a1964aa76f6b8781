import { Quote } from "@xaalis/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { config, markup, network, rate, runs, wholeGmd } from "./arbitraries.ts"

const price = (
  g: bigint,
  n: Quote.Network,
  r: Parameters<typeof Quote.quoteGmd>[2],
  m: Quote.Markup | undefined,
  c: Quote.ConversionConfig
) => Quote.quoteGmd(g, n, r, m, c).pay_amount

describe("conversion quote laws (decisions §2)", () => {
  it("round trip: pay mode of quote(G).pay_amount gives back G when R <= 100", () => {
    fc.assert(
      fc.property(wholeGmd(), network, rate(1, 100), markup, config, (g, n, r, m, c) => {
        const q = Quote.quoteGmd(g, n, r, m, c)
        expect(Quote.quotePay(q.pay_amount, n, r, m, c).gmd_amount).toBe(g)
      }),
      { numRuns: runs(400) }
    )
  })

  it("above R = 100 the round trip returns the largest G of the same price", () => {
    fc.assert(
      fc.property(wholeGmd(1_000_000), network, rate(100, 5000), markup, config, (g, n, r, m, c) => {
        const p = price(g, n, r, m, c)
        const back = Quote.quotePay(p, n, r, m, c).gmd_amount
        expect(back >= g).toBe(true)
        expect(price(back, n, r, m, c)).toBe(p)
        expect(price(back + 100n, n, r, m, c) > p).toBe(true)
      }),
      { numRuns: runs(200) }
    )
  })

  it("quote(G).pay_amount is monotone in G", () => {
    fc.assert(
      fc.property(wholeGmd(), wholeGmd(), network, rate(1, 5000), markup, config, (a, b, n, r, m, c) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a]
        expect(price(lo, n, r, m, c) <= price(hi, n, r, m, c)).toBe(true)
      }),
      { numRuns: runs(400) }
    )
  })

  it("pay mode: G is the largest whole G that fits and the remainder is worth less than 1 GMD", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 100_000_000n }),
        network,
        rate(1, 5000),
        markup,
        config,
        (p, n, r, m, c) => {
          const q = Quote.quotePay(p, n, r, m, c)
          expect(q.pay_amount).toBe(p)
          expect(q.gmd_amount % 100n).toBe(0n)
          const fitted = price(q.gmd_amount, n, r, m, c)
          const next = price(q.gmd_amount + 100n, n, r, m, c)
          expect(next > p).toBe(true)
          if (fitted <= p) {
            // remainder smaller than the price of one more dalasi
            expect(p - fitted < next - fitted).toBe(true)
            expect(p >= q.base_usd + q.fee + q.markup_share_usd).toBe(true)
          } else {
            // not even 0 GMD fits: only possible below the fixed fees
            expect(q.gmd_amount).toBe(0n)
          }
        }
      ),
      { numRuns: runs(400) }
    )
  })

  it("fee never exceeds cap + network fee; gmd mode pay_amount = base + fee + markup", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10_000_000_000n }),
        network,
        rate(1, 5000),
        markup,
        config,
        (g, n, r, m, c) => {
          const q = Quote.quoteGmd(g, n, r, m, c)
          expect(q.fee <= c.fee_cap_usd + c.network_fee_usd[n]).toBe(true)
          expect(q.fee).toBe(q.service_fee_usd + q.network_fee_usd)
          expect(q.pay_amount).toBe(q.base_usd + q.fee + q.markup_share_usd)
          // base buys at least G: base * R >= G
          expect(q.base_usd * r.units >= g * 10n ** BigInt(r.scale)).toBe(true)
        }
      ),
      { numRuns: runs(400) }
    )
  })
})

describe("pricer", () => {
  it("agrees with quoteGmd(G).pay_amount", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 100_000_000n }),
        network,
        rate(1, 5000),
        markup,
        config,
        (g, n, r, m, c) => {
          expect(Quote.pricer(n, r, m, c)(g)).toBe(Quote.quoteGmd(g * 100n, n, r, m, c).pay_amount)
        }
      ),
      { numRuns: runs(400) }
    )
  })
})
