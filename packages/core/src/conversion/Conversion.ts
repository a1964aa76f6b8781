import * as Errors from "../Errors.ts"
import { GMD, USD } from "../money/Currency.ts"
import * as Decimal from "../money/Decimal.ts"
import { type Butut, type Cents, format, type Micros } from "../money/Money.ts"
import { characters } from "../Text.ts"
import { fail, ok, type Step } from "../Transition.ts"
import { MINUTE_MS } from "../time/Instant.ts"
import { gmd_amount_max, usd_amount_max } from "../wire/Limits.ts"
import { type Coin, type ConversionConfig, type Markup, type Network, type Quote, quoteGmd, quotePay } from "./Quote.ts"
import * as Settlement from "./Settlement.ts"

export type ConversionStatus = "pending" | "underpaid" | "paid" | "overpaid" | "expired"
export const conversion_statuses: ReadonlyArray<ConversionStatus> = [
  "pending",
  "underpaid",
  "paid",
  "overpaid",
  "expired"
]

export type Destination = "service_balance" | "mobile_money"
export type WalletNetwork = "wave" | "afrimoney"

export interface PayoutMethod {
  readonly network: WalletNetwork
  readonly account_number: string
  readonly account_name: string
}

/** Payment window of a conversion (decisions §2): creation + 10 minutes exactly. */
export const payment_window_ms = 10 * MINUTE_MS

/** Identifies one chain transfer; applied at most once per conversion and system-wide. */
export interface TransferId {
  readonly network: Network
  readonly tx_hash: string
  readonly log_index: number
}

/**
 * The canonical spelling of a transaction hash: surrounding whitespace dropped,
 * lowercase, and a hex hash always with its `0x` prefix, so `ABC…`, `abc…` and
 * `0xabc…` name one transfer (chain explorers and watchers spell hashes with and
 * without the prefix, in either case).
 */
const CANONICAL_HEX = /^0x[0-9a-f]+$/

export const canonicalTxHash = (tx_hash: string): string => {
  if (CANONICAL_HEX.test(tx_hash)) return tx_hash // the usual spelling: nothing to copy
  const h = tx_hash.trim().toLowerCase()
  return /^(?:0x)?[0-9a-f]+$/.test(h) ? (h.startsWith("0x") ? h : `0x${h}`) : h
}

export const transferKey = (t: TransferId): string => `${t.network}:${canonicalTxHash(t.tx_hash)}:${t.log_index}`

/**
 * The key an older version gave this spelling of the transfer (only
 * lowercased), when it differs from `transferKey`. See `legacyTransferKeys`
 * for every key an older version could have given the transfer.
 * @deprecated `legacyTransferKeys`: an older version may have seen another spelling.
 */
export const legacyTransferKey = (t: TransferId): string | undefined => {
  if (CANONICAL_HEX.test(t.tx_hash)) return undefined // already canonical: both keys are one
  const legacy = `${t.network}:${t.tx_hash.toLowerCase()}:${t.log_index}`
  return legacy === transferKey(t) ? undefined : legacy
}

/**
 * The keys other than `transferKey` under which an older version (which only
 * lowercased hashes) may have recorded this transfer: this report's spelling
 * lowercased, and for a hex hash the spelling without `0x` (an earlier report
 * of `abcd…` was keyed `abcd…`; reported now as `0xabcd…`, it is the same
 * transfer). Identity rows and recorded keys written before are still found
 * under them. Empty for a hash whose older keys are its canonical one.
 */
export const legacyTransferKeys = (t: TransferId): ReadonlyArray<string> => {
  const canonical = canonicalTxHash(t.tx_hash)
  const lowered = t.tx_hash.toLowerCase()
  const keys: Array<string> = []
  if (lowered !== canonical) keys.push(`${t.network}:${lowered}:${t.log_index}`)
  if (CANONICAL_HEX.test(canonical) && canonical.slice(2) !== lowered) {
    keys.push(`${t.network}:${canonical.slice(2)}:${t.log_index}`)
  }
  return keys
}

export interface ChainTransfer extends TransferId {
  readonly coin: Coin
  /** On-chain USD units, 6 places. */
  readonly amount: Micros
}

