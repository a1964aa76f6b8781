/**
 * The finance laws of xaalis (decisions §2, §3, §4, §5, §6) as a reusable suite,
 * so a finance team can run them against any build of @xaalis/core:
 *
 * ```ts
 * import { financeLawSuite, runsFromEnv } from "@xaalis/testkit"
 * financeLawSuite("@xaalis/core 0.1.0", { runs: runsFromEnv(200) })
 * // or against another build of the core:
 * financeLawSuite("candidate build", { core: await import("./candidate/core/dist/index.js") })
 * ```
 *
 * Each law states the formula of the decisions page with its own bigint
 * arithmetic (ceil, floor, half-up written out here) and checks the core's
 * `Quote`, `Settlement`, `InvoiceTotals`, `PaymentRequest` and `PaymentIntent`
 * against it; only the core's public API is used.
 */

import type * as Core from "@xaalis/core"
import * as XaalisCore from "@xaalis/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { conversionConfig, markup as markupArb, network as networkArb, rate as rateArb } from "./Arbitraries.ts"

/** The parts of @xaalis/core the laws exercise. */
export type FinanceCore = Pick<
  typeof Core,
  "Quote" | "Settlement" | "InvoiceTotals" | "PaymentRequest" | "PaymentIntent"
>

export interface FinanceLawOptions {
  /** fast-check runs per law (default 200; see `runsFromEnv`). */
  readonly runs?: number | undefined
  /** Replays a failure: the `seed` and `path` fast-check printed (set them on one law's run with `.only`). */
  readonly seed?: number | undefined
  readonly path?: string | undefined
  /** The build of the core under test (default: the @xaalis/core this testkit resolves). */
  readonly core?: FinanceCore | undefined
}

type Decimal = Core.Decimal.Decimal
type Markup = Core.Quote.Markup
type ConversionConfig = Core.Quote.ConversionConfig
type Network = Core.Quote.Network

// ---------------------------------------------------------------------------
// Reference arithmetic (non-negative numerators, positive denominators)

const pow10 = (k: number): bigint => 10n ** BigInt(k)
const floorDiv = (n: bigint, d: bigint): bigint => n / d
const ceilDiv = (n: bigint, d: bigint): bigint => (n + d - 1n) / d
const halfUpDiv = (n: bigint, d: bigint): bigint => (2n * n + d) / (2n * d)
const min = (a: bigint, b: bigint): bigint => (a < b ? a : b)
const dec = (units: bigint, scale: number): Decimal => ({ units, scale })

/** `ceil_cent(G / R)`: cents that buy `gmd` butut at `rate` GMD per USD. */
const baseUsd = (gmd: bigint, rate: Decimal): bigint => ceilDiv(gmd * pow10(rate.scale), rate.units)
/** `half_up(x * percent / 100)` in the unit of `x`. */
const percentOf = (x: bigint, percent: Decimal): bigint => halfUpDiv(x * percent.units, 100n * pow10(percent.scale))

/** The gmd-mode quote of decisions §2, written out. */
const referenceQuote = (
  gmd: bigint,
  network: Network,
  rate: Decimal,
  markup: Markup | undefined,
  config: ConversionConfig
) => {
  const base_usd = baseUsd(gmd, rate)
  const service = min(percentOf(base_usd, config.fee_percent), config.fee_cap_usd)
  const fee = service + config.network_fee_usd[network]
  const markup_share_usd =
    markup === undefined ? 0n : markup.type === "fixed" ? markup.value : percentOf(base_usd, markup.value)
  return { base_usd, service, fee, markup_share_usd, pay_amount: base_usd + fee + markup_share_usd }
}

// ---------------------------------------------------------------------------
// Arbitraries

/** Whole dalasi, as butut. */
const wholeGmd = (max = 10_000_000n) => fc.bigInt({ min: 0n, max }).map((g) => g * 100n)
const G = fc.bigInt({ min: 1n, max: 10_000_000_000n })
const P = fc.bigInt({ min: 1n, max: 100_000_000n })
const parts = fc.array(fc.bigInt({ min: 1n, max: 200_000_000_000n }), { minLength: 1, maxLength: 12 })
const quantity = fc
  .tuple(fc.bigInt({ min: 1n, max: 100_000_000n }), fc.integer({ min: 0, max: 4 }))
  .map(([units, scale]) => dec(units, scale))
