import { bodyBytes, serviceKey, serviceSignature, standardKey, standardSignature } from "./internal/crypto.ts"

/**
 * The signature headers of one delivery, for both schemes (decisions §8). A type
 * alias rather than an interface so it can be passed straight to `verify`.
 */
export type SignedHeaders = {
  /** Lowercase hex HMAC-SHA512 of the body, keyed with the secret string as handed out. */
  readonly "x-service-signature": string
  /** The event id, stable across retries: receivers deduplicate on it. */
  readonly "webhook-id": string
  /** Unix seconds of the attempt. */
  readonly "webhook-timestamp": string
  /** `v1,<base64 HMAC-SHA256 of id.timestamp.body>`, keyed with the base64-decoded secret. */
  readonly "webhook-signature": string
}

export interface SignOptions {
  /** The message id (`webhook-id`): printable ASCII without spaces. */
  readonly id: string
  /** The attempt time: unix seconds, or a Date (truncated to the second). */
  readonly timestamp: number | Date
}

const id_shape = /^[\x21-\x7e]{1,255}$/

/**
 * Signs a raw body with both schemes and returns the signature headers. Used by
 * the HTTP notifier; also handy in a receiver's own tests.
 *
 * Several secrets (during a rotation, newest first): `webhook-signature` carries
 * one `v1` signature per secret, in that order; `x-service-signature`, which
 * holds one, is made with the LAST (the oldest, which every receiver already
 * knows), so a receiver of either scheme keeps verifying while it adds the new
 * secret.
 *
 * @example
 * const body = JSON.stringify({ event: "ramp.paid", payload: { id: "…" } })
 * const headers = sign(body, "whsec_…", { id: "evt_1", timestamp: new Date() })
 * // POST body with { "content-type": "application/json", ...headers }
 *
 * Throws a `TypeError` for no secret or a secret that is not `whsec_<base64>`,
 * an id that is not a valid header value, or a timestamp that is not whole
 * non-negative seconds.
 */
export const sign = (
  rawBody: string | Uint8Array,
  secret: string | ReadonlyArray<string>,
  options: SignOptions
): SignedHeaders => {
  const body = bodyBytes(rawBody)
  const secrets = typeof secret === "string" ? [secret] : secret
  if (!Array.isArray(secrets) || secrets.length === 0) throw new TypeError("Give one webhook secret or several.")
  const standards = secrets.map((s) => (typeof s === "string" ? standardKey(s) : undefined))
  const service = typeof secrets.at(-1) === "string" ? serviceKey(secrets.at(-1) as string) : undefined
  if (standards.some((k) => k === undefined || k.length === 0) || service === undefined) {
    throw new TypeError("The webhook secret must be whsec_<base64>.")
  }
  if (!id_shape.test(options.id)) throw new TypeError("The webhook id must be 1 to 255 printable ASCII characters.")
  const seconds = options.timestamp instanceof Date ? Math.floor(options.timestamp.getTime() / 1000) : options.timestamp
  if (!Number.isSafeInteger(seconds) || seconds < 0) {
    throw new TypeError("The webhook timestamp must be whole non-negative unix seconds.")
  }
  const timestamp = String(seconds)
  return {
    "x-service-signature": serviceSignature(service, body).toString("hex"),
    "webhook-id": options.id,
    "webhook-timestamp": timestamp,
    "webhook-signature": standards
      .map((key) => `v1,${standardSignature(key as Buffer, options.id, timestamp, body).toString("base64")}`)
      .join(" ")
  }
}