/** A timeline entry of the conversion, shown as `events` on lookup (decisions §3). */
export type TimelineEntry =
  | { readonly type: "created"; readonly at: number }
  | {
      readonly type: "transfer"
      readonly at: number
      readonly tx_hash: string
      readonly log_index: number
      readonly amount: Micros
    }
  | { readonly type: "credit"; readonly at: number; readonly gmd: Butut; readonly markup_usd: Cents }
  | { readonly type: "status"; readonly at: number; readonly from: ConversionStatus; readonly to: ConversionStatus }
  | {
      readonly type: "payout"
      readonly at: number
      readonly gmd: Butut
      readonly outcome: "succeeded" | "failed"
      readonly detail?: string
    }
  | {
      readonly type: "late_funds"
      readonly at: number
      readonly tx_hash: string
      readonly log_index: number
      readonly amount: Micros
    }
  | { readonly type: "expired"; readonly at: number }

export interface Conversion {
  readonly id: string
  readonly reference: string
  readonly status: ConversionStatus
  /** Dalasi per US dollar, locked at creation. */
  readonly gmd_rate: Decimal.Decimal
  readonly gmd_amount: Butut
  readonly fee: Cents
  readonly pay_amount: Cents
  readonly markup_share_usd: Cents
  readonly pay_currency: Coin
  readonly network: Network
  readonly pay_address: string
  readonly destination: Destination
  readonly payout_method: PayoutMethod | null
  readonly callback_url: string | null
  readonly created_at: number
  readonly invoice_expires_at: number
  /** Total applied so far, 6 places. Late funds never count here. */
  readonly actually_paid: Micros
  /** Dalasi credited so far: `credited(actually_paid)`. */
  readonly credited_gmd: Butut
  /** Markup credited so far, cents. */
  readonly credited_markup_usd: Cents
  /** Keys of the transfers applied (see `transferKey`). */
  readonly applied_transfers: ReadonlyArray<string>
  readonly timeline: ReadonlyArray<TimelineEntry>
}

/** The create-conversion request after wire decoding (types and scales already checked). */
export interface CreateConversion {
  readonly gmd_amount?: Butut | undefined
  readonly pay_amount?: Cents | undefined
  readonly pay_currency?: Coin | undefined
  readonly network?: Network | undefined
  readonly destination?: Destination | undefined
  readonly payout_method?: PayoutMethod | undefined
  readonly callback_url?: string | undefined
  readonly markup_config?: Markup | undefined
}

/** What the engine supplies to a creation: identity, address, clock, the locked rate. */
export interface CreateContext {
  readonly id: string
  readonly reference: string
  readonly pay_address: string
  readonly now: number
  readonly rate: Decimal.Decimal
  readonly config: ConversionConfig
}

export type ConversionEvent = {
  readonly type: "ramp.underpaid" | "ramp.paid" | "ramp.overpaid"
  readonly conversion: Conversion
}

/** Ledger work the engine must book after a step. */
export type ConversionEffect =
  | { readonly type: "credit"; readonly gmd: Butut; readonly markup_usd: Cents; readonly payout: PayoutMethod | null }
  | { readonly type: "late_funds"; readonly transfer: ChainTransfer }

/** Resolves the defaulted fields and checks the cross-field rules of §2. */
export const resolveRequest = (
  input: CreateConversion
): Errors.DomainError | { network: Network; pay_currency: Coin; destination: Destination } => {
  if ((input.gmd_amount === undefined) === (input.pay_amount === undefined)) {
    return Errors.validation(
      "Send exactly one of gmd_amount or pay_amount.",
      input.gmd_amount === undefined ? "gmd_amount" : "pay_amount"
    )
  }
  const network = input.network ?? "TRC20"
  const pay_currency = input.pay_currency ?? (network === "ARC" ? "USDC" : "USDT")
  if (network === "ARC" && pay_currency === "USDT") {
    return Errors.validation("The ARC network supports USDC only.", "pay_currency")
  }
  const destination = input.destination ?? "service_balance"
  if (destination === "mobile_money" && input.payout_method === undefined) {
    return Errors.validation("payout_method is required when destination is mobile_money.", "payout_method")
  }
  if (destination === "service_balance" && input.payout_method !== undefined) {
    return Errors.validation("payout_method is only accepted when destination is mobile_money.", "payout_method")
  }
  if (input.payout_method !== undefined) {
    const problem = payoutMethodProblem(input.payout_method)
    if (problem !== undefined) return problem
  }
  return { network, pay_currency, destination }
}

