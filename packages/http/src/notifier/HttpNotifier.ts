import * as http from "node:http"
import * as https from "node:https"
import { Businesses, type Delivery, DeliveryFailed, Dispatcher, Notifier, Store } from "@xaalis/engine"
import { sign } from "@xaalis/webhooks"
import { Clock, Effect, Layer } from "effect"
import { AddressRefused, checkUrl, type Lookup, type LoopbackRule, pinnedLookup, systemLookup } from "./AddressGuard.ts"

/** Deadline of one attempt (DNS, connect, TLS, request and response headers) unless `timeoutMs` says otherwise. */
export const default_timeout_ms = 10_000
/** Sent on every delivery. */
export const user_agent = "xaalis-webhooks/0.1"
/** Response body bytes read (and discarded) before the connection is cut: receivers should answer with an empty 2xx. */
export const response_body_max_bytes = 64 * 1024

export interface HttpNotifierOptions {
  /** Deadline of one attempt in milliseconds. Default 10 000; must stay below the dispatcher's `claim_ms` (5 min). */
  readonly timeoutMs?: number
  /**
   * The sandbox's relaxation (decisions §8): plain http and https to loopback
   * addresses (127.0.0.0/8, ::1) are allowed, in every mode, so local tests can
   * receive. Every other private or special range stays refused. Default false.
   */
  readonly allowLoopbackHttp?: boolean
  /** Resolves host names (default: the system resolver). Tests inject one; its answers are vetted like the system's. */
  readonly lookup?: Lookup
  /** Trusted certificate authorities (PEM) replacing Node's bundled roots: a private PKI, or tests. */
  readonly ca?: string | ReadonlyArray<string>
}

const failed = (message: string) => new DeliveryFailed({ message })

const tls_code = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH)/

/** A short, secret-free description of a request failure: never the error's own message (it names addresses). */
const describeError = (error: unknown): string => {
  if (error instanceof AddressRefused) return error.message
  const code = (error as { readonly code?: unknown } | null)?.code
  if (typeof code !== "string") return "network error"
  switch (code) {
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "EAI_NODATA":
      return "DNS lookup failed"
    case "ECONNREFUSED":
      return "connection refused"
    case "ECONNRESET":
    case "EPIPE":
    case "ECONNABORTED":
      return "connection reset"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable"
    case "ETIMEDOUT":
      return "connection timed out"
    case "HPE_INVALID_CONSTANT":
    case "HPE_INVALID_VERSION":
    case "HPE_INVALID_STATUS":
      return "invalid HTTP response"
  }
  if (tls_code.test(code)) return `TLS error (${code})`
  return /^[A-Z0-9_]{1,64}$/.test(code) ? `network error (${code})` : "network error"
}

const statusOutcome = (status: number): string | undefined => {
  if (status >= 200 && status < 300) return undefined
  if (status >= 300 && status < 400) return `HTTP ${status} (redirects are not followed)`
  return `HTTP ${status}`
}

interface Target {
  readonly url: URL
  readonly loopback: LoopbackRule
  readonly body: Buffer
  readonly headers: Readonly<Record<string, string>>
}

/**
 * One POST, resolved when the response status arrives. The deadline is a real
 * timer (not effect's Clock, which the sandbox moves), covering DNS to response
 * headers; the response body is then drained up to `response_body_max_bytes`
 * within the same deadline. Interrupting the fiber destroys the request.
 */
const post = (
  target: Target,
  config: { readonly timeoutMs: number; readonly lookup: Lookup; readonly ca: ReadonlyArray<string> | undefined }
): Effect.Effect<void, DeliveryFailed> =>
  Effect.callback<void, DeliveryFailed>((resume) => {
    let settled = false
    const settle = (failure: string | undefined) => {
      if (settled) return
      settled = true
      resume(failure === undefined ? Effect.void : Effect.fail(failed(failure)))
    }
    const options: https.RequestOptions = {
      method: "POST",
      headers: target.headers,
      // A fresh connection per attempt: no pooled socket that was not vetted by this attempt's lookup.
      agent: false,
      lookup: pinnedLookup(config.lookup, target.loopback),
      ...(config.ca === undefined ? {} : { ca: [...config.ca] })
    }
    let request: http.ClientRequest
    try {
      request = (target.url.protocol === "https:" ? https : http).request(target.url, options)
    } catch {
      // A defect here would fail the dispatcher's whole batch; one bad row must only fail its own attempt.
      settle("invalid request")
      return
    }
    const timer = setTimeout(() => {
      settle(`timed out after ${config.timeoutMs} ms`)
      request.destroy()
    }, config.timeoutMs)
    // Every way an attempt can end settles it: a request node closes without a
    // response or an error (it does so after a 101 answer it cannot upgrade)
    // must not leave the dispatcher waiting forever.
    request.once("close", () => {
      clearTimeout(timer)
      settle("connection closed without a response")
    })
    request.on("error", (error) => settle(describeError(error)))
    request.on("upgrade", (response, socket) => {
      socket.destroy()
      settle(`HTTP ${response.statusCode ?? 0} (protocol switches are refused)`)
    })
    request.on("response", (response) => {
      settle(statusOutcome(response.statusCode ?? 0))
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > response_body_max_bytes) request.destroy()
      })
      response.on("error", () => {})
    })
    request.end(target.body)
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      request.destroy()
    })
  })

