import { percentOf } from "../conversion/Quote.ts"
import * as Errors from "../Errors.ts"
import { type FiatCode, fiat_codes } from "../money/Currency.ts"
import * as Decimal from "../money/Decimal.ts"
import { activeScheme, activeSchemeIssue, characters } from "../Text.ts"
import { fail, ok, type Step } from "../Transition.ts"
import { MINUTE_MS } from "../time/Instant.ts"

/**
 * The payment intent state machine (decisions §5):
 *
 *     (create)                                   -> requires_payment_method   `payment_intent.created`
 *     initialized | requires_payment_method      -> processing                start processing
 *     any non-terminal                           -> successful                `charge.succeeded`
 *     any non-terminal                           -> failed                    `charge.failed`
 *     initialized | requires_payment_method      -> cancelled                 `payment_intent.cancelled`
 *     any non-terminal, now >= expires_at        -> cancelled (expired)       `payment_intent.cancelled`
 *
 * `successful`, `failed` and `cancelled` are terminal: every further outcome is
 * `invalid_state`.
 *
 *     transaction_fee = half_up(amount * fee_percent / 100)   to the minor unit
 */

export type PaymentIntentStatus =
  | "initialized"
  | "requires_payment_method"
  | "processing"
  | "successful"
  | "failed"
  | "cancelled"
export const payment_intent_statuses: ReadonlyArray<PaymentIntentStatus> = [
  "initialized",
  "requires_payment_method",
  "processing",
  "successful",
  "failed",
  "cancelled"
]
export const terminal_statuses: ReadonlyArray<PaymentIntentStatus> = ["successful", "failed", "cancelled"]
export const isTerminal = (status: PaymentIntentStatus): boolean => terminal_statuses.includes(status)

/** Who bears the fee: the business (taken from what it receives) or the customer (added to what it pays). */
export type TransactionFeeType = "business" | "customer"
export const transaction_fee_types: ReadonlyArray<TransactionFeeType> = ["business", "customer"]

export type MobileMoneyNetwork = "wave" | "afrimoney" | "qmoney"
export const mobile_money_networks: ReadonlyArray<MobileMoneyNetwork> = ["wave", "afrimoney", "qmoney"]

export type CancellationReason = "requested" | "expired"

/** Deployment settings (decisions §5, §9 `PAYMENT_FEE_PERCENT`). */
export interface PaymentIntentConfig {
  /** Fee percentage (1.5 means 1.5%), in [0, 100]. */
  readonly fee_percent: Decimal.Decimal
  /** Time from creation to `expires_at`, in milliseconds. */
  readonly expiry_window_ms: number
}

export const defaultPaymentIntentConfig: PaymentIntentConfig = {
  fee_percent: Decimal.make(15n, 1),
  expiry_window_ms: 30 * MINUTE_MS
}

export interface PaymentIntent {
  readonly payment_intent_id: string
  readonly intent_secret: string
  readonly payment_link: string
  /** Minor units of `currency`. */
  readonly amount: bigint
  /** Minor units of `currency`. */
  readonly transaction_fee: bigint
  readonly transaction_fee_type: TransactionFeeType
  readonly currency: FiatCode
  readonly expires_at: number
  readonly status: PaymentIntentStatus
  readonly return_url: string | null
  readonly cancel_url: string | null
  readonly callback_url: string | null
  readonly network: MobileMoneyNetwork | null
  readonly account_number: string | null
  readonly skip_url_validation: boolean
  readonly metadata: Readonly<Record<string, unknown>>
  readonly test_mode: boolean
  /** Set when cancelled: by request or because `expires_at` passed. */
  readonly cancellation_reason: CancellationReason | null
  /** The processor's reason, when it gave one, on a failed intent. */
  readonly failure_reason: string | null
  readonly created_at: number
  readonly updated_at: number
}

/** The create-payment request after wire decoding (types and scales already checked). */
export interface CreatePaymentIntent {
  /** Minor units of `currency`, positive. */
  readonly amount: bigint
  /** Defaults to GMD. */
  readonly currency?: FiatCode | undefined
  /** Defaults to `business`. */
  readonly transaction_fee_type?: TransactionFeeType | undefined
  readonly return_url?: string | undefined
  readonly cancel_url?: string | undefined
  readonly callback_url?: string | undefined
  readonly network?: MobileMoneyNetwork | undefined
  readonly account_number?: string | undefined
  readonly skip_url_validation?: boolean | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
}

/** What the engine supplies to a creation. */
export interface CreateContext {
  readonly payment_intent_id: string
  readonly intent_secret: string
  readonly payment_link: string
  readonly now: number
  readonly test_mode: boolean
  readonly config: PaymentIntentConfig
}

export type PaymentIntentEvent = {
  readonly type: "payment_intent.created" | "payment_intent.cancelled" | "charge.succeeded" | "charge.failed"
  readonly payment_intent: PaymentIntent
}

export type PaymentIntentStep = Step<PaymentIntent, PaymentIntentEvent>

