import { Result, Schema, SchemaAST, type SchemaIssue } from "effect"
import * as Errors from "../Errors.ts"
import * as Fast from "./Fast.ts"
import { parseJson } from "./Json.ts"

/**
 * Turns a Schema decoding failure into ONE `validation_error` that a caller can
 * act on: the message names the first offending field by its JSON path and says
 * what is wrong in plain words ("data.line_items[2].quantity must have at most
 * 4 decimal places."), and `param` carries the same path. No Schema jargon
 * ("Expected", "Encoding", AST names) reaches the wire.
 */

/** The first problem found: where (path of keys and indexes) and what. */
export interface Problem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/** `["data", "line_items", 2, "quantity"]` -> `"data.line_items[2].quantity"`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`
    const name = String(key)
    return acc === "" ? name : `${acc}.${name}`
  }, "")

const messageOf = (ast: SchemaAST.AST): string | undefined => {
  const m = ast.annotations?.message
  return typeof m === "string" ? m : undefined
}

const quote = (v: SchemaAST.LiteralValue): string => (typeof v === "string" ? v : String(v))

/** What a value of `ast` must be, in words ("must be a string", "must be one of: GMD, USD"). */
const expected = (ast: SchemaAST.AST): string => {
  const custom = messageOf(ast)
  if (custom !== undefined) return custom
  switch (ast._tag) {
    case "String":
    case "TemplateLiteral":
      return "must be a string"
    case "Number":
      return "must be a number"
    case "Boolean":
      return "must be true or false"
    case "Null":
      return "must be null"
    case "Arrays":
      return "must be an array"
    case "Objects":
    case "ObjectKeyword":
      return "must be an object"
    case "Literal":
      return `must be ${quote(ast.literal)}`
    case "Union": {
      const members = ast.types.filter((t) => t._tag !== "Null" && t._tag !== "Undefined")
      if (members.length > 0 && members.every((t) => t._tag === "Literal")) {
        return `must be one of: ${members.map((t) => quote((t as SchemaAST.Literal).literal)).join(", ")}`
      }
      const first = members[0]
      if (members.length === 1 && first !== undefined) return expected(SchemaAST.toEncoded(first))
      const kinds = [...new Set(members.map((t) => expected(SchemaAST.toEncoded(t)).replace(/^must be /, "")))]
      return `must be ${kinds.join(" or ")}`
    }
    default:
      return "has an invalid value"
  }
}

/**
 * For a union of objects told apart by a literal key (`{type: "fixed"} | {type:
 * "percentage"}`) that no member accepted: point at the key when the input is an
 * object with a wrong or missing tag.
 */
const discriminatorProblem = (
  ast: SchemaAST.Union,
  input: unknown,
  path: ReadonlyArray<PropertyKey>
): Problem | undefined => {
  const members = ast.types.filter((t): t is SchemaAST.Objects => t._tag === "Objects")
  const first = members[0]
  if (first === undefined || members.length !== ast.types.filter((t) => t._tag !== "Null").length) return undefined
  for (const ps of first.propertySignatures) {
    const tags: Array<SchemaAST.LiteralValue> = []
    for (const m of members) {
      const p = m.propertySignatures.find((q) => q.name === ps.name)
      if (p === undefined || p.type._tag !== "Literal") break
      tags.push(p.type.literal)
    }
    if (tags.length !== members.length) continue
    if (typeof input !== "object" || input === null || Array.isArray(input))
      return { path, message: "must be an object" }
    const at = [...path, ps.name]
    if (!(ps.name in input)) return { path: at, message: "is required" }
    return { path: at, message: `must be one of: ${tags.map(quote).join(", ")}` }
  }
  return undefined
}

/** The issue is only "wrong type" (possibly behind a transformation). */
const isTypeMismatch = (issue: SchemaIssue.Issue): boolean =>
  issue._tag === "InvalidType" ||
  (issue._tag === "Encoding" && isTypeMismatch(issue.issue)) ||
  (issue._tag === "Composite" && issue.issues.length === 1 && isTypeMismatch(issue.issues[0]))

