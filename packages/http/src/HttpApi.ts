import { createHash, hash as digestOf, timingSafeEqual } from "node:crypto"
import { isIP } from "node:net"
import { Decimal, DomainError, decodeRequest, Errors, Json, Limits } from "@xaalis/core"
import {
  Businesses,
  Dispatcher,
  EngineConfig,
  HostedPages,
  Idempotency,
  IdsAdapter,
  MemoryNotifier,
  MemoryStore,
  type Notifier,
  Sandbox,
  SandboxClock,
  Scheduler,
  Store,
  StoreChanges,
  StorePurge,
  type Tx
} from "@xaalis/engine"
import { Cause, Context, Effect, Exit, Layer, ManagedRuntime, Option, Result, Schema, Semaphore } from "effect"
import { RegExpRouter } from "hono/router/reg-exp-router"
import { SmartRouter } from "hono/router/smart-router"
import { TrieRouter } from "hono/router/trie-router"
import { getPath, tryDecodeURIComponent } from "hono/utils/url"
import { type CappedRead, isDomainError, jsonText, readCapped } from "./body.ts"
import { docsHeaders, docsHtml, docsHtmlInFolder } from "./docs.ts"
import { IdempotencyKey, NoEffect } from "./headers.ts"
import { hostedBusyHtml, hostedHeaders, hostedHtml, hostedNotFoundHtml, hostedRoutes, prefersHtml } from "./hosted.ts"
import * as AddressGuard from "./notifier/AddressGuard.ts"
import { openApiDocument } from "./openapi.ts"
import { layerMemory, type RateDecision, RateLimiter } from "./RateLimiter.ts"
import { ApiDescription, Background, type Caller, type Recover, type Route, type Services } from "./Route.ts"
import { routesFor } from "./routes.ts"

/** What every mount adapts: a web-standard handler. `remoteAddress` keys rate limits of requests without a valid key. */
export type FetchHandler = (
  request: Request,
  context?: { readonly remoteAddress?: string | undefined }
) => Promise<Response>

/** The API: its fetch handler, the scheduler's entry point for the server's periodic loop, and its release. */
export interface HttpApi {
  readonly fetch: FetchHandler
  /**
   * Runs everything due now (expiries, overdue invoices, payouts, webhook
   * deliveries and retries). Never rejects: a fault goes to `onError`.
   * `signal` stops the run early: the webhook deliveries and payouts in
   * flight finish (each is claimed, sent and recorded whole), nothing more
   * starts, and the rest stays due for the next run.
   */
  readonly runDue: (options?: { readonly signal?: AbortSignal }) => Promise<void>
  /**
   * Stops background webhook dispatch (the deliveries in flight finish, no more
   * start; what is left stays due), then releases the store and every resource.
   */
  readonly dispose: () => Promise<void>
  /**
   * The first half of `dispose`, for a graceful stop that still answers the
   * requests in flight: from now on no background work takes another row (a
   * request's kick, a `runDue` run with or without a signal, a sandbox clock
   * advance's pass) and `check` says `stopping`; resolves once the deliveries
   * in flight are recorded. Requests are still served. Call it
   * when the stop begins, then `dispose` once the connections are closed:
   * otherwise a dispatch kicked during the drain could start a delivery (up
   * to a notifier's timeout) just before `dispose`.
   */
  readonly stopBackground: () => Promise<void>
  /**
   * Resolves once the store and the other services are built (the sandbox
   * clock's offset loaded); rejects with the cause if they cannot be. Optional:
   * the first request waits for the same build.
   */
  readonly ready: () => Promise<void>
  /**
   * Forgets every API key authenticated so far (see `HttpApiOptions.authCache`):
   * the next request with any key looks it up in the store again. Call it after
   * rolling a key with immediate effect (`Businesses.rollApiKey`), in every
   * process serving the API, so that the old key stops at once rather than
   * within the cache's `ttlMs`.
   */
  readonly forgetKeys: () => void
  /**
   * Whether the API can serve now: its services are built and a request's
   * unit of work completed within the last `timeoutMs` (default 2,000, real
   * time), or else the store answers one read by key within it (one such read
   * in flight at most).
   * For a load balancer's readiness probe (the reference server's
   * `GET /readyz`). Never rejects; `reason` is for the operator's log (our
   * words and the store's error code, no credentials), not for clients.
   */
  readonly check: (options?: { readonly timeoutMs?: number }) => Promise<HealthCheck>
}

/** What `HttpApi.check` found. */
export type HealthCheck = { readonly ok: true } | { readonly ok: false; readonly reason: string }

