import { legacyTransferKeys, type TransferId, transferKey } from "../conversion/Conversion.ts"
import { type Coin, type Network, percentOf } from "../conversion/Quote.ts"
import * as Errors from "../Errors.ts"
import { GMD, USD } from "../money/Currency.ts"
import * as Decimal from "../money/Decimal.ts"
import { type Butut, type Cents, format, type Micros } from "../money/Money.ts"
import { halfUpDiv, pow10 } from "../money/Rounding.ts"
import { fail, ok, type Step } from "../Transition.ts"
import { usd_amount_max } from "../wire/Limits.ts"

/** `expired` extends the spec's list (decisions §4). */
export type PaymentRequestStatus = "pending" | "partially_paid" | "completed" | "expired"
export const payment_request_statuses: ReadonlyArray<PaymentRequestStatus> = [
  "pending",
  "partially_paid",
  "completed",
  "expired"
]

export interface PaymentRequestConfig {
  /** The request's own fee percentage `q` (1 means 1%). */
  readonly fee_percent: Decimal.Decimal
  /** Fee cap `C`, cents. */
  readonly fee_cap_usd: Cents
  /** Minimum `usd_amount`, cents. */
  readonly usd_amount_min: Cents
}

export const defaultPaymentRequestConfig: PaymentRequestConfig = {
  fee_percent: Decimal.make(1n, 0),
  fee_cap_usd: 200n,
  usd_amount_min: 500n
}

/** One received payment: an entry of `metadata.payment_history`. */
export interface ReceivedPayment {
  readonly key: string
  readonly network: Network
  readonly coin: Coin
  readonly tx_hash: string
  readonly log_index: number
  /** USD units of the coin, 6 places. */
  readonly amount_paid_usd: Micros
  /** `half_up_butut(usd * gmd_rate)` with the rate locked at creation. */
  readonly amount_paid_gmd: Butut
  readonly at: number
}

export interface LateFunds {
  readonly key: string
  readonly network: Network
  readonly coin: Coin
  readonly tx_hash: string
  readonly log_index: number
  readonly amount: Micros
  readonly at: number
}

export interface PaymentRequest {
  readonly id: string
  readonly status: PaymentRequestStatus
  /** Running total paid, USD with 6 places (the spec's `amount`). */
  readonly amount: Micros
  /** The amount asked for, cents (`metadata.usd_amount`). */
  readonly usd_amount: Cents
  /** Rate locked at creation, GMD per USD. */
  readonly gmd_rate: Decimal.Decimal
  readonly fee: Cents
  /** The caller's metadata, untouched. */
  readonly metadata: Readonly<Record<string, unknown>>
  readonly link: string
  readonly callback_url: string | null
  readonly expires_at: number | null
  readonly created_at: number
  readonly updated_at: number
  readonly payments: ReadonlyArray<ReceivedPayment>
  readonly late_funds: ReadonlyArray<LateFunds>
}

export interface CreatePaymentRequest {
  /** Scale 2 in `currency`. */
  readonly amount: bigint
  readonly currency?: "USD" | "GMD" | undefined
  readonly metadata?: Readonly<Record<string, unknown>> | undefined
  readonly callback_url?: string | undefined
  /** Epoch ms of the requested deadline. */
  readonly expires_at?: number | undefined
}

export interface CreateContext {
  readonly id: string
  readonly link: string
  readonly now: number
  /** The current USD->GMD rate, locked into the request. */
  readonly rate: Decimal.Decimal
  readonly config: PaymentRequestConfig
}

export type PaymentRequestEvent = {
  readonly type: "charge.succeeded"
  readonly request: PaymentRequest
  readonly payment: ReceivedPayment
}

export type PaymentRequestEffect =
  | { readonly type: "received"; readonly payment: ReceivedPayment }
  | { readonly type: "late_funds"; readonly funds: LateFunds }

/** `usd_amount` (decisions §4): USD as given, GMD converted with `half_up_cent(amount / R)`. */
export const usdAmount = (amount: bigint, currency: "USD" | "GMD", rate: Decimal.Decimal): Cents =>
  currency === "USD" ? amount : halfUpDiv(amount * pow10(rate.scale), rate.units)

/** `min(half_up_cent(usd_amount * q / 100), C)`; borne by the business. */
export const fee = (usd_amount: Cents, config: PaymentRequestConfig): Cents => {
  const f = percentOf(usd_amount, config.fee_percent)
  return f < config.fee_cap_usd ? f : config.fee_cap_usd
}

/** `half_up_butut(usd * gmd_rate)` for a payment of `usd` micro-dollars. */
export const gmdValue = (usd: Micros, rate: Decimal.Decimal): Butut =>
  halfUpDiv(usd * rate.units, 10_000n * pow10(rate.scale))

