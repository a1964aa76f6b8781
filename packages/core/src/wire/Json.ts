import { Result } from "effect"
import * as Errors from "../Errors.ts"
import { clip } from "../Text.ts"
import { body_bytes_max, body_depth_max } from "./Limits.ts"

/**
 * Exact JSON parsing of request bodies.
 *
 * `JSON.parse` turns every number literal into a double, so `100.10000000000000001`
 * silently becomes `100.1` and `1e400` becomes `Infinity`. A payments API must not
 * accept an amount the sender did not write. `parseJson` reads each number's source
 * text (the reviver's third `context` argument, Node >= 21) and:
 * - keeps a plain `number` when the double is the exact decimal that was written
 *   (`10.00`, `1e2`, `0.1`, `100.001`: the scale check happens later, on the exact value);
 * - otherwise returns a *raw JSON number* (`JSON.rawJSON(source)`): a frozen object
 *   holding the literal as written. The number decoders of `Amount.ts` read its
 *   source, so they accept or reject it by its true value and scale, and
 *   `JSON.stringify` writes it back byte for byte (metadata is echoed untouched).
 */

/** A number literal kept as written because no double equals it (see `parseJson`). */
export interface RawJsonNumber {
  readonly rawJSON: string
}

/** A JSON number as the decoders see it: a double, or the exact literal when no double equals it. */
export type JsonNumber = number | RawJsonNumber

/** The value of a parsed JSON body. */
export type JsonValue =
  | null
  | boolean
  | string
  | JsonNumber
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

// TypeScript's ES2023 lib does not declare these yet (they are ES2025 / Node >= 21).
interface RawJsonApi {
  rawJSON(text: string): RawJsonNumber
  isRawJSON(value: unknown): boolean
}
const JSONX = JSON as unknown as JSON & RawJsonApi

/** True for a raw JSON value made by `parseJson` (or `JSON.rawJSON`). */
export const isRawJson = (u: unknown): u is RawJsonNumber => typeof u === "object" && u !== null && JSONX.isRawJSON(u)

/** True for a JSON number: a `number` or a raw JSON number literal. */
export const isJsonNumber = (u: unknown): u is JsonNumber => typeof u === "number" || isRawJson(u)

/** Wraps a number literal as a raw JSON number (it must be a valid JSON number literal). */
export const rawNumber = (literal: string): RawJsonNumber => JSONX.rawJSON(literal)

/**
 * A JSON value with every object's members in UTF-16 code-unit order
 * (`sort()`), raw numbers kept as they are: `JSON.stringify` of it is one text
 * for every spacing and member order of the same value (the idempotency
 * fingerprint of a request's body). Objects come out without a prototype, so a
 * member named `__proto__` stays a member.
 */
export const sortMembers = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortMembers)
  if (value === null || typeof value !== "object" || isRawJson(value)) return value
  const out: Record<string, unknown> = Object.create(null)
  for (const k of Object.keys(value).sort()) out[k] = sortMembers((value as Record<string, unknown>)[k])
  return out
}

/**
 * A decimal literal in canonical form: value = sign * digits * 10^exponent, with
 * `digits` free of leading and trailing zeros ("" for zero, whose sign is +1).
 * Never builds a bigint, so a hostile literal costs only a scan of its text.
 */
export interface NumberLiteral {
  readonly negative: boolean
  readonly digits: string
  readonly exponent: number
}

const JSON_NUMBER = /^(-)?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/**
 * Reads a number literal (`"-12.50"`, `"1e2"`, `"0.000001"`, `"Infinity"` is not one)
 * into canonical form. Accepts what `JSON.parse` accepts and what `String(number)`
 * prints for finite numbers; `undefined` for anything else.
 */
export const parseNumberLiteral = (text: string): NumberLiteral | undefined => {
  const m = JSON_NUMBER.exec(text)
  if (m === null) return undefined
  const [, sign, int = "", frac = "", exp = "0"] = m
  let digits = int + frac
  let start = 0
  while (start < digits.length && digits.charCodeAt(start) === 48) start++
  let end = digits.length
  while (end > start && digits.charCodeAt(end - 1) === 48) end--
  const trailing = digits.length - end
  digits = digits.slice(start, end)
  if (digits.length === 0) return { negative: false, digits: "", exponent: 0 }
  // Exponents beyond +-1e15 are out of any range we check; Number keeps them ordered.
  const exponent = Number(exp) - frac.length + trailing
  return { negative: sign === "-", digits, exponent }
}

