import { Effect, Schema, SchemaAST, SchemaGetter, SchemaIssue, SchemaTransformation } from "effect"
import type { Currency } from "../money/Currency.ts"
import * as Decimal from "../money/Decimal.ts"
import { pow10 } from "../money/Rounding.ts"
import { rejected, withFast } from "./Fast.ts"
import { isJsonNumber, type JsonNumber, numberText, parseNumberLiteral } from "./Json.ts"

/**
 * Schemas for JSON-number amounts, decimals and integers.
 *
 * The spec's amounts are JSON numbers, so a string such as `"10"` is refused. A
 * number is read from the decimal literal it stands for (the raw source kept by
 * `Json.parseJson` when no double equals it), never through floating point
 * arithmetic, and:
 * - more decimal places than the field's scale is a failure, never a rounding
 *   (decisions §1): `100.001` for a 2-place amount, `100.10000000000000001` too;
 * - a value outside the field's range fails with a message that states the bound.
 *
 * Messages are phrased to follow the field's path: "must have at most 2 decimal
 * places"; `Decode.decodeRequest` prefixes the path ("data.amount must ...").
 */

/** The exact value of a JSON number, or what is wrong with it. */
type Exact = Decimal.Decimal | "not_finite" | "too_precise" | "too_large" | "too_small"

/** Integer digits beyond which a value is out of every range here (keeps bigint work tiny). */
const int_digits_max = 30

/**
 * Reads a JSON number exactly, refusing more than `places_max` decimal places.
 * Works on the literal: no bigint is built for absurd literals (`1e400`, 10k digits).
 */
export const readExact = (u: JsonNumber, places_max: number): Exact => {
  if (typeof u === "number" && !Number.isFinite(u)) return "not_finite"
  const lit = parseNumberLiteral(numberText(u))
  if (lit === undefined) return "not_finite"
  if (lit.digits === "") return Decimal.zero
  if (-lit.exponent > places_max) return "too_precise"
  if (lit.digits.length + lit.exponent > int_digits_max) return lit.negative ? "too_small" : "too_large"
  const units = BigInt(lit.digits) * (lit.exponent > 0 ? pow10(lit.exponent) : 1n)
  return Decimal.make(lit.negative ? -units : units, Math.max(0, -lit.exponent))
}

const placesMessage = (places: number): string =>
  places === 0 ? "must be a whole number" : `must have at most ${places} decimal place${places === 1 ? "" : "s"}`

/** A bound for messages: `100000000000n, 2` -> `"1000000000"`, `150n, 2` -> `"1.5"`. */
const plain = (units: bigint, scale: number): string => Decimal.format(Decimal.normalize({ units, scale }))

const fail = (message: string, input: unknown) => Effect.fail(new SchemaIssue.InvalidValue({ message }, input))

/** What is wrong with a number, in the words of the field's message. */
class Problem {
  readonly message: string
  constructor(message: string) {
    this.message = message
  }
}
const problem = (message: string) => new Problem(message)

/** A number's decoded value as the schema's transformation answers it: the value, or the problem as an issue. */
const orFail = <A>(result: A | Problem, input: unknown) =>
  result instanceof Problem ? fail(result.message, input) : Effect.succeed(result)

const orRejected = <A>(result: A | Problem): A | typeof rejected => (result instanceof Problem ? rejected : result)

/** The fast decoder of a number field: a JSON number and its value, from the function its schema decodes with. */
const fastly =
  <A>(decode: (u: JsonNumber) => A | Problem) =>
  (u: unknown): A | typeof rejected =>
    isJsonNumber(u) ? orRejected(decode(u)) : rejected

/**
 * The encoded side of every number schema: accepts a JSON number (double or raw
 * literal) and nothing else. Its JSON codec (hence JSON Schema / OpenAPI) is
 * `jsonSchema`, a `Schema.Finite` carrying the bounds and description.
 */
const jsonNumberInput = (jsonSchema: Schema.Top, message = "must be a number") =>
  Schema.declare<JsonNumber>(isJsonNumber, {
    message,
    toCodecJson: () => new SchemaAST.Link(jsonSchema.ast, SchemaTransformation.passthrough())
  })

/** Runtime schema of `Decimal` values (the decoded side of decimal fields). */
export const DecimalValue = Schema.declare<Decimal.Decimal>(
  (u): u is Decimal.Decimal =>
    typeof u === "object" &&
    u !== null &&
    typeof (u as Decimal.Decimal).units === "bigint" &&
    Number.isSafeInteger((u as Decimal.Decimal).scale) &&
    (u as Decimal.Decimal).scale >= 0,
  { description: "An exact decimal: units / 10^scale" }
)