/**
 * The HTTP webhook notifier, as a `Notifier` service (needs the engine's
 * `Store`, to read the business's webhook secret). See `layer`.
 */
export const make = (options: HttpNotifierOptions = {}): Effect.Effect<Notifier["Service"], never, Store> =>
  Effect.gen(function* () {
    const store = yield* Store
    const timeoutMs = options.timeoutMs ?? default_timeout_ms
    // An attempt outliving the dispatcher's claim could run twice at once (the claim lapses, another dispatcher retries).
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs >= Dispatcher.claim_ms) {
      return yield* Effect.die(new RangeError(`timeoutMs must be a positive integer below ${Dispatcher.claim_ms}`))
    }
    const allowLoopbackHttp = options.allowLoopbackHttp ?? false
    const ca = options.ca === undefined ? undefined : typeof options.ca === "string" ? [options.ca] : options.ca
    const config = { timeoutMs, lookup: options.lookup ?? systemLookup, ca }

    /** The secrets that sign now (engine clock): the current one, then rolled ones in their grace period. */
    const secretsOf = (business_id: string): Effect.Effect<ReadonlyArray<string>, DeliveryFailed> =>
      store
        .transact((tx) => tx.get("business", business_id))
        .pipe(
          Effect.mapError(() => failed("could not read the webhook secret")),
          Effect.flatMap((doc) =>
            doc === undefined
              ? Effect.fail(failed("business not found"))
              : Effect.map(Clock.currentTimeMillis, (t) =>
                  Businesses.signingSecrets(doc.data as Businesses.Business, t)
                )
          )
        )

    const deliver = Effect.fn("HttpNotifier.deliver")(function* (delivery: Delivery) {
      const verdict = checkUrl(delivery.url, { mode: delivery.mode, allowLoopbackHttp })
      if (!verdict.ok) return yield* Effect.fail(failed(verdict.refusal))
      const secrets = yield* secretsOf(delivery.business_id)
      const body = Buffer.from(delivery.body, "utf8")
      const signature = yield* Effect.try({
        // The real wall-clock time of the attempt: standard verifiers compare it with their own clock.
        try: () => sign(body, secrets, { id: delivery.event_id, timestamp: Math.floor(Date.now() / 1000) }),
        catch: () => failed("invalid webhook secret or event id")
      })
      yield* post(
        {
          url: verdict.url,
          loopback: verdict.loopback,
          body,
          headers: {
            "content-type": "application/json",
            "content-length": String(body.length),
            "user-agent": user_agent,
            ...signature
          }
        },
        config
      )
    })

    return Notifier.of({ deliver })
  })

/**
 * The HTTP webhook notifier (decisions §8) as a Layer providing the engine's
 * `Notifier`; requires its `Store`. Each call is one attempt (the engine's
 * dispatcher retries): POST of the stored body byte for byte, signed with both
 * schemes of `@xaalis/webhooks`, `webhook-id` = the event id (stable across
 * retries), `webhook-timestamp` = the real time of the attempt. Redirects are
 * not followed; non-2xx, time-out, network errors and refused URLs fail with a
 * short `DeliveryFailed` message (stored as the row's `last_error`, so it never
 * holds a secret or an internal address).
 *
 * SSRF guard: https only, and no private, loopback, link-local, CGNAT,
 * unspecified, multicast, reserved or cloud metadata address (IPv4-mapped IPv6
 * included), checked on the address actually connected to. Test-mode deliveries
 * follow the same rules; `allowLoopbackHttp` (the sandbox) allows http and https
 * to loopback.
 *
 * @example
 * const notifier = HttpNotifier.layer({ allowLoopbackHttp: sandbox }).pipe(Layer.provide(storeLayer))
 */
export const layer = (options: HttpNotifierOptions = {}): Layer.Layer<Notifier, never, Store> =>
  Layer.effect(Notifier, make(options))
