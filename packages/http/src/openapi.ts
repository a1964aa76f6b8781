import { Errors, Resources } from "@xaalis/core"
import { JsonSchema, Schema, SchemaRepresentation } from "effect"
import { IdempotencyKey, NoEffect, RetryAfter, responseHeaders } from "./headers.ts"
import type { Route } from "./Route.ts"

/**
 * The OpenAPI 3.1 document of a route table. Every schema in it comes from an
 * effect Schema (the core's request and resource schemas, this package's
 * header and webhook-delivery schemas) through `SchemaRepresentation` and
 * `JsonSchema.toMultiDocumentOpenApi3_1`, with one shared pool of components;
 * only titles and descriptions are written here.
 */

type Json = JsonSchema.JsonSchema

export interface OpenApiOptions {
  /** `info.version`: the spec's interface version. */
  readonly version?: string
  /** `servers[0].url`, when the public address is known. */
  readonly server_url?: string
  /** Whether 429 answers (and the RateLimit headers) are possible. */
  readonly rate_limited: boolean
}

/** `{id}` path parameters of an OpenAPI path template, in order. */
export const pathParams = (path: string): ReadonlyArray<string> =>
  [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] as string)

/** The catalogue codes an operation may answer, derived from its row. */
export const errorCodes = (route: Route, rate_limited: boolean): ReadonlyArray<Errors.ErrorCode> => {
  const codes = new Set<Errors.ErrorCode>()
  if (route.method !== "GET" || route.body !== undefined || route.query !== undefined) codes.add("validation_error")
  if (route.auth !== "none") codes.add("authentication_error")
  if (route.auth === "live") codes.add("permission_denied")
  codes.add("not_found")
  if (route.method !== "GET" && route.auth !== "none") {
    codes.add("idempotency_conflict")
    if (pathParams(route.path).length > 0) {
      codes.add("invalid_state")
      codes.add("already_paid")
    }
  }
  if (route.operationId === "createConversion" || route.operationId === "createPaymentRequest") {
    codes.add("rate_unavailable")
  }
  if (rate_limited) codes.add("rate_limit_exceeded")
  codes.add("internal_error")
  return [...codes]
}

const titles: Record<number, string> = {
  200: "OK",
  201: "Created",
  400: "Invalid parameters, body, header or JSON",
  401: "Missing, malformed or unknown API key",
  403: "A test key on a live-only operation",
  404: "No such route or object (for this business and mode)",
  409: "Conflict with the object's state or an earlier request",
  429: "Too many requests",
  500: "Server fault (nothing internal is disclosed)",
  503: "Temporarily unavailable"
}

/** `anyOf: [X, {type: "null"}]` -> X: a parameter is absent rather than null. */
const withoutNull = (schema: Json): Json => {
  const anyOf = schema.anyOf as ReadonlyArray<Json> | undefined
  if (anyOf === undefined) return schema
  const rest = anyOf.filter((s) => s.type !== "null")
  return rest.length === 1 ? (rest[0] as Json) : { ...schema, anyOf: rest }
}

/** Moves a schema's description to the parameter or header object that holds it. */
const described = (schema: Json): { description?: string; schema: Json } => {
  const { description, ...rest } = schema
  return typeof description === "string" ? { description, schema: rest } : { schema: rest }
}

/**
 * Builds the document. Throws if two schemas claim the same component name
 * with different content (a programming error caught by the tests).
 */