export const payoutMethodProblem = (method: PayoutMethod): Errors.DomainError | undefined => {
  if (method.network !== "wave" && method.network !== "afrimoney") {
    return Errors.validation("payout_method.network must be wave or afrimoney.", "payout_method.network")
  }
  if (!/^\d{7}$/.test(method.account_number)) {
    return Errors.validation("payout_method.account_number must be exactly 7 digits.", "payout_method.account_number")
  }
  // characters as every text limit counts them (code points): "😀😀" is two, not four UTF-16 units
  if (characters(method.account_name.trim(), 3) < 3) {
    return Errors.validation(
      "payout_method.account_name must have at least 3 characters.",
      "payout_method.account_name"
    )
  }
  return undefined
}

/** The minimums of §2, checked on the final quote; one message names every minimum missed. */
export const checkQuote = (
  quote: Quote,
  network: Network,
  markup: Markup | undefined,
  config: ConversionConfig
): Errors.DomainError | undefined => {
  if (quote.pay_amount > usd_amount_max) {
    // a dalasi amount at a very low rate: the stablecoin side would pass what amounts may be
    return Errors.validation(
      `At the current rate this conversion would cost ${format(quote.pay_amount, USD)} USD, above the maximum of ${format(usd_amount_max, USD)} USD; convert a smaller gmd_amount.`,
      "gmd_amount"
    )
  }
  if (quote.gmd_amount > gmd_amount_max) {
    // a stablecoin amount at a very high rate: the dalasi side would pass what a gmd_amount may be
    return Errors.validation(
      `At the current rate this conversion would credit ${format(quote.gmd_amount, GMD)} GMD, above the maximum of ${format(gmd_amount_max, GMD)} GMD; send a smaller pay_amount.`,
      "pay_amount"
    )
  }
  const missed: Array<string> = []
  const payMin = config.pay_amount_min_usd[network]
  if (quote.pay_amount < payMin) {
    missed.push(`pay_amount must be at least ${format(payMin, USD)} USD on ${network}`)
  }
  if (quote.gmd_amount < config.gmd_amount_min) {
    missed.push(`gmd_amount must be at least ${format(config.gmd_amount_min, GMD)} GMD`)
  }
  if (missed.length > 0) {
    const param = quote.pay_amount < payMin ? "pay_amount" : "gmd_amount"
    return Errors.validation(`Amount below the minimum: ${missed.join("; ")}.`, param)
  }
  if (markup !== undefined) {
    const limit = quote.base_usd * config.markup_percent_max.units
    const share = quote.markup_share_usd * 100n * 10n ** BigInt(config.markup_percent_max.scale)
    if (share > limit) {
      // the exact maximum (base_usd × percent / 100, not rounded): a 9.99% markup rounded half-up to the cent
      // can be above a 10% share, and the message says why
      const most = Decimal.normalize({ units: limit, scale: 4 + config.markup_percent_max.scale })
      return Errors.validation(
        `markup_config gives a markup of ${format(quote.markup_share_usd, USD)} USD${markup.type === "percentage" ? " (to the cent, half-up)" : ""}, above the maximum of ${Decimal.format(config.markup_percent_max)}% of the converted amount of ${format(quote.base_usd, USD)} USD: ${Decimal.format(most)} USD.`,
        "markup_config"
      )
    }
  }
  return undefined
}

/** Creation: quote, check, lock the rate and open the 10-minute window. No event is sent. */
export const create = (
  input: CreateConversion,
  ctx: CreateContext
): Step<Conversion, ConversionEvent, ConversionEffect> => {
  if (ctx.rate.units <= 0n) return fail(Errors.validation("The exchange rate must be positive.", "rate"))
  const resolved = resolveRequest(input)
  if (resolved instanceof Errors.DomainError) return fail(resolved)
  const { network, pay_currency, destination } = resolved
  const quote =
    input.gmd_amount !== undefined
      ? quoteGmd(input.gmd_amount, network, ctx.rate, input.markup_config, ctx.config)
      : quotePay(input.pay_amount as Cents, network, ctx.rate, input.markup_config, ctx.config)
  const problem = checkQuote(quote, network, input.markup_config, ctx.config)
  if (problem !== undefined) return fail(problem)
  return ok({
    id: ctx.id,
    reference: ctx.reference,
    status: "pending",
    gmd_rate: ctx.rate,
    gmd_amount: quote.gmd_amount,
    fee: quote.fee,
    pay_amount: quote.pay_amount,
    markup_share_usd: quote.markup_share_usd,
    pay_currency,
    network,
    pay_address: ctx.pay_address,
    destination,
    payout_method: destination === "mobile_money" ? (input.payout_method ?? null) : null,
    callback_url: input.callback_url ?? null,
    created_at: ctx.now,
    invoice_expires_at: ctx.now + payment_window_ms,
    actually_paid: 0n,
    credited_gmd: 0n,
    credited_markup_usd: 0n,
    applied_transfers: [],
    timeline: [{ type: "created", at: ctx.now }]
  })
}