export interface MinorAmountOptions {
  /** Largest amount, in minor units at the field's scale (inclusive). */
  readonly max: bigint
  /** Smallest amount in minor units (inclusive). Ignored when `positive`. Default 0. */
  readonly min?: bigint
  /** Amount must be > 0 (default true: amounts are positive unless stated, decisions §1). */
  readonly positive?: boolean
  /** Description for the generated JSON Schema. */
  readonly description?: string
}

/**
 * A JSON-number amount decoded to bigint minor units at `scale` (a currency's
 * exponent or a number of places). `12.5` at scale 2 -> `1250n`.
 *
 * @example
 * const Amount = MinorAmount(Currency.GMD, { max: Limits.gmd_amount_max })
 * Schema.decodeUnknownSync(Amount)(12.5) // 1250n
 * // 12.345 -> "must have at most 2 decimal places"; "12" -> "must be a number"; 0 -> "must be greater than 0"
 */
export const MinorAmount = (currency: Currency | number, options: MinorAmountOptions) => {
  const scale = typeof currency === "number" ? currency : currency.exponent
  const positive = options.positive ?? true
  const min = positive ? 1n : (options.min ?? 0n)
  const { max } = options
  const toNumber = (minor: bigint): number => Number(Decimal.formatUnits(minor, scale))
  const jsonSchema = Schema.Finite.check(
    positive ? Schema.isGreaterThan(0) : Schema.isGreaterThanOrEqualTo(toNumber(min)),
    Schema.isLessThanOrEqualTo(toNumber(max))
  ).annotate({
    description: `${options.description ?? "An amount"} (JSON number, at most ${scale} decimal places)`
  })
  const low = positive ? "must be greater than 0" : `must be at least ${plain(min, scale)}`
  const high = `must be at most ${plain(max, scale)}`
  /** The amount in minor units, or what is wrong with it. */
  const minorOf = (u: JsonNumber): bigint | Problem => {
    const d = readExact(u, scale)
    if (d === "not_finite") return problem("must be a finite number")
    if (d === "too_precise") return problem(placesMessage(scale))
    if (d === "too_large") return problem(high)
    if (d === "too_small") return problem(low)
    const minor = Decimal.toScale(d, scale, "floor") // exact: d has at most `scale` places
    if (minor < min) return problem(low)
    if (minor > max) return problem(high)
    return minor
  }
  return withFast(
    jsonNumberInput(jsonSchema).pipe(
      Schema.decodeTo(Schema.BigInt, {
        decode: SchemaGetter.transformEffect((u: JsonNumber) => orFail(minorOf(u), u)),
        encode: SchemaGetter.transform((minor: bigint): JsonNumber => toNumber(minor))
      })
    ),
    fastly(minorOf)
  )
}

export interface DecimalNumberOptions {
  /** Smallest value (inclusive unless `exclusiveMin`). */
  readonly min?: Decimal.Decimal | number
  /** The minimum itself is refused (`> min`). */
  readonly exclusiveMin?: boolean
  /** Largest value (inclusive). */
  readonly max?: Decimal.Decimal | number
  /** Description for the generated JSON Schema. */
  readonly description?: string
}

const toDecimal = (x: Decimal.Decimal | number): Decimal.Decimal => {
  if (typeof x !== "number") return x
  const d = Decimal.fromNumber(x)
  if (d === undefined) throw new RangeError(`bound must be a finite number, got ${x}`)
  return d
}

const toJsonBound = (d: Decimal.Decimal): number => Number(Decimal.format(d))

/**
 * A JSON number decoded to an exact `Decimal` (rates, percentages, quantities)
 * with at most `places` decimal places. Trailing zeros are dropped (`2.50` -> 2.5).
 *
 * @example
 * const Percent = DecimalNumber(4, { min: 0, exclusiveMin: true, max: 100 })
 * Schema.decodeUnknownSync(Percent)(12.5) // { units: 125n, scale: 1 }
 */
