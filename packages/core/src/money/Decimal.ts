import { divide, pow10, type Rounding } from "./Rounding.ts"

/**
 * An exact decimal: `units / 10^scale`. Used for rates, percentages and parsed
 * wire amounts before they are fixed to a currency's minor unit.
 *
 * Binary floating point never holds a money value in xaalis: JSON numbers are
 * read from their source text (see `fromNumber`) and written back with `format`.
 */
export interface Decimal {
  readonly units: bigint
  readonly scale: number
}

export const make = (units: bigint, scale: number): Decimal => {
  if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`scale must be a non-negative integer, got ${scale}`)
  return { units, scale }
}

export const zero: Decimal = { units: 0n, scale: 0 }

const LITERAL = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/** Longest literal accepted, so a hostile input cannot make parsing expensive. */
export const literal_length_max = 64

/**
 * Parses a decimal literal exactly (`"12.50"`, `"1e3"`, `"-0.000001"`).
 * Returns `undefined` for anything that is not a finite decimal literal.
 * The scale keeps the digits as written after normalising exponents, minus trailing zeros.
 */
export const parse = (text: string): Decimal | undefined => {
  if (text.length === 0 || text.length > literal_length_max) return undefined
  const m = LITERAL.exec(text)
  if (m === null) return undefined
  const [, sign, int = "0", frac = "", exp = "0"] = m
  const exponent = Number(exp)
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > literal_length_max) return undefined
  let units = BigInt(int + frac) * (sign === "-" ? -1n : 1n)
  let scale = frac.length - exponent
  if (scale < 0) {
    units *= pow10(-scale)
    scale = 0
  }
  return normalize({ units, scale })
}

/** Removes trailing zeros from the fraction: `1.2300` -> `1.23`, `5.0` -> `5`. */
export const normalize = (d: Decimal): Decimal => {
  let { units, scale } = d
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n
    scale -= 1
  }
  return units === d.units && scale === d.scale ? d : { units, scale }
}

/**
 * The exact decimal a JS number was written as, when the number is the value of
 * a literal with at most 15 significant digits (always the case for amounts within
 * the `*_max` limits). `String(n)` is the shortest literal that reads back as `n`,
 * so it is the literal the sender wrote, up to trailing zeros and exponent form.
 */
export const fromNumber = (n: number): Decimal | undefined => (Number.isFinite(n) ? parse(String(n)) : undefined)

/** Units of `d` at `scale`, rounded with the named mode when digits must go. */
export const toScale = (d: Decimal, scale: number, mode: Rounding): bigint =>
  scale >= d.scale ? d.units * pow10(scale - d.scale) : divide(d.units, pow10(d.scale - scale), mode)

/** Units of `d` at `scale`, or `undefined` when that would drop a non-zero digit. */
export const toScaleExact = (d: Decimal, scale: number): bigint | undefined => {
  if (scale >= d.scale) return d.units * pow10(scale - d.scale)
  const f = pow10(d.scale - scale)
  return d.units % f === 0n ? d.units / f : undefined
}

/** Number of decimal places actually used (after removing trailing zeros). */
export const places = (d: Decimal): number => normalize(d).scale

export const compare = (a: Decimal, b: Decimal): -1 | 0 | 1 => {
  const s = Math.max(a.scale, b.scale)
  const x = a.units * pow10(s - a.scale)
  const y = b.units * pow10(s - b.scale)
  return x < y ? -1 : x > y ? 1 : 0
}

export const isPositive = (d: Decimal): boolean => d.units > 0n

/** Formats with exactly `scale` places when given, else with the decimal's own scale. */
export const format = (d: Decimal, scale: number = d.scale): string => {
  const units = toScale(d, scale, "half-up")
  return formatUnits(units, scale)
}

/** Formats integer `units` at `scale` as a plain decimal string (`1234n, 2` -> `"12.34"`). */
export const formatUnits = (units: bigint, scale: number): string => {
  const negative = units < 0n
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0")
  const int = digits.slice(0, digits.length - scale)
  const frac = scale > 0 ? `.${digits.slice(digits.length - scale)}` : ""
  return `${negative ? "-" : ""}${int}${frac}`
}