const isOpen = (status: ConversionStatus): boolean => status === "pending" || status === "underpaid"

/**
 * Whether the transfer `key` was already recorded as late funds on the timeline.
 * An indexed loop: the engine's stored states are frozen, and V8's
 * `Array.prototype.some` leaves its fast path on frozen arrays (about 9x slower).
 */
const recordedLate = (state: Conversion, key: string): boolean => {
  const timeline = state.timeline
  for (let i = 0; i < timeline.length; i++) {
    const e = timeline[i] as TimelineEntry
    if (e.type === "late_funds" && transferKey({ network: state.network, ...e }) === key) return true
  }
  return false
}

/**
 * A confirmed chain transfer to this conversion's address (decisions §3).
 * - already applied (same network + tx hash + log index): `duplicate_transfer`;
 * - wrong network or coin for this address: `validation_error` (the engine keeps it as stray funds);
 * - at or after `invoice_expires_at`: not applied; an open conversion becomes `expired`;
 *   the funds are recorded as late funds (effect `late_funds`), no event;
 * - otherwise: `actually_paid` grows, the increment of `credited` is credited, the
 *   status follows `actually_paid` vs `pay_amount`, and `ramp.<status>` is emitted.
 *
 * `now` is when the transfer arrived: it decides whether it is late. `at`
 * (default `now`) stamps its timeline entries: the engine passes the time its
 * unit of work ran, so that a transfer that waited behind another is not
 * stamped before it, and is still judged by when it arrived.
 */
export const applyTransfer = (
  state: Conversion,
  transfer: ChainTransfer,
  now: number,
  at: number = now
): Step<Conversion, ConversionEvent, ConversionEffect> => {
  if (transfer.amount <= 0n) return fail(Errors.validation("A transfer amount must be positive.", "amount"))
  if (transfer.network !== state.network || transfer.coin !== state.pay_currency) {
    return fail(
      Errors.validation(
        `This conversion takes ${state.pay_currency} on ${state.network}, not ${transfer.coin} on ${transfer.network}.`,
        "currency"
      )
    )
  }
  const key = transferKey(transfer)
  if (
    state.applied_transfers.includes(key) ||
    legacyTransferKeys(transfer).some((k) => state.applied_transfers.includes(k))
  ) {
    return fail(Errors.duplicateTransfer(`Transfer ${transfer.tx_hash}#${transfer.log_index} was already applied.`))
  }
  if (recordedLate(state, key)) {
    return fail(Errors.duplicateTransfer(`Transfer ${transfer.tx_hash}#${transfer.log_index} was already recorded.`))
  }
  if (now >= state.invoice_expires_at || state.status === "expired") {
    return ok(lateFunds(state, transfer, at), [], [{ type: "late_funds", transfer }])
  }
  const actually_paid = state.actually_paid + transfer.amount
  const credited_gmd = Settlement.credited(state.gmd_amount, state.pay_amount, actually_paid)
  const credited_markup_usd = Settlement.creditedMarkup(state.markup_share_usd, state.pay_amount, actually_paid)
  const gmd = credited_gmd - state.credited_gmd
  const markup_usd = credited_markup_usd - state.credited_markup_usd
  if (gmd < 0n || markup_usd < 0n || credited_gmd > state.gmd_amount) {
    throw new Error("invariant: credit increments are non-negative and credited never exceeds gmd_amount")
  }
  const status = Settlement.statusFor(state.pay_amount, actually_paid)
  const timeline: Array<TimelineEntry> = [
    ...state.timeline,
    { type: "transfer", at, tx_hash: transfer.tx_hash, log_index: transfer.log_index, amount: transfer.amount }
  ]
  if (gmd > 0n || markup_usd > 0n) timeline.push({ type: "credit", at, gmd, markup_usd })
  if (status !== state.status) timeline.push({ type: "status", at, from: state.status, to: status })
  const next: Conversion = {
    ...state,
    status,
    actually_paid,
    credited_gmd,
    credited_markup_usd,
    applied_transfers: [...state.applied_transfers, key],
    timeline
  }
  const effects: Array<ConversionEffect> =
    gmd > 0n || markup_usd > 0n ? [{ type: "credit", gmd, markup_usd, payout: state.payout_method }] : []
  return ok(next, [{ type: `ramp.${status}`, conversion: next }], effects)
}

