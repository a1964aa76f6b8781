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
  const p = (n: number, w = 2) => String(n).padStart(w, "0")
  const date = `${p(c.year, 4)}${p(c.month)}${p(c.day)}`
  const time = `${p(c.hour)}${p(c.minute)}${p(c.second)}`
  return `MP-${date}-${time}-${random32.toString(16).toUpperCase().padStart(8, "0")}`
}

export const reference_pattern = /^MP-\d{8}-\d{6}-[0-9A-F]{8}$/
