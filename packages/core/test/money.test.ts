import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Currency from "../src/money/Currency.ts"
import * as Decimal from "../src/money/Decimal.ts"
import * as Money from "../src/money/Money.ts"

/** Minor units of every size: small, near the safe-integer edge, and past it. */
const units = fc.oneof(
  fc.bigInt({ min: -1_000_000_000n, max: 1_000_000_000n }),
  fc.bigInt({ min: -(2n ** 53n) - 10n, max: 2n ** 53n + 10n }),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n })
)

describe("Money.toJsonNumber", () => {
  it("is the double its decimal text reads as, for every currency and amount", () => {
    fc.assert(
      fc.property(units, fc.constantFrom(Currency.GMD, Currency.USD, Currency.USD_CHAIN), (minor, currency) => {
        expect(Object.is(Money.toJsonNumber(minor, currency), Number(Money.format(minor, currency)))).toBe(true)
      }),
      { numRuns: 5000 }
    )
  })
})

describe("Decimal.toNumber", () => {
  it("is Number(format(d)) for any units and scale", () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 0, max: 30 }), (u, scale) => {
        const d = { units: u, scale }
        expect(Object.is(Decimal.toNumber(d), Number(Decimal.format(d)))).toBe(true)
      }),
      { numRuns: 5000 }
    )
  })
})
