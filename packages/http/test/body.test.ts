import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { declaredTooLarge, isJsonMediaType } from "../src/body.ts"

describe("declaredTooLarge", () => {
  it("is true exactly for a Content-Length of digits over the limit", () => {
    const reference = (cl: string | null | undefined, limit: number) =>
      cl !== null && cl !== undefined && /^\d+$/.test(cl) && Number(cl) > limit
    const lengths = fc.oneof(
      fc.nat({ max: 2_000_000 }).map(String),
      fc.constantFrom("", "-1", "1e9", " 300000", "262145", "262144", "0262145", "99999999999999999999"),
      fc.string({ maxLength: 8 }),
      fc.constantFrom(null, undefined)
    )
    fc.assert(
      fc.property(lengths, fc.constantFrom(0, 9, 10, 1024, 262_144), (cl, limit) => {
        expect(declaredTooLarge(cl, limit), `${cl} / ${limit}`).toBe(reference(cl, limit))
      }),
      { numRuns: 3000 }
    )
  })
})

describe("isJsonMediaType", () => {
  it("takes application/json in any letter case, with or without parameters, and nothing else", () => {
    for (const t of [
      "application/json",
      "Application/JSON",
      "application/json; charset=utf-8",
      " application/json ;x=y"
    ]) {
      expect(isJsonMediaType(t), t).toBe(true)
    }
    for (const t of [null, "", "text/plain", "application/jsonx", "application/problem+json", "json"]) {
      expect(isJsonMediaType(t), String(t)).toBe(false)
    }
  })
})
