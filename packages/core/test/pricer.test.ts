import { Quote } from "@xaalis/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { config, markup, network, rate, runs } from "./arbitraries.ts"

// The quote and settlement laws of decisions §2 and §3 (round trip, monotone,
// largest G that fits, fee cap, settlement sums, order independence...) live in
// @xaalis/testkit's financeLawSuite, which packages/testkit/test runs against
// this core; here, what that suite does not cover.
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