/** Default of `check`'s `timeoutMs`. */
export const check_timeout_ms = 2_000

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
  /**
   * Several servers share the store (PostgreSQL, one SQLite file) and the sandbox is on. The
   * rate set through `POST /v1/test_helpers/rates` and each business's count
   * of `POST /v1/test_helpers/payouts/fail_next` are kept in the store
   * (`Sandbox.layerShared`), and each request first re-reads the sandbox
   * clock's stored offset and the rate (two row reads; skipped while the
   * store's optional `StoreChanges` says no other connection committed since
   * the last re-read, as the SQLite store does): a request answered
   * after another server's clock advance or rate is stamped with the advanced
   * time and quoted at that rate, and a payout fails on whichever server sends
   * it. Default false: the rate and the counts stay in the process, and the
   * clock's offset is re-read before each due-loop pass and in the clock
   * helper (another server's advance is seen within a second), which one
   * server alone on its store never needs.
   */
  readonly sharedSandbox?: boolean
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
  /**
   * Keeps the callers of API keys that authenticated (by the SHA-256 of the
   * key; at most `max`, default 10,000, oldest dropped first) for `ttlMs`
   * (default 60,000), so a request with a known key skips the store's key
   * lookup. Unknown and invalid keys are never kept: they are looked up every
   * time, and a new key works at once. Nor are keys with an expiry (a rolled
   * key in its grace period): their expiry is checked on every request.
   *
   * A key rolled with immediate effect (`Businesses.rollApiKey`) therefore
   * stops in every process within `ttlMs`; call `forgetKeys()` in the process
   * that rolled (and, to make it immediate everywhere, in every other one).
   * `false` turns the cache off: every request reads its key from the store.
   * Default on.
   */
  readonly authCache?: { readonly max?: number; readonly ttlMs?: number } | false
  /**
   * How long (ms of real time, from its arrival) a request waits for the
   * answer of an earlier use of its Idempotency-Key still running in another
   * process, or cut off by a stop, before it is answered from what that use
   * wrote or gets 409 (default `Idempotency.in_flight_wait_ms`, 3,000).
   */
  readonly idempotencyWaitMs?: number
  /** Called once per request, after the answer is built. */
  readonly onRequest?: (entry: RequestLog) => void
  /** Called with every internal fault. */
  readonly onError?: (fault: HttpFault) => void
  /**
   * Called with every webhook delivery attempt once its outcome is recorded
   * (`Dispatcher.DeliveryAttempt`: event id, business, mode, attempt, outcome,
   * the notifier's error and the next attempt's time; never the URL or the
   * body), from the background dispatch and `runDue` alike. The reference
   * server logs failed attempts with it.
   */
  readonly onDelivery?: (attempt: Dispatcher.DeliveryAttempt) => void
}

/** The only message of a 500: nothing internal is ever disclosed. */
export const internal_error_message =
  "Something went wrong on our side. Retry later; retry a POST with the same Idempotency-Key."

const defaultRateLimit = { rps: 100, burst: 200 } as const

const jsonHeaders = {
  "content-type": "application/json; charset=utf-8",
  "cache-control": "no-store",
  "x-content-type-options": "nosniff"
}

/** @internal A request as the handler's core reads it; the fetch face and the node:http mount both provide one. */
export interface ApiRequest {
  readonly method: string
  /** The full URL as a string (what Hono routes on). */
  readonly href: string
  /** Its path, as `URL.pathname` gives it. */
  readonly pathname: string
  /** The parsed URL (for the query), built when asked for. */
  readonly url: () => URL
  /** A request header as `Headers.get` gives it (repeated fields joined with ", "), or null. */
  readonly header: (name: string) => string | null
  /** The body, read with a cap of `limit` bytes. Never rejects. */
  readonly read: (limit: number) => Promise<CappedRead>
  readonly remoteAddress: string | undefined
}

/** @internal An answer before it becomes a `Response` or is written to a socket. `body` null: no body (HEAD). */
export interface ApiResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string | null
}

/** @internal The core of a handler made by `makeHttpApi`. */
export type ApiHandler = (request: ApiRequest) => Promise<ApiResponse>

/** @internal Where `makeHttpApi`'s fetch handler carries its core, for the node:http mount's direct path. */
export const apiHandler: unique symbol = Symbol("@xaalis/http/apiHandler")

/** @internal The core of `handler` when it is a fetch handler made by `makeHttpApi`, else undefined. */
export const apiHandlerOf = (handler: FetchHandler): ApiHandler | undefined =>
  (handler as FetchHandler & { readonly [apiHandler]?: ApiHandler })[apiHandler]

const jsonText_ = (status: number, text: string, headers?: Record<string, string>): ApiResponse => ({
  status,
  headers: headers === undefined ? { ...jsonHeaders } : { ...jsonHeaders, ...headers },
  body: text
})

const json = (status: number, body: unknown, headers?: Record<string, string>): ApiResponse =>
  jsonText_(status, JSON.stringify(body), headers)

/** A 401 names the scheme to use (RFC 9110 §11.6.1, RFC 6750 §3). */
const challenge = { "www-authenticate": "Bearer" } as const

const errorResponse = (e: DomainError, headers?: Record<string, string>): ApiResponse =>
  json(
    e.status,
    { error: { message: e.message, code: e.code } },
    e.status === 401 ? (headers === undefined ? challenge : { ...challenge, ...headers }) : headers
  )

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

const missing: AuthState = { kind: "missing" }
const invalid: AuthState = { kind: "invalid" }

/**
 * Callers of keys that authenticated, by the key's SHA-256 (hex). At most
 * `max` entries; past it the oldest goes. An entry is used for `ttlMs` after it
 * was stored (monotonic time), then looked up again. A hit compares the stored
 * digest with the presented key's in constant time, like the store lookup does.
 */