export const DecimalNumber = (places: number, options: DecimalNumberOptions = {}) => {
  const min = options.min === undefined ? undefined : toDecimal(options.min)
  const max = options.max === undefined ? undefined : toDecimal(options.max)
  const exclusive = options.exclusiveMin ?? false
  const checks: Array<SchemaAST.Check<number>> = []
  if (min !== undefined) {
    checks.push(exclusive ? Schema.isGreaterThan(toJsonBound(min)) : Schema.isGreaterThanOrEqualTo(toJsonBound(min)))
  }
  if (max !== undefined) checks.push(Schema.isLessThanOrEqualTo(toJsonBound(max)))
  const base = Schema.Finite.annotate({
    description: `${options.description ?? "A decimal number"} (JSON number, at most ${places} decimal places)`
  })
  const [first, ...rest] = checks
  const jsonSchema = first === undefined ? base : base.check(first, ...rest)
  const low =
    min === undefined
      ? ""
      : exclusive
        ? `must be greater than ${Decimal.format(min)}`
        : `must be at least ${Decimal.format(min)}`
  const high = max === undefined ? "" : `must be at most ${Decimal.format(max)}`
  /** The decimal, or what is wrong with it. */
  const decimalOf = (u: JsonNumber): Decimal.Decimal | Problem => {
    const d = readExact(u, places)
    if (d === "not_finite") return problem("must be a finite number")
    if (d === "too_precise") return problem(placesMessage(places))
    if (d === "too_large") return problem(high || "is too large")
    if (d === "too_small") return problem(low || "is too small")
    if (min !== undefined) {
      const c = Decimal.compare(d, min)
      if (c < 0 || (exclusive && c === 0)) return problem(low)
    }
    if (max !== undefined && Decimal.compare(d, max) > 0) return problem(high)
    return Decimal.normalize(d)
  }
  return withFast(
    jsonNumberInput(jsonSchema).pipe(
      Schema.decodeTo(DecimalValue, {
        decode: SchemaGetter.transformEffect((u: JsonNumber) => orFail(decimalOf(u), u)),
        encode: SchemaGetter.transform((d: Decimal.Decimal): JsonNumber => toJsonBound(d))
      })
    ),
    fastly(decimalOf)
  )
}

/** What the OpenAPI document says of a whole number in `[min, max]`. */
const wholeNumberJsonSchema = (options: {
  readonly min: number
  readonly max: number
  readonly description?: string
}) =>
  Schema.Int.check(Schema.isGreaterThanOrEqualTo(options.min), Schema.isLessThanOrEqualTo(options.max)).annotate({
    description: options.description ?? "A whole number"
  })

/**
 * A JSON number that must be a whole number in `[min, max]`, decoded to `number`.
 * `max` must be a safe integer. `2.0` is accepted (it is the integer 2); `2.5` is not.
 */
export const IntegerNumber = (options: {
  readonly min: number
  readonly max: number
  readonly description?: string
}) => {
  const { min, max } = options
  const jsonSchema = wholeNumberJsonSchema(options)
  const low = min === 1 ? "must be greater than 0" : `must be at least ${min}`
  const high = `must be at most ${max}`
  /** The whole number, or what is wrong with it. */
  const integerOf = (u: JsonNumber): number | Problem => {
    const d = readExact(u, 0)
    if (d === "not_finite") return problem("must be a finite number")
    if (d === "too_precise") return problem(placesMessage(0))
    if (d === "too_large") return problem(high)
    if (d === "too_small") return problem(low)
    if (d.units < BigInt(min)) return problem(low)
    if (d.units > BigInt(max)) return problem(high)
    return Number(d.units)
  }
  return withFast(
    jsonNumberInput(jsonSchema).pipe(
      Schema.decodeTo(Schema.Number, {
        decode: SchemaGetter.transformEffect((u: JsonNumber) => orFail(integerOf(u), u)),
        encode: SchemaGetter.transform((n: number): JsonNumber => n)
      })
    ),
    fastly(integerOf)
  )
}

const DIGITS = /^\d{1,16}$/

/**
 * A whole number sent as a query-string value (`"25"`), decoded to `number` in
 * `[min, max]`. Also takes a JSON integer, for callers that pre-parse queries.
 * Signs, decimals, exponents and blanks are refused.
 */
export const QueryInteger = (options: {
  readonly min: number
  readonly max: number
  readonly description?: string
}) => {
  const { min, max } = options
  const jsonSchema = wholeNumberJsonSchema(options)
  const range = `must be a whole number from ${min} to ${max}`
  const input = Schema.declare<string | JsonNumber>(
    (u): u is string | JsonNumber => typeof u === "string" || isJsonNumber(u),
    {
      message: range,
      toCodecJson: () => new SchemaAST.Link(jsonSchema.ast, SchemaTransformation.passthrough())
    }
  )
  /** The whole number, or what is wrong with it. */
  const queryIntegerOf = (u: string | JsonNumber): number | Problem => {
    let n: bigint
    if (typeof u === "string") {
      if (!DIGITS.test(u)) return problem(range)
      n = BigInt(u)
    } else {
      const d = readExact(u, 0)
      if (typeof d === "string") return problem(range)
      n = d.units
    }
    if (n < BigInt(min) || n > BigInt(max)) return problem(range)
    return Number(n)
  }
  return withFast(
    input.pipe(
      Schema.decodeTo(Schema.Number, {
        decode: SchemaGetter.transformEffect((u: string | JsonNumber) => orFail(queryIntegerOf(u), u)),
        encode: SchemaGetter.transform((n: number): string | JsonNumber => String(n))
      })
    ),
    (u) => (typeof u === "string" || isJsonNumber(u) ? orRejected(queryIntegerOf(u)) : rejected)
  )
}
