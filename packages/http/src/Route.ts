import type { DomainError } from "@xaalis/core"
import type {
  Businesses,
  Chain,
  Ids,
  Notifier,
  Payouts,
  Processor,
  Rates,
  Sandbox,
  Store,
  StoreError
} from "@xaalis/engine"
import { Context, type Effect, type Schema } from "effect"

/** The caller of an authenticated operation: a business in one mode, from its API key. */
export type Caller = Effect.Success<ReturnType<typeof Businesses.authenticate>>

/**
 * Who may call an operation: `none` (no key needed), `any` (a test or a live
 * key), `live` (a live key; a test key gets `permission_denied`).
 */
export type Auth = "none" | "any" | "live"

export type Method = "GET" | "POST" | "PUT"

/**
 * Runs work that must not overlap with itself across requests: the outbox
 * dispatcher and the scheduler share one permit, so a background kick and a
 * sandbox clock advance never deliver the same webhook twice at once.
 */
export class Background extends Context.Service<
  Background,
  {
    readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** True once the API stops its background work (`stopBackground`, `dispose`): start no delivery then. */
    readonly stopping: () => boolean
  }
>()("@xaalis/http/Background") {}

/** The OpenAPI document generated from the route table, served by `GET /v1/openapi.json`. */
export class ApiDescription extends Context.Service<ApiDescription, { readonly document: unknown }>()(
  "@xaalis/http/ApiDescription"
) {}

/** What the operations may require; the handler's runtime provides all of it. */
export type Services =
  | Store
  | Notifier
  | Ids
  | Rates
  | Chain
  | Processor
  | Payouts
  | Sandbox.SandboxControl
  | Background
  | ApiDescription

/** What a handler receives once routing, authentication, permission and body decoding succeeded. */
export interface Input<C, B> {
  /** The authenticated caller; `undefined` for `auth: "none"`. */
  readonly caller: C
  /** The decoded body (`body` schema) or query (`query` schema); `undefined` without either. */
  readonly input: B
  /** Path parameters by name, percent-decoded. */
  readonly params: Readonly<Record<string, string>>
  /** `X-No-Effect: true` on an operation that supports dry runs. */
  readonly dry_run: boolean
}

type CallerOf<A extends Auth> = A extends "none" ? undefined : Caller

/** One row of the route table: everything the router, the OpenAPI document and the docs page need. */
export interface Route {
  /** OpenAPI operationId; unique. */
  readonly operationId: string
  readonly method: Method
  /** OpenAPI path template: `/v1/payments/{id}`. */
  readonly path: string
  readonly auth: Auth
  /** Served only when the sandbox is on (404 `not_found` otherwise). */
  readonly sandbox_only: boolean
  /** OpenAPI tag (group on the docs page). */
  readonly tag: string
  readonly summary: string
  readonly description?: string
  /** Request body schema (decoded with the core's exact JSON parsing). */
  readonly body?: Schema.Top
  /** False when an empty body means `{}` (business creation). Default true when `body` is set. */
  readonly body_required?: boolean
  /** Query schema (lists). Unknown query parameters are ignored. */
  readonly query?: Schema.Top
  /** Success response schema (a core Resources schema or one of this package's). */
  readonly response: Schema.Top
  readonly status: 200 | 201
  /** Honours `X-No-Effect: true` (dry run: 200 with the would-be object, nothing stored or sent). */
  readonly dry_run?: boolean
  readonly handle: (
    input: Input<Caller | undefined, unknown>
  ) => Effect.Effect<unknown, DomainError | StoreError, Services>
  /**
   * Work done after `handle`, outside the idempotency record (the sandbox clock
   * advance drains the scheduler here); its value is the response body.
   */
  readonly after?: (value: unknown) => Effect.Effect<unknown, DomainError | StoreError, Services>
  /**
   * Answers a retry under the same Idempotency-Key when the first request's
   * effect committed but its answer was lost (a crash in between): reads the
   * object it wrote, named in `touched`, or answers from the request's
   * decoded `input`: its body is the first request's (the key's fingerprint
   * covers method, path and body, not a query string: a route that answers
   * from a query must not rely on it). Undefined: such a retry gets 409.
   */
  readonly recover?: Recover
}

/** See `Route.recover`: the objects the first request wrote, `undefined` when none fits. */
export type Recover = (
  caller: Caller,
  touched: ReadonlyArray<{ readonly kind: string; readonly id: string }>,
  input: unknown
) => Effect.Effect<unknown, DomainError | StoreError, Services>

/**
 * A typed row of the route table: `handle` sees the caller its `auth` implies
 * and the decoded type of its `body` or `query` schema.
 */
export const route = <
  A extends Auth,
  B extends Schema.Top | undefined = undefined,
  Q extends Schema.Top | undefined = undefined,
  V = unknown
>(
  definition: Omit<Route, "auth" | "body" | "query" | "handle" | "after" | "sandbox_only"> & {
    readonly auth: A
    readonly sandbox_only?: boolean
    readonly body?: B
    readonly query?: Q
    readonly handle: (
      input: Input<CallerOf<A>, B extends Schema.Top ? B["Type"] : Q extends Schema.Top ? Q["Type"] : undefined>
    ) => Effect.Effect<V, DomainError | StoreError, Services>
    readonly after?: (value: V) => Effect.Effect<unknown, DomainError | StoreError, Services>
  }
): Route => ({ sandbox_only: false, ...definition }) as unknown as Route