/** The priced part of an intent, for `X-No-Effect` dry runs and display. */
export interface FeeQuote {
  readonly amount: bigint
  readonly currency: FiatCode
  readonly transaction_fee: bigint
  readonly transaction_fee_type: TransactionFeeType
  /** What the customer is charged: `amount`, plus the fee when the customer bears it. */
  readonly customer_pays: bigint
  /** What the business receives: `amount`, less the fee when the business bears it. */
  readonly business_receives: bigint
}

export const url_length_max = 2048
const URL_LIKE = /^https?:\/\/[^\s/?#]+\S*$/i
const ACCOUNT_NUMBER = /^\d{7}$/
const ONE_HUNDRED = Decimal.make(100n, 0)

/** `half_up(amount * fee_percent / 100)` to the minor unit. */
export const transactionFee = (amount: bigint, fee_percent: Decimal.Decimal): bigint => percentOf(amount, fee_percent)

const configProblem = (config: PaymentIntentConfig): Errors.DomainError | undefined => {
  if (config.fee_percent.units < 0n || Decimal.compare(config.fee_percent, ONE_HUNDRED) > 0) {
    return Errors.validation("The payment fee percentage must be between 0 and 100.", "fee_percent")
  }
  if (!Number.isSafeInteger(config.expiry_window_ms) || config.expiry_window_ms <= 0) {
    return Errors.validation("The payment expiry window must be a positive number of milliseconds.", "expiry_window_ms")
  }
  return undefined
}

/**
 * The fee of an intent of `amount` without creating anything: the arithmetic of
 * `create`, for dry runs. Fails like `create` on an invalid amount, currency or
 * fee type.
 */
export const quoteFee = (
  input: {
    readonly amount: bigint
    readonly currency?: FiatCode | undefined
    readonly transaction_fee_type?: TransactionFeeType | undefined
  },
  config: PaymentIntentConfig = defaultPaymentIntentConfig
): FeeQuote | Errors.DomainError => {
  const problem = configProblem(config)
  if (problem !== undefined) return problem
  if (input.amount <= 0n) return Errors.validation("amount must be positive.", "amount")
  const currency = input.currency ?? "GMD"
  if (!fiat_codes.includes(currency)) return Errors.validation("currency must be GMD or USD.", "currency")
  const transaction_fee_type = input.transaction_fee_type ?? "business"
  if (!transaction_fee_types.includes(transaction_fee_type)) {
    return Errors.validation("transaction_fee_type must be business or customer.", "transaction_fee_type")
  }
  const transaction_fee = transactionFee(input.amount, config.fee_percent)
  return {
    amount: input.amount,
    currency,
    transaction_fee,
    transaction_fee_type,
    customer_pays: transaction_fee_type === "customer" ? input.amount + transaction_fee : input.amount,
    business_receives: transaction_fee_type === "business" ? input.amount - transaction_fee : input.amount
  }
}

const urlProblem = (value: string | undefined, param: string, skip: boolean): Errors.DomainError | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== "string" || value.length === 0 || characters(value) > url_length_max) {
    return Errors.validation(`${param} must be a non-empty string of at most ${url_length_max} characters.`, param)
  }
  if (!skip && !URL_LIKE.test(value)) return Errors.validation(`${param} must be an http or https URL.`, param)
  // never, skipped validation or not
  if (activeScheme.test(value)) return Errors.validation(`${param} ${activeSchemeIssue}.`, param)
  return undefined
}

const inputProblem = (input: CreatePaymentIntent): Errors.DomainError | undefined => {
  const skip = input.skip_url_validation ?? false
  const url =
    urlProblem(input.return_url, "return_url", skip) ??
    urlProblem(input.cancel_url, "cancel_url", skip) ??
    urlProblem(input.callback_url, "callback_url", skip)
  if (url !== undefined) return url
  if (input.network !== undefined && !mobile_money_networks.includes(input.network)) {
    return Errors.validation("network must be wave, afrimoney or qmoney.", "network")
  }
  if (input.account_number !== undefined && !ACCOUNT_NUMBER.test(input.account_number)) {
    return Errors.validation(
      "account_number must be exactly 7 digits (the wallet number, without +220).",
      "account_number"
    )
  }
  const m = input.metadata
  if (m !== undefined && (typeof m !== "object" || m === null || Array.isArray(m))) {
    return Errors.validation("metadata must be an object.", "metadata")
  }
  return undefined
}

/**
 * Creation: status `requires_payment_method`, fee computed, `expires_at` =
 * creation + the configured window; event `payment_intent.created`.
 */
