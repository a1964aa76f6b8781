import { createHmac, timingSafeEqual } from "node:crypto"

export const secret_prefix = "whsec_"

const canonical_base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * Decodes strict, canonical base64 (padding required, no whitespace, unused bits
 * zero), or undefined. Node's own decoder is lenient: it would accept several
 * spellings of one value, so a changed signature character could still verify.
 */
export const decodeBase64 = (text: string): Buffer | undefined => {
  if (text.length === 0 || !canonical_base64.test(text)) return undefined
  const bytes = Buffer.from(text, "base64")
  return bytes.toString("base64") === text ? bytes : undefined
}

/** The Standard Webhooks key: the base64-decoded part after `whsec_` (the prefix is optional, as in the reference library). */
export const standardKey = (secret: string): Buffer | undefined =>
  decodeBase64(secret.startsWith(secret_prefix) ? secret.slice(secret_prefix.length) : secret)

/** The `x-service-signature` key: the secret string exactly as handed out, prefix included, as UTF-8. */
export const serviceKey = (secret: string): Buffer | undefined =>
  secret.length === 0 ? undefined : Buffer.from(secret, "utf8")

/** HMAC-SHA512 of the exact body bytes. */
export const serviceSignature = (key: Uint8Array, body: Uint8Array): Buffer =>
  createHmac("sha512", key).update(body).digest()

/** HMAC-SHA256 of `${id}.${timestamp}.${body}`, the body as its exact bytes. */
export const standardSignature = (key: Uint8Array, id: string, timestamp: string, body: Uint8Array): Buffer =>
  createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest()

/** Constant-time equality (the length of an HMAC is public). */
export const equal = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && timingSafeEqual(a, b)

/** The exact bytes of a raw body; a string is taken as its UTF-8 encoding. */
export const bodyBytes = (rawBody: string | Uint8Array): Uint8Array => {
  if (typeof rawBody === "string") return Buffer.from(rawBody, "utf8")
  if (rawBody instanceof Uint8Array) return rawBody
  throw new TypeError("The webhook body must be the raw request body, as a string or a Uint8Array (not parsed JSON).")
}
