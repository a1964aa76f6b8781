import { Idempotency } from "@xaalis/engine"
import { Schema } from "effect"

/**
 * Schemas of the request and response headers the API reads or writes. The
 * same schemas check the headers at run time and describe them in the OpenAPI
 * document.
 */

/** Longest `Idempotency-Key` accepted: the engine's rule (a UUID is 36; 255 leaves room for composite keys). */
export const idempotency_key_length_max = Idempotency.key_length_max

/** `Idempotency-Key`: 1 to 255 visible ASCII characters (no spaces or control characters). */
export const IdempotencyKey = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(idempotency_key_length_max),
  Schema.isPattern(Idempotency.key_pattern)
).annotate({
  description:
    "Makes a POST safe to retry: the same key with the same request replays the first response (status and body) with one side effect; a different request under the same key is idempotency_conflict. Scoped to the business and mode, kept at least 24 hours. 1 to 255 visible ASCII characters."
})

/** `X-No-Effect`: `true` makes POST /v1/payments a dry run. Case-insensitive. */
export const NoEffect = Schema.Literals(["true", "false"]).annotate({
  description:
    "true: dry run. The request is validated and the would-be object returned with status 200; nothing is stored or sent. The server reads the value in any letter case (TRUE, True)."
})

const Seconds = (description: string) => Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description })

/** Response headers, by name. */
export const responseHeaders = {
  "Request-Id": Schema.String.annotate({ description: "Identifies this request in the server's logs" }),
  "RateLimit-Limit": Seconds("Requests the bucket holds when full (the burst)"),
  "RateLimit-Remaining": Seconds("Requests left in the bucket"),
  "RateLimit-Reset": Seconds("Seconds until the bucket is full again")
} as const

/** `Retry-After` on 429 answers: whole seconds, rounded up. */
export const RetryAfter = Seconds("Seconds to wait before retrying")
