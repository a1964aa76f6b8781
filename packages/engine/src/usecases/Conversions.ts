import { Conversion, type Decimal, DomainError, Errors, Reference } from "@xaalis/core"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { accounts, move, transaction } from "../ledger/Ledger.ts"
import { publish } from "../outbox/Outbox.ts"
import { Chain } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import { Payouts } from "../ports/Payouts.ts"
import { Rates } from "../ports/Rates.ts"
import { type Doc, DuplicateKey, type Page, type Scope, type Store, type StoreError, type Tx } from "../ports/Store.ts"
import * as Present from "../present.ts"
import type { Business } from "./Businesses.ts"
import { type Caller, fromStep, getScoped, newDoc, now, requireLive, revise, sweepDue, unitOfWork } from "./common.ts"

const rateUnavailable = (message: string) => new DomainError({ code: "rate_unavailable", message })

/** Fetches the current rate and refuses it when older than the configured bound. */
export const freshRate: Effect.Effect<Decimal.Decimal, DomainError, Rates> = Effect.gen(function* () {
  const rates = yield* Rates
  const config = yield* Config
  const t = yield* now
  const quote = yield* rates.current.pipe(Effect.mapError((e) => rateUnavailable(e.message)))
  if (t - quote.as_of > config.rate_age_max_ms) {
    return yield* Effect.fail(rateUnavailable("The USD to GMD rate is stale; try again shortly."))
  }
  return quote.rate
})

export const addressKey = (network: string, coin: string, address: string) => `addr:${network}:${coin}:${address}`

const reference_attempts_max = 5

/** POST /v1/minting/offramp: quote, lock the rate, issue the address, open the window. Live keys only. */
export const createConversion: (
  caller: Caller,
  input: Conversion.CreateConversion
) => Effect.Effect<Present.ConversionWire, DomainError | StoreError, Ids | Chain | Rates | Store> = Effect.fn(
  "createConversion"
)(function* (caller: Caller, input: Conversion.CreateConversion) {
  yield* requireLive(caller, "Creating a conversion")
  const config = yield* Config
  const ids = yield* Ids
  const chain = yield* Chain
  const rate = yield* freshRate
  const t = yield* now
  const id = yield* ids.uuid
  // validate before issuing an address, so bad input consumes nothing
  const probe = yield* fromStep(
    Conversion.create(input, {
      id,
      reference: "MP-00000000-000000-00000000",
      pay_address: "",
      now: t,
      rate,
      config: config.conversion
    })
  )
  const pay_address = yield* chain
    .issueAddress({ network: probe.state.network, coin: probe.state.pay_currency, owner: id })
    .pipe(
      Effect.mapError(() => new DomainError({ code: "internal_error", message: "Could not issue a deposit address." }))
    )
  for (let attempt = 1; ; attempt++) {
    const reference = Reference.conversionReference(t, yield* ids.random32)
    const state = { ...probe.state, reference, pay_address }
    const inserted = yield* unitOfWork((tx) =>
      tx.insert(
        newDoc({
          kind: "conversion",
          id,
          scope: caller,
          now: t,
          data: state,
          due_at: state.invoice_expires_at,
          keys: [`ref:${reference}`, addressKey(state.network, state.pay_currency, pay_address)]
        })
      )
    ).pipe(
      Effect.as(true),
      Effect.catchIf(
        // a clash of this conversion's reference; another kind's (the idempotency record of a concurrent
        // first use of the key) goes on to `Idempotency.idempotent`, which answers idempotency_conflict
        (e): e is DuplicateKey => e instanceof DuplicateKey && e.kind === "conversion",
        (e) => (attempt < reference_attempts_max ? Effect.succeed(false) : Effect.die(e))
      )
    )
    if (inserted) return Present.conversion(state, { timeline: false })
  }
})

/** GET /v1/minting/ramps/{id}: the latest state with its `events` timeline. */
export const getConversion = Effect.fn("getConversion")(function* (caller: Caller, id: string) {
  yield* requireLive(caller, "Reading a conversion")
  const doc = yield* unitOfWork((tx) => getScoped<Conversion.Conversion>(tx, "conversion", caller, id, "conversion"))
  return Present.conversion(doc.data, { timeline: true })
})

