import { Decimal, PaymentIntent, PaymentRequest, Quote } from "@xaalis/core"
import { Context } from "effect"

/** Deployment settings of the engine; every field has the documented default. */
export interface EngineConfig {
  readonly conversion: Quote.ConversionConfig
  readonly payment_request: PaymentRequest.PaymentRequestConfig
  readonly payment_intent: PaymentIntent.PaymentIntentConfig
  /** A rate older than this is refused with `rate_unavailable`. */
  readonly rate_age_max_ms: number
  /** Base of hosted links (payment pages, invoices). */
  readonly base_url: string
}

export const defaultEngineConfig: EngineConfig = {
  conversion: Quote.defaultConversionConfig,
  payment_request: PaymentRequest.defaultPaymentRequestConfig,
  payment_intent: PaymentIntent.defaultPaymentIntentConfig,
  rate_age_max_ms: 5 * 60_000,
  base_url: "http://127.0.0.1:3000"
}

/** The engine's configuration, a `Context.Reference` with the defaults above. */
export const Config = Context.Reference<EngineConfig>("@xaalis/engine/Config", {
  defaultValue: () => defaultEngineConfig
})

/** Builds a config from percentages given as decimal strings (as the server's environment does). */
export const withPercentages = (
  base: EngineConfig,
  p: { conversion?: string; payment_request?: string; payment_intent?: string }
): EngineConfig => {
  const dec = (s: string | undefined, fallback: Decimal.Decimal) =>
    s === undefined ? fallback : (Decimal.parse(s) ?? fallback)
  return {
    ...base,
    conversion: { ...base.conversion, fee_percent: dec(p.conversion, base.conversion.fee_percent) },
    payment_request: { ...base.payment_request, fee_percent: dec(p.payment_request, base.payment_request.fee_percent) },
    payment_intent: { ...base.payment_intent, fee_percent: dec(p.payment_intent, base.payment_intent.fee_percent) }
  }
}
