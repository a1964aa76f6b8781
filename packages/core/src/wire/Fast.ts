import { type Schema, SchemaAST } from "effect"
import { isRawJson } from "./Json.ts"

/**
 * Fast decoders: for each request schema, a plain function that decodes the
 * valid inputs to exactly what the schema's decoder gives, and answers
 * `rejected` for everything else. `decodeRequest` tries it first; on
 * `rejected` the schema's own decoder runs, and finds the problem and words it
 * (or, on an input the fast decoder was unsure of, decodes it). The schema
 * stays the one description of a request: a fast decoder is derived from it,
 * and the property tests hold every fast decoder to its schema's decoder.
 *
 * Why: Effect Schema's decoder walks the schema generically for every request;
 * under the server bench's load a create-conversion body cost ~27 µs of CPU
 * there against ~2 µs in a fast decoder, the largest single cost of a request
 * after the engine (see docs/decisions.md, "Server benchmark").
 *
 * What derives on its own: structs (`Schema.Struct`, with their own checks),
 * unions whose members derive, literals, booleans, strings with checks (the
 * `Fields.Text` family: the checks themselves run), arrays of a deriving schema.
 * What the schema cannot tell (a decoding transformation) is registered by the
 * factory that builds it (`withFast`, `withFastField`), from the same function
 * that schema's transformation calls. A schema with any other part has no fast
 * decoder: `decoderOf` answers undefined and the schema's decoder does all.
 */

/** What a fast decoder answers for an input it does not decode (invalid, or not one it is sure of). */
export const rejected: unique symbol = Symbol.for("@xaalis/core/wire/Fast/rejected")
export type Rejected = typeof rejected

/** Decodes a valid input, or answers `rejected` (or a `NotAnObject`). Never throws. */
export type FastDecode = (input: unknown) => unknown

/** How a struct member is read: `decode` for a value; what an absent or `null` member means. */
export interface FastField {
  /** The member's schema when present (its fast decoder is derived when first needed). */
  readonly schema: Schema.Top
  /**
   * `omit`: absent or `null` is no member (`Fields.optional`); `default`: they are `value` (`Fields.withDefault`);
   * `clear`: absent is no member, `null` is kept (`Fields.clearable`).
   */
  readonly absent:
    | { readonly _tag: "omit" }
    | { readonly _tag: "default"; readonly value: unknown }
    | { readonly _tag: "clear" }
}

/**
 * What a fast decoder answers for a raw JSON number (`Json.parseJson`'s form
 * of a number no double equals) met where an object belongs, at `path` (member
 * names and indexes). The schema's decoder would take such a number for an
 * object with no members (it is one, to JavaScript), so a struct of optional
 * members would decode it; `decodeRequest` refuses it instead, as it refuses
 * any other number there.
 */
export class NotAnObject {
  readonly path: ReadonlyArray<string | number>
  constructor(path: ReadonlyArray<string | number>) {
    this.path = path
  }
}

const atTop = new NotAnObject([])

/** What a decoder answered for the part at `key`, as its parent answers it: refused or not decoded. */
const refusedAt = (answer: unknown, key: string | number): NotAnObject | Rejected =>
  answer instanceof NotAnObject ? new NotAnObject([key, ...answer.path]) : rejected

const registered = new WeakMap<object, FastDecode>()
const fields = new WeakMap<object, FastField>()
/** Derived decoders by schema; `null`: the schema has none. */
const derived = new WeakMap<object, FastDecode | null>()

/** Registers `decode` as the fast decoder of `schema` (a factory's own: it must agree with the schema's decoder). */
export const withFast = <S extends Schema.Top>(schema: S, decode: FastDecode): S => {
  registered.set(schema, decode)
  return schema
}

/** Registers how a struct member built by `schema` is read (the optional-member factories). */
export const withFastField = <S extends Schema.Top>(schema: S, field: FastField): S => {
  fields.set(schema, field)
  return schema
}

const parseOptions: SchemaAST.ParseOptions = { errors: "first" }

/** Whether `value` passes every check (filters and groups), as the schema's decoder runs them. */
export const checksPass = (
  checks: ReadonlyArray<SchemaAST.Check<unknown>> | undefined,
  value: unknown,
  ast: SchemaAST.AST
): boolean => {
  if (checks === undefined) return true
  for (const check of checks) {
    if (check._tag === "FilterGroup") {
      if (!checksPass(check.checks, value, ast)) return false
    } else if (check.run(value, ast, parseOptions) !== undefined) return false
  }
  return true
}

