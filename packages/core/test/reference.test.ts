import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { conversionReference, reference_pattern } from "../src/conversion/Reference.ts"
import { toCivil } from "../src/time/Instant.ts"

/** The reference as decisions §2 writes it, by concatenation: what the flat construction must equal. */
const byConcatenation = (ms: number, random32: number): string => {
  const c = toCivil(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, "0")
  return `MP-${p(c.year, 4)}${p(c.month)}${p(c.day)}-${p(c.hour)}${p(c.minute)}${p(c.second)}-${random32.toString(16).toUpperCase().padStart(8, "0")}`
}

describe("conversionReference", () => {
  it("is the text of decisions §2 for any instant and any 32 random bits", () => {
    fc.assert(
      fc.property(
        // years 0000 to 9999 (4 digits), and beyond on both sides
        fc.integer({ min: -62_167_219_200_000 - 86_400_000 * 400, max: 253_402_300_799_999 + 86_400_000 * 400 }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        (ms, random32) => {
          const reference = conversionReference(ms, random32)
          expect(reference).toBe(byConcatenation(ms, random32))
          const year = toCivil(ms).year
          if (year >= 0 && year <= 9999) expect(reference).toMatch(reference_pattern)
        }
      ),
      { numRuns: 2000 }
    )
  })

  it("keeps the worked example and the edges of the random part", () => {
    const T0 = Date.UTC(2026, 10, 21, 9, 5, 7)
    expect(conversionReference(T0, 0xdeadbeef)).toBe("MP-20261121-090507-DEADBEEF")
    expect(conversionReference(T0, 0)).toBe("MP-20261121-090507-00000000")
    expect(conversionReference(T0, 0xffff_ffff)).toBe("MP-20261121-090507-FFFFFFFF")
    expect(conversionReference(0, 0x0a)).toBe("MP-19700101-000000-0000000A")
    expect(() => conversionReference(T0, -1)).toThrow(RangeError)
    expect(() => conversionReference(T0, 2 ** 32)).toThrow(RangeError)
    expect(() => conversionReference(T0, 1.5)).toThrow(RangeError)
  })
})
