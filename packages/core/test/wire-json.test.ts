import { isDeepStrictEqual } from "node:util"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Json from "../src/wire/Json.ts"
import { body_bytes_max, body_depth_max } from "../src/wire/Limits.ts"

const parsed = (text: string): unknown => {
  const r = Json.parseJson(text)
  if (Result.isFailure(r)) throw new Error(`unexpected failure: ${r.failure.message}`)
  return r.success
}
const failure = (text: string) => {
  const r = Json.parseJson(text)
  if (Result.isSuccess(r)) throw new Error("expected a failure")
  return r.failure
}

describe("parseJson", () => {
  it("keeps exactly representable numbers as numbers", () => {
    expect(parsed('{"a": 0.1, "b": 10.00, "c": 1e2, "d": 100.001, "e": -5, "f": 0}')).toEqual({
      a: 0.1,
      b: 10,
      c: 100,
      d: 100.001,
      e: -5,
      f: 0
    })
  })

  it("keeps a number whose double is not the written decimal as its raw literal", () => {
    const v = parsed('{"a": 100.10000000000000001, "b": 1e400, "c": 9007199254740993}') as Record<string, unknown>
    for (const [key, source] of [
      ["a", "100.10000000000000001"],
      ["b", "1e400"],
      ["c", "9007199254740993"]
    ] as const) {
      expect(Json.isRawJson(v[key])).toBe(true)
      expect(Json.numberText(v[key] as Json.JsonNumber)).toBe(source)
    }
  })

  it("writes raw numbers back byte for byte with JSON.stringify", () => {
    const text = '{"n":100.10000000000000001,"m":{"x":[1e400,2]}}'
    expect(JSON.stringify(parsed(text))).toBe(text)
  })

  it("refuses malformed JSON with one validation_error", () => {
    for (const text of ["", "{", "{'a':1}", '{"a":01}', '{"a":NaN}', "[1,]", "\ufeff{}"]) {
      const e = failure(text)
      expect(e.code).toBe("validation_error")
      expect(e.message).toBe("Malformed JSON body")
    }
  })

  it("refuses an object that names a member twice, at any depth, names compared decoded", () => {
    for (const [text, name] of [
      ['{"data":{"amount":100},"data":{"amount":5}}', "data"],
      ['{"data":{"amount":100,"amount":5}}', "amount"],
      ['[{"a":1},{"b":[{"c":1,"c":2}]}]', "c"],
      ['{"amount":1,"\\u0061mount":2}', "amount"],
      ['{"a\\"b":1,"a\\u0022b":2}', 'a"b'],
      ['{ "x" : 1 , "x" : 1 }', "x"]
    ] as const) {
      const e = failure(text)
      expect(e.code, text).toBe("validation_error")
      expect(e.message, text).toBe(`The request body names "${name}" twice in one object; send each member once.`)
    }
    // the same name in different objects, names equal to values, and strings that look like JSON are fine
    for (const text of [
      '{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}',
      '{"a":"a","b":"a","c":["a","a"]}',
      '{"a":"\\",\\"a\\":1","b":"{\\"b\\":1,\\"b\\":2}"}',
      '{"a\\\\":1,"a":2}'
    ]) {
      expect(Result.isSuccess(Json.parseJson(text)), text).toBe(true)
    }
  })

  /** True when `doubled` parses to what `text` does: the spliced `"name":null,` is a member whose copy wins. */
  const spliceMadeAMember = (text: string, doubled: string): boolean => {
    try {
      return isDeepStrictEqual(JSON.parse(doubled), JSON.parse(text))
    } catch {
      return false
    }
  }

  it("duplicateName agrees with a parse that keeps every member, on any JSON", () => {
    // objects from fc have distinct names; splicing a copy of one member in makes a duplicate
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value)
        expect(Json.duplicateName(text)).toBeUndefined()
        const m = /\{("(?:[^"\\]|\\.)*"):/.exec(text)
        if (m === null) return
        const open = m.index + 1
        const doubled = `${text.slice(0, open)}${m[1]}:null,${text.slice(open)}`
        // the match may straddle two strings (`["{",":x"]`): then the splice made no member; skip it
        if (!spliceMadeAMember(text, doubled)) return
        expect(Json.duplicateName(doubled), doubled).toBe(JSON.parse(m[1] as string))
      }),
      { numRuns: 500 }
    )
  })

  it("refuses bodies nested deeper than body_depth_max", () => {
    const ok = "[".repeat(body_depth_max) + "]".repeat(body_depth_max)
    expect(Result.isSuccess(Json.parseJson(ok))).toBe(true)
    const deep = "[".repeat(body_depth_max + 1) + "]".repeat(body_depth_max + 1)
    expect(failure(deep).message).toContain("nested")
    // brackets inside strings do not count
    expect(parsed(JSON.stringify({ s: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"' }))).toEqual({
      s: '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\\"'
    })
  })

  it("refuses bodies over body_bytes_max bytes, counted in UTF-8", () => {
    const filler = (n: number) => JSON.stringify({ s: "x".repeat(n - 8) })
    expect(Result.isSuccess(Json.parseJson(filler(body_bytes_max)))).toBe(true)
    expect(failure(filler(body_bytes_max + 1)).message).toContain(`${body_bytes_max} bytes`)
    // 3-byte characters: fewer code units than bytes
    const wide = JSON.stringify({ s: "\u20ac".repeat(Math.ceil(body_bytes_max / 3)) })
    expect(wide.length).toBeLessThan(body_bytes_max)
    expect(failure(wide).code).toBe("validation_error")
  })

  it("utf8Length counts like TextEncoder", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        expect(Json.utf8Length(s)).toBe(new TextEncoder().encode(s).length)
      })
    )
  })

  it("every double survives JSON text -> parseJson as the same plain number", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        const v = parsed(JSON.stringify({ n })) as { n: unknown }
        expect(typeof v.n).toBe("number")
        expect(Object.is(v.n, n) || (n === 0 && v.n === 0)).toBe(true)
      })
    )
  })

  it("a literal longer than the shortest form of its double becomes raw exactly when its value differs", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 9 }), (cents, digit) => {
        const base = (cents / 100).toFixed(2)
        const text = `${base}000000000000000000000${digit}` // beyond double precision
        const v = parsed(`[${text}]`) as Array<unknown>
        expect(Json.isRawJson(v[0])).toBe(true)
        const same = parsed(`[${base}000]`) as Array<unknown>
        expect(typeof same[0]).toBe("number")
      })
    )
  })
})

describe("parseNumberLiteral", () => {
  it("canonicalises literals", () => {
    expect(Json.parseNumberLiteral("10.00")).toEqual({ negative: false, digits: "1", exponent: 1 })
    expect(Json.parseNumberLiteral("1e2")).toEqual({ negative: false, digits: "1", exponent: 2 })
    expect(Json.parseNumberLiteral("-0.0012")).toEqual({ negative: true, digits: "12", exponent: -4 })
    expect(Json.parseNumberLiteral("-0")).toEqual({ negative: false, digits: "", exponent: 0 })
    expect(Json.parseNumberLiteral("Infinity")).toBeUndefined()
    expect(Json.parseNumberLiteral("1.")).toBeUndefined()
  })
})