/** A JSON object as parsed: not an array, not a raw number, a plain prototype. */
const isPlainRecord = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u) || isRawJson(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

const hasOwn = Object.prototype.hasOwnProperty

interface Member {
  readonly name: string
  readonly decode: FastDecode
  readonly absent: FastField["absent"] | undefined
}

const struct = (schema: Schema.Top & { readonly fields: Schema.Struct.Fields }): FastDecode | undefined => {
  const ast = schema.ast as SchemaAST.Objects
  if (ast.indexSignatures.length > 0 || ast.encoding !== undefined) return undefined
  const members: Array<Member> = []
  for (const ps of ast.propertySignatures) {
    const name = ps.name
    if (typeof name !== "string" || name === "__proto__") return undefined
    const fieldSchema = schema.fields[name] as Schema.Top | undefined
    if (fieldSchema === undefined) return undefined
    const field = fields.get(fieldSchema)
    const decode = decoderOf(field === undefined ? fieldSchema : field.schema)
    if (decode === undefined) return undefined
    // a member built otherwise than by the factories is required, unless the schema says it is optional
    if (field === undefined && SchemaAST.isOptional(ps.type)) return undefined
    members.push({ name, decode, absent: field?.absent })
  }
  const checks = ast.checks
  return (input) => {
    if (!isPlainRecord(input)) return isRawJson(input) ? atTop : rejected
    const out: Record<string, unknown> = {}
    for (let i = 0; i < members.length; i++) {
      const m = members[i] as Member
      const absent = m.absent
      let value: unknown
      if (hasOwn.call(input, m.name)) value = input[m.name]
      else if (m.name in input) return rejected // inherited: not a member of a parsed body
      if (absent !== undefined && (value === undefined || value === null)) {
        if (absent._tag === "default") out[m.name] = absent.value
        else if (absent._tag === "clear" && value === null) out[m.name] = null
        continue
      }
      if (value === undefined) return rejected // a required member is missing
      const decoded = m.decode(value)
      if (decoded === rejected || decoded instanceof NotAnObject) return refusedAt(decoded, m.name)
      out[m.name] = decoded
    }
    return checksPass(checks, out, ast) ? out : rejected
  }
}

const union = (schema: Schema.Top & { readonly members: ReadonlyArray<Schema.Top> }): FastDecode | undefined => {
  const ast = schema.ast
  if (ast.encoding !== undefined || ast.checks !== undefined) return undefined
  const members: Array<FastDecode> = []
  for (const member of schema.members) {
    const decode = decoderOf(member)
    if (decode === undefined) return undefined
    members.push(decode)
  }
  // exactly one member must decode: then whatever order the schema's decoder tries them in, it agrees
  return (input) => {
    let found: unknown = rejected
    let allRefused = true
    for (const decode of members) {
      const decoded = decode(input)
      if (decoded === rejected || decoded instanceof NotAnObject) {
        if (decoded !== atTop) allRefused = false
        continue
      }
      if (found !== rejected) return rejected
      found = decoded
    }
    // a raw number that every member refuses as not an object is not an object here either; else the schema says why
    return found === rejected && allRefused ? atTop : found
  }
}

const array = (schema: Schema.Top & { readonly value: Schema.Top }): FastDecode | undefined => {
  const ast = schema.ast as SchemaAST.Arrays
  if (ast.encoding !== undefined || ast.elements.length > 0 || ast.rest.length !== 1) return undefined
  const item = decoderOf(schema.value)
  if (item === undefined) return undefined
  const checks = ast.checks
  return (input) => {
    if (!Array.isArray(input)) return rejected
    const out: Array<unknown> = new Array(input.length)
    for (let i = 0; i < input.length; i++) {
      const decoded = item(input[i])
      if (decoded === rejected || decoded instanceof NotAnObject) return refusedAt(decoded, i)
      out[i] = decoded
    }
    return checksPass(checks, out, ast) ? out : rejected
  }
}

/** A keyword (string, boolean, a literal or literals) with checks and no transformation. */
const keyword = (ast: SchemaAST.AST): FastDecode | undefined => {
  if (ast.encoding !== undefined) return undefined
  const checks = ast.checks
  const checked =
    (is: (u: unknown) => boolean): FastDecode =>
    (input) =>
      is(input) && checksPass(checks, input, ast) ? input : rejected
  switch (ast._tag) {
    case "String":
      return checked((u) => typeof u === "string")
    case "Boolean":
      return checked((u) => typeof u === "boolean")
    case "Literal": {
      const literal = ast.literal
      return checked((u) => u === literal)
    }
    case "Union": {
      const literals: Array<unknown> = []
      for (const t of ast.types) {
        if (t._tag !== "Literal" || t.encoding !== undefined || t.checks !== undefined) return undefined
        literals.push(t.literal)
      }
      const set = new Set(literals)
      return checked((u) => set.has(u))
    }
    default:
      return undefined
  }
}

const derive = (schema: Schema.Top): FastDecode | undefined => {
  const own = registered.get(schema)
  if (own !== undefined) return own
  const ast = schema.ast
  if (ast._tag === "Objects" && "fields" in schema) {
    return struct(schema as Schema.Top & { readonly fields: Schema.Struct.Fields })
  }
  if (ast._tag === "Arrays" && "value" in schema) return array(schema as Schema.Top & { readonly value: Schema.Top })
  if (ast._tag === "Union" && "members" in schema && !("literals" in schema)) {
    return union(schema as Schema.Top & { readonly members: ReadonlyArray<Schema.Top> })
  }
  return keyword(ast)
}

/** The fast decoder of `schema`, derived once; undefined when it has none (the schema's decoder does all). */
export const decoderOf = (schema: Schema.Top): FastDecode | undefined => {
  const known = derived.get(schema)
  if (known !== undefined) return known ?? undefined
  // a struct that contains itself would recurse: none of the request schemas does; mark it first anyway
  derived.set(schema, null)
  const decode = derive(schema) ?? null
  derived.set(schema, decode)
  return decode ?? undefined
}

/** @internal How `schema`, built by an optional-member factory, is read (tests walk request schemas with it). */
export const fieldOf = (schema: Schema.Top): FastField | undefined => fields.get(schema)
