import { Currency, DomainError, Money, PaymentIntent } from "@xaalis/core"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { accounts, move, transaction } from "../ledger/Ledger.ts"
import { publish } from "../outbox/Outbox.ts"
import { Ids } from "../ports/Ids.ts"
import { Processor } from "../ports/Processor.ts"
import type { Doc, Page, Scope, Tx } from "../ports/Store.ts"
import * as Present from "../present-billing.ts"
import { type Caller, fromStep, getScoped, newDoc, now, revise, sweepDue, unitOfWork } from "./common.ts"

/**
 * Payment intents (decisions §5): `POST /v1/payments` (with the `X-No-Effect`
 * dry run), `GET /v1/payments/{id}`, `GET /v1/payments`,
 * `POST /v1/payments/{id}/cancel`, the processor's outcome (sandbox helper
 * `POST /v1/test_helpers/payments/{id}/succeed|fail`) and the expiry sweep.
 *
 * Stored as kind `payment_intent` with the core record as data; `due_at` is
 * `expires_at` while the intent can still be paid, null once it is final.
 */

export interface CreateOptions {
  /** `X-No-Effect: true`: validate and return the would-be object; store, call and send nothing. */
  readonly dry_run?: boolean | undefined
}

export type PaymentOutcome = "succeeded" | "failed"

const base64url = (b: Uint8Array) => Buffer.from(b).toString("base64url")

/** The ledger holds GMD in butut and USD in micro-dollars; intents hold USD in cents. */
const ledgerUnits = (minor: bigint, currency: Currency.FiatCode): bigint =>
  currency === "USD" ? Money.widen(minor, Currency.USD, Currency.USD_CHAIN) : minor

const dueAt = (pi: PaymentIntent.PaymentIntent): number | null =>
  PaymentIntent.isTerminal(pi.status) ? null : pi.expires_at

const scopeOf = (doc: Doc): Scope => ({ business_id: doc.business_id as string, mode: doc.mode ?? "live" })

const processorUnavailable = () =>
  new DomainError({ code: "internal_error", message: "The payment processor could not open a checkout; try again." })

/**
 * Writes the events of a step to the outbox in the caller's unit of work: one
 * row per event to the intent's `callback_url` (none without one). The payload
 * is the presented intent; a charge event's also carries the charge keys of
 * the spec's Events rule 3 (`Present.intentCharge`), with the business's
 * `account_id` (charge events come only from `reportPaymentOutcome`, whose
 * caller knows it).
 */
const emit = (
  tx: Tx,
  scope: Scope,
  events: ReadonlyArray<PaymentIntent.PaymentIntentEvent>,
  t: number,
  account_id: string | null
) =>
  Effect.gen(function* () {
    for (const event of events) {
      const url = event.payment_intent.callback_url
      if (url === null) continue
      const charge = event.type === "charge.succeeded" || event.type === "charge.failed"
      yield* publish(tx, {
        scope,
        event: event.type,
        payload: charge
          ? Present.intentCharge(event.payment_intent, { business_id: scope.business_id, account_id })
          : Present.paymentIntent(event.payment_intent),
        targets: [{ url, target: "callback_url" }],
        now: t
      })
    }
  }).pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))

/** Stores the next state of an intent and writes its events, in one unit of work (`account_id`: see `emit`). */
const book = (
  tx: Tx,
  doc: Doc<PaymentIntent.PaymentIntent>,
  step: PaymentIntent.PaymentIntentStep,
  t: number,
  account_id: string | null = null
) =>
  Effect.gen(function* () {
    const { state, events } = yield* fromStep(step)
    yield* tx.update(revise(doc, state, dueAt(state))).pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))
    yield* emit(tx, scopeOf(doc), events, t, account_id)
    return state
  })

/**
 * The stored intent brought up to `t`: when its expiry fell due and the sweep
 * has not stored it yet, the expiry is booked first (with its event), so a
 * command after `expires_at` meets the expired intent, as it would after the
 * sweep. If the command then fails, its unit of work takes the expiry back with
 * it and the sweep books it.
 */
const caughtUp = (tx: Tx, doc: Doc<PaymentIntent.PaymentIntent>, t: number) =>
  PaymentIntent.asOf(doc.data, t) === doc.data
    ? Effect.succeed(doc)
    : Effect.map(book(tx, doc, PaymentIntent.expire(doc.data, t), t), (state) => revise(doc, state, dueAt(state)))

/**
 * POST /v1/payments. The fee comes from the core; the processor opens the hosted
 * checkout for what the customer is charged (amount, plus the fee when the
 * customer bears it). The intent and its `payment_intent.created` event are
 * committed together. Invalid input is refused before the processor is called.
 * A dry run builds the link from `base_url` and stores, calls and sends nothing.
 */