class KeyCache {
  readonly #entries = new Map<
    string,
    { readonly digest: Buffer; readonly state: AuthState; readonly stored_at: number }
  >()
  readonly #max: number
  readonly #ttlMs: number
  constructor(max: number, ttlMs: number) {
    if (!Number.isSafeInteger(max) || max < 1) throw new RangeError("authCache.max must be a whole number >= 1")
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1) throw new RangeError("authCache.ttlMs must be a whole number >= 1")
    this.#max = max
    this.#ttlMs = ttlMs
  }
  get(hash: string): AuthState | undefined {
    const entry = this.#entries.get(hash)
    if (entry === undefined) return undefined
    if (performance.now() - entry.stored_at >= this.#ttlMs) {
      this.#entries.delete(hash)
      return undefined
    }
    return timingSafeEqual(entry.digest, Buffer.from(hash, "hex")) ? entry.state : undefined
  }
  set(hash: string, state: AuthState): void {
    this.#entries.delete(hash)
    if (this.#entries.size >= this.#max) {
      const oldest = this.#entries.keys().next()
      if (oldest.done !== true) this.#entries.delete(oldest.value)
    }
    this.#entries.set(hash, { digest: Buffer.from(hash, "hex"), state, stored_at: performance.now() })
  }
  clear(): void {
    this.#entries.clear()
  }
}

/** Units of work with outbox rows that committed during one request (the dispatcher is kicked when > 0). */
interface OutboxWrites {
  units: number
}
class OutboxWritten extends Context.Service<OutboxWritten, OutboxWrites>()("@xaalis/http/OutboxWritten") {}

/**
 * The Store as given, seen through: a unit of work run inside a request that
 * inserts or updates an outbox row counts, once committed, in the request's
 * `OutboxWritten`. Everything else passes through untouched.
 */
const observeOutbox = (store: Store["Service"], answered: () => void): Store["Service"] =>
  Store.of({
    ledger: store.ledger,
    transact: (work) =>
      Effect.flatMap(Effect.serviceOption(OutboxWritten), (written) => {
        if (Option.isNone(written)) return store.transact(work)
        let wrote = false
        return Effect.map(
          store.transact((tx) =>
            // the store's own operations, but for the two that write (a Tx is a plain object of functions)
            work({
              ...tx,
              insert: (doc) => {
                if (doc.kind === "outbox") wrote = true
                return tx.insert(doc)
              },
              update: (doc) => {
                if (doc.kind === "outbox") wrote = true
                return tx.update(doc)
              }
            } satisfies Tx)
          ),
          (a) => {
            if (wrote) written.value.units += 1
            answered()
            return a
          }
        )
      })
  })

interface RequestState {
  readonly request_id: string
  readonly req: ApiRequest
  readonly auth: AuthState
}

/** A fault raised outside an Effect run, carried to `handle`'s catch. */
class Fault extends Error {
  readonly fault: unknown
  constructor(fault: unknown) {
    super("fault")
    this.fault = fault
  }
}

/** Random bytes for request ids (a version 4 UUID each, from the CSPRNG, as `crypto.randomUUID`, as one flat string). */
const requestIds = new IdsAdapter.EntropyPool(4096)

const isIdempotencyKey = Schema.is(IdempotencyKey)
const isNoEffect = Schema.is(NoEffect)
const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A fault for the operator's log: the stack and the chain of causes (what a store could not reach, and why). */
const render = (cause: unknown): string => Cause.pretty(Cause.isCause(cause) ? cause : Cause.die(cause))

/** Query parameters as a record; the first of repeated parameters wins, unknown ones are the schema's to ignore. */
const queryRecord = (url: URL): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of url.searchParams) if (!Object.hasOwn(out, k)) out[k] = v
  return out
}

/**
 * The scope of the Idempotency-Key of a POST that takes no API key (sandbox
 * business creation): the client's address, so that a key used from one
 * address can be neither replayed (the answer holds secret keys), nor probed,
 * nor claimed in advance from another. Use a random key (a UUID), as with every
 * Idempotency-Key. An address longer than any IP address's text (a mount's
 * own `remoteAddress` may give anything) stands as its SHA-256, so the
 * record's id stays within the Store's `store_text_length_max`.
 */
const keylessScope = (remoteAddress: string | undefined): Caller => {
  const address = remoteAddress ?? "unknown"
  const id = `keyless:${address.length <= keyless_address_length_max ? address : digestOf("sha256", address)}`
  return { business_id: id, mode: "test", account_id: id }
}

/** Longest client address a keyless scope names as it is (an IPv6 address with a zone is under it). */
const keyless_address_length_max = 64

/**
 * The idempotency fingerprint (`Idempotency.Fingerprint`): `value`, SHA-256 of
 * method, path and the body's JSON value (members in UTF-16 code-unit order, numbers
 * as parsed exactly), so that the same request written with other spacing or
 * member order is the same request (a body that is not JSON counts by its
 * bytes; an empty body is `{}`, as it is decoded); `bytes`, SHA-256 of method,
 * path and the raw body, what releases before `value` compared, still honoured
 * on their rows and written for them.
 */
