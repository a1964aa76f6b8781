import { parseEnvelope, type WebhookEnvelope } from "./Envelope.ts"
import {
  bodyBytes,
  decodeBase64,
  equal,
  serviceKey,
  serviceSignature,
  standardKey,
  standardSignature
} from "./internal/crypto.ts"
import { has, values, type WebhookHeaders } from "./internal/headers.ts"
import { WebhookVerificationError } from "./WebhookVerificationError.ts"

export type { WebhookHeaders }

/**
 * Which signature to check:
 * - `"standard"`: Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), with replay protection;
 * - `"service"`: `x-service-signature` (HMAC-SHA512 of the body), what receivers of the original service check;
 *   it carries no timestamp, so it cannot detect a replay;
 * - `"auto"` (default): `"standard"` when any of its three headers is present, else `"service"`.
 *   Auto never falls back: when a standard header is present, all three must be and must verify.
 *   A replayed request stripped of every standard header still verifies under `"auto"`
 *   (by `x-service-signature`, which has no timestamp): pass `"standard"` for replay protection.
 */
export type WebhookScheme = "standard" | "service" | "auto"

export interface VerifyOptions {
  readonly scheme?: WebhookScheme
  /** Largest accepted distance between `webhook-timestamp` and now, both directions, in seconds. Default 300. */
  readonly toleranceSeconds?: number
  /** The current time (epoch milliseconds or a valid Date), for tests. Default: the system clock. */
  readonly now?: number | Date
}

/** The default replay tolerance of the Standard Webhooks scheme: 5 minutes. */
export const default_tolerance_seconds = 300

const hex_sha512 = /^[0-9a-f]{128}$/
const unix_seconds = /^\d{1,15}$/

const standardHeaders = ["webhook-id", "webhook-timestamp", "webhook-signature"] as const

/** The one value of a single-valued header. */
const single = (headers: WebhookHeaders, name: string): string => {
  const found = values(headers, name)
  if (found.length === 0) throw new WebhookVerificationError("missing_header", `Header ${name} is missing.`)
  if (found.length > 1) throw new WebhookVerificationError("invalid_header", `Header ${name} appears more than once.`)
  return found[0] as string
}

const secretList = (secret: string | ReadonlyArray<string>): ReadonlyArray<string> => {
  const list = typeof secret === "string" ? [secret] : secret
  if (!Array.isArray(list) || list.length === 0 || list.some((s) => typeof s !== "string")) {
    throw new WebhookVerificationError("invalid_secret", "Give one webhook secret or a non-empty list of them.")
  }
  return list
}

const verifyService = (body: Uint8Array, headers: WebhookHeaders, secrets: ReadonlyArray<string>): void => {
  const signature = single(headers, "x-service-signature")
  const keys = secrets.map((s) => serviceKey(s))
  if (keys.some((k) => k === undefined)) throw new WebhookVerificationError("invalid_secret")
  // Exactly the lowercase hex the service sends: any other spelling is a changed signature.
  if (!hex_sha512.test(signature)) throw new WebhookVerificationError("invalid_signature")
  const given = Buffer.from(signature, "hex")
  let ok = false
  for (const key of keys) ok = equal(serviceSignature(key as Buffer, body), given) || ok
  if (!ok) throw new WebhookVerificationError("invalid_signature")
}

/** The `v1` signatures of a `webhook-signature` list (space separated; other versions are ignored). */
const v1Signatures = (headers: WebhookHeaders): ReadonlyArray<Buffer> => {
  const found: Array<Buffer> = []
  for (const value of values(headers, "webhook-signature")) {
    for (const token of value.split(/\s+/)) {
      // A proxy may join repeated headers with ", ": tolerate the trailing comma.
      const entry = token.endsWith(",") ? token.slice(0, -1) : token
      if (!entry.startsWith("v1,")) continue
      const decoded = decodeBase64(entry.slice(3))
      if (decoded !== undefined) found.push(decoded)
    }
  }
  return found
}

