/**
 * @xaalis/core: the pure finance core of xaalis.
 *
 * No I/O, no clock, no randomness, no global state: every function here is a
 * deterministic computation on its arguments. Amounts are bigint minor units
 * (`Butut`, `Cents`, `Micros`); rates and percentages are exact `Decimal`s.
 *
 * @example
 * import { Quote, Decimal } from "@xaalis/core"
 * const q = Quote.quoteGmd(1_000_00n, "TRC20", Decimal.parse("70")!, undefined, Quote.defaultConversionConfig)
 * // q.pay_amount === 1593n: 14.29 USD + 0.14 service fee + 1.50 network fee for 1,000 GMD at 70
 */

export * as Conversion from "./conversion/Conversion.ts"
export * as Quote from "./conversion/Quote.ts"
export * as Reference from "./conversion/Reference.ts"
export * as Settlement from "./conversion/Settlement.ts"
export * as Errors from "./Errors.ts"
export { DomainError } from "./Errors.ts"
export * as Invoice from "./invoice/Invoice.ts"
export * as InvoiceTotals from "./invoice/Totals.ts"
export * as Currency from "./money/Currency.ts"
export * as Decimal from "./money/Decimal.ts"
export * as Money from "./money/Money.ts"
export * as Rounding from "./money/Rounding.ts"
export * as PaymentIntent from "./payment-intent/PaymentIntent.ts"
export * as PaymentLink from "./payment-link/PaymentLink.ts"
export * as PaymentRequest from "./payment-request/PaymentRequest.ts"
export * as Transition from "./Transition.ts"
export * as Instant from "./time/Instant.ts"
export * as Amount from "./wire/Amount.ts"
export { decodeJson, decodeRequest } from "./wire/Decode.ts"
export * as Fields from "./wire/Fields.ts"
export * as Json from "./wire/Json.ts"
export * as Limits from "./wire/Limits.ts"
export * as Requests from "./wire/Requests.ts"
export * as Resources from "./wire/Resources.ts"