export const openApiDocument = (routes: ReadonlyArray<Route>, options: OpenApiOptions): Record<string, unknown> => {
  // every schema once, in a fixed order; roots[i] is the JSON Schema of schemas[i]
  const schemas: Array<Schema.Top> = []
  const indexOf = new Map<Schema.Top, number>()
  const add = (s: Schema.Top): number => {
    let i = indexOf.get(s)
    if (i === undefined) {
      i = schemas.length
      schemas.push(s)
      indexOf.set(s, i)
    }
    return i
  }
  const headerSchemas = { IdempotencyKey, NoEffect, RetryAfter, ...responseHeaders }
  add(Resources.ErrorBody)
  for (const s of Object.values(headerSchemas)) add(s)
  for (const r of routes) {
    if (r.body !== undefined) add(r.body)
    if (r.query !== undefined) add(r.query)
    add(r.response)
  }
  const asts = schemas.map((s) => Schema.toCodecJson(s as Schema.Codec<unknown, unknown>).ast)
  const multi = SchemaRepresentation.toRepresentations(asts as [(typeof asts)[number], ...typeof asts])
  const document = JsonSchema.toMultiDocumentOpenApi3_1(SchemaRepresentation.toJsonSchemaMultiDocument(multi))
  const root = (s: Schema.Top): Json => document.schemas[indexOf.get(s) as number] as Json

  const errorSchema = root(Resources.ErrorBody)
  const header = (s: Schema.Top) => described(root(s))
  const rateHeaders = options.rate_limited
    ? Object.fromEntries(
        Object.entries(responseHeaders)
          .filter(([name]) => name !== "Request-Id")
          .map(([name, s]) => [name, header(s)])
      )
    : {}
  const commonHeaders = { "Request-Id": header(responseHeaders["Request-Id"]), ...rateHeaders }
  const json = (schema: Json) => ({ "application/json": { schema } })

  const paths: Record<string, Record<string, unknown>> = {}
  for (const r of routes) {
    const parameters: Array<Record<string, unknown>> = pathParams(r.path).map((name) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" }
    }))
    if (r.query !== undefined) {
      const props = (root(r.query).properties ?? {}) as Record<string, Json>
      for (const [name, schema] of Object.entries(props)) {
        parameters.push({ name, in: "query", required: false, ...described(withoutNull(schema)) })
      }
    }
    if (r.method === "POST" && r.auth !== "none") {
      parameters.push({ name: "Idempotency-Key", in: "header", required: false, ...header(IdempotencyKey) })
    }
    if (r.dry_run === true) {
      parameters.push({ name: "X-No-Effect", in: "header", required: false, ...header(NoEffect) })
    }
    const responses: Record<string, unknown> = {
      [String(r.status)]: { description: titles[r.status], headers: commonHeaders, content: json(root(r.response)) }
    }
    if (r.dry_run === true) {
      responses["200"] = {
        description: "Dry run (X-No-Effect: true): the would-be object; nothing was stored or sent",
        headers: commonHeaders,
        content: json(root(r.response))
      }
    }
    const byStatus = new Map<number, Array<Errors.ErrorCode>>()
    for (const code of errorCodes(r, options.rate_limited)) {
      const status = Errors.catalogue[code].status
      byStatus.set(status, [...(byStatus.get(status) ?? []), code])
    }
    for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
      responses[String(status)] = {
        description: `${titles[status] ?? "Error"}: ${codes.join(", ")}`,
        headers:
          status === 429
            ? { ...commonHeaders, "Retry-After": header(RetryAfter) }
            : { "Request-Id": commonHeaders["Request-Id"] },
        content: json(errorSchema)
      }
    }
    const operation: Record<string, unknown> = {
      operationId: r.operationId,
      tags: [r.tag],
      summary: r.summary,
      ...(r.description === undefined ? {} : { description: r.description }),
      security: r.auth === "none" ? [] : [{ bearerAuth: [] }],
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(r.body === undefined
        ? {}
        : { requestBody: { required: r.body_required !== false, content: json(root(r.body)) } }),
      responses,
      ...(r.auth === "live" ? { "x-live-key-only": true } : {}),
      ...(r.sandbox_only ? { "x-sandbox-only": true } : {})
    }
    const item = paths[r.path] ?? {}
    item[r.method.toLowerCase()] = operation
    paths[r.path] = item
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "xaalis payments API",
      version: options.version ?? "1.0.0",
      description:
        "Payment intents, stablecoin payment requests and conversions, payment links and invoices, in dalasi (GMD) and US dollars. Every error is {error: {message, code}}. Authenticate with `Authorization: Bearer <secret key>` (sk_test_… or sk_live_…)."
    },
    ...(options.server_url === undefined ? {} : { servers: [{ url: options.server_url }] }),
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({ name })),
    paths,
    components: {
      schemas: document.definitions,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", description: "The business's secret key: sk_test_… or sk_live_…" }
      }
    }
  }
}
