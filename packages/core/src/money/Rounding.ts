/**
 * Named rounding of an exact quotient `n / d` (bigint, `d > 0`).
 *
 * Every rounding step in xaalis names one of these modes; there is no default.
 * - `ceil`:    toward +infinity
 * - `floor`:   toward -infinity
 * - `half-up`: to nearest, ties away from zero (0.5 -> 1, -0.5 -> -1)
 */
export type Rounding = "ceil" | "floor" | "half-up"

const assertPositive = (d: bigint): void => {
  if (d <= 0n) throw new RangeError(`divisor must be positive, got ${d}`)
}

/** floor(n / d) */
export const floorDiv = (n: bigint, d: bigint): bigint => {
  assertPositive(d)
  const q = n / d
  return n % d !== 0n && n < 0n ? q - 1n : q
}

/** ceil(n / d) */
export const ceilDiv = (n: bigint, d: bigint): bigint => {
  assertPositive(d)
  const q = n / d
  return n % d !== 0n && n > 0n ? q + 1n : q
}

/** n / d rounded half-up (ties away from zero). */
export const halfUpDiv = (n: bigint, d: bigint): bigint => {
  assertPositive(d)
  const sign = n < 0n ? -1n : 1n
  const abs = n < 0n ? -n : n
  return sign * ((abs * 2n + d) / (2n * d))
}

/** n / d rounded with the named mode. */
export const divide = (n: bigint, d: bigint, mode: Rounding): bigint =>
  mode === "ceil" ? ceilDiv(n, d) : mode === "floor" ? floorDiv(n, d) : halfUpDiv(n, d)

/** 10^k as a bigint, cached for the small exponents that money uses. */
const POW10: ReadonlyArray<bigint> = Array.from({ length: 40 }, (_, k) => 10n ** BigInt(k))
export const pow10 = (k: number): bigint => {
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`exponent must be a non-negative integer, got ${k}`)
  return POW10[k] ?? 10n ** BigInt(k)
}