export const create = (input: CreatePaymentIntent, ctx: CreateContext): PaymentIntentStep => {
  const quote = quoteFee(input, ctx.config)
  if (quote instanceof Errors.DomainError) return fail(quote)
  const problem = inputProblem(input)
  if (problem !== undefined) return fail(problem)
  const intent: PaymentIntent = {
    payment_intent_id: ctx.payment_intent_id,
    intent_secret: ctx.intent_secret,
    payment_link: ctx.payment_link,
    amount: quote.amount,
    transaction_fee: quote.transaction_fee,
    transaction_fee_type: quote.transaction_fee_type,
    currency: quote.currency,
    expires_at: ctx.now + ctx.config.expiry_window_ms,
    status: "requires_payment_method",
    return_url: input.return_url ?? null,
    cancel_url: input.cancel_url ?? null,
    callback_url: input.callback_url ?? null,
    network: input.network ?? null,
    account_number: input.account_number ?? null,
    skip_url_validation: input.skip_url_validation ?? false,
    metadata: input.metadata ?? {},
    test_mode: ctx.test_mode,
    cancellation_reason: null,
    failure_reason: null,
    created_at: ctx.now,
    updated_at: ctx.now
  }
  return ok(intent, [{ type: "payment_intent.created", payment_intent: intent }])
}

const terminal = (state: PaymentIntent): Errors.DomainError | undefined =>
  isTerminal(state.status)
    ? Errors.invalidState(`This payment intent is ${state.status} and accepts no further outcome.`)
    : undefined

const awaitingPayment = (status: PaymentIntentStatus): boolean =>
  status === "initialized" || status === "requires_payment_method"

/** The payer starts paying: initialized | requires_payment_method -> processing, before `expires_at`. */
export const startProcessing = (state: PaymentIntent, now: number): PaymentIntentStep => {
  const done = terminal(state)
  if (done !== undefined) return fail(done)
  if (!awaitingPayment(state.status)) {
    return fail(Errors.invalidState(`This payment intent is already ${state.status}.`))
  }
  if (now >= state.expires_at) return fail(Errors.invalidState("This payment intent has expired."))
  return ok({ ...state, status: "processing", updated_at: now })
}

/** The processor reports success: any non-terminal status -> successful, event `charge.succeeded`. */
export const succeed = (state: PaymentIntent, now: number): PaymentIntentStep => {
  const done = terminal(state)
  if (done !== undefined) return fail(done)
  const next: PaymentIntent = { ...state, status: "successful", updated_at: now }
  return ok(next, [{ type: "charge.succeeded", payment_intent: next }])
}

/** The processor reports failure: any non-terminal status -> failed, event `charge.failed`. */
export const failCharge = (state: PaymentIntent, reason: string | undefined, now: number): PaymentIntentStep => {
  const done = terminal(state)
  if (done !== undefined) return fail(done)
  const next: PaymentIntent = { ...state, status: "failed", failure_reason: reason ?? null, updated_at: now }
  return ok(next, [{ type: "charge.failed", payment_intent: next }])
}

/** Cancel: initialized | requires_payment_method -> cancelled, event `payment_intent.cancelled`. */
export const cancel = (state: PaymentIntent, now: number): PaymentIntentStep => {
  const done = terminal(state)
  if (done !== undefined) return fail(done)
  if (!awaitingPayment(state.status)) {
    return fail(Errors.invalidState(`A ${state.status} payment intent cannot be cancelled.`))
  }
  const next: PaymentIntent = { ...state, status: "cancelled", cancellation_reason: "requested", updated_at: now }
  return ok(next, [{ type: "payment_intent.cancelled", payment_intent: next }])
}

/**
 * `expires_at` passes: any non-terminal status -> cancelled (`expired`), event
 * `payment_intent.cancelled`. `updated_at` is `expires_at`, when it happened,
 * not when the scheduler got to it (see `asOf`).
 */
export const expire = (state: PaymentIntent, now: number): PaymentIntentStep => {
  const done = terminal(state)
  if (done !== undefined) return fail(done)
  if (now < state.expires_at) return fail(Errors.invalidState("This payment intent has not expired yet."))
  const next: PaymentIntent = {
    ...state,
    status: "cancelled",
    cancellation_reason: "expired",
    updated_at: Math.max(state.updated_at, state.expires_at)
  }
  return ok(next, [{ type: "payment_intent.cancelled", payment_intent: next }])
}

/**
 * The payment intent as it stands at `now`: past `expires_at`, a non-terminal
 * intent reads cancelled (`expired`) even if the scheduler has not stored it
 * yet; exactly the state the sweep will store.
 */
export const asOf = (state: PaymentIntent, now: number): PaymentIntent => {
  if (now < state.expires_at || terminal(state) !== undefined) return state
  const step = expire(state, now)
  return step._tag === "Success" ? step.success.state : state
}

export type PaymentIntentCommand =
  | { readonly type: "start_processing" }
  | { readonly type: "succeed" }
  | { readonly type: "fail"; readonly reason?: string | undefined }
  | { readonly type: "cancel" }
  | { readonly type: "expire" }

/** The machine as one function: `(state, command, now) -> Result<{state, events, effects}, DomainError>`. */
export const transition = (state: PaymentIntent, command: PaymentIntentCommand, now: number): PaymentIntentStep => {
  switch (command.type) {
    case "start_processing":
      return startProcessing(state, now)
    case "succeed":
      return succeed(state, now)
    case "fail":
      return failCharge(state, command.reason, now)
    case "cancel":
      return cancel(state, now)
    case "expire":
      return expire(state, now)
  }
}