/** The literal a JSON number stands for: the raw source, or `String(n)` for a double. */
export const numberText = (n: JsonNumber): string => (typeof n === "number" ? String(n) : n.rawJSON)

const sameLiteral = (a: NumberLiteral | undefined, b: NumberLiteral | undefined): boolean =>
  a !== undefined && b !== undefined && a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent

/**
 * Reviver: keep the double when it is exactly the written decimal, else keep the
 * literal (`JSON.rawJSON`). Also for stores reading back text they wrote: a raw
 * number they kept (free-form metadata) comes back as the same raw number.
 */
export const exactNumbers = function (
  this: unknown,
  _key: string,
  value: unknown,
  context?: { source?: string }
): unknown {
  if (typeof value !== "number") return value
  const source = context?.source
  if (source === undefined) return value // runtime without source access: nothing better to do
  if (sameLiteral(parseNumberLiteral(source), parseNumberLiteral(String(value)))) return value
  return JSONX.rawJSON(source)
}

/** UTF-8 length of a string, stopping early once it passes `stop_after`. */
export const utf8Length = (text: string, stop_after = Number.POSITIVE_INFINITY): number => {
  let bytes = 0
  for (let i = 0; i < text.length && bytes <= stop_after; i++) {
    const c = text.charCodeAt(i)
    if (c < 0x80) bytes += 1
    else if (c < 0x800) bytes += 2
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

/**
 * Deepest nesting of arrays and objects in a JSON text, stopping early once it
 * passes `stop_after`. Scans outside strings only. Checked before `JSON.parse`
 * so a hostile `[[[[...]]]]` never reaches the recursive reviver.
 */
export const nestingDepth = (text: string, stop_after = Number.POSITIVE_INFINITY): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 91 || c === 123) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > stop_after) return deepest
      }
    } else if (c === 93 || c === 125) depth--
  }
  return deepest
}

/**
 * The first member name that some object of `text` (valid JSON) gives twice,
 * or undefined. `JSON.parse` keeps the last of them silently; a proxy or
 * another parser in front of the API may keep the first, so the two would read
 * different amounts from one body. Names are compared decoded (`"a"` and
 * `"\u0061"` are the same name).
 */
export const duplicateName = (text: string): string | undefined => {
  // one entry per open container: the names seen so far of an object, undefined for an array
  const open: Array<Set<string> | undefined> = []
  let nameNext = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      const start = i
      let escaped = false
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 92) {
          escaped = true
          i++
        } else if (d === 34) break
      }
      const names = open[open.length - 1]
      if (nameNext && names !== undefined) {
        const name = escaped ? (JSON.parse(text.slice(start, i + 1)) as string) : text.slice(start + 1, i)
        if (names.has(name)) return name
        names.add(name)
      }
      nameNext = false
    } else if (c === 123) {
      open.push(new Set())
      nameNext = true
    } else if (c === 91) {
      open.push(undefined)
      nameNext = false
    } else if (c === 93 || c === 125) {
      open.pop()
      nameNext = false
    } else if (c === 44) nameNext = open[open.length - 1] !== undefined
  }
  return undefined
}

/** What `scanJson` learns of a JSON text in one pass. */
export interface Scanned {
  /** The deepest nesting of arrays and objects; once it passes `depth_max` the scan stops there. */
  readonly depth: number
  /** The first member name that some object gives twice (see `duplicateName`); meaningful for valid JSON only. */
  readonly duplicate: string | undefined
  /**
   * Every number literal has at most 15 digits and no exponent. Such a decimal
   * is below 10^15 and has at most 15 significant digits, so the double
   * `JSON.parse` makes of it prints back as that very decimal: `exactNumbers`
   * would keep every one of them as it is, and `JSON.parse` needs no reviver.
   */
  readonly plainNumbers: boolean
}

/** Digits a number literal may have and still be read exactly by `JSON.parse` alone (see `Scanned.plainNumbers`). */
const plain_digits_max = 15

/** Names an object keeps in a list before a Set takes over (objects of request bodies name a handful). */
const names_listed_max = 8

/** A member name as written between its quotes, decoded; undefined when it is not valid JSON text (JSON.parse will say so). */
const decodedName = (quoted: string): string | undefined => {
  try {
    return JSON.parse(quoted) as string
  } catch {
    return undefined
  }
}

