import type { Currency } from "./Currency.ts"
import * as Decimal from "./Decimal.ts"
import { pow10 } from "./Rounding.ts"

/**
 * Amounts in the domain are bigint counts of a minor unit. The aliases below say
 * which unit a field holds; conversions between them are explicit.
 */
/** GMD minor units (1/100 dalasi). */
export type Butut = bigint
/** USD minor units (1/100 dollar). */
export type Cents = bigint
/** On-chain USD units (1/1,000,000 dollar). */
export type Micros = bigint

/** Minor units per major unit of `currency` (100 for GMD). */
export const unit = (currency: Currency): bigint => pow10(currency.exponent)

/** Formats minor units of `currency` as a decimal string with exactly its places. */
export const format = (minor: bigint, currency: Currency): string => Decimal.formatUnits(minor, currency.exponent)

/**
 * A JSON number for the wire. Amounts within the `*_max` limits have at most 15
 * significant digits, so the double nearest to the decimal prints back as exactly
 * that decimal (`JSON.stringify` writes the shortest round-trip literal).
 */
export const toJsonNumber = (minor: bigint, currency: Currency): number => Number(format(minor, currency))

/** Rescales minor units between two exponents; only exact (widening) moves are allowed. */
export const widen = (minor: bigint, from: Currency, to: Currency): bigint => {
  if (to.exponent < from.exponent) throw new RangeError(`cannot widen ${from.exponent} places to ${to.exponent}`)
  return minor * pow10(to.exponent - from.exponent)
}