export const create = (
  input: CreatePaymentRequest,
  ctx: CreateContext
): Step<PaymentRequest, PaymentRequestEvent, PaymentRequestEffect> => {
  if (ctx.rate.units <= 0n) return fail(Errors.validation("The exchange rate must be positive.", "rate"))
  if (input.amount <= 0n) return fail(Errors.validation("amount must be positive.", "amount"))
  const currency = input.currency ?? "USD"
  const usd_amount = usdAmount(input.amount, currency, ctx.rate)
  if (usd_amount < ctx.config.usd_amount_min) {
    const rate = Decimal.format(ctx.rate)
    const converted = currency === "GMD" ? ` (${format(input.amount, GMD)} GMD is ${format(usd_amount, USD)} USD)` : ""
    return fail(
      Errors.validation(
        `amount must be at least ${format(ctx.config.usd_amount_min, USD)} USD after conversion${converted}; the current exchange rate is ${rate} GMD per USD.`,
        "amount"
      )
    )
  }
  if (usd_amount > usd_amount_max) {
    return fail(
      Errors.validation(
        `amount is ${format(usd_amount, USD)} USD after conversion at the current exchange rate of ${Decimal.format(ctx.rate)} GMD per USD, above the maximum of ${format(usd_amount_max, USD)} USD.`,
        "amount"
      )
    )
  }
  if (input.expires_at !== undefined && input.expires_at <= ctx.now) {
    return fail(Errors.validation("expires_at must be in the future.", "expires_at"))
  }
  return ok({
    id: ctx.id,
    status: "pending",
    amount: 0n,
    usd_amount,
    gmd_rate: ctx.rate,
    fee: fee(usd_amount, ctx.config),
    metadata: input.metadata ?? {},
    link: ctx.link,
    callback_url: input.callback_url ?? null,
    expires_at: input.expires_at ?? null,
    created_at: ctx.now,
    updated_at: ctx.now,
    payments: [],
    late_funds: []
  })
}

export interface IncomingPayment extends TransferId {
  readonly coin: Coin
  readonly amount: Micros
}

const MICROS_PER_CENT = 10_000n

const isSeen = (state: PaymentRequest, key: string): boolean =>
  state.payments.some((p) => p.key === key) || state.late_funds.some((l) => l.key === key)

/**
 * A confirmed payment (decisions §4): adds to the running total; below
 * `usd_amount` the request is partially_paid, at or above completed; every
 * payment sends `charge.succeeded`. Payments after completion are recorded and
 * the status stays completed. Once `expires_at` has passed before completion the
 * request is expired and funds are held as late funds (no event).
 */
export const receivePayment = (
  state: PaymentRequest,
  payment: IncomingPayment,
  now: number,
  /** Stamps the payment (default `now`, which decides lateness): see `Conversion.applyTransfer`. */
  at: number = now
): Step<PaymentRequest, PaymentRequestEvent, PaymentRequestEffect> => {
  if (payment.amount <= 0n) return fail(Errors.validation("A payment amount must be positive.", "amount"))
  const key = transferKey(payment)
  if (isSeen(state, key) || legacyTransferKeys(payment).some((k) => isSeen(state, k))) {
    return fail(Errors.duplicateTransfer(`Payment ${payment.tx_hash}#${payment.log_index} was already recorded.`))
  }
  const overdue = state.expires_at !== null && now >= state.expires_at
  if (state.status === "expired" || (overdue && state.status !== "completed")) {
    const funds: LateFunds = {
      key,
      network: payment.network,
      coin: payment.coin,
      tx_hash: payment.tx_hash,
      log_index: payment.log_index,
      amount: payment.amount,
      at
    }
    return ok(
      { ...state, status: "expired", updated_at: at, late_funds: [...state.late_funds, funds] },
      [],
      [{ type: "late_funds", funds }]
    )
  }
  const received: ReceivedPayment = {
    key,
    network: payment.network,
    coin: payment.coin,
    tx_hash: payment.tx_hash,
    log_index: payment.log_index,
    amount_paid_usd: payment.amount,
    amount_paid_gmd: gmdValue(payment.amount, state.gmd_rate),
    at
  }
  const amount = state.amount + payment.amount
  const status: PaymentRequestStatus = amount >= state.usd_amount * MICROS_PER_CENT ? "completed" : "partially_paid"
  const next: PaymentRequest = { ...state, status, amount, updated_at: at, payments: [...state.payments, received] }
  return ok(
    next,
    [{ type: "charge.succeeded", request: next, payment: received }],
    [{ type: "received", payment: received }]
  )
}

/**
 * `expires_at` passed before completion: pending or partially_paid becomes
 * expired. No event. `updated_at` is `expires_at`, when it happened, not when
 * the scheduler got to it (see `asOf`).
 */
export const expire = (
  state: PaymentRequest,
  now: number
): Step<PaymentRequest, PaymentRequestEvent, PaymentRequestEffect> => {
  if (state.status === "completed" || state.status === "expired") {
    return fail(Errors.invalidState(`A ${state.status} payment request does not expire.`))
  }
  if (state.expires_at === null || now < state.expires_at) {
    return fail(Errors.invalidState("The payment request's deadline has not passed."))
  }
  return ok({ ...state, status: "expired", updated_at: Math.max(state.updated_at, state.expires_at) })
}

/**
 * The payment request as it stands at `now`: past `expires_at`, an incomplete
 * request reads expired even if the scheduler has not stored it yet; exactly
 * the state the sweep will store.
 */
export const asOf = (state: PaymentRequest, now: number): PaymentRequest => {
  if (state.expires_at === null || now < state.expires_at) return state
  if (state.status === "completed" || state.status === "expired") return state
  const step = expire(state, now)
  return step._tag === "Success" ? step.success.state : state
}

export type PaymentRequestCommand =
  | { readonly type: "receive_payment"; readonly payment: IncomingPayment }
  | { readonly type: "expire" }

export const transition = (
  state: PaymentRequest,
  command: PaymentRequestCommand,
  now: number
): Step<PaymentRequest, PaymentRequestEvent, PaymentRequestEffect> =>
  command.type === "receive_payment" ? receivePayment(state, command.payment, now) : expire(state, now)
