/**
 * Worked examples computed by hand from decisions §2–§4 (defaults: p = 1 %,
 * C = 2.00 USD, N = 1.50 USD on TRC20 and 0 on ARC, q = 1 %). Each comment shows
 * the arithmetic; docs/finance-rules.md repeats them.
 */

import { Conversion, Instant, PaymentRequest, Quote, Reference, Settlement } from "@xaalis/core"
import { describe, expect, it } from "vitest"
import { dec, must, mustFail, T0 } from "./helpers.ts"

const cfg = Quote.defaultConversionConfig
const R70 = dec("70")

describe("conversion quote, gmd mode", () => {
  it("1. 5,000 GMD at 70 on TRC20 -> 73.64 USD", () => {
    // base = ceil_cent(5000 / 70 = 71.428571) = 71.43; service = half_up(0.7143) = 0.71
    // fee = 0.71 + 1.50 = 2.21; pay = 71.43 + 2.21 = 73.64
    expect(Quote.quoteGmd(500000n, "TRC20", R70, undefined, cfg)).toMatchObject({
      base_usd: 7143n,
      service_fee_usd: 71n,
      fee: 221n,
      pay_amount: 7364n,
      markup_share_usd: 0n
    })
  })
  it("2. 50,000 GMD at 70: the service fee is capped at 2.00", () => {
    // base = ceil(714.285714) = 714.29; 1 % = 7.14 > 2.00 -> 2.00; fee 3.50; pay 717.79
    expect(Quote.quoteGmd(5000000n, "TRC20", R70, undefined, cfg)).toMatchObject({
      base_usd: 71429n,
      service_fee_usd: 200n,
      fee: 350n,
      pay_amount: 71779n
    })
  })
  it("3. 1,000 GMD at 70 on ARC: no network fee", () => {
    // base = ceil(14.285714) = 14.29; service = half_up(0.1429) = 0.14; pay = 14.43
    expect(Quote.quoteGmd(100000n, "ARC", R70, undefined, cfg)).toMatchObject({
      base_usd: 1429n,
      fee: 14n,
      pay_amount: 1443n
    })
  })
  it("4. a half-cent tie rounds up: 875 GMD at 70 is exactly 12.50 USD", () => {
    // base = 12.50 exactly; 1 % = 0.125 -> half-up 0.13; TRC20 fee 1.63; pay 14.13
    expect(Quote.quoteGmd(87500n, "TRC20", R70, undefined, cfg)).toMatchObject({
      base_usd: 1250n,
      service_fee_usd: 13n,
      pay_amount: 1413n
    })
  })
  it("5. a decimal rate: 2,000 GMD at 72.35", () => {
    // 2000 / 72.35 = 27.64340... -> ceil 27.65; 0.2765 -> 0.28; fee 1.78; pay 29.43
    expect(Quote.quoteGmd(200000n, "TRC20", dec("72.35"), undefined, cfg)).toMatchObject({
      base_usd: 2765n,
      service_fee_usd: 28n,
      fee: 178n,
      pay_amount: 2943n
    })
  })
  it("6. markups: fixed 1.00 and 2 % of base", () => {
    // example 1 plus 1.00 -> 74.64; 2 % of 71.43 = 1.4286 -> 1.43 -> 75.07
    expect(Quote.quoteGmd(500000n, "TRC20", R70, { type: "fixed", value: 100n }, cfg).pay_amount).toBe(7464n)
    const pct = Quote.quoteGmd(500000n, "TRC20", R70, { type: "percentage", value: dec("2") }, cfg)
    expect(pct.markup_share_usd).toBe(143n)
    expect(pct.pay_amount).toBe(7507n)
  })
})

describe("conversion quote, pay mode", () => {
  it("7. 100.00 USD at 70 on TRC20 -> 6,826 GMD with no remainder", () => {
    // G = 6826: base = ceil(97.514285) = 97.52, service 0.98, fee 2.48, pay = 100.00 <= 100.00
    // G = 6827: base = 97.53, service 0.98, pay = 100.01 > 100.00
    expect(Quote.quotePay(10000n, "TRC20", R70, undefined, cfg)).toMatchObject({
      gmd_amount: 682600n,
      fee: 248n,
      pay_amount: 10000n
    })
  })
  it("8. 25.00 USD at 70 -> 1,628 GMD; 0.01 USD remainder is not credited", () => {
    // G = 1628: base = ceil(23.257142) = 23.26, service 0.23, fee 1.73, price 24.99
    // G = 1629: base = 23.28 (23.271428 -> 23.28), price 25.01 > 25.00
    const q = Quote.quotePay(2500n, "TRC20", R70, undefined, cfg)
    expect(q.gmd_amount).toBe(162800n)
    expect(Quote.quoteGmd(162800n, "TRC20", R70, undefined, cfg).pay_amount).toBe(2499n)
  })
})

