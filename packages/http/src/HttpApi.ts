import { createHash, randomUUID } from "node:crypto"
import { isIP } from "node:net"
import { Decimal, DomainError, decodeRequest, Errors, Json, Limits } from "@xaalis/core"
import {
  Businesses,
  Dispatcher,
  EngineConfig,
  Idempotency,
  IdsAdapter,
  MemoryNotifier,
  MemoryStore,
  type Notifier,
  Sandbox,
  SandboxClock,
  Scheduler,
  type Store
} from "@xaalis/engine"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Option, Result, Schema, Semaphore } from "effect"
import { Hono } from "hono"
import { isDomainError, readJsonText } from "./body.ts"
import { docsHeaders, docsHtml } from "./docs.ts"
import { IdempotencyKey, NoEffect } from "./headers.ts"
import * as AddressGuard from "./notifier/AddressGuard.ts"
import { openApiDocument } from "./openapi.ts"
import { layerMemory, type RateDecision, RateLimiter } from "./RateLimiter.ts"
import { ApiDescription, Background, type Caller, type Route } from "./Route.ts"
import { routesFor } from "./routes.ts"

/** What every mount adapts: a web-standard handler. `remoteAddress` keys rate limits of requests without a valid key. */
export type FetchHandler = (request: Request, context?: { readonly remoteAddress?: string }) => Promise<Response>

/** The API: its fetch handler, the scheduler's entry point for the server's periodic loop, and its release. */
export interface HttpApi {
  readonly fetch: FetchHandler
  /**
   * Runs everything due now (expiries, overdue invoices, payouts, webhook
   * deliveries and retries). Never rejects: a fault goes to `onError`.
   */
  readonly runDue: () => Promise<void>
  /** Waits for background webhook deliveries in flight, then releases the store and every resource. */
  readonly dispose: () => Promise<void>
  /**
   * Resolves once the store and the other services are built (the sandbox
   * clock's offset loaded); rejects with the cause if they cannot be. Optional:
   * the first request waits for the same build.
   */
  readonly ready: () => Promise<void>
}

/** One line of the server's request log. */
export interface RequestLog {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly duration_ms: number
  readonly request_id: string
}

/** An internal fault, for server-side logs only (clients see a fixed `internal_error`). */
export interface HttpFault {
  /** The request it happened in; null for background work (webhook dispatch, `runDue`, start-up). */
  readonly request_id: string | null
  /** `METHOD /path`, or the background job. */
  readonly context: string
  /** The effect `Cause` (or the thrown value). */
  readonly cause: unknown
  /** A readable rendering of `cause`, stack traces included. */
  readonly message: string
}

export interface HttpApiOptions {
  /** Test helpers served and the sandbox clock (default true). Off: real clock, every `/v1/test_helpers/*` is 404. */
  readonly sandbox?: boolean
  /** Initial USD->GMD rate: a decimal string (default "70"), or a core `Decimal`. */
  readonly rate?: string | Decimal.Decimal
  /** Engine settings (fee percentages etc.); unset fields keep the engine's defaults. */
  readonly config?: Partial<EngineConfig.EngineConfig>
  /** The Store (default: the in-memory store). Durable stores plug in here. */
  readonly store?: Layer.Layer<Store, unknown>
  /** Webhook delivery (default: the engine's in-memory notifier); may require the Store. */
  readonly notifier?: Layer.Layer<Notifier, unknown, Store>
  /** Token bucket per API key (or client address): default `{rps: 100, burst: 200}`; `false` turns limiting off. */
  readonly rateLimit?: { readonly rps: number; readonly burst: number } | false
  /** Replaces the in-memory limiter (a shared one for several processes). Ignored when `rateLimit` is false. */
  readonly rateLimiter?: Layer.Layer<RateLimiter, unknown>
  /** Largest request body in bytes (default and maximum: the core's 262,144, `Limits.body_bytes_max`). */
  readonly bodyLimitBytes?: number
  /** Public address of the API: base of hosted links and `servers` of the OpenAPI document. */
  readonly baseUrl?: string
  /** Called once per request, after the answer is built. */
  readonly onRequest?: (entry: RequestLog) => void
  /** Called with every internal fault. */
  readonly onError?: (fault: HttpFault) => void
}

