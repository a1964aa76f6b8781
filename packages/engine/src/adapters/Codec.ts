/**
 * The text form of a row's `data` for durable adapters: JSON, with the values
 * JSON has no form for made explicit, so that `decode(encode(x))` is deeply
 * equal to `x` for every value the engine stores.
 *
 * - A bigint (minor units, micro-dollars) becomes `{"$b": "<digits>"}`.
 * - An object key that starts with `$` gets one more `$` in front (`$x` → `$$x`),
 *   so caller data (`metadata` is free-form) can never be read back as a bigint
 *   marker; decoding strips it again.
 * - `undefined` object properties are dropped, as JSON does (the engine treats a
 *   missing optional field and an undefined one alike).
 *
 * The ledger's amounts are stored in their own numeric columns, not through this.
 */
import { Json } from "@xaalis/core"

const BIGINT = "$b"

const escapeKeys = (value: object): object => {
  let needs = false
  for (const k of Object.keys(value)) if (k.charCodeAt(0) === 36 /* $ */) needs = true
  if (!needs) return value
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.charCodeAt(0) === 36 ? `$${k}` : k, v]))
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") return { [BIGINT]: value.toString() }
  if (value !== null && typeof value === "object" && !Array.isArray(value)) return escapeKeys(value)
  return value
}

function reviver(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value
  const keys = Object.keys(value)
  if (keys.length === 1 && keys[0] === BIGINT) {
    const digits = (value as Record<string, unknown>)[BIGINT]
    if (typeof digits === "string") return BigInt(digits)
  }
  let escaped = false
  for (const k of keys) if (k.charCodeAt(0) === 36) escaped = true
  if (!escaped) return value
  // Object.fromEntries defines own properties, so a "__proto__" key stays a key
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.charCodeAt(0) === 36 ? k.slice(1) : k, v]))
}

/** Met by `prepared` where only `JSON.stringify`'s own walk can say what `replacer` would see. */
const NOT_PLAIN = Symbol("not plain")

/** Deeper than this, `prepared` leaves the value to the replacer (which also reports a cycle as it always did). */
const depth_max = 1000

/**
 * What `JSON.stringify(value, replacer)` would serialise, as a tree plain
 * `JSON.stringify` writes the same way: bigints as markers and `$`-keys
 * escaped, copying only the objects and arrays that change (the rest is
 * shared). Only plain data is walked: objects whose prototype is
 * `Object.prototype`, arrays whose prototype is `Array.prototype`, neither
 * with a `toJSON` (own or inherited), and raw JSON numbers. Anything else (a
 * class instance, a Date, a null prototype, a `toJSON`, nesting deeper than
 * `depth_max`, so a cycle too) throws `NOT_PLAIN`, and `encode` leaves the
 * whole value to the replacer. (A getter is read more than once here: stored
 * data has none.)
 */
const prepared = (value: unknown, depth: number): unknown => {
  if (typeof value === "bigint") return { [BIGINT]: value.toString() }
  if (value === null || typeof value !== "object") return value
  if (depth > depth_max) throw NOT_PLAIN
  const proto = Object.getPrototypeOf(value)
  if (proto === Array.prototype) {
    if ("toJSON" in value) throw NOT_PLAIN
    const array = value as Array<unknown>
    let copy: Array<unknown> | undefined
    for (let i = 0; i < array.length; i++) {
      const v = array[i]
      const w = prepared(v, depth + 1)
      if (w !== v) {
        copy ??= array.slice()
        copy[i] = w
      }
    }
    return copy ?? array
  }
  if (proto !== Object.prototype) {
    if (Json.isRawJson(value)) return value
    throw NOT_PLAIN
  }
  if ("toJSON" in value) throw NOT_PLAIN
  const record = value as Record<string, unknown>
  let copy: Record<string, unknown> | undefined
  let escaped = false
  for (const k of Object.keys(record)) {
    if (k.charCodeAt(0) === 36 /* $ */) escaped = true
    const v = record[k]
    const w = prepared(v, depth + 1)
    if (w !== v) {
      // the spread copies a "__proto__" key as an own data property: assigning writes it, not the prototype
      copy ??= { ...record }
      copy[k] = w
    }
  }
  const result = copy ?? record
  return escaped ? escapeKeys(result) : result
}