const fingerprint = (method: string, path: string, body: string): Idempotency.Fingerprint => {
  const digest = (text: string) =>
    createHash("sha256").update(`${method} ${path}\n`, "utf8").update(text, "utf8").digest("hex")
  const parsed = body === "" ? Result.succeed({}) : Json.parseJson(body)
  return {
    value: digest(
      Result.isSuccess(parsed) ? `json ${JSON.stringify(Json.sortMembers(parsed.success))}` : `raw ${body}`
    ),
    bytes: digest(body)
  }
}

const templateMatcher = (path: string): RegExp =>
  new RegExp(
    `^${path
      .split(/(\{[^}]+\})/)
      .map((part) => (part.startsWith("{") ? "[^/]+" : part.replace(/[.*+?^$()|[\]\\]/g, "\\$&")))
      .join("")}$`
  )

const BEARER = /^Bearer +(\S+) *$/i

/**
 * Decisions §8: a URL that receives live-mode events (a live `callback_url`, a
 * business's `webhook_url`) must be https (the sandbox also allows plain http
 * to loopback) and must not point at a private, loopback or link-local
 * address. What can be judged without DNS (scheme, IP literals, `localhost` and
 * private-use names) is refused here with a `validation_error` naming `field`;
 * host names are vetted again at every delivery, since where a name resolves
 * can change. Undefined when the URL passes.
 *
 * @example
 * liveUrlRefusal("http://10.0.0.7/hook", { sandbox: false, field: "webhook_url" })
 * // DomainError validation_error: "webhook_url is not allowed in live mode (…): it must be an https URL of a public host."
 */
export const liveUrlRefusal = (
  url: string,
  options: { readonly sandbox: boolean; readonly field: string }
): DomainError | undefined => {
  const verdict = AddressGuard.checkUrl(url, { mode: "live", allowLoopbackHttp: options.sandbox })
  // plain http (sandbox only) must name loopback itself: an IP literal (vetted above) or localhost
  const refusal = !verdict.ok
    ? verdict.refusal
    : verdict.url.protocol === "http:" &&
        isIP(verdict.url.hostname.replace(/^\[|\]$/g, "")) === 0 &&
        AddressGuard.specialUseName(verdict.url.hostname) !== "loopback"
      ? "refused: plain http is allowed to loopback only"
      : undefined
  return refusal === undefined
    ? undefined
    : Errors.validation(
        `${options.field} is not allowed in live mode (${refusal.replace(/^refused: /, "")}): it must be an https URL of a public host.`,
        options.field
      )
}

