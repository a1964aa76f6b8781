import { expect, it } from "vitest"
import { run } from "../main.ts"

it("prints the quote, settlement, payment request and invoice computed by the core", () => {
  const out = run(1_795_251_907_000).join("\n")
  expect(out).toContain("pay_amount 73.64 USD")
  expect(out).toContain("gmd_amount 6826.00 GMD, fee 2.48 USD")
  expect(out).toContain("ramp.underpaid; credited 2500.00 GMD, total 2500.00 GMD")
  expect(out).toContain("ramp.paid; credited 2500.00 GMD, total 5000.00 GMD")
  expect(out).toContain("usd_amount 14.29 USD, fee 0.14 USD")
  // 2.5 x 12.99 = 32.475 -> 32.48; + 300.00 = 332.48; 10 % = 33.248 -> 33.25; total 299.23
  expect(out).toContain("sub_total 332.48 GMD, total 299.23 GMD, type professional, status not-paid, number 1")
})