/** GET /v1/minting/ramps: newest first. */
export const listConversions = Effect.fn("listConversions")(function* (caller: Caller, page: Page) {
  yield* requireLive(caller, "Listing conversions")
  const { docs, total } = yield* unitOfWork((tx) => tx.list("conversion", caller, page))
  return {
    data: docs.map((d) => Present.conversion(d.data as Conversion.Conversion, { timeline: false })),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})

/** Where a conversion's events go: its callback_url and the business's webhook URL. */
const targets = (c: Conversion.Conversion, business: Business | undefined) => [
  ...(c.callback_url === null ? [] : [{ url: c.callback_url, target: "callback_url" as const }]),
  ...(business?.webhook_url == null ? [] : [{ url: business.webhook_url, target: "webhook_url" as const }])
]

export interface PayoutRow {
  readonly conversion_id: string
  readonly amount: bigint
  readonly wallet: Conversion.PayoutMethod
  readonly status: "pending" | "succeeded" | "failed"
  readonly reference: string | null
  readonly detail: string | null
}

/** The steps of `bookConversionStep`, as a generator. */
function* bookConversionStepBody(
  tx: Tx,
  doc: Doc<Conversion.Conversion>,
  step: {
    readonly state: Conversion.Conversion
    readonly events: ReadonlyArray<Conversion.ConversionEvent>
    readonly effects: ReadonlyArray<Conversion.ConversionEffect>
  },
  t: number
) {
  const ids = yield* Ids
  const scope: Scope = { business_id: doc.business_id as string, mode: doc.mode ?? "live" }
  const open = step.state.status === "pending" || step.state.status === "underpaid"
  yield* tx.update(revise(doc, step.state, open ? step.state.invoice_expires_at : null))
  let payouts = 0
  for (const effect of step.effects) {
    if (effect.type === "credit") {
      const transaction_id = yield* ids.uuid
      yield* tx.post(
        transaction({
          transaction_id,
          scope,
          now: t,
          cause: `conversion/${doc.id}`,
          lines: [
            ...move(accounts.conversion_clearing, accounts.business_balance, "GMD", effect.gmd),
            ...move(accounts.conversion_clearing, accounts.business_balance, "USD", effect.markup_usd * 10_000n)
          ]
        })
      )
      if (effect.payout !== null && effect.gmd > 0n) {
        const payout: PayoutRow = {
          conversion_id: doc.id,
          amount: effect.gmd,
          wallet: effect.payout,
          status: "pending",
          reference: null,
          detail: null
        }
        yield* tx.insert(newDoc({ kind: "payout", id: yield* ids.uuid, scope, now: t, data: payout, due_at: t }))
        payouts += 1
      }
    } else {
      const funds = { reference: step.state.reference, object: "conversion", object_id: doc.id, ...effect.transfer }
      yield* tx.insert(newDoc({ kind: "late_funds", id: yield* ids.uuid, scope, now: t, data: funds }))
    }
  }
  if (step.events.length > 0) {
    const business = (yield* tx.get("business", scope.business_id))?.data as Business | undefined
    for (const event of step.events) {
      yield* publish(tx, {
        scope,
        event: event.type,
        payload: Present.conversion(event.conversion, { timeline: false }),
        targets: targets(event.conversion, business),
        now: t
      })
    }
  }
  return { payouts }
}

/**
 * Books one step of a conversion inside the caller's unit of work: the new
 * state, the ledger lines of each credit, a pending payout per credited
 * increment to mobile money, the late funds, and one outbox row per event and
 * target. Everything commits together or not at all.
 */
export const bookConversionStep = Effect.fnUntraced(bookConversionStepBody)

/**
 * `bookConversionStep` as a generator, for a caller that is itself a generator
 * run by Effect (the chain transfer's unit of work): `yield*` on it runs the
 * same steps without wrapping them in an Effect of their own.
 * @internal
 */
export const bookConversionStepInline = bookConversionStepBody

/** Closes the windows that fell due: open conversions become `expired`, with no event. */
export const expireDueConversions = (limit = 100) =>
  sweepDue("conversion", limit, (tx, doc: Doc<Conversion.Conversion>, t) => {
    const step = Conversion.expire(doc.data, t)
    return step._tag === "Failure"
      ? Effect.succeed(false)
      : Effect.as(bookConversionStep(tx, doc, step.success, t), true)
  })

/**
 * Sends the pending mobile-money payouts. The rail is called outside any
 * transaction with the payout's id as idempotency key; the outcome is then booked:
 * success moves the dalasi out of the balance, failure leaves it there. Both
 * are written on the conversion's timeline. A crash between the two leaves the
 * payout pending, and the next run sends it again under the same key.
 */
export const runDuePayouts = Effect.fnUntraced(function* (limit = 100) {
  const payouts = yield* Payouts
  const ids = yield* Ids
  const t = yield* now
  const due = yield* unitOfWork((tx) => tx.due("payout", t, limit))
  let sent = 0
  for (const row of due) {
    const p = row.data as PayoutRow
    const outcome = yield* payouts
      .send({
        idempotency_key: row.id,
        network: p.wallet.network,
        account_number: p.wallet.account_number,
        account_name: p.wallet.account_name,
        amount: p.amount
      })
      .pipe(
        Effect.map((r) => ({ ok: true as const, reference: r.reference })),
        Effect.catch((e) => Effect.succeed({ ok: false as const, detail: e.message }))
      )
    yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const current = yield* tx.get("payout", row.id)
        if (current === undefined || (current.data as PayoutRow).status !== "pending") return
        const scope: Scope = { business_id: current.business_id as string, mode: current.mode ?? "live" }
        const next: PayoutRow = outcome.ok
          ? { ...p, status: "succeeded", reference: outcome.reference }
          : { ...p, status: "failed", detail: outcome.detail }
        yield* tx.update(revise(current, next, null))
        if (outcome.ok) {
          yield* tx.post(
            transaction({
              transaction_id: yield* ids.uuid,
              scope,
              now: t,
              cause: `payout/${row.id}`,
              lines: move(accounts.business_balance, accounts.payout_clearing, "GMD", p.amount)
            })
          )
        }
        const conv = (yield* tx.get("conversion", p.conversion_id)) as Doc<Conversion.Conversion> | undefined
        if (conv !== undefined) {
          const step = Conversion.recordPayout(
            conv.data,
            outcome.ok
              ? { gmd: p.amount, outcome: "succeeded" }
              : { gmd: p.amount, outcome: "failed", detail: outcome.detail },
            t
          )
          if (step._tag === "Success") yield* tx.update(revise(conv, step.success.state, conv.due_at))
        }
      })
    )
    if (outcome.ok) sent += 1
  }
  return sent
})

export const isDomainError = (e: unknown): e is DomainError => e instanceof Errors.DomainError
