import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { GMD } from "../src/money/Currency.ts"
import * as Decimal from "../src/money/Decimal.ts"
import { DecimalNumber, IntegerNumber, MinorAmount, QueryInteger } from "../src/wire/Amount.ts"
import { decodeRequest } from "../src/wire/Decode.ts"
import * as Json from "../src/wire/Json.ts"
import * as L from "../src/wire/Limits.ts"

const Body = <S extends Schema.Top>(field: S) => Schema.Struct({ amount: field })

/** Parses `{"amount": <literal>}` exactly and decodes it; returns the value or the error message. */
const decodeLiteral = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, literal: string) => {
  const parsed = Json.parseJson(`{"amount": ${literal}}`)
  if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
  const r = decodeRequest(schema, parsed.success)
  return Result.isSuccess(r) ? { ok: r.success } : { error: r.failure.message, param: r.failure.param }
}

const Gmd = Body(MinorAmount(GMD, { max: L.gmd_amount_max }))
const Chain = Body(MinorAmount(L.chain_amount_places, { max: L.chain_amount_max }))

describe("MinorAmount", () => {
  it("decodes exact JSON numbers to minor units", () => {
    expect(decodeLiteral(Gmd, "0.1")).toEqual({ ok: { amount: 10n } })
    expect(decodeLiteral(Gmd, "10.00")).toEqual({ ok: { amount: 1000n } })
    expect(decodeLiteral(Gmd, "1e2")).toEqual({ ok: { amount: 10000n } })
    expect(decodeLiteral(Gmd, "12.5")).toEqual({ ok: { amount: 1250n } })
    expect(decodeLiteral(Gmd, "1000000000")).toEqual({ ok: { amount: L.gmd_amount_max } })
    expect(decodeLiteral(Gmd, "100.100000000000000000000000000000000000000000000000000000000000000000000000")).toEqual({
      ok: { amount: 10010n }
    })
    expect(decodeLiteral(Chain, "12.123456")).toEqual({ ok: { amount: 12_123_456n } })
  })

  it("refuses more places than the scale, never rounding", () => {
    const places = { error: "amount must have at most 2 decimal places.", param: "amount" }
    expect(decodeLiteral(Gmd, "100.001")).toEqual(places)
    expect(decodeLiteral(Gmd, "100.10000000000000001")).toEqual(places)
    expect(decodeLiteral(Gmd, "1e-400")).toEqual(places)
    expect(decodeLiteral(Chain, "1.0000001")).toEqual({
      error: "amount must have at most 6 decimal places.",
      param: "amount"
    })
  })

  it("refuses strings, booleans, null and other non-numbers", () => {
    for (const literal of ['"10"', "true", "null", "[10]", '{"v":10}']) {
      expect(decodeLiteral(Gmd, literal)).toEqual({ error: "amount must be a number.", param: "amount" })
    }
  })

  it("refuses zero, negatives and values over the maximum, stating the bound", () => {
    expect(decodeLiteral(Gmd, "0")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(Gmd, "-0")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(Gmd, "-5")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(Gmd, "-1e400")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(Gmd, "1000000000.01")).toEqual({
      error: "amount must be at most 1000000000.",
      param: "amount"
    })
    expect(decodeLiteral(Gmd, "1e400")).toEqual({ error: "amount must be at most 1000000000.", param: "amount" })
  })

  it("refuses non-finite numbers handed in directly", () => {
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const r = decodeRequest(Gmd, { amount: n })
      expect(Result.isFailure(r) && r.failure.message).toBe("amount must be a finite number.")
    }
  })

  it("accepts zero when not positive, with a minimum", () => {
    const S = Body(MinorAmount(2, { max: 10_000n, positive: false }))
    expect(decodeLiteral(S, "0")).toEqual({ ok: { amount: 0n } })
    expect(decodeLiteral(S, "-0.01")).toEqual({ error: "amount must be at least 0.", param: "amount" })
    const M = Body(MinorAmount(2, { max: 10_000n, min: 500n, positive: false }))
    expect(decodeLiteral(M, "4.99")).toEqual({ error: "amount must be at least 5.", param: "amount" })
  })

  it("property: any amount with <= scale places within limits round-trips number -> minor -> number exactly", () => {
    const cases = [
      { scale: 2, max: L.gmd_amount_max },
      { scale: 2, max: L.usd_amount_max },
      { scale: L.chain_amount_places, max: L.chain_amount_max }
    ]
    for (const { scale, max } of cases) {
      const S = Body(MinorAmount(scale, { max }))
      const encode = Schema.encodeSync(S)
      fc.assert(
        fc.property(fc.bigInt({ min: 1n, max }), (minor) => {
          const literal = Decimal.formatUnits(minor, scale) // e.g. "12.50": trailing zeros as a sender may write them
          const n = Number(literal)
          for (const text of [literal, JSON.stringify(n)]) {
            const r = decodeLiteral(S, text)
            expect(r).toEqual({ ok: { amount: minor } })
          }
          expect(encode({ amount: minor })).toEqual({ amount: n })
          expect(String(n)).toBe(Decimal.format(Decimal.normalize({ units: minor, scale })))
        })
      )
    }
  })

  it("property: any literal with more places than the scale is refused", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 12n }), fc.integer({ min: 1, max: 20 }), (units, extra) => {
        const scale = 2
        const withDigit = units * 10n + 7n // last digit non-zero
        const literal = Decimal.formatUnits(withDigit, scale + extra)
        expect(decodeLiteral(Gmd, literal)).toEqual({
          error: "amount must have at most 2 decimal places.",
          param: "amount"
        })
      })
    )
  })
})

