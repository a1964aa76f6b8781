/**
 * Why a webhook was refused, for programs:
 *
 * - `missing_header`: a header the scheme needs is absent;
 * - `invalid_header`: a header is malformed (timestamp not unix seconds, a single-valued header sent twice, empty id);
 * - `invalid_signature`: no signature matches any of the secrets (forged, altered, or the wrong secret);
 * - `timestamp_too_old` / `timestamp_too_new`: authentic, but outside the replay tolerance (replay or clock skew);
 * - `invalid_secret`: the configured secret cannot be used (empty, or not `whsec_<base64>` for Standard Webhooks);
 * - `invalid_body`: authentic, but not UTF-8 JSON;
 * - `invalid_envelope`: authentic JSON, but not `{event: string, payload: object}`;
 * - `unknown_event`: authentic envelope whose event is not in the specification's table.
 */
export type WebhookVerificationReason =
  | "missing_header"
  | "invalid_header"
  | "invalid_signature"
  | "timestamp_too_old"
  | "timestamp_too_new"
  | "invalid_secret"
  | "invalid_body"
  | "invalid_envelope"
  | "unknown_event"

const messages: { readonly [R in WebhookVerificationReason]: string } = {
  missing_header: "A webhook signature header is missing.",
  invalid_header: "A webhook signature header is malformed.",
  invalid_signature: "No webhook signature matches the secret.",
  timestamp_too_old: "The webhook timestamp is older than the tolerance.",
  timestamp_too_new: "The webhook timestamp is further in the future than the tolerance.",
  invalid_secret: "The webhook secret is not usable (expected whsec_<base64>).",
  invalid_body: "The webhook body is not UTF-8 JSON.",
  invalid_envelope: "The webhook body is not an {event, payload} envelope.",
  unknown_event: "The webhook event is not a known event name."
}

/**
 * Thrown by `verify` when a webhook must be rejected. `reason` is stable and
 * machine-readable; the message never contains a secret or an expected signature.
 *
 * @example
 * try { verify(body, headers, secret) } catch (e) {
 *   if (e instanceof WebhookVerificationError) return res.status(400).send(e.reason)
 *   throw e
 * }
 */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError"
  readonly reason: WebhookVerificationReason

  constructor(reason: WebhookVerificationReason, message?: string) {
    super(message ?? messages[reason])
    this.reason = reason
  }
}
