import { Effect, Option, Schema, SchemaAST, SchemaGetter, SchemaIssue, SchemaTransformation } from "effect"
import { activeScheme, activeSchemeIssue, characters } from "../Text.ts"
import { parseIso } from "../time/Instant.ts"
import { rejected, withFast, withFastField } from "./Fast.ts"
import { isRawJson, utf8Length } from "./Json.ts"
import {
  body_depth_max,
  email_length_max,
  metadata_bytes_max,
  metadata_key_length_max,
  metadata_keys_max,
  phone_length_max,
  url_length_max
} from "./Limits.ts"

/**
 * Field schemas shared by the request bodies: bounded text, URLs, emails,
 * phones, metadata, ISO 8601 timestamps, enums, and optional fields.
 *
 * Conventions of every request schema:
 * - an optional field may be absent or `null`; both mean "not given" (an
 *   update's `clearable` field: absent leaves it unchanged, `null` clears it);
 * - strings are kept as sent (no trimming), but must be valid Unicode, must not
 *   contain NUL or other control characters (line breaks only in free text),
 *   and have a maximum length counted in characters (code points).
 */

// ---------------------------------------------------------------- optional fields

const notNull = <A>(a: A | null): a is A => a !== null

/** The description of `schema` followed by what `null` means for the field (for the OpenAPI document). */
const withNote = (schema: Schema.Top, note: string): string => {
  // the wire side's words (a timestamp's decoded side describes the parsed value, not what a caller sends)
  const described = SchemaAST.toEncoded(schema.ast).annotations?.description ?? schema.ast.annotations?.description
  return `${typeof described === "string" ? `${described}. ` : ""}${note}`
}

/**
 * An optional field: absent or `null` decode to an absent key (`null` is what
 * many JSON clients send for "no value"). In an update, both mean "leave
 * unchanged" (`clearable`: `null` clears).
 */
export const optional = <S extends Schema.Top>(schema: S, nullMeans = "null is the same as leaving it out") =>
  withFastField(
    Schema.optionalKey(Schema.NullOr(schema).annotate({ description: withNote(schema, nullMeans) })).pipe(
      Schema.decodeTo(Schema.optionalKey(Schema.toType(schema)), {
        decode: SchemaGetter.transformOptional((o: Option.Option<S["Type"] | null>) => Option.filter(o, notNull)),
        encode: SchemaGetter.passthroughSubtype()
      })
    ),
    { schema, absent: { _tag: "omit" } }
  )

/**
 * An optional field an update may clear: absent decodes to an absent key
 * ("leave unchanged"), `null` stays `null` ("clear it"), as in a JSON merge
 * patch (RFC 7396).
 */
export const clearable = <S extends Schema.Top>(schema: S) =>
  withFastField(
    Schema.optionalKey(
      Schema.NullOr(schema).annotate({ description: withNote(schema, "null clears it; absent leaves it as it is") })
    ),
    { schema, absent: { _tag: "clear" } }
  )

/** An optional field with a default (absent or `null` -> `fallback`, a decoded value). */
export const withDefault = <S extends Schema.Top>(schema: S, fallback: S["Type"]) =>
  withFastField(
    Schema.optionalKey(
      Schema.NullOr(schema).annotate({
        description: withNote(
          schema,
          `default ${typeof fallback === "bigint" ? String(fallback) : JSON.stringify(fallback)} when absent or null`
        )
      })
    ).pipe(
      Schema.decodeTo(Schema.toType(schema), {
        decode: SchemaGetter.transformOptional((o: Option.Option<S["Type"] | null>) =>
          Option.orElseSome(Option.filter(o, notNull), () => fallback)
        ),
        encode: SchemaGetter.passthroughSubtype()
      })
    ),
    { schema, absent: { _tag: "default", value: fallback } }
  )

// ---------------------------------------------------------------- text

/**
 * Control characters: C0, DEL and C1 (U+0080–U+009F); the line and paragraph
 * separators (U+2028, U+2029) outside free text; the bidi embeddings,
 * overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder the
 * text around them where it is shown (a title "Refund \u202E00.0001\u202C GMD"
 * reads "Refund 1000.00 GMD" on a payment page); and the bidi marks (U+200E,
 * U+200F, U+061C), which set the direction of a page's `<bdi>` when they lead
 * ("\u200F1000 - 1" reads "1 - 1000"). Right-to-left text needs none of them:
 * its letters carry their direction. `multiline` allows tab, line feed,
 * carriage return and the two separators.
 */