const lineItem = fc.record({
  item: fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim().length > 0),
  quantity,
  unit_price: fc.bigInt({ min: 1n, max: 1_000_000_000n })
})
/** A percentage in (0, 100] with up to 4 places. */
const percent = fc.bigInt({ min: 1n, max: 1_000_000n }).map((u) => dec(u, 4))

// ---------------------------------------------------------------------------
// The suite

/** Registers the finance laws as a vitest `describe` block. */
export const financeLawSuite = (name: string, options?: FinanceLawOptions): void => {
  const runs = Math.max(1, options?.runs ?? 200)
  const { Quote, Settlement, InvoiceTotals, PaymentRequest, PaymentIntent } = options?.core ?? XaalisCore
  const price = (g: bigint, n: Network, r: Decimal, m: Markup | undefined, c: ConversionConfig) =>
    Quote.quoteGmd(g, n, r, m, c).pay_amount
  const law = (title: string, property: fc.IProperty<never> | fc.IProperty<unknown[]>, weight = 1) =>
    it(title, () => {
      fc.assert(property as fc.IProperty<unknown[]>, {
        numRuns: Math.max(1, Math.round(runs * weight)),
        ...(options?.seed === undefined ? {} : { seed: options.seed }),
        ...(options?.path === undefined ? {} : { path: options.path })
      })
    })

  describe(`Finance laws: ${name}`, () => {
    describe("conversion quote (decisions §2)", () => {
      law(
        "gmd mode: base = ceil_cent(G/R), fee = min(half_up(base*p/100), C) + N, pay_amount = base + fee + markup",
        fc.property(
          fc.bigInt({ min: 0n, max: 10_000_000_000n }),
          networkArb,
          rateArb(1, 5000),
          markupArb,
          conversionConfig,
          (g, n, r, m, c) => {
            const q = Quote.quoteGmd(g, n, r, m, c)
            const want = referenceQuote(g, n, r, m, c)
            expect(q).toMatchObject({
              gmd_amount: g,
              base_usd: want.base_usd,
              service_fee_usd: want.service,
              network_fee_usd: c.network_fee_usd[n],
              fee: want.fee,
              markup_share_usd: want.markup_share_usd,
              pay_amount: want.pay_amount
            })
          }
        )
      )

      law(
        "fee cap: the fee never exceeds C + N; the base buys at least G and one cent less does not",
        fc.property(
          fc.bigInt({ min: 1n, max: 10_000_000_000n }),
          networkArb,
          rateArb(1, 5000),
          markupArb,
          conversionConfig,
          (g, n, r, m, c) => {
            const q = Quote.quoteGmd(g, n, r, m, c)
            expect(q.fee <= c.fee_cap_usd + c.network_fee_usd[n], "fee <= cap + network fee").toBe(true)
            expect(q.service_fee_usd <= c.fee_cap_usd, "service fee <= cap").toBe(true)
            expect(q.base_usd * r.units >= g * pow10(r.scale), "base buys at least G").toBe(true)
            expect((q.base_usd - 1n) * r.units < g * pow10(r.scale), "one cent less buys less than G").toBe(true)
          }
        )
      )

      law(
        "monotone: quote(G).pay_amount never decreases as G grows",
        fc.property(
          wholeGmd(),
          wholeGmd(),
          networkArb,
          rateArb(1, 5000),
          markupArb,
          conversionConfig,
          (a, b, n, r, m, c) => {
            const [lo, hi] = a <= b ? [a, b] : [b, a]
            expect(price(lo, n, r, m, c) <= price(hi, n, r, m, c), "more dalasi never costs less").toBe(true)
          }
        )
      )

      law(
        "round trip: pay mode of quote(G).pay_amount gives back G when R <= 100",
        fc.property(wholeGmd(), networkArb, rateArb(1, 100), markupArb, conversionConfig, (g, n, r, m, c) => {
          const q = Quote.quoteGmd(g, n, r, m, c)
          expect(Quote.quotePay(q.pay_amount, n, r, m, c).gmd_amount).toBe(g)
        }),
        2
      )

      law(
        "round trip above R = 100: the largest G of the same price comes back",
        fc.property(
          wholeGmd(1_000_000n),
          networkArb,
          rateArb(100, 5000),
          markupArb,
          conversionConfig,
          (g, n, r, m, c) => {
            const p = price(g, n, r, m, c)
            const back = Quote.quotePay(p, n, r, m, c).gmd_amount
            expect(back >= g, "the amount paid buys at least G back").toBe(true)
            expect(price(back, n, r, m, c)).toBe(p)
            expect(price(back + 100n, n, r, m, c) > p, "one dalasi more costs more").toBe(true)
          }
        )
      )

      law(
        "largest G fits: pay mode credits the largest whole G whose price fits; the remainder buys less than 1 GMD",
        fc.property(
          fc.bigInt({ min: 0n, max: 100_000_000n }),
          networkArb,
          rateArb(1, 5000),
          markupArb,
          conversionConfig,
          (p, n, r, m, c) => {
            const q = Quote.quotePay(p, n, r, m, c)
            expect(q.pay_amount).toBe(p)
            expect(q.gmd_amount % 100n).toBe(0n)
            const fitted = price(q.gmd_amount, n, r, m, c)
            const next = price(q.gmd_amount + 100n, n, r, m, c)
            expect(next > p, "the next dalasi costs more than was paid").toBe(true)
            if (fitted <= p) {
              expect(p - fitted < next - fitted, "the fitted amount is the nearest below").toBe(true)
              const ref = referenceQuote(q.gmd_amount, n, r, m, c)
              expect([q.fee, q.markup_share_usd]).toStrictEqual([ref.fee, ref.markup_share_usd])
            } else {
              // not even 0 GMD fits: only below the fixed fees
              expect(q.gmd_amount).toBe(0n)
            }
          }
        ),
        2
      )
    })

    describe("conversion settlement (decisions §3)", () => {
      law(
        "credited(A) = min(G, floor_butut(G * A / pay_amount))",
        fc.property(G, P, fc.bigInt({ min: 0n, max: 2_000_000_000_000n }), (g, p, a) => {
          expect(Settlement.credited(g, p, a)).toBe(min(g, floorDiv(g * a, p * 10_000n)))
        })
      )

      law(
        "settlement sums: increments are never negative, add up to credited(total) and never above G",
        fc.property(G, P, parts, (g, p, xs) => {
          let arrived = 0n
          let sum = 0n
          for (const x of xs) {
            const inc = Settlement.increment(g, p, arrived, arrived + x)
            expect(inc >= 0n, "an increment is never negative").toBe(true)
            arrived += x
            sum += inc
            expect(sum <= g, "increments never credit more than G").toBe(true)
          }
          expect(sum).toBe(Settlement.credited(g, p, arrived))
        })
      )

      law(
        "order independence: any order of the same transfers credits the same total",
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
        })
      )

      law(
        "full payment credits exactly G; half of pay_amount credits half of G, floored",
        fc.property(G, P, fc.bigInt({ min: 0n, max: 10_000_000_000n }), (g, p, extra) => {
          expect(Settlement.credited(g, p, p * 10_000n + extra)).toBe(g)
          expect(Settlement.credited(g, p, p * 5_000n)).toBe(g / 2n)
        })
      )

      law(
        "status: underpaid below pay_amount, paid at it, overpaid above",
        fc.property(P, fc.bigInt({ min: 0n, max: 2_000_000_000_000n }), (p, a) => {
          const due = p * 10_000n
          expect(Settlement.statusFor(p, a)).toBe(a < due ? "underpaid" : a === due ? "paid" : "overpaid")
        })
      )

      law(
        "markup share: credited the same way (floor to the cent), capped at markup_share_usd",
        fc.property(fc.bigInt({ min: 0n, max: 100_000n }), P, parts, (m, p, xs) => {
          let a = 0n
          let prev = 0n
          for (const x of xs) {
            a += x
            const c = Settlement.creditedMarkup(m, p, a)
            expect(c).toBe(min(m, floorDiv(m * a, p * 10_000n)))
            expect(c >= prev, "credited markup never decreases").toBe(true)
            prev = c
          }
        })
      )
    })

    describe("invoice totals (decisions §6)", () => {
      law(
        "line totals: total_price = half_up(quantity * unit_price); sub_total is their sum; type professional",
        fc.property(fc.array(lineItem, { minLength: 1, maxLength: 8 }), (items) => {
          const t = InvoiceTotals.totals({ line_items: items })
          if (t instanceof Error) return expect.fail(t.message)
          for (const [i, li] of t.line_items.entries()) {
            const src = items[i] as (typeof items)[number]
            expect(li.total_price).toBe(halfUpDiv(src.quantity.units * src.unit_price, pow10(src.quantity.scale)))
          }
          expect(t.sub_total).toBe(t.line_items.reduce((s, li) => s + li.total_price, 0n))
          expect(t.type).toBe("professional")
        })
      )

      law(
        "totals: total = amount = sub_total - discount >= 0; percentage discount is half_up(sub_total * v / 100)",
        fc.property(
          fc.oneof(
            fc.record({ amount: fc.bigInt({ min: 1n, max: 10_000_000_000n }) }),
            fc.record({ line_items: fc.array(lineItem, { minLength: 1, maxLength: 5 }) })
          ),
          fc.option(
            fc.oneof(
              percent.map((amount) => ({ type: "percentage" as const, amount })),
              fc.bigInt({ min: 1n, max: 10_000n }).map((permyriad) => ({ type: "fixed" as const, permyriad }))
            ),
            { nil: undefined }
          ),
          (input, d) => {
            const base = InvoiceTotals.totals(input)
            if (base instanceof Error) return expect.fail(base.message)
            const discount =
              d === undefined
                ? undefined
                : d.type === "percentage"
                  ? d
                  : { type: "fixed" as const, amount: (base.sub_total * d.permyriad) / 10_000n }
            if (discount?.type === "fixed" && discount.amount === 0n) return
            const t = InvoiceTotals.totals({ ...input, ...(discount === undefined ? {} : { discount }) })
            if (t instanceof Error) return expect.fail(t.message)
            const off =
              discount === undefined
                ? 0n
                : discount.type === "fixed"
                  ? discount.amount
                  : percentOf(t.sub_total, discount.amount)
            expect(t.sub_total).toBe(base.sub_total)
            expect(t.discount_amount).toBe(off)
            expect(t.total).toBe(t.sub_total - off)
            expect(t.amount).toBe(t.total)
            expect(t.total >= 0n, "the total is never negative").toBe(true)
            expect(t.type).toBe("line_items" in input ? "professional" : "simple")
            if ("amount" in input) expect(t.sub_total).toBe(input.amount)
          }
        )
      )

      law(
        "a 100% discount gives 0; a fixed discount above sub_total is refused",
        fc.property(
          fc.bigInt({ min: 1n, max: 10_000_000_000n }),
          fc.bigInt({ min: 1n, max: 1_000n }),
          (amount, over) => {
            const all = InvoiceTotals.totals({ amount, discount: { type: "percentage", amount: dec(100n, 0) } })
            if (all instanceof Error) return expect.fail(all.message)
            expect(all.total).toBe(0n)
            const refused = InvoiceTotals.totals({ amount, discount: { type: "fixed", amount: amount + over } })
            expect(
              refused instanceof Error && (refused as Core.DomainError).code === "validation_error",
              "a discount over the amount is a validation_error"
            ).toBe(true)
          }
        )
      )
    })

    // Random amounts almost never land exactly on half a cent, so a half-even (or half-down) fee passes
    // the laws above; these draw the exact halves (found by a mutation audit of the testkit, 2026-11-29)
    describe("half-up at exact halves (decisions §2, §4, §5)", () => {
      /** `x` with `x * u / 10^(2+s)` exactly k + 1/2: a percentage of `u / 10^s` %, applied to `x`. */
      const tie = (s: number) =>
        fc
          .tuple(
            fc.constantFrom(1n, 2n, 4n, 5n, 8n, 10n, 20n, 25n, 40n, 50n, 100n, 125n, 250n, 500n),
            fc.bigInt({ min: 0n, max: 1_000_000n })
          )
          .filter(([u]) => (pow10(2 + s) / 2n) % u === 0n)
          .map(([u, k]) => ({ u, x: ((2n * k + 1n) * (pow10(2 + s) / 2n)) / u }))

      law(
        "conversion service fee: half_up(base * p / 100) rounds an exact half up",
        fc.property(tie(2), fc.bigInt({ min: 1n, max: 5000n }), ({ u, x: base }, r) => {
          const config = { ...Quote.defaultConversionConfig, fee_percent: dec(u, 2), fee_cap_usd: pow10(12) }
          // G = base * R butut at R GMD per USD: base_usd is `base` cents exactly
          const q = Quote.quoteGmd(base * r, "TRC20", dec(r, 0), undefined, config)
          expect(q.base_usd).toBe(base)
          expect(q.service_fee_usd, `the fee of ${base} cents at ${u}/100 %`).toBe(halfUpDiv(base * u, 10_000n))
        })
      )

      law(
        "payment request: usd_amount = half_up_cent(GMD / R) rounds an exact half cent up",
        fc.property(
          fc.bigInt({ min: 1n, max: 2500n }).map((r) => r * 2n),
          fc.bigInt({ min: 0n, max: 1_000_000n }),
          (r, k) => {
            const amount = r * k + r / 2n // amount / r = k + 1/2 cent
            expect(PaymentRequest.usdAmount(amount, "GMD", dec(r, 0)), `${amount} butut at ${r}`).toBe(
              halfUpDiv(amount, r)
            )
          }
        )
      )

      law(
        "payment intent: transaction_fee = half_up(amount * p / 100) rounds an exact half up",
        fc.property(tie(2), ({ u, x }) => {
          const quote = PaymentIntent.quoteFee(
            { amount: x, transaction_fee_type: "business" },
            { ...PaymentIntent.defaultPaymentIntentConfig, fee_percent: dec(u, 2) }
          )
          if (quote instanceof Error) return expect.fail(quote.message)
          expect(quote.transaction_fee, `the fee of ${x} at ${u}/100 %`).toBe(halfUpDiv(x * u, 10_000n))
        })
      )
    })

    describe("payment requests and payment intents (decisions §4, §5)", () => {
      law(
        "payment request: usd_amount = half_up_cent(GMD / R); fee = min(half_up(usd * q / 100), C)",
        fc.property(fc.bigInt({ min: 1n, max: 100_000_000_000n }), rateArb(1, 5000), (amount, r) => {
          const usd = PaymentRequest.usdAmount(amount, "GMD", r)
          expect(usd).toBe(halfUpDiv(amount * pow10(r.scale), r.units))
          expect(PaymentRequest.usdAmount(amount, "USD", r)).toBe(amount)
          const config = PaymentRequest.defaultPaymentRequestConfig
          expect(PaymentRequest.fee(usd, config)).toBe(min(percentOf(usd, config.fee_percent), config.fee_cap_usd))
        })
      )

      law(
        "payment intent: transaction_fee = half_up(amount * p / 100); the customer pays amount + fee or the business receives amount - fee",
        fc.property(
          fc.bigInt({ min: 1n, max: 100_000_000_000n }),
          fc.bigInt({ min: 0n, max: 10_000n }).map((u) => dec(u, 2)),
          fc.constantFrom("business" as const, "customer" as const),
          (amount, p, bearer) => {
            const quote = PaymentIntent.quoteFee(
              { amount, transaction_fee_type: bearer },
              { ...PaymentIntent.defaultPaymentIntentConfig, fee_percent: p }
            )
            if (quote instanceof Error) return expect.fail(quote.message)
            const fee = percentOf(amount, p)
            expect(quote.transaction_fee).toBe(fee)
            expect([quote.customer_pays, quote.business_receives]).toStrictEqual(
              bearer === "customer" ? [amount + fee, amount] : [amount, amount - fee]
            )
          }
        )
      )
    })
  })
}
