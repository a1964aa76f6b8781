import { WebhookVerificationError } from "./WebhookVerificationError.ts"

/** The event names of the specification's event table, in its order. */
export const webhookEventNames = [
  "payment_intent.created",
  "payment_intent.cancelled",
  "charge.succeeded",
  "charge.failed",
  "transfer.succeeded",
  "ramp.underpaid",
  "ramp.paid",
  "ramp.overpaid",
  "paymentrequest.success",
  "invoice.overdue"
] as const

/** One event name of the specification's event table. */
export type WebhookEventName = (typeof webhookEventNames)[number]

/** A webhook payload: a plain JSON object (see the specification's Events section for each event's shape). */
export interface WebhookPayload {
  readonly [key: string]: unknown
}

/** What every delivery carries: `{event, payload}`. */
export interface WebhookEnvelope {
  readonly event: WebhookEventName
  readonly payload: WebhookPayload
}

const eventNames: ReadonlySet<string> = new Set(webhookEventNames)

/** True when `name` is one of the specification's event names. */
export const isWebhookEventName = (name: string): name is WebhookEventName => eventNames.has(name)

const isPlainObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

// `fatal`: a body that is not valid UTF-8 is refused rather than silently repaired with U+FFFD.
const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * Decodes an already authenticated body: valid UTF-8, valid JSON, an object
 * with a known string `event` and an object `payload`.
 */
export const parseEnvelope = (body: Uint8Array): WebhookEnvelope => {
  let parsed: unknown
  try {
    parsed = JSON.parse(utf8.decode(body))
  } catch {
    throw new WebhookVerificationError("invalid_body")
  }
  if (!isPlainObject(parsed) || typeof parsed.event !== "string" || !isPlainObject(parsed.payload)) {
    throw new WebhookVerificationError("invalid_envelope")
  }
  if (!isWebhookEventName(parsed.event)) throw new WebhookVerificationError("unknown_event")
  return { event: parsed.event, payload: parsed.payload }
}