export const createPaymentIntent = Effect.fn("createPaymentIntent")(function* (
  caller: Caller,
  input: PaymentIntent.CreatePaymentIntent,
  options?: CreateOptions
) {
  const config = yield* Config
  const ids = yield* Ids
  const t = yield* now
  const id = yield* ids.uuid
  const intent_secret = `pi_secret_${base64url(yield* ids.bytes(24))}`
  const probe = yield* fromStep(
    PaymentIntent.create(input, {
      payment_intent_id: id,
      intent_secret,
      payment_link: `${config.base_url}/pay/${id}`,
      now: t,
      test_mode: caller.mode === "test",
      config: config.payment_intent
    })
  )
  if (options?.dry_run === true) return Present.paymentIntent(probe.state)
  const processor = yield* Processor
  const charged =
    probe.state.transaction_fee_type === "customer"
      ? probe.state.amount + probe.state.transaction_fee
      : probe.state.amount
  const opened = yield* processor
    .open({ payment_intent_id: id, amount: charged, currency: probe.state.currency, network: probe.state.network })
    .pipe(Effect.mapError(processorUnavailable))
  const state: PaymentIntent.PaymentIntent = { ...probe.state, payment_link: opened.payment_link }
  const events = probe.events.map((e) => ({ ...e, payment_intent: state }))
  yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      yield* tx
        .insert(newDoc({ kind: "payment_intent", id, scope: caller, now: t, data: state, due_at: dueAt(state) }))
        .pipe(Effect.catchTag("DuplicateKey", (e) => Effect.die(e)))
      yield* emit(tx, caller, events, t, caller.account_id)
    })
  )
  return Present.paymentIntent(state)
})

/** GET /v1/payments/{id}. */
export const getPaymentIntent = Effect.fn("getPaymentIntent")(function* (caller: Caller, id: string) {
  const doc = yield* unitOfWork((tx) =>
    getScoped<PaymentIntent.PaymentIntent>(tx, "payment_intent", caller, id, "payment intent")
  )
  return Present.paymentIntent(PaymentIntent.asOf(doc.data, yield* now))
})

/** GET /v1/payments: newest first. */
export const listPaymentIntents = Effect.fn("listPaymentIntents")(function* (caller: Caller, page: Page) {
  const { docs, total } = yield* unitOfWork((tx) => tx.list("payment_intent", caller, page))
  const t = yield* now
  return {
    data: docs.map((d) => Present.paymentIntent(PaymentIntent.asOf(d.data as PaymentIntent.PaymentIntent, t))),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})

/** POST /v1/payments/{id}/cancel: `payment_intent.cancelled`; a final or processing intent is `invalid_state`. */
export const cancelPaymentIntent = Effect.fn("cancelPaymentIntent")(function* (caller: Caller, id: string) {
  const t = yield* now
  const state = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const stored = yield* getScoped<PaymentIntent.PaymentIntent>(tx, "payment_intent", caller, id, "payment intent")
      const doc = yield* caughtUp(tx, stored, t)
      return yield* book(tx, doc, PaymentIntent.cancel(doc.data, t), t)
    })
  )
  return Present.paymentIntent(state)
})

/**
 * The processor reports the outcome of a payment (its webhook, or the sandbox
 * helper). Success sends `charge.succeeded` and books what was collected through
 * `processor_clearing`: the business balance is credited with amount − fee when
 * the business bears the fee, or amount when the customer paid amount + fee; the
 * fee goes to `fee_revenue`. Failure sends `charge.failed` and books nothing.
 * A final intent is `invalid_state`.
 */
export const reportPaymentOutcome = Effect.fn("reportPaymentOutcome")(function* (
  caller: Caller,
  id: string,
  outcome: PaymentOutcome,
  reason?: string
) {
  const ids = yield* Ids
  const t = yield* now
  const state = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const stored = yield* getScoped<PaymentIntent.PaymentIntent>(tx, "payment_intent", caller, id, "payment intent")
      const doc = yield* caughtUp(tx, stored, t)
      const step =
        outcome === "succeeded" ? PaymentIntent.succeed(doc.data, t) : PaymentIntent.failCharge(doc.data, reason, t)
      const next = yield* book(tx, doc, step, t, caller.account_id)
      if (outcome === "succeeded") {
        const fee = next.transaction_fee
        const to_business = next.transaction_fee_type === "business" ? next.amount - fee : next.amount
        yield* tx.post(
          transaction({
            transaction_id: yield* ids.uuid,
            scope: caller,
            now: t,
            cause: `payment_intent/${id}`,
            lines: [
              ...move(
                accounts.processor_clearing,
                accounts.business_balance,
                next.currency,
                ledgerUnits(to_business, next.currency)
              ),
              ...move(accounts.processor_clearing, accounts.fee_revenue, next.currency, ledgerUnits(fee, next.currency))
            ]
          })
        )
      }
      return next
    })
  )
  return Present.paymentIntent(state)
})

/** Intents whose `expires_at` passed unpaid are cancelled (`expired`) with `payment_intent.cancelled`. */
export const expireDuePaymentIntents = (limit = 100) =>
  sweepDue("payment_intent", limit, (tx, doc: Doc<PaymentIntent.PaymentIntent>, t) => {
    const step = PaymentIntent.expire(doc.data, t)
    // a Failure means final already (or not yet past expires_at, which due_at rules out)
    return step._tag === "Failure" ? Effect.succeed(false) : Effect.as(book(tx, doc, step, t), true)
  })
