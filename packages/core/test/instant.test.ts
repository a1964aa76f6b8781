import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Instant from "../src/time/Instant.ts"

/** `toIso` as first written: from `toCivil`, every field padded. */
const reference = (ms: number): string => {
  const c = Instant.toCivil(ms)
  const p = (n: number, w = 2) => String(n).padStart(w, "0")
  return `${p(c.year, 4)}-${p(c.month)}-${p(c.day)}T${p(c.hour)}:${p(c.minute)}:${p(c.second)}.${p(c.millisecond, 3)}Z`
}

describe("Instant.toIso", () => {
  it("formats any instant of years 0000-9999 as toCivil reads it, whatever day it formatted before", () => {
    const instant = fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 })
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 8 }), (instants) => {
        for (const ms of instants) expect(Instant.toIso(ms)).toBe(reference(ms))
      }),
      { numRuns: 2000 }
    )
    // instants of one day in a row (the remembered day), and its edges
    const day = Date.UTC(2026, 10, 21)
    for (const ms of [
      day,
      day + 1,
      day + 9,
      day + 10,
      day + 99,
      day + 100,
      day + 86_399_999,
      day + 86_400_000,
      day - 1
    ]) {
      expect(Instant.toIso(ms)).toBe(reference(ms))
    }
  })

  it("agrees with the platform's ISO format", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62_167_219_200_000, max: 253_402_300_799_999 }), (ms) => {
        expect(Instant.toIso(ms)).toBe(new Date(ms).toISOString())
      }),
      { numRuns: 2000 }
    )
  })
})
