/**
 * @xaalis/webhooks: verify (receivers) and sign (the service) xaalis webhooks.
 * Two schemes on every delivery (decisions §8): `x-service-signature`
 * (HMAC-SHA512 of the raw body) and Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`). No dependencies beyond node:crypto.
 */

export {
  isWebhookEventName,
  type WebhookEnvelope,
  type WebhookEventName,
  type WebhookPayload,
  webhookEventNames
} from "./Envelope.ts"
export { type SignedHeaders, type SignOptions, sign } from "./sign.ts"
export {
  default_tolerance_seconds,
  type VerifyOptions,
  verify,
  type WebhookHeaders,
  type WebhookScheme
} from "./verify.ts"
export { WebhookVerificationError, type WebhookVerificationReason } from "./WebhookVerificationError.ts"
