import { Conversion, type Decimal, DomainError, Errors, Reference } from "@xaalis/core"
import { Clock, Context, Effect } from "effect"
import { Config } from "../Config.ts"
import { accounts, type Line, move, transaction } from "../ledger/Ledger.ts"
import { publish, rowsOf } from "../outbox/Outbox.ts"
import { Chain } from "../ports/Chain.ts"
import { Ids } from "../ports/Ids.ts"
import { Payouts } from "../ports/Payouts.ts"
import { Rates } from "../ports/Rates.ts"
import {
  type Doc,
  DuplicateKey,
  type Page,
  type Scope,
  Store,
  type StoreError,
  type Tx,
  type VersionConflict
} from "../ports/Store.ts"
import * as Present from "../present.ts"
import type { Business } from "./Businesses.ts"
import {
  type Caller,
  flat,
  getScoped,
  newDoc,
  now,
  permissionDenied,
  requireLive,
  revise,
  sweepDue,
  unitOfWork,
  unitOfWorkIn
} from "./common.ts"
import * as Timeline from "./Timeline.ts"

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

/**
 * The unique key of a deposit address. ARC addresses are EVM hex: their letter
 * case carries only an EIP-55 checksum, so a watcher reporting `0xAbC…` means
 * the address issued as `0xabc…`; they are keyed in lowercase. TRC20 (base58)
 * addresses are case-sensitive and kept as they are.
 */
export const addressKey = (network: string, coin: string, address: string) =>
  `addr:${network}:${coin}:${network === "ARC" ? address.toLowerCase() : address}`

/**
 * The conversion or payment request that owns a deposit address, as this unit
 * of work sees it. An ARC address claimed before keys were lowercased (by a
 * Chain adapter that issued mixed-case addresses) is still found when the
 * report spells it as it was issued.
 */
export const ownerOfAddress = (
  tx: Tx,
  network: string,
  coin: string,
  address: string
): Effect.Effect<Doc | undefined, StoreError | VersionConflict> => {
  const byKey = (key: string) =>
    Effect.flatMap(tx.getByKey("conversion", key), (doc) =>
      doc !== undefined ? Effect.succeed(doc) : tx.getByKey("payment_request", key)
    )
  const found = byKey(addressKey(network, coin, address))
  if (network !== "ARC" || address === address.toLowerCase()) return found
  return Effect.flatMap(found, (doc) =>
    doc !== undefined ? Effect.succeed(doc) : byKey(`addr:${network}:${coin}:${address}`)
  )
}

const reference_attempts_max = 5

/** `Effect.mapError` of a rates failure to `rate_unavailable`, built once. */
const orRateUnavailable = Effect.mapError((e: { readonly message: string }) => rateUnavailable(e.message))

/** `Effect.mapError` of a chain failure to a fault that says nothing of it, built once. */
const orNoAddress = Effect.mapError(
  () => new DomainError({ code: "internal_error", message: "Could not issue a deposit address." })
)

/** A clash of a conversion's own unique keys (its reference); another kind's is not. */
const isOwnClash = (e: unknown): e is DuplicateKey => e instanceof DuplicateKey && e.kind === "conversion"

const notInserted = Effect.succeed(false)

/** The steps of `createConversion`, its services in hand. */
const createWith = Effect.fnUntraced(function* (
  context: Context.Context<Ids | Chain | Rates | Store>,
  caller: Caller,
  input: Conversion.CreateConversion
) {
  const config = Context.get(context, Config)
  const ids = Context.get(context, Ids)
  const store = Context.get(context, Store)
  const quote = yield* orRateUnavailable(Context.get(context, Rates).current)
  // one reading of the clock, after the rate arrived: the rate's age and the creation time
  const t = Context.get(context, Clock.Clock).currentTimeMillisUnsafe()
  if (t - quote.as_of > config.rate_age_max_ms) {
    return yield* Effect.fail(rateUnavailable("The USD to GMD rate is stale; try again shortly."))
  }
  const id = yield* ids.uuid
  // validate before issuing an address, so bad input consumes nothing
  const probe = Conversion.create(input, {
    id,
    reference: "MP-00000000-000000-00000000",
    pay_address: "",
    now: t,
    rate: quote.rate,
    config: config.conversion
  })
  if (probe._tag === "Failure") return yield* Effect.fail(probe.failure)
  const pay_address = yield* orNoAddress(
    Context.get(context, Chain).issueAddress({
      network: probe.success.state.network,
      coin: probe.success.state.pay_currency,
      owner: id
    })
  )
  for (let attempt = 1; ; attempt++) {
    const reference = Reference.conversionReference(t, yield* ids.random32)
    const state: Conversion.Conversion = { ...probe.success.state, reference, pay_address }
    const doc = newDoc({
      kind: "conversion",
      id,
      scope: caller,
      now: t,
      // created by a version that keys transfers canonically: no transfer to it has an older key
      data: { ...state, canonical_keys: true } satisfies Timeline.StoredConversion,
      due_at: state.invoice_expires_at,
      keys: [flat(`ref:${reference}`), flat(addressKey(state.network, state.pay_currency, pay_address))]
    })
    const inserted = yield* Effect.catchIf(
      Effect.as(
        unitOfWorkIn(store, (tx) => tx.insert(doc)),
        true
      ),
      // a clash of this conversion's reference: draw another; another kind's (the idempotency record of a
      // concurrent first use of the key) goes on to `Idempotency.idempotent`, which answers idempotency_conflict
      isOwnClash,
      (e) => (attempt < reference_attempts_max ? notInserted : Effect.die(e))
    )
    if (inserted) return Present.conversion(state, { timeline: false })
  }
})

