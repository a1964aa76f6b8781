import { Decimal, Quote } from "@xaalis/core"
import fc from "fast-check"

/** Runs per property: modest in CI, deep with XAALIS_DEEP=1 (`npm run test:deep`). */
export const runs = (base: number): number => (process.env.XAALIS_DEEP === "1" ? base * 50 : base)

/** A USD->GMD rate as an exact decimal, between `min` and `max` GMD per USD, up to 4 places. */
export const rate = (min = 1, max = 100): fc.Arbitrary<Decimal.Decimal> =>
  fc
    .integer({ min: min * 10_000, max: max * 10_000 })
    .chain((units) => fc.constantFrom(...[0, 1, 2, 3, 4].map((scale) => ({ units, scale }))))
    .map(({ units, scale }) => Decimal.normalize(Decimal.make(BigInt(units) / 10n ** BigInt(4 - scale), scale)))
    .filter((r) => r.units > 0n && Decimal.compare(r, Decimal.make(BigInt(min), 0)) >= 0)

export const network: fc.Arbitrary<Quote.Network> = fc.constantFrom("TRC20", "ARC")

export const markup: fc.Arbitrary<Quote.Markup | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.bigInt({ min: 0n, max: 500n }).map((value): Quote.Markup => ({ type: "fixed", value })),
  fc
    .integer({ min: 0, max: 1000 })
    .map((v): Quote.Markup => ({ type: "percentage", value: Decimal.make(BigInt(v), 2) }))
)

export const feePercent: fc.Arbitrary<Decimal.Decimal> = fc
  .integer({ min: 0, max: 500 })
  .map((v) => Decimal.make(BigInt(v), 2))

export const config: fc.Arbitrary<Quote.ConversionConfig> = feePercent.map((fee_percent) => ({
  ...Quote.defaultConversionConfig,
  fee_percent
}))