/** The first leaf problem of an issue tree, with the path that leads to it. */
export const firstProblem = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Problem => {
  switch (issue._tag) {
    case "Pointer":
      return firstProblem(issue.issue, [...path, ...issue.path])
    case "Composite":
      return firstProblem(issue.issues[0], path)
    case "Encoding":
      return firstProblem(issue.issue, path)
    case "Filter": {
      const m = issue.filter.annotations?.message
      if (typeof m === "string") return { path, message: m }
      const inner = firstProblem(issue.issue, path)
      if (inner.message !== "has an invalid value") return inner
      const e = issue.filter.annotations?.expected
      return { path: inner.path, message: typeof e === "string" ? `must be ${e}` : inner.message }
    }
    case "AnyOf": {
      const [first] = issue.issues
      // Every member refused the input's type: say what the union accepts, not what one member wanted.
      if (first !== undefined && !issue.issues.every(isTypeMismatch)) return firstProblem(first, path)
      return discriminatorProblem(issue.ast, issue.input, path) ?? { path, message: expected(issue.ast) }
    }
    case "MissingKey":
      return { path, message: issue.annotations?.messageMissingKey ?? "is required" }
    case "UnexpectedKey":
      return { path, message: "is not a recognized field" }
    case "InvalidType":
      return { path, message: expected(issue.ast) }
    case "InvalidValue":
      return { path, message: issue.annotations?.message ?? "has an invalid value" }
    case "Forbidden":
    case "OneOf":
      return { path, message: "has an invalid value" }
  }
}

/** The one `validation_error` for a decoding failure (see the module comment). */
export const toValidationError = (issue: SchemaIssue.Issue): Errors.DomainError => {
  const problem = firstProblem(issue)
  const param = formatPath(problem.path)
  if (param === "") {
    const message = problem.message === "must be an object" ? "must be a JSON object" : problem.message
    return Errors.validation(`The request body ${message}.`)
  }
  return Errors.validation(`${param} ${problem.message}.`, param)
}

/**
 * Unknown members are dropped: Effect's default (`onExcessProperty: "ignore"`).
 * The option is left out rather than spelled: naming it at all sends every
 * struct to the parser's general path (a generator per value), which cost a
 * create-conversion body ~60 µs under the server bench's load instead of ~27.
 */
const decodeOptions = { errors: "first", reportInput: true } as const

type Decoder = (input: unknown, options: typeof decodeOptions) => Result.Result<unknown, Schema.SchemaError>

/**
 * The decoding function of each schema, made once rather than by
 * `Schema.decodeUnknownResult(schema)` on every call (Effect memoises the
 * parser itself; what is saved is the wrapper and its lookups, a few tenths
 * of a µs per body).
 */
const decoders = new WeakMap<object, Decoder>()

const decoderOf = (schema: Schema.ConstraintDecoder<unknown>): Decoder => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = Schema.decodeUnknownResult(schema) as Decoder
    decoders.set(schema, decoder)
  }
  return decoder
}

/**
 * Decodes a parsed body (see `Json.parseJson`) or a query record with a request
 * schema. Unknown fields, server-owned fields included, are dropped from the
 * result (never applied); the first problem becomes one `validation_error`.
 *
 * @example
 * const r = decodeRequest(Requests.CreatePaymentIntentBody, body)
 * if (Result.isSuccess(r)) r.success.data.amount // bigint butut
 */
export const decodeRequest = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  input: unknown
): Result.Result<S["Type"], Errors.DomainError> => {
  // the schema's fast decoder first (see Fast.ts); what it does not decode, the schema's decoder does, and explains
  const fast = Fast.decoderOf(schema as unknown as Schema.Top)
  if (fast !== undefined) {
    const value = fast(input)
    // a number where an object belongs, which the schema's decoder would take for an empty object
    if (value instanceof Fast.NotAnObject) {
      const param = formatPath(value.path)
      return Result.fail(
        param === ""
          ? Errors.validation("The request body must be a JSON object.")
          : Errors.validation(`${param} must be an object.`, param)
      )
    }
    if (value !== Fast.rejected) return Result.succeed(value as S["Type"])
  }
  const result = decoderOf(schema)(input, decodeOptions)
  return Result.isSuccess(result)
    ? Result.succeed(result.success)
    : Result.fail(toValidationError(result.failure.issue))
}

/**
 * `Json.parseJson` then `decodeRequest`: a request body text to a command, or
 * the one `validation_error` (malformed JSON, size, depth, or the first field).
 */
export const decodeJson = <S extends Schema.ConstraintDecoder<unknown>>(
  schema: S,
  text: string
): Result.Result<S["Type"], Errors.DomainError> =>
  Result.flatMap(parseJson(text), (body) => decodeRequest(schema, body))
