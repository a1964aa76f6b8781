import { toCivil } from "../time/Instant.ts"

/**
 * Conversion reference `MP-<YYYYMMDD>-<HHMMSS>-<8 uppercase hex>` (decisions §2):
 * creation time in UTC and 32 random bits supplied by the caller (the core draws
 * no randomness). Uniqueness is the store's to enforce: on a clash, draw again.
 */
export const conversionReference = (created_at_ms: number, random32: number): string => {
  if (!Number.isInteger(random32) || random32 < 0 || random32 > 0xffff_ffff) {
    throw new RangeError(`random32 must be an unsigned 32-bit integer, got ${random32}`)
  }
  const c = toCivil(created_at_ms)
  if (!(c.year >= 0 && c.year <= 9999)) {
    const p = (n: number, w = 2) => String(n).padStart(w, "0")
    return `MP-${p(c.year, 4)}${p(c.month)}${p(c.day)}-${p(c.hour)}${p(c.minute)}${p(c.second)}-${random32.toString(16).toUpperCase().padStart(8, "0")}`
  }
  // The same text as one flat string (its character codes, then one `String.fromCharCode`) rather than
  // a tree of concatenated pieces: the reference is kept with its conversion for as long as the
  // store holds it, and a tree costs ~7 objects there instead of one.
  const codes: Array<number> = [0x4d, 0x50, 0x2d] // "MP-"
  digits(codes, c.year, 4)
  digits(codes, c.month, 2)
  digits(codes, c.day, 2)
  codes.push(0x2d)
  digits(codes, c.hour, 2)
  digits(codes, c.minute, 2)
  digits(codes, c.second, 2)
  codes.push(0x2d)
  for (let shift = 28; shift >= 0; shift -= 4) codes.push(upperHex.charCodeAt((random32 >>> shift) & 0xf))
  return String.fromCharCode.apply(null, codes)
}

const upperHex = "0123456789ABCDEF"

/** Appends the `width` decimal digits of `n` (0 <= n < 10^width) to `codes`. */
const digits = (codes: Array<number>, n: number, width: number): void => {
  for (let d = 10 ** (width - 1); d >= 1; d = d / 10) codes.push(0x30 + (Math.floor(n / d) % 10))
}

export const reference_pattern = /^MP-\d{8}-\d{6}-[0-9A-F]{8}$/