/**
 * POST /v1/minting/offramp: quote, lock the rate, issue the address, open the window. Live keys only.
 *
 * A hot path: the services and the time are read from the context in one step
 * rather than one `yield*` each, and it runs untraced (`Effect.fn` takes a
 * stack trace and opens a span on every call).
 */
export const createConversion = (
  caller: Caller,
  input: Conversion.CreateConversion
): Effect.Effect<Present.ConversionWire, DomainError | StoreError, Ids | Chain | Rates | Store> =>
  caller.mode === "live"
    ? Effect.contextWith((context: Context.Context<Ids | Chain | Rates | Store>) => createWith(context, caller, input))
    : Effect.fail(permissionDenied("Creating a conversion"))

/** GET /v1/minting/ramps/{id}: the latest state with its `events` timeline. */
export const getConversion = Effect.fn("getConversion")(function* (caller: Caller, id: string) {
  yield* requireLive(caller, "Reading a conversion")
  const whole = yield* unitOfWork((tx) =>
    Effect.flatMap(getScoped<Timeline.StoredConversion>(tx, "conversion", caller, id, "conversion"), (doc) =>
      Timeline.whole(tx, doc)
    )
  )
  return Present.conversion(Conversion.asOf(whole, yield* now), { timeline: true })
})

/** GET /v1/minting/ramps: newest first. */
export const listConversions = Effect.fn("listConversions")(function* (caller: Caller, page: Page) {
  yield* requireLive(caller, "Listing conversions")
  const { docs, total } = yield* unitOfWork((tx) => tx.list("conversion", caller, page))
  const t = yield* now
  return {
    data: docs.map((d) => Present.conversion(Conversion.asOf(d.data as Conversion.Conversion, t), { timeline: false })),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})

/** Where a conversion's events go: its callback_url and the business's webhook URL. */
const targets = (
  c: Conversion.Conversion,
  business: Business | undefined
): ReadonlyArray<{ readonly url: string; readonly target: "callback_url" | "webhook_url" }> => {
  const webhook = business?.webhook_url ?? null
  if (c.callback_url === null) return webhook === null ? [] : [{ url: webhook, target: "webhook_url" }]
  const callback = { url: c.callback_url, target: "callback_url" as const }
  return webhook === null ? [callback] : [callback, { url: webhook, target: "webhook_url" }]
}

export interface PayoutRow {
  readonly conversion_id: string
  readonly amount: bigint
  readonly wallet: Conversion.PayoutMethod
  readonly status: "pending" | "succeeded" | "failed"
  readonly reference: string | null
  readonly detail: string | null
}

/** One step of the conversion machine: the new state, its events and its ledger work. */
type ConversionStep = {
  readonly state: Conversion.Conversion
  readonly events: ReadonlyArray<Conversion.ConversionEvent>
  readonly effects: ReadonlyArray<Conversion.ConversionEffect>
}

type CreditEffect = Extract<Conversion.ConversionEffect, { readonly type: "credit" }>
type LateFundsEffect = Extract<Conversion.ConversionEffect, { readonly type: "late_funds" }>

// The rows one step writes, built by plain functions: the generator below only
// sequences the store calls, so it stays small (a generator object carries a
// slot for every local of its body).

const scopeOf = (doc: Doc): Scope => ({ business_id: doc.business_id as string, mode: doc.mode ?? "live" })

/** Writes a step's state; an open conversion stays due at its window's end. */
const writeStep = (tx: Tx, doc: Doc<Conversion.Conversion>, state: Conversion.Conversion, t: number) =>
  Timeline.write(
    tx,
    doc,
    state,
    state.status === "pending" || state.status === "underpaid" ? state.invoice_expires_at : null,
    t
  )

/** A credit: conversion_clearing -> business_balance in GMD, then the markup share in USD (zero lines dropped). */
const creditEntries = (doc: Doc, effect: CreditEffect, transaction_id: string, t: number) => {
  const markup = effect.markup_usd * 10_000n
  const gmd: ReadonlyArray<Line> = [
    [accounts.conversion_clearing, "GMD", effect.gmd],
    [accounts.business_balance, "GMD", -effect.gmd]
  ]
  return transaction({
    transaction_id,
    scope: scopeOf(doc),
    now: t,
    cause: `conversion/${doc.id}`,
    lines:
      markup === 0n
        ? gmd
        : [...gmd, [accounts.conversion_clearing, "USD", markup], [accounts.business_balance, "USD", -markup]]
  })
}

/** A pending payout of a credited increment to mobile money, due now. */
const payoutDoc = (doc: Doc, amount: bigint, wallet: Conversion.PayoutMethod, id: string, t: number) => {
  const payout: PayoutRow = {
    conversion_id: doc.id,
    amount,
    wallet,
    status: "pending",
    reference: null,
    detail: null
  }
  return newDoc({ kind: "payout", id, scope: scopeOf(doc), now: t, data: payout, due_at: t })
}

/** Funds that arrived too late to count, kept for support. */
const lateFundsDoc = (doc: Doc, state: Conversion.Conversion, effect: LateFundsEffect, id: string, t: number) => {
  const funds = { reference: state.reference, object: "conversion", object_id: doc.id, ...effect.transfer }
  return newDoc({ kind: "late_funds", id, scope: scopeOf(doc), now: t, data: funds })
}

/** The outbox rows of one event (as `Outbox.publish` writes them). */
const eventRows = (
  doc: Doc,
  event: Conversion.ConversionEvent,
  to: ReturnType<typeof targets>,
  event_id: string,
  rowIds: ReadonlyArray<string>,
  t: number
) =>
  rowsOf({
    ids: rowIds,
    event_id,
    business_id: doc.business_id as string,
    mode: doc.mode ?? "live",
    event: event.type,
    payload: Present.conversion(event.conversion, { timeline: false }),
    targets: to,
    now: t
  })

/**
 * The steps of `bookConversionStep` with the Ids service in hand, as a
 * generator, for a caller that is itself a generator run by Effect (the chain
 * transfer's unit of work): `yield*` on it runs the same steps without an
 * Effect of their own. Returns how many payouts it booked.
 * @internal
 */
export function* bookConversionStepWith(
  tx: Tx,
  ids: Ids["Service"],
  doc: Doc<Conversion.Conversion>,
  step: ConversionStep,
  t: number
) {
  yield* writeStep(tx, doc, step.state, t)
  let payouts = 0
  for (const effect of step.effects) {
    if (effect.type === "credit") {
      yield* tx.post(creditEntries(doc, effect, yield* ids.uuid, t))
      if (effect.payout !== null && effect.gmd > 0n) {
        yield* tx.insert(payoutDoc(doc, effect.gmd, effect.payout, yield* ids.uuid, t))
        payouts += 1
      }
    } else {
      yield* tx.insert(lateFundsDoc(doc, step.state, effect, yield* ids.uuid, t))
    }
  }
  if (step.events.length === 0) return payouts
  const business = (yield* tx.get("business", doc.business_id as string))?.data as Business | undefined
  for (const event of step.events) {
    // Outbox.publish, written out (one generator less on the transfer path): an event id, one row id per target
    const to = targets(event.conversion, business)
    if (to.length === 0) continue
    const event_id = yield* ids.uuid
    const rowIds = [yield* ids.uuid]
    while (rowIds.length < to.length) rowIds.push(yield* ids.uuid)
    for (const row of eventRows(doc, event, to, event_id, rowIds, t)) yield* tx.insert(row)
  }
  return payouts
}

/**
 * Books one step of a conversion inside the caller's unit of work: the new
 * state, the ledger lines of each credit, a pending payout per credited
 * increment to mobile money, the late funds, and one outbox row per event and
 * target. Everything commits together or not at all.
 */
export const bookConversionStep = Effect.fnUntraced(function* (
  tx: Tx,
  doc: Doc<Conversion.Conversion>,
  step: ConversionStep,
  t: number
) {
  return { payouts: yield* bookConversionStepWith(tx, yield* Ids, doc, step, t) }
})

/** Closes the windows that fell due: open conversions become `expired`, with no event. */
export const expireDueConversions = (limit = 100) =>
  sweepDue("conversion", limit, (tx, doc: Doc<Conversion.Conversion>, t) => {
    const step = Conversion.expire(doc.data, t)
    return step._tag === "Failure"
      ? Effect.succeed(false)
      : Effect.as(bookConversionStep(tx, doc, step.success, t), true)
  })

/**
 * How long a payout claimed by one run is hidden from the others (see
 * `runDuePayouts`); a rail's `send` must end well within it.
 */
export const payout_claim_ms = 5 * 60 * 1000

/**
 * Sends the pending mobile-money payouts. Each payout is first claimed in a unit
 * of work of its own (its version moves on and its due time `payout_claim_ms`
 * ahead): of several runs at once (every transfer that books a payout starts
 * one, the scheduler another, other processes theirs), exactly one claims it
 * and calls the rail; the others skip it. The rail is called outside any
 * transaction with the payout's id as idempotency key; the outcome is then booked
 * on the claimed version only: success moves the dalasi out of the balance,
 * failure leaves it there. Both are written on the conversion's timeline. A
 * crash between the claim and the booking leaves the payout pending, and once
 * the claim lapses the next run sends it again under the same key.
 */
export const runDuePayouts = Effect.fnUntraced(function* (limit = 100, stopping: () => boolean = () => false) {
  const payouts = yield* Payouts
  const ids = yield* Ids
  const t = yield* now
  const due = yield* unitOfWork((tx) => tx.due("payout", t, limit))
  let sent = 0
  // each payout is claimed, sent and booked whole, even if the run is interrupted; `stopping` (a
  // graceful stop) is asked before each: the one in flight finishes, no other starts
  const sendOne = Effect.fnUntraced(function* (loaded: Doc) {
    const claimedAt = yield* now
    // the claim: only the run that moves the version it loaded sends; a retry after a conflict sees the new version
    const row = yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const current = yield* tx.get("payout", loaded.id)
        if (current === undefined || current.version !== loaded.version) return undefined
        if ((current.data as PayoutRow).status !== "pending") return undefined
        const claimed = revise(current, current.data, claimedAt + payout_claim_ms)
        yield* tx.update(claimed)
        return claimed
      })
    )
    if (row === undefined) return false
    const p = row.data as PayoutRow
    const outcome = yield* payouts
      .send({
        idempotency_key: row.id,
        business_id: row.business_id ?? undefined,
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
        // booked on the claimed version only: a run whose claim lapsed and was taken over books nothing
        if (current === undefined || current.version !== row.version) return
        if ((current.data as PayoutRow).status !== "pending") return
        const conv = (yield* tx.get("conversion", p.conversion_id)) as Doc<Conversion.Conversion> | undefined
        // booked at the time of this unit, read once the conversion is (the send may have taken a while, and
        // transfers been applied meanwhile): the payout's entry comes after theirs on its timeline
        const t = yield* now
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
        if (conv !== undefined && outcome.ok) {
          // the payout reached the wallet: told where the conversion's own events go, in the same unit
          const business = (yield* tx.get("business", scope.business_id))?.data as Business | undefined
          yield* publish(tx, {
            scope,
            event: "transfer.succeeded",
            payload: Present.transferSucceeded({
              id: row.id,
              amount: p.amount,
              wallet: p.wallet,
              rail_reference: outcome.reference,
              conversion: conv.data,
              test_mode: scope.mode === "test",
              created_at: row.created_at,
              updated_at: t
            }),
            targets: targets(conv.data, business),
            now: t
          })
        }
        if (conv !== undefined) {
          const step = Conversion.recordPayout(
            conv.data,
            outcome.ok
              ? { gmd: p.amount, outcome: "succeeded" }
              : { gmd: p.amount, outcome: "failed", detail: outcome.detail },
            t
          )
          if (step._tag === "Success") yield* Timeline.write(tx, conv, step.success.state, conv.due_at, t)
        }
      })
    )
    return outcome.ok
  })
  for (const loaded of due) {
    if (stopping()) break
    if (yield* Effect.uninterruptible(sendOne(loaded))) sent += 1
  }
  return sent
})

export const isDomainError = (e: unknown): e is DomainError => e instanceof Errors.DomainError