/**
 * @internal `encode` by `JSON.stringify`'s replacer, as it was: what the walk
 * is held to in tests, and what `encode` falls back to.
 */
export const encodeByReplacer = (data: unknown): string => JSON.stringify(data, replacer)

/**
 * Serialises a row's data: `JSON.stringify(data, replacer)`, computed by
 * walking plain data once and then stringifying it without a replacer (a
 * replacer makes `JSON.stringify` call back into JavaScript for every value:
 * a stored conversion took 3.1–3.3 µs that way in a loop, 2.7 µs walked).
 */
export const encode = (data: unknown): string => {
  let tree: unknown
  try {
    tree = prepared(data, 0)
  } catch (e) {
    if (e !== NOT_PLAIN) throw e
    return encodeByReplacer(data)
  }
  return JSON.stringify(tree)
}

/** `reviver`, and numbers a double cannot hold exactly kept as the raw literal they were written as. */
function exactReviver(this: unknown, key: string, value: unknown, context?: { source?: string }): unknown {
  return typeof value === "number" ? Json.exactNumbers.call(this, key, value, context) : reviver(key, value)
}

/**
 * A number literal a double may not hold exactly: 16+ digits (and dots), or an
 * exponent. `encode` writes no spaces, so a number starts right after `:`, `,`
 * or `[`; hex digits inside strings (ids, hashes) never match.
 */
const INEXACT_NUMBER = /[:,[]-?(?:[\d.]{16}|[\d.]+[eE])/

/**
 * What `JSON.parse(text, reviver)` makes of `value`, a fresh result of plain
 * `JSON.parse`: children first (in place), then the value itself through
 * `reviver`, only when it has a `$` key (the one case `reviver` changes).
 */
const revived = (value: unknown): unknown => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v = value[i]
      if (typeof v === "object" && v !== null) {
        const w = revived(v)
        if (w !== v) value[i] = w
      }
    }
    return value
  }
  const record = value as Record<string, unknown>
  let escaped = false
  for (const k of Object.keys(record)) {
    if (k.charCodeAt(0) === 36 /* $ */) escaped = true
    const v = record[k]
    if (typeof v !== "object" || v === null) continue // only objects change
    const w = revived(v)
    // an own data property, "__proto__" included (JSON.parse defines it): assigning writes it, not the prototype
    if (w !== v) record[k] = w
  }
  return escaped ? reviver("", record) : record
}

/**
 * Reads back what `encode` wrote. Free-form caller data (metadata) may hold a
 * number a double cannot (`12345678901234567890`, `1e400`): it was kept as its
 * literal (a raw JSON number, as the wire parser reads it) and comes back so;
 * only then is `JSON.parse` given a reviver (it needs each number's source).
 * Otherwise the text is parsed plainly and, when it holds `"$` or a `\u`
 * escape (that could spell one), bigint markers and escaped keys are undone
 * by one walk of the parsed tree, bottom-up as a reviver would: a reviver
 * makes `JSON.parse` call back into JavaScript for every value and hand it
 * its source text: a stored conversion (545 bytes, six bigints) took 38 µs
 * that way on the bench VM, 13 µs parsed and walked (a plain parse: 4.8 µs).
 */
export const decode = (text: string): unknown =>
  INEXACT_NUMBER.test(text)
    ? JSON.parse(text, exactReviver as (key: string, value: unknown) => unknown)
    : text.includes('"$') || text.includes("\\u")
      ? revived(JSON.parse(text))
      : JSON.parse(text)

/** @internal `decode` by `JSON.parse`'s reviver, as it was: what the walk is held to in tests. */
export const decodeByReviver = (text: string): unknown =>
  JSON.parse(text, (INEXACT_NUMBER.test(text) ? exactReviver : reviver) as (key: string, value: unknown) => unknown)
