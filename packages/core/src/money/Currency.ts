/**
 * Currencies are data: a code and the number of decimal places of its minor unit.
 * Scale is never a magic number in the rules: they read it from here.
 */
export interface Currency {
  readonly code: string
  readonly exponent: number
}

/** Gambian dalasi; minor unit the butut (1/100). */
export const GMD: Currency = { code: "GMD", exponent: 2 }
/** US dollar for quotes, fees and invoice amounts: cents. */
export const USD: Currency = { code: "USD", exponent: 2 }
/** US dollar units of a stablecoin as they arrive on chain (USDT/USDC token precision). */
export const USD_CHAIN: Currency = { code: "USD", exponent: 6 }

/** Fiat currencies accepted for payment intents, payment links and invoices. */
export const fiat = { GMD, USD } as const
export type FiatCode = keyof typeof fiat
export const fiat_codes: ReadonlyArray<FiatCode> = ["GMD", "USD"]