describe("DecimalNumber", () => {
  const Percent = Body(DecimalNumber(4, { min: 0, exclusiveMin: true, max: 100 }))

  it("decodes to an exact, normalised Decimal", () => {
    expect(decodeLiteral(Percent, "12.50")).toEqual({ ok: { amount: { units: 125n, scale: 1 } } })
    expect(decodeLiteral(Percent, "100")).toEqual({ ok: { amount: { units: 100n, scale: 0 } } })
    expect(decodeLiteral(Percent, "0.0001")).toEqual({ ok: { amount: { units: 1n, scale: 4 } } })
  })

  it("refuses bounds, places and types", () => {
    expect(decodeLiteral(Percent, "0")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(Percent, "100.0001")).toEqual({ error: "amount must be at most 100.", param: "amount" })
    expect(decodeLiteral(Percent, "1.00001")).toEqual({
      error: "amount must have at most 4 decimal places.",
      param: "amount"
    })
    expect(decodeLiteral(Percent, '"5"')).toEqual({ error: "amount must be a number.", param: "amount" })
  })
})

describe("IntegerNumber and QueryInteger", () => {
  it("IntegerNumber takes whole JSON numbers in range", () => {
    const S = Body(IntegerNumber({ min: 1, max: 100 }))
    expect(decodeLiteral(S, "2")).toEqual({ ok: { amount: 2 } })
    expect(decodeLiteral(S, "2.0")).toEqual({ ok: { amount: 2 } })
    expect(decodeLiteral(S, "2.5")).toEqual({ error: "amount must be a whole number.", param: "amount" })
    expect(decodeLiteral(S, "0")).toEqual({ error: "amount must be greater than 0.", param: "amount" })
    expect(decodeLiteral(S, "101")).toEqual({ error: "amount must be at most 100.", param: "amount" })
    expect(decodeLiteral(S, "9007199254740993")).toEqual({ error: "amount must be at most 100.", param: "amount" })
  })

  it("QueryInteger takes digit strings only", () => {
    const S = Body(QueryInteger({ min: 0, max: 50 }))
    expect(decodeRequest(S, { amount: "7" })).toEqual(Result.succeed({ amount: 7 }))
    expect(decodeRequest(S, { amount: 7 })).toEqual(Result.succeed({ amount: 7 }))
    for (const bad of ["", " 7", "+7", "-1", "7.0", "1e1", "51", "x", "99999999999999999999"]) {
      const r = decodeRequest(S, { amount: bad })
      expect(Result.isFailure(r) && r.failure.message).toBe("amount must be a whole number from 0 to 50.")
    }
  })
})