/** The only message of a 500: nothing internal is ever disclosed. */
export const internal_error_message =
  "Something went wrong on our side. Retry later; retry a POST with the same Idempotency-Key."

const defaultRateLimit = { rps: 100, burst: 200 } as const

const jsonHeaders = { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" }

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { ...jsonHeaders, ...headers } })

const errorResponse = (e: DomainError, headers: Record<string, string> = {}): Response =>
  json(e.status, { error: { message: e.message, code: e.code } }, headers)

const internalResponse = () => json(500, { error: { message: internal_error_message, code: "internal_error" } })

const missingKey = new DomainError({
  code: "authentication_error",
  message: "Missing API key: send Authorization: Bearer <secret key>."
})
const invalidKey = new DomainError({ code: "authentication_error", message: "Invalid API key." })

/** Shortens user input echoed in a message. */
const clip = (text: string, max = 200) => (text.length <= max ? text : `${text.slice(0, max)}…`)

type AuthState =
  | { readonly kind: "missing" }
  | { readonly kind: "invalid" }
  | { readonly kind: "ok"; readonly caller: Caller }

interface RequestState {
  readonly request_id: string
  readonly url: URL
  readonly auth: AuthState
}

/** A fault raised outside an Effect run, carried to `fetch`'s catch. */
class Fault extends Error {
  readonly fault: unknown
  constructor(fault: unknown) {
    super("fault")
    this.fault = fault
  }
}

const render = (cause: unknown): string =>
  Cause.isCause(cause) ? Cause.pretty(cause) : cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)

/** Query parameters as a record; the first of repeated parameters wins, unknown ones are the schema's to ignore. */
const queryRecord = (url: URL): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of url.searchParams) if (!Object.hasOwn(out, k)) out[k] = v
  return out
}

/** The idempotency fingerprint: SHA-256 of method, path and the raw body. */
const fingerprint = (method: string, path: string, body: string) =>
  createHash("sha256").update(`${method} ${path}\n`, "utf8").update(body, "utf8").digest("hex")

