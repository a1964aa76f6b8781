/**
 * Fast decoders (wire/Fast.ts) against the schemas they come from: on bodies
 * shaped like each request (valid, near-valid and wrong), a fast decoder
 * decodes exactly the bodies the schema's decoder decodes, to the same value,
 * and rejects the rest.
 */
import { isDeepStrictEqual } from "node:util"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decodeRequest } from "../src/wire/Decode.ts"
import * as Fast from "../src/wire/Fast.ts"
import * as Json from "../src/wire/Json.ts"
import * as Requests from "../src/wire/Requests.ts"

const deep = process.env.XAALIS_DEEP === "1"

/** What a schema may be made of: a struct's fields, a union's members, an array's items, literals. */
const partsOf = (schema: Schema.Top) =>
  schema as Schema.Top &
    Partial<{
      fields: Record<string, Schema.Top>
      members: ReadonlyArray<Schema.Top>
      value: Schema.Top
      literals: ReadonlyArray<unknown>
      literal: unknown
    }>

/** Every literal of every request schema, for strings that may match an enum. */
const literals: Array<string> = []
const collect = (schema: Schema.Top): void => {
  const field = Fast.fieldOf(schema)
  if (field !== undefined) {
    collect(field.schema)
    return
  }
  const s = partsOf(schema)
  if (s.literals !== undefined) for (const l of s.literals) if (typeof l === "string") literals.push(l)
  if (typeof s.literal === "string") literals.push(s.literal)
  if (s.fields !== undefined) for (const f of Object.values(s.fields)) collect(f)
  if (s.members !== undefined && s.literals === undefined) for (const m of s.members) collect(m)
  if (s.value !== undefined) collect(s.value)
}
for (const schema of Object.values(Requests.requests)) collect(schema as Schema.Top)
literals.push("TRC20", "ARC", "USDT", "USDC")

/** Number literals of every kind a body may carry (parsed as the server parses them: plain or raw). */
const numberText = fc.oneof(
  fc.constantFrom("0", "1", "5000", "0.5", "12.34", "12.345", "-1", "1e2", "1e400", "100.10000000000000001", "3.0"),
  fc.constantFrom("9007199254740993", "1000000000000", "100", "101", "2.5", "0.01", "0.000001", "99999999.99", "-0"),
  fc.integer({ min: -5, max: 2_000_000 }).map(String),
  fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 999_999 })).map(([i, f]) => `${i}.${f}`)
)
const strings = fc.oneof(
  fc.constantFrom(...literals),
  fc.constantFrom(...literals).map((l) => l.toLowerCase()),
  fc.constantFrom(
    "https://example.com/hook",
    "http://127.0.0.1:4000/hooks",
    "http://10.0.0.7/x",
    "ftp://x.y",
    "myapp://done"
  ),
  fc.constantFrom("javascript:alert(1)", "https://", "", "   ", "a@b.co", "bad@", "+220 701 2345", "12", "abc"),
  fc.constantFrom(
    "2026-11-21",
    "2026-11-21T09:00:00Z",
    "2026-02-30",
    "2026-11-21T09:00:00",
    "2026-11-21T09:00:00+01:00"
  ),
  fc.constantFrom(
    "7012345",
    "701234",
    "25",
    "0",
    "100",
    "101",
    "-1",
    "1.5",
    "007",
    "1e2",
    "Kairaba Coffee",
    "Awa Jallow"
  ),
  fc.constantFrom("a\u0000b", "a\nb", "\u202eabc", "\ud800", "x".repeat(300), "fixed", "percentage", "tx-1", "tx 1"),
  fc.string({ maxLength: 12 })
)

/** A JSON text of a value: any kind, nested a little. */
const anyValueText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberText,
    strings.map((s) => JSON.stringify(s)),
    fc.constantFrom("true", "false", "null"),
    tie("array"),
    tie("object")
  ),
  array: fc.array(tie("value") as fc.Arbitrary<string>, { maxLength: 3 }).map((xs) => `[${xs.join(",")}]`),
  object: fc
    .uniqueArray(fc.tuple(fc.constantFrom("a", "amount", "type", "x", "k"), tie("value") as fc.Arbitrary<string>), {
      maxLength: 3,
      selector: ([k]) => k
    })
    .map((ms) => `{${ms.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(",")}}`)
})).value as fc.Arbitrary<string>