const hasControl = (s: string, multiline: boolean): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20) {
      if (!(multiline && (c === 0x09 || c === 0x0a || c === 0x0d))) return true
    } else if (c >= 0x7f && c <= 0x9f) return true
    else if (c >= 0x200e && c <= 0x2069) {
      if (c === 0x200e || c === 0x200f) return true
      if (c === 0x2028 || c === 0x2029 ? !multiline : (c >= 0x202a && c <= 0x202e) || c >= 0x2066) return true
    } else if (c === 0x061c) return true
  }
  return false
}

/**
 * Blank: nothing a reader sees. White space (as `trim` knows it) and the
 * invisible format characters that may stand alone: zero-width space, joiners
 * (U+200B–U+200D), word joiner (U+2060), Mongolian vowel separator (U+180E),
 * zero-width no-break space (U+FEFF). Inside text they are kept (a joiner
 * builds emoji and some scripts' letters); alone they make a blank title.
 */
const BLANK = /^[\s\u180e\u200b-\u200d\u2060\ufeff]*$/u

/**
 * `hasControl` and `BLANK` as one JSON Schema `pattern` (ECMA-262, as
 * validators compile it with the `u` flag), so that the OpenAPI document
 * refuses the text the API refuses. Lone surrogates cannot be written in a
 * JSON document's pattern meaningfully and stay the API's own check.
 */
const textPattern = (multiline: boolean, notBlank: boolean): string => {
  const control = multiline ? "\\u0000-\\u0008\\u000b\\u000c\\u000e-\\u001f" : "\\u0000-\\u001f\\u2028\\u2029"
  const forbidden = `${control}\\u007f-\\u009f\\u200e\\u200f\\u061c\\u202a-\\u202e\\u2066-\\u2069`
  return `^${notBlank ? "(?![\\s\\u180e\\u200b-\\u200d\\u2060\\ufeff]*$)" : ""}[^${forbidden}]*$`
}
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

export interface TextOptions {
  /** Maximum length in characters (Unicode code points, as JSON Schema's `maxLength` counts). */
  readonly max: number
  /** Minimum length (default 1: empty strings are refused). */
  readonly min?: number
  /** Line breaks and tabs allowed (free text such as notes). Default false. */
  readonly multiline?: boolean
  /** Whitespace-only values allowed. Default false. */
  readonly blank?: boolean
  /**
   * An opaque identifier of the caller's (decisions §6 `customer`: "any
   * non-empty string"): blank values and control characters (NUL included)
   * allowed; only text that is not valid Unicode (a lone surrogate) is refused.
   * Every store keeps rows as JSON text, where NUL is the escape `\u0000`.
   * Default false.
   */
  readonly opaque?: boolean
  readonly description?: string
  /** JSON Schema `format` (documentation only). */
  readonly format?: string
}

/** At most `max` characters (code points); JSON Schema `maxLength`, which counts the same way. */
const maxCharacters = (max: number) =>
  Schema.makeFilter<string>(
    (s) => (s.length <= max || characters(s, max) <= max ? undefined : `must be at most ${max} characters`),
    { toJsonSchema: () => ({ maxLength: max }) }
  )

/** A bounded string (see the module conventions). */
export const Text = (options: TextOptions) => {
  const min = options.min ?? 1
  const multiline = options.multiline === true
  const opaque = options.opaque === true
  const annotations: Schema.Annotations.Bottom<string, readonly []> = {
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.format !== undefined ? { format: options.format } : {})
  }
  const notBlank = options.blank !== true && min > 0
  return Schema.String.annotate(annotations).check(
    Schema.isMinLength(min, { message: min === 1 ? "must not be empty" : `must be at least ${min} characters` }),
    maxCharacters(options.max),
    Schema.makeFilter<string>(
      (s) =>
        opaque
          ? LONE_SURROGATE.test(s)
            ? "must be valid Unicode text"
            : undefined
          : notBlank && BLANK.test(s)
            ? "must not be blank"
            : hasControl(s, multiline)
              ? "must not contain control characters"
              : LONE_SURROGATE.test(s)
                ? "must be valid Unicode text"
                : undefined,
      opaque ? undefined : { toJsonSchema: () => ({ pattern: textPattern(multiline, notBlank) }) }
    )
  )
}