const templateMatcher = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
      .join("")}$`
  )

const BEARER = /^Bearer +(\S+) *$/i

/**
 * The whole HTTP API of the spec (decisions §7 and §9) as one web-standard
 * fetch handler. Synchronous: the engine's services are built in the
 * background right away (await `ready()` to fail fast at start-up); the first
 * request waits for them.
 *
 * @example
 * const api = makeHttpApi({ sandbox: true })
 * const res = await api.fetch(new Request("http://localhost/v1/test_helpers/businesses", { method: "POST" }))
 * // 201 {id, account_id, name, secret_key_test, secret_key_live, webhook_secret}
 * await api.dispose()
 */
/**
 * Decisions §8: a live-mode `callback_url` must be https (the sandbox also
 * allows plain http to loopback) and must not point at a private, loopback or
 * link-local address. What can be judged without DNS (scheme, IP literals) is
 * refused here with `validation_error`; host names are vetted again at every
 * delivery, since where a name resolves can change.
 */
const liveCallbackRule = (input: unknown, sandbox: boolean): Result.Result<void, DomainError> => {
  const fields = input !== null && typeof input === "object" ? (input as Record<string, unknown>) : {}
  const nested = fields.data !== null && typeof fields.data === "object" ? (fields.data as Record<string, unknown>) : {}
  const url = typeof fields.callback_url === "string" ? fields.callback_url : nested.callback_url
  if (typeof url !== "string") return Result.succeed(undefined)
  const verdict = AddressGuard.checkUrl(url, { mode: "live", allowLoopbackHttp: sandbox })
  // plain http (sandbox only) must name loopback itself: an IP literal (vetted above) or localhost
  const loopbackName = (host: string) => host === "localhost" || host.endsWith(".localhost")
  const refusal = !verdict.ok
    ? verdict.refusal
    : verdict.url.protocol === "http:" &&
        isIP(verdict.url.hostname.replace(/^\[|\]$/g, "")) === 0 &&
        !loopbackName(verdict.url.hostname)
      ? "refused: plain http is allowed to loopback only"
      : undefined
  return refusal === undefined
    ? Result.succeed(undefined)
    : Result.fail(
        Errors.validation(
          `callback_url is not allowed in live mode (${refusal.replace(/^refused: /, "")}): it must be an https URL of a public host.`,
          "callback_url"
        )
      )
}

export const makeHttpApi = (options: HttpApiOptions = {}): HttpApi => {
  const sandbox = options.sandbox ?? true
  const rate = typeof options.rate === "object" ? options.rate : Decimal.parse(options.rate ?? "70")
  if (rate === undefined || !Decimal.isPositive(rate)) throw new RangeError("rate must be a positive decimal string")
  const config: EngineConfig.EngineConfig = {
    ...EngineConfig.defaultEngineConfig,
    ...options.config,
    ...(options.baseUrl === undefined ? {} : { base_url: options.baseUrl.replace(/\/+$/, "") })
  }
  const body_max_bytes = Math.min(options.bodyLimitBytes ?? Limits.body_bytes_max, Limits.body_bytes_max)
  if (!Number.isSafeInteger(body_max_bytes) || body_max_bytes < 0) {
    throw new RangeError("bodyLimitBytes must be a whole number of bytes")
  }
  const rateLimit = options.rateLimit ?? defaultRateLimit
  const served = routesFor(sandbox)
  const document = openApiDocument(served, {
    rate_limited: rateLimit !== false,
    ...(options.baseUrl === undefined ? {} : { server_url: options.baseUrl })
  })

  const report = (fault: Omit<HttpFault, "message">) => {
    try {
      options.onError?.({ ...fault, message: render(fault.cause) })
    } catch {
      // a failing logger must not turn into a second fault
    }
  }

  // ---------------------------------------------------------------- services
  const store = options.store ?? MemoryStore.layer
  const background = Layer.effect(
    Background,
    Effect.map(Semaphore.make(1), (lock) =>
      Background.of({ exclusive: (effect) => Semaphore.withPermit(lock, effect) })
    )
  )
  const services = Layer.mergeAll(
    Sandbox.layer({ rate, base_url: config.base_url }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    options.notifier ?? MemoryNotifier.layer,
    sandbox ? SandboxClock.layer : Layer.empty,
    rateLimit === false ? Layer.empty : (options.rateLimiter ?? layerMemory(rateLimit)),
    Layer.succeed(EngineConfig.Config, config),
    Layer.succeed(ApiDescription, { document }),
    background
  ).pipe(Layer.provideMerge(store))
  const runtime = ManagedRuntime.make(services)
  runtime.context().catch((cause: unknown) => report({ request_id: null, context: "start-up", cause }))

  // ---------------------------------------------------------------- background webhook dispatch
  const drainOutbox = Effect.flatMap(Background, (b) =>
    b.exclusive(
      Effect.gen(function* () {
        for (;;) {
          const s = yield* Dispatcher.dispatchDue({ limit: Dispatcher.batch_max })
          if (s.delivered + s.retried + s.failed + s.skipped < Dispatcher.batch_max) return
        }
      })
    )
  )
  let disposed = false
  let draining: Promise<void> | undefined
  let again = false
  /** Starts draining due outbox rows, not awaited; kicks during a drain make it run once more. */
  const kick = () => {
    if (disposed) return
    if (draining !== undefined) {
      again = true
      return
    }
    const loop = async () => {
      for (;;) {
        again = false
        const exit = await runtime.runPromiseExit(drainOutbox)
        if (Exit.isFailure(exit)) report({ request_id: null, context: "webhook dispatch", cause: exit.cause })
        if (!again || disposed) {
          draining = undefined
          return
        }
      }
    }
    draining = loop()
  }

  // ---------------------------------------------------------------- one operation
  const failure = (cause: Cause.Cause<unknown>, state: RequestState, context: string): Response => {
    const error = Cause.findErrorOption(cause)
    if (Option.isSome(error) && isDomainError(error.value) && error.value.code !== "internal_error") {
      return errorResponse(error.value)
    }
    report({ request_id: state.request_id, context, cause })
    return internalResponse()
  }

  const serve = async (r: Route, request: Request, params: Record<string, string>, state: RequestState) => {
    // authentication, then permission
    let caller: Caller | undefined
    if (r.auth !== "none") {
      if (state.auth.kind === "missing") return errorResponse(missingKey)
      if (state.auth.kind === "invalid") return errorResponse(invalidKey)
      caller = state.auth.caller
      if (r.auth === "live" && caller.mode !== "live") {
        return errorResponse(
          new DomainError({
            code: "permission_denied",
            message: `${r.method} ${r.path} requires a live secret key (sk_live_…).`
          })
        )
      }
    }
    // headers, then the body
    let idempotencyKey: string | undefined
    if (r.method === "POST" && caller !== undefined) {
      const raw = request.headers.get("idempotency-key")
      if (raw !== null) {
        if (!Schema.is(IdempotencyKey)(raw)) {
          return errorResponse(
            Errors.validation("Idempotency-Key must be 1 to 255 visible ASCII characters.", "Idempotency-Key")
          )
        }
        idempotencyKey = raw
      }
    }
    let dry_run = false
    if (r.dry_run === true) {
      const raw = request.headers.get("x-no-effect")
      if (raw !== null) {
        const value = raw.trim().toLowerCase()
        if (!Schema.is(NoEffect)(value)) {
          return errorResponse(Errors.validation("X-No-Effect must be true or false.", "X-No-Effect"))
        }
        dry_run = value === "true"
      }
    }
    let text = ""
    if (r.method !== "GET") {
      const read = await readJsonText(request, body_max_bytes)
      if (!read.ok) return errorResponse(read.error)
      text = read.text
    }
    if (r.body !== undefined && text === "" && r.body_required !== false) {
      return errorResponse(Errors.validation("The request body is required: a JSON object."))
    }
    // the domain: decoding (so its validation errors are recorded with the key) and the use case
    const body = r.body
    const query = r.query
    const work = Effect.gen(function* () {
      let input: unknown
      if (body !== undefined) {
        const parsed = text === "" ? {} : yield* Effect.fromResult(Json.parseJson(text))
        input = yield* Effect.fromResult(decodeRequest(body as Schema.Codec<unknown>, parsed))
      } else if (query !== undefined) {
        input = yield* Effect.fromResult(decodeRequest(query as Schema.Codec<unknown>, queryRecord(state.url)))
      }
      if (caller?.mode === "live") yield* Effect.fromResult(liveCallbackRule(input, sandbox))
      return yield* r.handle({ caller, input, params, dry_run })
    })
    const once =
      idempotencyKey !== undefined && caller !== undefined && !dry_run
        ? Idempotency.idempotent(caller, idempotencyKey, fingerprint(r.method, state.url.pathname, text), work)
        : work
    const exit = await runtime.runPromiseExit(r.after === undefined ? once : Effect.flatMap(once, r.after))
    // a write may have committed outbox rows even when a later step failed: deliver them now
    if (r.method !== "GET" && !dry_run) kick()
    if (Exit.isFailure(exit)) return failure(exit.cause, state, `${r.method} ${r.path}`)
    return json(dry_run ? 200 : r.status, exit.value)
  }

  // ---------------------------------------------------------------- the router
  const app = new Hono<{ Bindings: { readonly state: RequestState } }>()
  for (const r of served) {
    app.on(r.method, r.path.replace(/\{([^}]+)\}/g, ":$1"), (c) => serve(r, c.req.raw, c.req.param(), c.env.state))
  }
  app.get("/docs", () => new Response(docsHtml, { headers: docsHeaders }))
  const matchers = served.map((r) => ({ method: r.method, matches: templateMatcher(r.path) }))
  app.notFound((c) => {
    const path = new URL(c.req.url).pathname
    const allow = [...new Set(matchers.filter((m) => m.matches.test(path)).map((m) => m.method))]
    if (allow.length === 0) return errorResponse(Errors.notFound(`No route ${c.req.method} ${clip(path)}.`))
    return errorResponse(
      Errors.notFound(`${c.req.method} is not served on ${clip(path)}; it accepts ${allow.join(", ")}.`),
      { allow: allow.join(", ") }
    )
  })
  app.onError((cause, c) => {
    report({ request_id: (c.env as { state?: RequestState }).state?.request_id ?? null, context: "router", cause })
    return internalResponse()
  })

  // ---------------------------------------------------------------- before routing: who is calling, how often
  const authenticate = async (request: Request): Promise<AuthState> => {
    const header = request.headers.get("authorization")
    if (header === null) return { kind: "missing" }
    const key = BEARER.exec(header)?.[1]
    if (key === undefined) return { kind: "invalid" }
    const exit = await runtime.runPromiseExit(Businesses.authenticate(key))
    if (Exit.isSuccess(exit)) return { kind: "ok", caller: exit.value }
    const error = Cause.findErrorOption(exit.cause)
    if (Option.isSome(error) && isDomainError(error.value) && error.value.code === "authentication_error") {
      return { kind: "invalid" }
    }
    throw new Fault(exit.cause)
  }

  const limit = async (auth: AuthState, remoteAddress: string | undefined): Promise<RateDecision | undefined> => {
    if (rateLimit === false) return undefined
    const bucket =
      auth.kind === "ok" ? `key:${auth.caller.business_id}:${auth.caller.mode}` : `ip:${remoteAddress ?? "unknown"}`
    const exit = await runtime.runPromiseExit(
      Effect.flatMap(Effect.serviceOption(RateLimiter), (l) =>
        Option.isSome(l) ? Effect.map(l.value.take(bucket), Option.some) : Effect.succeedNone
      )
    )
    if (Exit.isFailure(exit)) throw new Fault(exit.cause)
    return Option.getOrUndefined(exit.value)
  }

  const fetch: FetchHandler = async (request, context) => {
    const started = performance.now()
    const request_id = randomUUID()
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      url = new URL("http://invalid/")
    }
    let response: Response
    let decision: RateDecision | undefined
    try {
      const auth = await authenticate(request)
      decision = await limit(auth, context?.remoteAddress)
      if (decision !== undefined && !decision.allowed) {
        response = errorResponse(
          new DomainError({
            code: "rate_limit_exceeded",
            message: `Too many requests; retry after ${decision.retry_after_seconds} s.`
          }),
          { "retry-after": String(decision.retry_after_seconds) }
        )
      } else {
        const state: RequestState = { request_id, url, auth }
        response = await app.fetch(request, { state })
      }
    } catch (e) {
      report({ request_id, context: `${request.method} ${url.pathname}`, cause: e instanceof Fault ? e.fault : e })
      response = internalResponse()
    }
    response.headers.set("request-id", request_id)
    if (decision !== undefined) {
      response.headers.set("ratelimit-limit", String(decision.limit))
      response.headers.set("ratelimit-remaining", String(decision.remaining))
      response.headers.set("ratelimit-reset", String(decision.reset_seconds))
    }
    try {
      options.onRequest?.({
        method: request.method,
        path: url.pathname,
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
        request_id
      })
    } catch {
      // the log line is best effort
    }
    return response
  }

  return {
    fetch,
    runDue: async () => {
      const exit = await runtime.runPromiseExit(Effect.flatMap(Background, (b) => b.exclusive(Scheduler.runDue())))
      if (Exit.isFailure(exit)) report({ request_id: null, context: "runDue", cause: exit.cause })
    },
    dispose: async () => {
      disposed = true
      await draining
      await runtime.dispose()
    },
    ready: () => runtime.context().then(() => undefined)
  }
}
