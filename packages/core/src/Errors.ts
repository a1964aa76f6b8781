import { Data } from "effect"

/**
 * The error catalogue. One enumerated list of stable codes (decisions §7), each
 * with the HTTP status it maps to and whether the same request may succeed if
 * simply sent again later.
 *
 * `retryable` is about the *same* request: a `validation_error` never becomes valid
 * by waiting, a `rate_limit_exceeded` does. Retry POSTs with the same
 * `Idempotency-Key` so a retry can never apply an effect twice.
 */
export const catalogue = {
  validation_error: { status: 400, retryable: false, meaning: "invalid parameters or malformed body" },
  authentication_error: { status: 401, retryable: false, meaning: "missing, malformed or unknown API key" },
  permission_denied: { status: 403, retryable: false, meaning: "a test key on a live-only operation" },
  not_found: { status: 404, retryable: false, meaning: "no such object for this business and mode" },
  already_paid: { status: 409, retryable: false, meaning: "the invoice is already paid" },
  invalid_state: { status: 409, retryable: false, meaning: "the object's state does not allow this transition" },
  idempotency_conflict: {
    status: 409,
    retryable: false,
    meaning: "the Idempotency-Key was used with a different request"
  },
  duplicate_transfer: {
    status: 409,
    retryable: false,
    meaning: "this chain transfer (network, tx hash, log index) was already applied"
  },
  late_transfer: {
    status: 409,
    retryable: false,
    meaning: "the transfer arrived at or after the deadline; it is held as late funds"
  },
  rate_limit_exceeded: { status: 429, retryable: true, meaning: "too many requests; see Retry-After" },
  internal_error: { status: 500, retryable: true, meaning: "server fault; nothing internal is disclosed" },
  rate_unavailable: { status: 503, retryable: true, meaning: "no fresh USD->GMD rate is available" }
} as const satisfies Record<string, { status: number; retryable: boolean; meaning: string }>

export type ErrorCode = keyof typeof catalogue
export const error_codes = Object.keys(catalogue) as ReadonlyArray<ErrorCode>

/**
 * Every failure of a domain rule. `code` is stable and machine-readable; `message`
 * is for humans and may change wording. `param` names the offending input field
 * when there is one.
 */
export class DomainError extends Data.TaggedError("DomainError")<{
  readonly code: ErrorCode
  readonly message: string
  readonly param?: string
}> {
  get status(): number {
    return catalogue[this.code].status
  }
  get retryable(): boolean {
    return catalogue[this.code].retryable
  }
  /** The wire error object of the specification. */
  override toJSON(): { error: { message: string; code: ErrorCode } } {
    return { error: { message: this.message, code: this.code } }
  }
}

const make =
  (code: ErrorCode) =>
  (message: string, param?: string): DomainError =>
    new DomainError(param === undefined ? { code, message } : { code, message, param })

export const validation = make("validation_error")
export const notFound = make("not_found")
export const alreadyPaid = make("already_paid")
export const invalidState = make("invalid_state")
export const duplicateTransfer = make("duplicate_transfer")
export const lateTransfer = make("late_transfer")