/**
 * One pass over a JSON text (valid or not) that finds what `parseJson` checks
 * besides the grammar: the nesting depth (stopping once past `depth_max`, so a
 * hostile `[[[[…` costs only its first levels), the first member name an object
 * gives twice (as `duplicateName`), and whether `JSON.parse` alone reads every
 * number exactly (`plainNumbers`). Strings are skipped; only the names of members
 * are read out of them.
 */
export const scanJson = (text: string, depth_max = Number.POSITIVE_INFINITY): Scanned => {
  // one entry per open container: the names seen so far of an object, null for an array
  const open: Array<Array<string> | Set<string> | null> = []
  let depth = 0
  let deepest = 0
  let duplicate: string | undefined
  let plainNumbers = true
  let nameNext = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      const start = i
      let escaped = false
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d === 92) {
          escaped = true
          i++
        } else if (d === 34) break
      }
      const names = nameNext && duplicate === undefined ? open[open.length - 1] : null
      if (names !== null && names !== undefined) {
        const name = escaped ? decodedName(text.slice(start, i + 1)) : text.slice(start + 1, i)
        if (name !== undefined) {
          if (Array.isArray(names)) {
            if (names.includes(name)) duplicate = name
            else if (names.length < names_listed_max) names.push(name)
            else open[open.length - 1] = new Set([...names, name])
          } else if (names.has(name)) duplicate = name
          else names.add(name)
        }
      }
      nameNext = false
    } else if (c === 123 || c === 91) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > depth_max) return { depth: deepest, duplicate, plainNumbers }
      }
      open.push(c === 123 ? [] : null)
      nameNext = c === 123
    } else if (c === 125 || c === 93) {
      depth--
      open.pop()
      nameNext = false
    } else if (c === 44) nameNext = open.length > 0 && open[open.length - 1] !== null
    else if (c === 45 || (c >= 48 && c <= 57)) {
      // a number literal: its digits, and whether it has an exponent
      let digits = 0
      for (; i < n; i++) {
        const d = text.charCodeAt(i)
        if (d >= 48 && d <= 57) digits++
        else if (d === 101 || d === 69) plainNumbers = false
        else if (d !== 45 && d !== 43 && d !== 46) break
      }
      i-- // the loop's i++ comes back to the character after the literal
      if (digits > plain_digits_max) plainNumbers = false
    }
  }
  return { depth: deepest, duplicate, plainNumbers }
}

/**
 * Parses a request body exactly (see the module comment). Fails with one
 * `validation_error`: "Malformed JSON body", or a body over `body_bytes_max`
 * bytes, or nested deeper than `body_depth_max`, or an object that names a
 * member twice (see `duplicateName`).
 *
 * One scan of the text (`scanJson`) finds the depth, a name given twice and
 * whether every number is plain; then `JSON.parse` reads it, with the
 * `exactNumbers` reviver only when some number is not plain (a reviver makes
 * `JSON.parse` several times slower, and request bodies seldom need it).
 *
 * @example
 * parseJson('{"amount": 100.10000000000000001}') // amount is a raw number: the 2-place decoder rejects it
 * parseJson('{"amount": 10.00}')                // amount is the number 10
 */
export const parseJson = (text: string): Result.Result<unknown, Errors.DomainError> => {
  // a UTF-16 code unit is at most 3 bytes of UTF-8: a short text needs no count
  if (
    text.length > body_bytes_max ||
    (text.length * 3 > body_bytes_max && utf8Length(text, body_bytes_max) > body_bytes_max)
  ) {
    return Result.fail(Errors.validation(`The request body must not exceed ${body_bytes_max} bytes.`))
  }
  const scanned = scanJson(text, body_depth_max)
  if (scanned.depth > body_depth_max) {
    return Result.fail(
      Errors.validation(`The request body must not be nested more than ${body_depth_max} levels deep.`)
    )
  }
  let value: unknown
  try {
    value = scanned.plainNumbers ? JSON.parse(text) : JSON.parse(text, exactNumbers)
  } catch {
    return Result.fail(Errors.validation("Malformed JSON body"))
  }
  const twice = scanned.duplicate
  return twice === undefined
    ? Result.succeed(value)
    : Result.fail(
        Errors.validation(`The request body names "${clip(twice, 64)}" twice in one object; send each member once.`)
      )
}