const lateFunds = (state: Conversion, transfer: ChainTransfer, now: number): Conversion => {
  const timeline: Array<TimelineEntry> = [...state.timeline]
  let status = state.status
  if (isOpen(state.status)) {
    const at = expiredAt(state)
    timeline.push({ type: "status", at, from: state.status, to: "expired" }, { type: "expired", at })
    status = "expired"
  }
  timeline.push({
    type: "late_funds",
    at: now,
    tx_hash: transfer.tx_hash,
    log_index: transfer.log_index,
    amount: transfer.amount
  })
  return { ...state, status, timeline }
}

/**
 * When an open conversion's expiry is stamped: `invoice_expires_at`, or the
 * last timeline entry if one came later (a payout recorded after the window
 * closed), so the timeline stays in order.
 */
const expiredAt = (state: Conversion): number => {
  const last = state.timeline[state.timeline.length - 1]
  return last !== undefined && last.at > state.invoice_expires_at ? last.at : state.invoice_expires_at
}

/**
 * The 10-minute window closes: an open conversion becomes `expired`. No event is
 * sent. The expiry is stamped when it happened (`expiredAt`), not when the
 * scheduler got to it, so the stored state does not depend on the
 * sweep's timing and `asOf` can show it before the sweep has run.
 */
export const expire = (state: Conversion, now: number): Step<Conversion, ConversionEvent, ConversionEffect> => {
  if (!isOpen(state.status)) {
    return fail(Errors.invalidState(`A ${state.status} conversion does not expire.`))
  }
  if (now < state.invoice_expires_at) {
    return fail(Errors.invalidState("The conversion's payment window is still open."))
  }
  const at = expiredAt(state)
  return ok({
    ...state,
    status: "expired",
    timeline: [...state.timeline, { type: "status", at, from: state.status, to: "expired" }, { type: "expired", at }]
  })
}

/**
 * The conversion as it stands at `now`: once its window has closed, an open
 * conversion reads `expired` even if the scheduler has not stored the expiry
 * yet. This is exactly the state the sweep will store (see `expire`).
 */
export const asOf = (state: Conversion, now: number): Conversion => {
  if (!isOpen(state.status) || now < state.invoice_expires_at) return state
  const step = expire(state, now)
  return step._tag === "Success" ? step.success.state : state
}

/** Records the outcome of a mobile-money payout on the timeline. A failed payout leaves the dalasi in the balance. */
export const recordPayout = (
  state: Conversion,
  payout: { readonly gmd: Butut; readonly outcome: "succeeded" | "failed"; readonly detail?: string },
  now: number
): Step<Conversion, ConversionEvent, ConversionEffect> => {
  if (state.destination !== "mobile_money") {
    return fail(Errors.invalidState("This conversion pays into the balance, not to mobile money."))
  }
  if (payout.gmd <= 0n) return fail(Errors.validation("A payout amount must be positive.", "amount"))
  const entry: TimelineEntry =
    payout.detail === undefined
      ? { type: "payout", at: now, gmd: payout.gmd, outcome: payout.outcome }
      : { type: "payout", at: now, gmd: payout.gmd, outcome: payout.outcome, detail: payout.detail }
  return ok({ ...state, timeline: [...state.timeline, entry] })
}

export type ConversionCommand =
  | { readonly type: "apply_transfer"; readonly transfer: ChainTransfer }
  | { readonly type: "expire" }
  | {
      readonly type: "record_payout"
      readonly gmd: Butut
      readonly outcome: "succeeded" | "failed"
      readonly detail?: string
    }

/** The machine as one function: `(state, command, now) -> Result<{state, events, effects}, DomainError>`. */
export const transition = (
  state: Conversion,
  command: ConversionCommand,
  now: number
): Step<Conversion, ConversionEvent, ConversionEffect> => {
  switch (command.type) {
    case "apply_transfer":
      return applyTransfer(state, command.transfer, now)
    case "expire":
      return expire(state, now)
    case "record_payout":
      return recordPayout(state, command, now)
  }
}