const verifyStandard = (
  body: Uint8Array,
  headers: WebhookHeaders,
  secrets: ReadonlyArray<string>,
  options: VerifyOptions
): void => {
  const id = single(headers, "webhook-id")
  const timestamp = single(headers, "webhook-timestamp")
  if (!has(headers, "webhook-signature")) throw new WebhookVerificationError("missing_header")
  if (id.length === 0) throw new WebhookVerificationError("invalid_header", "Header webhook-id is empty.")
  if (!unix_seconds.test(timestamp)) {
    throw new WebhookVerificationError("invalid_header", "Header webhook-timestamp is not unix seconds.")
  }
  const keys = secrets.map((s) => standardKey(s))
  if (keys.some((k) => k === undefined || k.length === 0)) throw new WebhookVerificationError("invalid_secret")

  // Signature first, then time: a stale timestamp is reported only for an authentic message.
  const given = v1Signatures(headers)
  let ok = false
  for (const key of keys) {
    const expected = standardSignature(key as Buffer, id, timestamp, body)
    for (const signature of given) ok = equal(expected, signature) || ok
  }
  if (!ok) throw new WebhookVerificationError("invalid_signature")

  const { tolerance, nowMs } = timeOptions(options)
  const now = Math.floor(nowMs / 1000)
  const sent = Number(timestamp)
  if (now - sent > tolerance) throw new WebhookVerificationError("timestamp_too_old")
  if (sent - now > tolerance) throw new WebhookVerificationError("timestamp_too_new")
}

/**
 * The replay window's options, checked: a mistaken option must fail loudly, never
 * turn the window off (a NaN time compares false with everything).
 */
const timeOptions = (options: VerifyOptions): { readonly tolerance: number; readonly nowMs: number } => {
  const tolerance = options.toleranceSeconds ?? default_tolerance_seconds
  if (typeof tolerance !== "number" || !Number.isFinite(tolerance) || tolerance < 0) {
    throw new TypeError("toleranceSeconds must be a number >= 0.")
  }
  const now = options.now
  const nowMs = now === undefined ? Date.now() : now instanceof Date ? now.getTime() : now
  if (typeof nowMs !== "number" || !Number.isFinite(nowMs)) {
    throw new TypeError("now must be epoch milliseconds or a valid Date.")
  }
  return { tolerance, nowMs }
}

/**
 * Verifies a webhook and returns its `{event, payload}` envelope, or throws a
 * `WebhookVerificationError` with a machine-readable `reason`.
 *
 * - `rawBody`: the exact bytes received (a string is taken as UTF-8). Not the
 *   parsed JSON: re-serialising changes bytes and breaks the signature.
 * - `headers`: a WHATWG `Headers`, or Node's `req.headers` (any name case).
 * - `secret`: the `whsec_…` secret, or several during a rotation (any one verifying is enough).
 *
 * Signatures are compared in constant time. The body is parsed only after a signature
 * checks out. Receivers should still deduplicate on `webhook-id`: delivery is at least once.
 *
 * @example
 * const { event, payload } = verify(rawBody, req.headers, process.env.WEBHOOK_SECRET!)
 */
export const verify = (
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): WebhookEnvelope => {
  if (headers === null || typeof headers !== "object") {
    throw new TypeError("headers must be a Headers object or a record of header values.")
  }
  timeOptions(options)
  const body = bodyBytes(rawBody)
  const secrets = secretList(secret)
  const scheme = options.scheme ?? "auto"
  const standard = scheme === "standard" || (scheme === "auto" && standardHeaders.some((name) => has(headers, name)))
  if (standard) verifyStandard(body, headers, secrets, options)
  else if (scheme === "service" || scheme === "auto") verifyService(body, headers, secrets)
  else throw new TypeError(`Unknown webhook scheme: ${String(scheme)}.`)
  return parseEnvelope(body)
}