describe("conversion creation rules", () => {
  const ctx = {
    id: "c1",
    reference: "MP-20261121-090507-DEADBEEF",
    pay_address: "T-addr",
    now: T0,
    rate: R70,
    config: cfg
  }
  it("9. below the TRC20 minimum: the message states 25.00 USD", () => {
    // 1,000 GMD costs 15.93 USD on TRC20 (< 25.00)
    const e = mustFail(Conversion.create({ gmd_amount: 100000n }, ctx))
    expect(e.code).toBe("validation_error")
    expect(e.message).toContain("25.00 USD on TRC20")
    expect(e.message).not.toContain("400.00 GMD")
  })
  it("10. two minimums missed: the message names both", () => {
    // 300 GMD on ARC: base 4.29, service 0.04, pay 4.33 < 5.00 and 300 < 400
    const e = mustFail(Conversion.create({ gmd_amount: 30000n, network: "ARC" }, ctx))
    expect(e.message).toContain("5.00 USD on ARC")
    expect(e.message).toContain("400.00 GMD")
  })
  it("11. markup above 10 % of base is refused; at the limit it is accepted", () => {
    // base 71.43 -> limit 7.143; 7.15 is over, 7.14 is not
    const over = mustFail(
      Conversion.create({ gmd_amount: 500000n, markup_config: { type: "fixed", value: 715n } }, ctx)
    )
    expect(over.param).toBe("markup_config")
    expect(over.message).toBe(
      "markup_config gives a markup of 7.15 USD, above the maximum of 10% of the converted amount of 71.43 USD: 7.143 USD."
    )
    // 9.99 % of 28.58 is 2.855142, 2.86 to the cent: above 2.858, and the message says by how much
    const rounded = mustFail(
      Conversion.create({ gmd_amount: 200000n, markup_config: { type: "percentage", value: dec("9.99") } }, ctx)
    )
    expect(rounded.message).toContain("a markup of 2.86 USD (to the cent, half-up)")
    expect(rounded.message).toContain("of 28.58 USD: 2.858 USD.")
    expect(
      must(Conversion.create({ gmd_amount: 500000n, markup_config: { type: "fixed", value: 714n } }, ctx)).state
        .pay_amount
    ).toBe(8078n)
  })
  it("12. reference and a 10-minute window", () => {
    expect(Reference.conversionReference(T0, 0xdeadbeef)).toBe("MP-20261121-090507-DEADBEEF")
    const c = must(Conversion.create({ gmd_amount: 500000n }, ctx)).state
    expect(Instant.toIso(c.invoice_expires_at)).toBe("2026-11-21T09:15:07.000Z")
    expect(c.pay_currency).toBe("USDT")
    expect(must(Conversion.create({ gmd_amount: 500000n, network: "ARC" }, ctx)).state.pay_currency).toBe("USDC")
  })
})

describe("conversion settlement", () => {
  it("13. half of 73.64 USD credits half of 5,000 GMD; the rest completes it", () => {
    // credited(36.82) = floor(5000.00 * 36.82 / 73.64) = 2500.00
    expect(Settlement.credited(500000n, 7364n, 36_820_000n)).toBe(250000n)
    expect(Settlement.increment(500000n, 7364n, 36_820_000n, 73_640_000n)).toBe(250000n)
  })
  it("14. 10.000001 of 25.00 on 1,628 GMD floors to the butut", () => {
    // 1628 * 10.000001 / 25 = 651.2000651 -> 651.20
    expect(Settlement.credited(162800n, 2500n, 10_000_001n)).toBe(65120n)
    // over-payment is capped at G
    expect(Settlement.credited(162800n, 2500n, 26_000_000n)).toBe(162800n)
  })
  it("15. markup share: half of the pay amount credits 0.50 of a 1.00 markup", () => {
    // floor(1.00 * 37.32 / 74.64) = 0.50
    expect(Settlement.creditedMarkup(100n, 7464n, 37_320_000n)).toBe(50n)
  })
})

describe("stablecoin payment request", () => {
  const ctx = {
    id: "pr1",
    link: "https://pay/pr1",
    now: T0,
    rate: R70,
    config: PaymentRequest.defaultPaymentRequestConfig
  }
  it("16. 1,000 GMD at 70 asks 14.29 USD with a 0.14 fee", () => {
    // usd = half_up(14.285714) = 14.29; fee = half_up(0.1429) = 0.14
    const pr = must(PaymentRequest.create({ amount: 100000n, currency: "GMD" }, ctx)).state
    expect(pr.usd_amount).toBe(1429n)
    expect(pr.fee).toBe(14n)
  })
  it("17. 340 GMD is 4.86 USD: refused, and the message gives the rate", () => {
    const e = mustFail(PaymentRequest.create({ amount: 34000n, currency: "GMD" }, ctx))
    expect(e.code).toBe("validation_error")
    expect(e.message).toContain("70")
    expect(e.message).toContain("5.00 USD")
  })
  it("18. 349.99 GMD rounds to 5.00 USD and is accepted (minimum checked on the rounded value)", () => {
    // 349.99 / 70 = 4.99985 -> half-up 5.00
    expect(must(PaymentRequest.create({ amount: 34999n, currency: "GMD" }, ctx)).state.usd_amount).toBe(500n)
  })
  it("19. a history entry converts 5.123456 USD to 358.64 GMD at the locked rate", () => {
    // 5.123456 * 70 = 358.64192 -> half-up 358.64
    expect(PaymentRequest.gmdValue(5_123_456n, R70)).toBe(35864n)
  })
})