/** `liveUrlRefusal` of the body's `callback_url` (flat or under `data`), or of `webhook_url`. */
const liveCallbackRule = (
  input: unknown,
  sandbox: boolean,
  field: "callback_url" | "webhook_url" = "callback_url"
): Result.Result<void, DomainError> => {
  const fields = input !== null && typeof input === "object" ? (input as Record<string, unknown>) : {}
  const nested = fields.data !== null && typeof fields.data === "object" ? (fields.data as Record<string, unknown>) : {}
  const url = typeof fields[field] === "string" ? fields[field] : nested[field]
  if (typeof url !== "string") return Result.succeed(undefined)
  const refusal = liveUrlRefusal(url, { sandbox, field })
  return refusal === undefined ? Result.succeed(undefined) : Result.fail(refusal)
}

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
export const makeHttpApi = (options: HttpApiOptions = {}): HttpApi => {
  const sandbox = options.sandbox ?? true
  const shared = sandbox && options.sharedSandbox === true
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
  /** The document is served as this text: serialised once, not per request. */
  const documentText = JSON.stringify(document)

  const report = (fault: Omit<HttpFault, "message">) => {
    try {
      options.onError?.({ ...fault, message: render(fault.cause) })
    } catch {
      // a failing logger must not turn into a second fault
    }
  }

  // ---------------------------------------------------------------- services
  /** What other servers on a shared store may have moved: the sandbox clock and rate. */
  const reread = Effect.andThen(
    SandboxClock.refreshIfPresent,
    Effect.flatMap(Sandbox.SandboxControl, (control) => control.refresh)
  )
  /** The store's change version when the clock and rate were last re-read (see `StoreChanges`). */
  let readAt: number | undefined
  /**
   * `reread`, skipped when the store tells that no other connection has
   * committed since the last one (a lone server on its SQLite file then reads
   * nothing more per request); every time when it cannot tell.
   */
  const refreshShared = Effect.flatMap(Effect.serviceOption(StoreChanges), (changes) =>
    Option.isNone(changes)
      ? reread
      : Effect.flatMap(changes.value.version, (version) =>
          version === readAt
            ? Effect.void
            : Effect.map(reread, () => {
                readAt = version
              })
        )
  )
  // the store as given, watched for outbox rows; its StoreChanges and StorePurge, when it has them, passed on
  /** When a request's unit of work last completed (`performance.now()`): the store answers, so `check` need not ask. */
  let lastAnsweredAt = Number.NEGATIVE_INFINITY
  const store = Layer.effectContext(
    Effect.gen(function* () {
      const observed = Context.make(
        Store,
        observeOutbox(yield* Store, () => {
          lastAnsweredAt = performance.now()
        })
      )
      const changes = yield* Effect.serviceOption(StoreChanges)
      const purge = yield* Effect.serviceOption(StorePurge)
      const withChanges = Option.isSome(changes) ? Context.add(observed, StoreChanges, changes.value) : observed
      return (
        Option.isSome(purge) ? Context.add(withChanges, StorePurge, purge.value) : withChanges
      ) as Context.Context<Store>
    })
  ).pipe(Layer.provide(options.store ?? MemoryStore.layer))
  const background = Layer.effect(
    Background,
    Effect.map(Semaphore.make(1), (lock) =>
      Background.of({ exclusive: (effect) => Semaphore.withPermit(lock, effect), stopping: () => disposed })
    )
  )
  const services = Layer.mergeAll(
    (shared ? Sandbox.layerShared : Sandbox.layer)({ rate, base_url: config.base_url }).pipe(
      Layer.provideMerge(IdsAdapter.layer)
    ),
    options.notifier ?? MemoryNotifier.layer,
    sandbox ? SandboxClock.layer : Layer.empty,
    rateLimit === false ? Layer.empty : (options.rateLimiter ?? layerMemory(rateLimit)),
    Layer.succeed(EngineConfig.Config, config),
    Layer.succeed(ApiDescription, { document }),
    options.onDelivery === undefined ? Layer.empty : Layer.succeed(Dispatcher.DeliveryObserver, options.onDelivery),
    background
  ).pipe(Layer.provideMerge(store))
  const runtime = ManagedRuntime.make(services)
  runtime.context().catch((cause: unknown) => report({ request_id: null, context: "start-up", cause }))

  // ---------------------------------------------------------------- background webhook dispatch
  /** Disposing: a drain takes no more rows (the deliveries in flight finish; the rest stays due). */
  const stopping = () => disposed
  const drainOutbox = Effect.flatMap(Background, (b) =>
    b.exclusive(
      Effect.gen(function* () {
        while (!stopping()) {
          // the sandbox attempts every due row (its clock advance must find none put off past it)
          const s = yield* Dispatcher.dispatchDue({ limit: Dispatcher.batch_max, defer: !sandbox, stopping })
          if (Dispatcher.processed(s) < Dispatcher.batch_max) return
        }
      })
    )
  )
  let disposed = false
  /**
   * Once `disposed` is set: resolves when the background work in flight (a drain, a `runDue` run, a
   * clock advance's pass; all hold the one `Background` permit, and all stop taking rows) has ended.
   */
  const quiet = async () => {
    await draining
    // work holding the permit needs the built services; while they are still being built (a slow start)
    // there is none, and waiting for the permit would wait for the build instead of letting dispose stop it
    if (runtime.cachedContext === undefined) return
    await runtime.runPromiseExit(Effect.flatMap(Background, (b) => b.exclusive(Effect.void)))
  }
  /** The store read of a `check` still waiting for its answer. */
  let checking: Promise<HealthCheck> | undefined
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
  const idempotencyWait = options.idempotencyWaitMs ?? Idempotency.in_flight_wait_ms
  if (!Number.isFinite(idempotencyWait) || idempotencyWait < 0) {
    throw new RangeError("idempotencyWaitMs must be a number >= 0")
  }
  const failure = (cause: Cause.Cause<unknown>, request_id: string, context: string): ApiResponse => {
    const error = Cause.findErrorOption(cause)
    if (Option.isSome(error) && isDomainError(error.value) && error.value.code !== "internal_error") {
      return errorResponse(error.value)
    }
    report({ request_id, context, cause })
    return internalResponse()
  }

  /** Permission, headers, body, then the domain: one run of the runtime for the domain part. */
  const serve = async (
    r: Route,
    req: ApiRequest,
    params: Record<string, string>,
    state: RequestState
  ): Promise<ApiResponse> => {
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
    if (r.method === "POST") {
      const raw = req.header("idempotency-key")
      if (raw !== null) {
        if (!isIdempotencyKey(raw)) {
          return errorResponse(
            Errors.validation("Idempotency-Key must be 1 to 255 visible ASCII characters.", "Idempotency-Key")
          )
        }
        idempotencyKey = raw
      }
    }
    let dry_run = false
    if (r.dry_run === true) {
      const raw = req.header("x-no-effect")
      if (raw !== null) {
        const value = raw.trim().toLowerCase()
        if (!isNoEffect(value)) {
          return errorResponse(Errors.validation("X-No-Effect must be true or false.", "X-No-Effect"))
        }
        dry_run = value === "true"
      }
    } else if (r.method !== "GET") {
      // a dry run asked of an operation that has none must not take effect
      const raw = req.header("x-no-effect")
      if (raw !== null && raw.trim().toLowerCase() !== "false") {
        return errorResponse(
          Errors.validation(
            `X-No-Effect: true (a dry run) is offered on POST /v1/payments only; ${r.method} ${r.path} would take effect. Send the request without it.`,
            "X-No-Effect"
          )
        )
      }
    }
    let text = ""
    if (r.method !== "GET") {
      const read = jsonText(await req.read(body_max_bytes), req.header("content-type"), req.header("content-encoding"))
      if (!read.ok) return errorResponse(read.error)
      text = read.text
    }
    if (r.body !== undefined && text === "" && r.body_required !== false) {
      return errorResponse(Errors.validation("The request body is required: a JSON object."))
    }
    // the domain: decoding (so its validation errors are recorded with the key) and the use case
    const body = r.body
    const query = r.query
    /** The request's body (or query) decoded: its input. Plain code, synchronous. */
    const decodeInput = (): Result.Result<unknown, DomainError> => {
      if (body !== undefined) {
        const parsed = text === "" ? Result.succeed({}) : Json.parseJson(text)
        if (Result.isFailure(parsed)) return parsed
        return decodeRequest(body as Schema.Codec<unknown>, parsed.success)
      }
      if (text !== "") {
        // an action without a body (send, pay, cancel…) ignores a JSON body, but a malformed one is refused
        const parsed = Json.parseJson(text)
        return Result.isFailure(parsed) ? parsed : Result.succeed(undefined)
      }
      if (query !== undefined) return decodeRequest(query as Schema.Codec<unknown>, queryRecord(state.req.url()))
      return Result.succeed(undefined)
    }
    // parsing and decoding are synchronous: plain code in one suspended step, not an effect per check
    const domain = Effect.suspend(() => {
      const decoded = decodeInput()
      if (Result.isFailure(decoded)) return Effect.fail(decoded.failure)
      const input = decoded.success
      if (caller?.mode === "live") {
        const rule = liveCallbackRule(input, sandbox)
        if (Result.isFailure(rule)) return Effect.fail(rule.failure)
      } else if (r.operationId === "createSandboxBusiness") {
        // the business's webhook URL receives live events (conversions): the live rules, checked now
        // rather than failing every delivery for three days
        const rule = liveCallbackRule(input, sandbox, "webhook_url")
        if (Result.isFailure(rule)) return Effect.fail(rule.failure)
      }
      return r.handle({ caller, input, params, dry_run })
    })
    const work = shared ? Effect.andThen(refreshShared, domain) : domain
    // a POST without a key (sandbox business creation) keeps its Idempotency-Key per client address
    const scope = caller ?? keylessScope(req.remoteAddress)
    const once =
      idempotencyKey !== undefined && !dry_run
        ? Idempotency.idempotent(
            scope,
            idempotencyKey,
            fingerprint(r.method, state.req.pathname, text),
            work,
            r.recover === undefined || caller === undefined
              ? undefined
              : (touched) => {
                  // the retry's body is the first one's (same fingerprint): decoded as it was
                  const read = Effect.flatMap(Effect.fromResult(decodeInput()), (input) =>
                    (r.recover as Recover)(caller, touched, input)
                  )
                  // a recovered answer shows the object as of now: the shared sandbox's now
                  return shared ? Effect.andThen(refreshShared, read) : read
                },
            idempotencyWait
          )
        : work
    const writes: OutboxWrites = { units: 0 }
    const exit = await runtime.runPromiseExit(
      Effect.provideService(r.after === undefined ? once : Effect.flatMap(once, r.after), OutboxWritten, writes)
    )
    // a write may have committed outbox rows even when a later step failed: deliver them now
    if (writes.units > 0) kick()
    if (Exit.isFailure(exit)) return failure(exit.cause, state.request_id, `${r.method} ${r.path}`)
    return exit.value === document ? jsonText_(200, documentText) : json(dry_run ? 200 : r.status, exit.value)
  }

  /**
   * A hosted page (`${base_url}/pay/…`): public, no key. An unknown id is
   * `not_found`: the error object, like every path, unless the client asks
   * for HTML first (a browser following a mistyped link), which gets a page.
   */
  const page = async (
    kind: HostedPages.HostedKind,
    id: string,
    request_id: string,
    accept: string | null
  ): Promise<ApiResponse> => {
    // ids are lower-case UUIDs; a link whose case a mail or chat app changed still finds its page
    const exit = await runtime.runPromiseExit(
      HostedPages.hostedPage(kind, UUID_ANY_CASE.test(id) ? id.toLowerCase() : id)
    )
    if (Exit.isFailure(exit)) {
      const answer = failure(exit.cause, request_id, `GET hosted ${kind}`)
      return answer.status === 404 && prefersHtml(accept)
        ? { status: 404, headers: { ...hostedHeaders }, body: hostedNotFoundHtml }
        : answer
    }
    return { status: 200, headers: { ...hostedHeaders }, body: hostedHtml(exit.value) }
  }

  // ---------------------------------------------------------------- the router (Hono's, fed from the route table)
  type Served = { readonly route: Route } | { readonly docs: string } | { readonly page: HostedPages.HostedKind }
  const router = new SmartRouter<Served>({ routers: [new RegExpRouter(), new TrieRouter()] })
  const isPage = (found: Served | undefined): boolean => found !== undefined && "page" in found
  for (const r of served) router.add(r.method, r.path.replace(/\{([^}]+)\}/g, ":$1"), { route: r })
  // the page is read at /docs and at /docs/ (its script finds the API from either)
  const docsPaths = ["/docs", "/docs/"]
  router.add("GET", "/docs", { docs: docsHtml })
  router.add("GET", "/docs/", { docs: docsHtmlInFolder })
  // a link a mail or chat app handed on with a slash added still opens its page
  for (const h of hostedRoutes) for (const path of [h.path, `${h.path}/`]) router.add("GET", path, { page: h.kind })
  const matchers = [
    ...served.map((r) => ({ method: r.method, matches: templateMatcher(r.path) })),
    ...[
      ...docsPaths,
      ...hostedRoutes.flatMap((h) => [h.path, `${h.path}/`].map((p) => p.replace(/:(\w+)/g, "{$1}")))
    ].map((path) => ({
      method: "GET",
      matches: templateMatcher(path)
    }))
  ]

  /**
   * Routes without path parameters by `METHOD path`, looked up before the
   * router (most requests, creates above all, are on such paths). Only a route
   * the router itself gives first for its path is kept, so both always agree.
   */
  const noParams: Record<string, never> = Object.freeze({})
  const exact = new Map<string, Served>()
  for (const r of served) {
    if (r.path.includes("{")) continue
    const first = router.match(r.method, r.path)[0][0]
    if (first !== undefined && "route" in first[0] && first[0].route === r) exact.set(`${r.method} ${r.path}`, first[0])
  }

  /** The first route matching, with its path parameters percent-decoded (as Hono's `c.req.param()`). */
  const match = (method: string, href: string) => {
    const path = getPath({ url: href } as Request)
    const known = exact.get(`${method} ${path}`)
    if (known !== undefined) return { path, found: known, params: noParams }
    const result = router.match(method, path)
    const first = result[0][0]
    if (first === undefined) return { path, found: undefined }
    const [found, paramRefs] = first
    const stash = result[1]
    const params: Record<string, string> = {}
    for (const key of Object.keys(paramRefs)) {
      const ref = paramRefs[key]
      const value = stash === undefined ? (ref as string | undefined) : stash[ref as number]
      if (value !== undefined) params[key] = tryDecodeURIComponent(value)
    }
    return { path, found, params }
  }

  const notFound = (method: string, path: string): ApiResponse => {
    const allow = [...new Set(matchers.filter((m) => m.matches.test(path)).map((m) => m.method))]
    if (allow.length === 0) return errorResponse(Errors.notFound(`No route ${method} ${clip(path)}.`))
    return errorResponse(Errors.notFound(`${method} is not served on ${clip(path)}; it accepts ${allow.join(", ")}.`), {
      allow: allow.join(", ")
    })
  }

  // ---------------------------------------------------------------- before routing: who is calling, how often
  const keyCache =
    options.authCache === false
      ? undefined
      : new KeyCache(options.authCache?.max ?? 10_000, options.authCache?.ttlMs ?? 60_000)

  /**
   * Who is calling, without the store when that can be told at once: no key,
   * a malformed header, or a key authenticated before (the cache). Otherwise
   * the key and its digest, to look up.
   */
  const knownAuth = (header: string | null): AuthState | { readonly kind: "lookup"; key: string; hash: string } => {
    if (header === null) return missing
    const key = BEARER.exec(header)?.[1]
    if (key === undefined) return invalid
    const hash = digestOf("sha256", key, "hex")
    return keyCache?.get(hash) ?? { kind: "lookup", key, hash }
  }

  const lookup = (key: string, hash: string): Effect.Effect<AuthState, unknown, Services> =>
    Businesses.grant(key).pipe(
      Effect.map((grant): AuthState => {
        const state: AuthState = { kind: "ok", caller: grant.caller }
        // a key with an expiry is checked against it (on the engine's clock) on every request
        if (grant.expires_at === null) keyCache?.set(hash, state)
        return state
      }),
      Effect.catchIf(
        (e) => isDomainError(e) && e.code === "authentication_error",
        () => Effect.succeed(invalid)
      )
    )

  const limit = (auth: AuthState, remoteAddress: string | undefined): Effect.Effect<RateDecision | undefined> => {
    const bucket =
      auth.kind === "ok" ? `key:${auth.caller.business_id}:${auth.caller.mode}` : `ip:${remoteAddress ?? "unknown"}`
    return Effect.flatMap(Effect.serviceOption(RateLimiter), (l) =>
      Option.isSome(l) ? l.value.take(bucket) : Effect.succeed(undefined)
    )
  }

  /** The key lookup (when not known at once) and the rate limit (when on), in one run of the runtime. */
  const admit = (
    known: ReturnType<typeof knownAuth>,
    remoteAddress: string | undefined
  ): Effect.Effect<{ readonly auth: AuthState; readonly decision: RateDecision | undefined }, unknown, Services> =>
    Effect.flatMap(known.kind === "lookup" ? lookup(known.key, known.hash) : Effect.succeed(known), (auth) =>
      rateLimit === false
        ? Effect.succeed({ auth, decision: undefined })
        : Effect.map(limit(auth, remoteAddress), (decision) => ({ auth, decision }))
    )

  const handle: ApiHandler = async (req) => {
    const started = performance.now()
    const request_id = IdsAdapter.uuidFrom(requestIds)
    let response: ApiResponse
    let decision: RateDecision | undefined
    try {
      const known = knownAuth(req.header("authorization"))
      let auth: AuthState
      if (known.kind !== "lookup" && rateLimit === false) auth = known
      else {
        const exit = await runtime.runPromiseExit(admit(known, req.remoteAddress))
        if (Exit.isFailure(exit)) throw new Fault(exit.cause)
        auth = exit.value.auth
        decision = exit.value.decision
      }
      if (decision !== undefined && !decision.allowed) {
        const retry = { "retry-after": String(decision.retry_after_seconds) }
        // a person opening a hosted page gets a page that reloads itself when it may, not JSON
        response =
          (req.method === "GET" || req.method === "HEAD") &&
          prefersHtml(req.header("accept")) &&
          isPage(match("GET", req.href).found)
            ? {
                status: 429,
                headers: { ...hostedHeaders, ...retry },
                body: hostedBusyHtml(decision.retry_after_seconds)
              }
            : errorResponse(
                new DomainError({
                  code: "rate_limit_exceeded",
                  message: `Too many requests; retry after ${decision.retry_after_seconds} s.`
                }),
                retry
              )
      } else {
        // HEAD is answered as GET without the body (as Hono does)
        const matched = match(req.method === "HEAD" ? "GET" : req.method, req.href)
        if (matched.found === undefined) response = notFound(req.method, req.pathname)
        else if ("docs" in matched.found)
          response = { status: 200, headers: { ...docsHeaders }, body: matched.found.docs }
        else if ("page" in matched.found)
          response = await page(matched.found.page, matched.params?.id ?? "", request_id, req.header("accept"))
        else {
          response = await serve(matched.found.route, req, matched.params ?? {}, { request_id, req, auth })
          // a later sandbox time can end a rolled key's grace period: look every key up again
          if (matched.found.route.operationId === "advanceSandboxClock" && response.status === 200) keyCache?.clear()
        }
      }
    } catch (e) {
      report({ request_id, context: `${req.method} ${req.pathname}`, cause: e instanceof Fault ? e.fault : e })
      response = internalResponse()
    }
    const headers = response.headers
    headers["request-id"] = request_id
    if (decision !== undefined) {
      headers["ratelimit-limit"] = String(decision.limit)
      headers["ratelimit-remaining"] = String(decision.remaining)
      headers["ratelimit-reset"] = String(decision.reset_seconds)
    }
    if (req.method === "HEAD") response = { status: response.status, headers, body: null }
    try {
      options.onRequest?.({
        method: req.method,
        path: req.pathname,
        status: response.status,
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
        request_id
      })
    } catch {
      // the log line is best effort
    }
    return response
  }

  const fetch: FetchHandler = async (request, context) => {
    let url: URL
    try {
      url = new URL(request.url)
    } catch {
      url = new URL("http://invalid/")
    }
    const answer = await handle({
      method: request.method,
      href: url.href,
      pathname: url.pathname,
      url: () => url,
      header: (name) => request.headers.get(name),
      read: (limit) => readCapped(request, limit),
      remoteAddress: context?.remoteAddress
    })
    return new Response(answer.body, { status: answer.status, headers: answer.headers })
  }
  Object.defineProperty(fetch, apiHandler, { value: handle })

  return {
    fetch,
    runDue: async (options) => {
      const signal = options?.signal
      if (signal?.aborted === true || disposed) return
      const stoppingRun = () => disposed || signal?.aborted === true
      // the sandbox clock first: another process on the same store may have advanced it
      const exit = await runtime.runPromiseExit(
        Effect.flatMap(Background, (b) =>
          b.exclusive(
            Effect.andThen(SandboxClock.refreshIfPresent, Scheduler.runDue({ defer: !sandbox, stopping: stoppingRun }))
          )
        )
      )
      if (Exit.isFailure(exit)) report({ request_id: null, context: "runDue", cause: exit.cause })
    },
    stopBackground: async () => {
      disposed = true
      await quiet()
    },
    dispose: async () => {
      disposed = true
      await quiet()
      await runtime.dispose()
    },
    ready: () => runtime.context().then(() => undefined),
    forgetKeys: () => keyCache?.clear(),
    check: async (options) => {
      if (disposed) return { ok: false, reason: "stopping" }
      const timeoutMs = options?.timeoutMs ?? check_timeout_ms
      // a request's unit of work completed within the deadline: the store answers, and a read of our own
      // would only queue behind the busy pool (under load every server would look unready at once)
      if (performance.now() - lastAnsweredAt < timeoutMs) return { ok: true }
      let timer: ReturnType<typeof setTimeout> | undefined
      const late = new Promise<HealthCheck>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, reason: `the store did not answer within ${timeoutMs} ms` }),
          timeoutMs
        )
      })
      const briefly = (cause: unknown) => {
        const e = Cause.isCause(cause) ? Cause.squash(cause) : cause
        return e instanceof Error ? e.message : String(e)
      }
      // one read at a time: probes of a store that does not answer wait on the read already sent
      // (until the store's own timeout ends it) instead of each holding one more connection; a read by
      // key of a row that never exists: one statement, no transaction, nothing written
      checking ??= runtime
        .runPromiseExit(
          Effect.gen(function* () {
            const store = yield* Store
            yield* store.transact((tx) => tx.get("counter", "health-check"))
          })
        )
        .then(
          (exit): HealthCheck =>
            Exit.isSuccess(exit) ? { ok: true } : { ok: false, reason: `the store failed: ${briefly(exit.cause)}` },
          (cause: unknown): HealthCheck => ({ ok: false, reason: `the API could not start: ${briefly(cause)}` })
        )
        .finally(() => {
          checking = undefined
        })
      const read = checking
      try {
        return await Promise.race([read, late])
      } finally {
        clearTimeout(timer)
      }
    }
  }
}