const HTTP_URL = /^https?:\/\/[^\s/?#@]+(?:[/?#]\S*)?$/i
const ANY_URL = /^[a-z][a-z0-9+.-]*:\S+$/i
/**
 * The same rules as JSON Schema `pattern`s for the OpenAPI document (ECMA-262
 * without flags: the letter case spelled out), so that `format: uri`, which
 * `mailto:` or `urn:` also satisfy, is not all a client reads.
 */
export const HTTP_URL_PATTERN = "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#@]+([/?#]\\S*)?$"
const ANY_URL_PATTERN =
  "^(?![Jj][Aa][Vv][Aa][Ss][Cc][Rr][Ii][Pp][Tt]:|[Vv][Bb][Ss][Cc][Rr][Ii][Pp][Tt]:|[Dd][Aa][Tt][Aa]:|[Bb][Ll][Oo][Bb]:|[Ff][Ii][Ll][Ee]:)[A-Za-z][A-Za-z0-9+.-]*:\\S+$"

/** An absolute `http` or `https` URL (callbacks, webhooks, redirects). */
export const HttpUrl = (description = "An absolute http or https URL") =>
  Text({ max: url_length_max, description }).check(
    Schema.makeFilter<string>((s) => (HTTP_URL.test(s) ? undefined : "must be an absolute http or https URL"), {
      toJsonSchema: () => ({ pattern: HTTP_URL_PATTERN })
    })
  )

/**
 * An absolute URL of any scheme (`myapp://done`), for redirects when URL
 * validation is skipped; never one that runs or embeds content where a browser
 * follows it (`javascript:`, `vbscript:`, `data:`, `blob:`, `file:`).
 */
export const AnyUrl = (description = "An absolute URL") =>
  Text({ max: url_length_max, description }).check(
    Schema.makeFilter<string>(
      (s) => (activeScheme.test(s) ? activeSchemeIssue : ANY_URL.test(s) ? undefined : "must be an absolute URL"),
      { toJsonSchema: () => ({ pattern: ANY_URL_PATTERN }) }
    )
  )

/** True for an absolute http(s) URL. */
export const isHttpUrl = (s: string): boolean => HTTP_URL.test(s)

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

/** An email address (syntax only: local@domain.tld). */
export const Email = Text({ max: email_length_max, description: "Email address", format: "email" }).check(
  Schema.makeFilter<string>((s) => (EMAIL.test(s) ? undefined : "must be an email address"))
)

const PHONE = /^\+?[0-9 ().-]+$/

/** A phone number as typed: digits with optional `+`, spaces, dashes, dots, parentheses. */
export const Phone = Text({ max: phone_length_max, description: "Phone number" }).check(
  Schema.makeFilter<string>((s) =>
    PHONE.test(s) && (s.match(/\d/g)?.length ?? 0) >= 3 ? undefined : "must be a phone number"
  )
)

// ---------------------------------------------------------------- enums

/**
 * One of `literals`, compared case-insensitively and decoded to the literal's
 * spelling (`"trc20"` -> `"TRC20"`). The literals must be upper case.
 */
export const UpperCaseLiterals = <const L extends ReadonlyArray<string>>(literals: L) => {
  const upper = (s: string) => s.toUpperCase() as L[number]
  const known: ReadonlySet<string> = new Set(literals)
  return withFast(
    Schema.String.annotate({
      message: `must be one of: ${literals.join(", ")}`,
      description: `One of ${literals.join(", ")} (case-insensitive)`
    }).pipe(
      Schema.decodeTo(Schema.Literals(literals), {
        decode: SchemaGetter.transform(upper),
        encode: SchemaGetter.passthroughSupertype()
      })
    ),
    (u) => {
      if (typeof u !== "string") return rejected
      const value = upper(u)
      return known.has(value) ? value : rejected
    }
  )
}

// ---------------------------------------------------------------- metadata

/** The caller's free-form metadata: a JSON object, stored and returned untouched. */
export type Metadata = { readonly [key: string]: unknown }

const isPlainObject = (u: unknown): u is Record<string, unknown> => {
  if (typeof u !== "object" || u === null || Array.isArray(u) || isRawJson(u)) return false
  const proto = Object.getPrototypeOf(u)
  return proto === Object.prototype || proto === null
}

/** True for a JSON value (as produced by `Json.parseJson`), nested at most `depth` levels. */
const isJsonValue = (u: unknown, depth: number): boolean => {
  if (u === null || typeof u === "string" || typeof u === "boolean") return true
  if (typeof u === "number") return Number.isFinite(u)
  if (isRawJson(u)) return true
  if (depth <= 0) return false
  if (Array.isArray(u)) return u.every((v) => isJsonValue(v, depth - 1))
  return isPlainObject(u) && Object.values(u).every((v) => isJsonValue(v, depth - 1))
}

const metadataProblem = (m: Record<string, unknown>): string | undefined => {
  const keys = Object.keys(m)
  if (keys.length > metadata_keys_max) return `must have at most ${metadata_keys_max} keys`
  for (const key of keys) {
    if (key.length === 0) return "keys must not be empty"
    if (key.length > metadata_key_length_max && characters(key, metadata_key_length_max) > metadata_key_length_max)
      return `keys must be at most ${metadata_key_length_max} characters`
    if (key === "__proto__") return "must not use the key __proto__"
    if (!isJsonValue(m[key], body_depth_max)) return `key ${key} must hold a JSON value`
  }
  if (utf8Length(JSON.stringify(m), metadata_bytes_max) > metadata_bytes_max) {
    return `must not exceed ${metadata_bytes_max} bytes as JSON`
  }
  return undefined
}

const metadataJsonSchema = Schema.Record(Schema.String, Schema.Unknown)
  .check(Schema.isMaxProperties(metadata_keys_max))
  .annotate({
    description: `Free-form JSON object returned untouched: at most ${metadata_keys_max} keys of at most ${metadata_key_length_max} characters, at most ${metadata_bytes_max} bytes as JSON`
  })

/**
 * Free-form metadata. Kept as the very object parsed (values are not rebuilt, so
 * raw JSON numbers stay exact and are written back as sent).
 */
export const Metadata = withFast(
  Schema.declare<Metadata>(isPlainObject, {
    message: "must be an object",
    toCodecJson: () => new SchemaAST.Link(metadataJsonSchema.ast, SchemaTransformation.passthrough())
  }).check(Schema.makeFilter<Metadata>((m) => metadataProblem(m as Record<string, unknown>))),
  (u) => (isPlainObject(u) && metadataProblem(u) === undefined ? u : rejected)
)

// ---------------------------------------------------------------- time

/** An ISO 8601 instant or calendar date as sent, with its epoch milliseconds. */
export interface Timestamp {
  /** The text as sent. */
  readonly text: string
  /** Epoch milliseconds (UTC); a date-only value is 00:00 UTC of that date. */
  readonly ms: number
  /** True for `YYYY-MM-DD` (a calendar date), false for a date-time. */
  readonly date_only: boolean
}

const TimestampValue = Schema.declare<Timestamp>(
  (u): u is Timestamp =>
    typeof u === "object" &&
    u !== null &&
    typeof (u as Timestamp).text === "string" &&
    typeof (u as Timestamp).ms === "number",
  { description: "A parsed ISO 8601 timestamp" }
)

const timestampMessage = "must be an ISO 8601 date-time (2026-11-21T09:00:00Z) or a date (2026-11-21)"

/** The timestamp `text` stands for, or undefined when it is not one. */
const timestampOf = (text: string): Timestamp | undefined => {
  const parsed = parseIso(text)
  return parsed === undefined ? undefined : { text, ms: parsed.ms, date_only: parsed.date_only }
}

/** An ISO 8601 date-time (without `Z` or an offset: The Gambia's time, UTC), or a `YYYY-MM-DD` date. */
export const IsoTimestamp = (description: string) =>
  withFast(
    Schema.String.annotate({
      description: `${description}: ISO 8601 date-time (without a zone: The Gambia's time, which is UTC), or YYYY-MM-DD`,
      message: timestampMessage
    }).pipe(
      Schema.decodeTo(TimestampValue, {
        decode: SchemaGetter.transformEffect((text: string) => {
          const t = timestampOf(text)
          return t === undefined
            ? Effect.fail(new SchemaIssue.InvalidValue({ message: timestampMessage }, text))
            : Effect.succeed(t)
        }),
        encode: SchemaGetter.transform((t: Timestamp) => t.text)
      })
    ),
    (u) => (typeof u === "string" ? (timestampOf(u) ?? rejected) : rejected)
  )