/**
 * A value text shaped like `schema` wants: when `tame`, from values its parts
 * take, so that large bodies are often valid as a whole; otherwise most of the
 * time, with anything now and then.
 */
const shaped = (schema: Schema.Top, tame: boolean, depth = 0): fc.Arbitrary<string> => {
  const field = Fast.fieldOf(schema)
  if (field !== undefined) return shaped(field.schema, tame, depth)
  const s = partsOf(schema)
  if (depth > 4) return anyValueText
  if (s.fields !== undefined) {
    const entries = Object.entries(s.fields)
    const member = ([name, f]: [string, Schema.Top]) =>
      fc.oneof(
        { weight: 2, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constant(`${JSON.stringify(name)}:null`) },
        { weight: 7, arbitrary: shaped(f, tame, depth + 1).map((v) => `${JSON.stringify(name)}:${v}`) },
        { weight: tame ? 0 : 1, arbitrary: anyValueText.map((v) => `${JSON.stringify(name)}:${v}`) }
      )
    return fc.tuple(fc.tuple(...entries.map(member)), fc.option(anyValueText, { freq: 5 })).map(([members, extra]) => {
      const parts = members.filter((m): m is string => m !== undefined)
      if (extra !== null) parts.push(`"server_owned":${extra}`)
      return `{${parts.join(",")}}`
    })
  }
  if (s.members !== undefined && s.literals === undefined) {
    return fc.oneof(...s.members.map((m) => shaped(m, tame, depth + 1)))
  }
  if (s.value !== undefined) {
    return fc.array(shaped(s.value, tame, depth + 1), { maxLength: 4 }).map((xs) => `[${xs.join(",")}]`)
  }
  // a leaf: values its schema takes (found among candidates by the schema's own decoder), or anything
  const decode = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)
  const valid = leafCandidates.filter((text) => Result.isSuccess(decode(parsed(text))))
  const any = fc.oneof(
    numberText,
    strings.map((x) => JSON.stringify(x)),
    anyValueText
  )
  if (valid.length === 0) return any
  return tame
    ? fc.constantFrom(...valid)
    : fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...valid) }, { weight: 1, arbitrary: any })
}

/** Texts of leaf values to choose valid ones from, per leaf schema. */
const leafCandidates: ReadonlyArray<string> = [
  ...["0", "1", "5000", "0.5", "12.34", "12.345", "1e2", "3.0", "100", "50", "7", "1000000", "0.000001", "2.5", "25"],
  ...["true", "false", '{"order":"A-1","n":1e400}', '{"k":"v"}', "{}"],
  ...[...new Set(literals)].flatMap((l) => [JSON.stringify(l), JSON.stringify(l.toLowerCase())]),
  ...[
    "https://example.com/hook",
    "http://127.0.0.1:4000/hooks",
    "myapp://done",
    "a@b.co",
    "+220 701 2345",
    "2026-11-21",
    "2026-11-21T09:00:00Z",
    "7012345",
    "Awa Jallow",
    "INV-001",
    "tx-1",
    "sku-1",
    "Tt1dced56049b82ecaeb5e14364c69d54f"
  ].map((x) => JSON.stringify(x))
]

