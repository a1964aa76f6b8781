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

/** True when `doubled` parses to what `text` does: the spliced `"name":null,` is a member whose copy wins. */
const spliceMadeAMember = (text: string, doubled: string): boolean => {
  try {
    return isDeepStrictEqual(JSON.parse(doubled), JSON.parse(text))
  } catch {
    return false
  }
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

/** A JSON number literal of any shape: sign, 1-20 integer digits, 0-20 fraction digits, an optional exponent. */
const numberLiteral = fc
  .record({
    negative: fc.boolean(),
    int: fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,19}$/)),
    frac: fc.option(fc.stringMatching(/^[0-9]{1,20}$/), { nil: undefined }),
    exp: fc.option(fc.stringMatching(/^[eE][+-]?[0-9]{1,3}$/), { nil: undefined })
  })
  .map(
    ({ negative, int, frac, exp }) => `${negative ? "-" : ""}${int}${frac === undefined ? "" : `.${frac}`}${exp ?? ""}`
  )

/** JSON text whose numbers are literals of any shape (`numberLiteral`), in objects and arrays. */
const jsonWithLiterals: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    numberLiteral,
    fc.constantFrom("true", "false", "null", '"x"', '"1e5"', '"\\u0031"'),
    tie("array"),
    tie("object")
  ),
  array: fc.array(tie("value") as fc.Arbitrary<string>, { maxLength: 4 }).map((xs) => `[${xs.join(",")}]`),
  object: fc
    .uniqueArray(fc.tuple(fc.string({ maxLength: 4 }), tie("value") as fc.Arbitrary<string>), {
      maxLength: 4,
      selector: ([k]) => k
    })
    .map((members) => `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(" , ")}}`)
})).value as fc.Arbitrary<string>

/** Same values: numbers by Object.is (so -0 counts), raw numbers by their literal. */
const sameValue = (a: unknown, b: unknown): boolean => {
  if (Json.isRawJson(a) || Json.isRawJson(b)) {
    return Json.isRawJson(a) && Json.isRawJson(b) && a.rawJSON === b.rawJSON
  }
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return Object.is(a, b)
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  return (
    ka.length === kb.length &&
    ka.every(
      (k) => Object.hasOwn(b, k) && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])
    )
  )
}

describe("scanJson", () => {
  it("parseJson reads every text as JSON.parse with the exactNumbers reviver does, plain numbers or not", () => {
    fc.assert(
      fc.property(jsonWithLiterals, (text) => {
        const reference = JSON.parse(text, Json.exactNumbers)
        expect(sameValue(parsed(text), reference), text).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })

  it("plainNumbers holds exactly when no literal has more than 15 digits or an exponent", () => {
    fc.assert(
      fc.property(numberLiteral, (literal) => {
        const digits = literal.split(/[eE]/)[0]?.replace(/[^0-9]/g, "").length ?? 0
        expect(Json.scanJson(`[${literal}]`).plainNumbers, literal).toBe(digits <= 15 && !/[eE]/.test(literal))
        // a plain literal is one the reviver keeps as the double JSON.parse makes of it
        if (Json.scanJson(`[${literal}]`).plainNumbers) {
          expect(typeof (JSON.parse(`[${literal}]`, Json.exactNumbers) as Array<unknown>)[0]).toBe("number")
        }
      }),
      { numRuns: 2000 }
    )
    // strings and the letters of true/false/null are not numbers
    expect(Json.scanJson('{"a":"1e400","b":true,"c":"12345678901234567890"}').plainNumbers).toBe(true)
  })

  it("finds the name duplicateName finds and the depth nestingDepth finds, on any JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), fc.nat(), (value, seed) => {
        const text = JSON.stringify(value)
        const scanned = Json.scanJson(text)
        expect(scanned.duplicate).toBe(Json.duplicateName(text))
        expect(scanned.depth).toBe(Json.nestingDepth(text))
        // a copy of one member spliced in (the n-th object that has a member)
        const opens = [...text.matchAll(/\{("(?:[^"\\]|\\.)*"):/g)]
        const m = opens[seed % Math.max(1, opens.length)]
        if (m === undefined) return
        const open = m.index + 1
        const doubled = `${text.slice(0, open)}${m[1]}:null,${text.slice(open)}`
        if (!spliceMadeAMember(text, doubled)) return
        expect(Json.scanJson(doubled).duplicate, doubled).toBe(Json.duplicateName(doubled))
      }),
      { numRuns: 1000 }
    )
  })

  it("finds a name given twice among many (past the listed names), and stops at depth_max", () => {
    const names = Array.from({ length: 20 }, (_, i) => `"m${i}":${i}`)
    expect(Json.scanJson(`{${names.join(",")}}`).duplicate).toBeUndefined()
    expect(Json.scanJson(`{${names.join(",")},"m3":0}`).duplicate).toBe("m3")
    expect(Json.scanJson(`{"m12":0,${names.join(",")}}`).duplicate).toBe("m12")
    expect(Json.scanJson("[".repeat(100), 5).depth).toBe(6)
    // a name whose escape is broken does not throw: the text is malformed, which JSON.parse reports
    expect(Json.scanJson('{"\\x":1,"\\x":2}').duplicate).toBeUndefined()
    expect(failure('{"\\x":1}').message).toBe("Malformed JSON body")
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