/** Same decoded value: same keys in the same order, bigints and numbers equal, objects of the body kept as they are. */
const sameDecoded = (a: unknown, b: unknown): boolean => {
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b)
  if (Json.isRawJson(a) || Json.isRawJson(b)) return a === b
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (!isDeepStrictEqual(ka, kb)) return false
  return ka.every((k) => sameDecoded((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}

const parsed = (text: string): unknown => {
  const r = Json.parseJson(text)
  if (Result.isFailure(r)) throw new Error(`bad generated JSON ${text}`)
  return r.success
}

describe("fast decoders", () => {
  it("every request schema has one", () => {
    for (const [name, schema] of Object.entries(Requests.requests)) {
      expect(Fast.decoderOf(schema as Schema.Top), name).toBeDefined()
    }
  })

  for (const [name, schema] of Object.entries(Requests.requests)) {
    it(`${name}: decodes exactly what the schema decodes, to the same value`, () => {
      const fast = Fast.decoderOf(schema as Schema.Top) as Fast.FastDecode
      const full = Schema.decodeUnknownResult(schema as Schema.Codec<unknown, unknown>)
      let accepted = 0
      // query records are strings (`GET` lists); bodies are parsed JSON
      const isQuery = schema === Requests.ListQuery
      const inputs = isQuery
        ? fc
            .dictionary(fc.constantFrom("limit", "offset", "x"), strings, { maxKeys: 3 })
            .map((r) => ({ text: undefined, value: r as unknown }))
        : fc
            .oneof(shaped(schema as Schema.Top, true), shaped(schema as Schema.Top, false))
            .map((text) => ({ text, value: parsed(text) }))
      fc.assert(
        fc.property(inputs, ({ text, value }) => {
          const f = fast(value)
          const s = full(value, { errors: "first" })
          if (f instanceof Fast.NotAnObject) {
            // a raw number where an object belongs: refused, though the schema's decoder takes it for an empty object
            expect(Result.isFailure(decodeRequest(schema as Schema.Codec<unknown, unknown>, value))).toBe(true)
            return
          }
          expect(f !== Fast.rejected, `fast and schema disagree on ${text ?? JSON.stringify(value)}`).toBe(
            Result.isSuccess(s)
          )
          if (Result.isSuccess(s)) {
            accepted += 1
            expect(sameDecoded(f, s.success), `different values for ${text ?? JSON.stringify(value)}`).toBe(true)
            // and decodeRequest answers it
            expect(Result.isSuccess(decodeRequest(schema as Schema.Codec<unknown, unknown>, value))).toBe(true)
          }
        }),
        { numRuns: deep ? 40_000 : 2_000 }
      )
      // the generator reaches valid bodies, so the agreement above covers decoding, not only refusals
      expect(accepted, "valid bodies generated").toBeGreaterThan(50)
    })
  }

  it("leaves every refusal, and its words, to the schema", () => {
    const r = decodeRequest(Requests.CreateConversionBody, parsed('{"gmd_amount":12.345,"network":"TRC20"}'))
    expect(Result.isFailure(r) && r.failure.message).toBe("gmd_amount must have at most 2 decimal places.")
  })

  it("refuses a number no double equals where an object belongs, as any other number there", () => {
    const message = (schema: Schema.Codec<unknown, unknown>, text: string) => {
      const r = decodeRequest(schema, parsed(text))
      return Result.isFailure(r) ? `${r.failure.message} (${r.failure.param ?? "-"})` : "decoded"
    }
    // the schema's decoder alone takes these raw numbers for objects with no members
    expect(Result.isSuccess(Schema.decodeUnknownResult(Requests.UpdateInvoiceBody)(parsed('{"data":1e400}')))).toBe(
      true
    )
    expect(message(Requests.UpdateInvoiceBody, '{"data":1e400}')).toBe("data must be an object. (data)")
    expect(message(Requests.UpdateInvoiceBody, '{"data":5}')).toBe("data must be an object. (data)")
    expect(message(Requests.CreateConversionBody, "100.10000000000000001")).toBe(
      "The request body must be a JSON object. (-)"
    )
    expect(message(Requests.CreateConversionBody, "5")).toBe("The request body must be a JSON object. (-)")
    expect(message(Requests.CreateConversionBody, '{"network":"TRC20","markup_config":1e400}')).toBe(
      "markup_config must be an object. (markup_config)"
    )
    // a raw number where a number belongs is read exactly, as before
    expect(message(Requests.CreateConversionBody, '{"gmd_amount":5000.000000000000000001}')).toBe(
      "gmd_amount must have at most 2 decimal places. (gmd_amount)"
    )
  })
})
