import { Currency, Errors, Invoice, Money } from "@xaalis/core"
import { Effect } from "effect"
import { Config } from "../Config.ts"
import { accounts, move, transaction } from "../ledger/Ledger.ts"
import { publish } from "../outbox/Outbox.ts"
import { Ids } from "../ports/Ids.ts"
import type { Doc, DuplicateKey, Page, Scope, Tx } from "../ports/Store.ts"
import * as Present from "../present-billing.ts"
import type { Business } from "./Businesses.ts"
import {
  type Caller,
  fromStep,
  getScoped,
  isDuplicateKey,
  newDoc,
  notFound,
  now,
  putCounter,
  revise,
  sweepDue,
  unitOfWork
} from "./common.ts"

/**
 * Invoices (spec "Invoices", decisions §6, §7): create (published), create
 * draft, retrieve, update, pay (manual), send a draft, send a reminder, list;
 * the customer's payment through the hosted link (sandbox helper) and the
 * overdue sweep.
 *
 * Stored as kind `invoice` with the core record as data. `due_at` is the overdue
 * instant of a live, published, not-paid invoice with a due date, null otherwise,
 * so the scheduler finds exactly the invoices that may become overdue.
 *
 * Numbering: the next sequential number of a business and mode lives in a
 * `counter` row (`invoice_number:<business_id>:<mode>`, data `{next}`). It is read
 * in the unit of work that publishes an invoice and advanced in that same unit
 * only when the core reports `invoice_number_consumed`, so drafts and invoices
 * with the caller's own number leave no gaps, and a refused request consumes nothing.
 */

/** The per-business, per-mode invoice number sequence: the number the next publication takes. */
export interface InvoiceCounter {
  readonly next: number
}

export const counterId = (scope: Scope): string => `invoice_number:${scope.business_id}:${scope.mode}`

/** `INV-<n>` for an invoice numbered by the sequence at its creation; else `INV-<last 8 hex digits of the id>`. */
export const sequentialReference = (n: number): string => `INV-${n}`
export const shortReference = (id: string): string => `INV-${id.replace(/-/g, "").slice(-8).toUpperCase()}`

/** The ledger holds GMD in butut and USD in micro-dollars; invoices hold USD in cents. */
const ledgerUnits = (minor: bigint, currency: Currency.FiatCode): bigint =>
  currency === "USD" ? Money.widen(minor, Currency.USD, Currency.USD_CHAIN) : minor

/** When the overdue sweep must look at an invoice: live, not-paid, with a due date. */
export const overdueDueAt = (inv: Invoice.Invoice): number | null =>
  !inv.test_mode && inv.status === "not-paid" ? inv.overdue_at : null

const scopeOf = (doc: Doc): Scope => ({ business_id: doc.business_id as string, mode: doc.mode ?? "live" })

/** Ids are fresh UUIDs (an invoice number clash is refused by `refuseTakenNumber`): another duplicate is a defect. */
const orDieOnDuplicate = <A, E, R>(effect: Effect.Effect<A, E | DuplicateKey, R>): Effect.Effect<A, E, R> =>
  Effect.catchIf(effect, isDuplicateKey, Effect.die) as Effect.Effect<A, E, R>

const merchantName = (tx: Tx, caller: Caller) =>
  Effect.flatMap(tx.get("business", caller.business_id), (doc) =>
    doc === undefined
      ? Effect.fail(notFound("business", caller.business_id))
      : Effect.succeed((doc.data as Business).name)
  )

/**
 * The unique key (kind `invoice`) of an invoice number in its business and
 * mode: a number names one invoice. `5` and `"5"` are one number.
 */
const numberKey = (scope: Scope, n: Invoice.InvoiceNumber): string =>
  `number:${scope.business_id}:${scope.mode}:${String(n)}`

const numberKeys = (scope: Scope, state: Invoice.Invoice): ReadonlyArray<string> =>
  state.invoice_number === null ? [] : [numberKey(scope, state.invoice_number)]

/** A write whose invoice number another invoice of the business and mode holds: `validation_error`. */
const numberTaken = (state: Invoice.Invoice) =>
  Errors.validation(
    `invoice_number ${JSON.stringify(state.invoice_number)} is already used by another invoice of this business.`,
    "invoice_number"
  )

const refuseTakenNumber =
  (state: Invoice.Invoice) =>
  <A, E, R>(effect: Effect.Effect<A, E | DuplicateKey, R>): Effect.Effect<A, E | Errors.DomainError, R> =>
    Effect.catchIf(effect, isDuplicateKey, () => Effect.fail(numberTaken(state))) as Effect.Effect<
      A,
      E | Errors.DomainError,
      R
    >

/**
 * The business's counter and the next sequential number: the counter's, or the
 * first after it that no invoice holds (numbers callers gave their invoices
 * themselves are skipped, so an assigned number never repeats one).
 */
const readCounter = (tx: Tx, scope: Scope) =>
  Effect.gen(function* () {
    const doc = (yield* tx.get("counter", counterId(scope))) as Doc<InvoiceCounter> | undefined
    let next = doc?.data.next ?? 1
    while ((yield* tx.getByKey("invoice", numberKey(scope, next))) !== undefined) next++
    return { doc, next }
  })

type Counter = Effect.Success<ReturnType<typeof readCounter>>

/**
 * Applies the numbering effects of a step: advances the counter past a consumed
 * number (in the caller's unit of work) and, for an invoice published at its
 * creation, gives it its sequential reference. A draft keeps the reference it
 * was created with when it is sent: a reference never changes once handed out.
 * Two first publications racing to create the counter row meet as a
 * `VersionConflict`, so the unit of work is retried and numbers stay unique.
 */
const applyNumbering = (
  tx: Tx,
  scope: Scope,
  counter: Counter,
  state: Invoice.Invoice,
  effects: ReadonlyArray<Invoice.InvoiceEffect>,
  t: number,
  reference: "sequential" | "keep"
) =>
  Effect.gen(function* () {
    let next = state
    for (const effect of effects) {
      if (effect.type !== "invoice_number_consumed") continue
      const data: InvoiceCounter = { next: effect.invoice_number + 1 }
      yield* putCounter(tx, { id: counterId(scope), scope, now: t, current: counter.doc, data })
      if (reference === "sequential") next = { ...next, reference: sequentialReference(effect.invoice_number) }
    }
    return next
  })

/**
 * Reads and most commands show the invoice as of `t`: one whose due date has
 * passed (say, updated with a date in the past) reads overdue at once, and the
 * sweep stores that with its `invoice.overdue` event. Create Invoice and Send
 * Draft Invoice are the exception: their answer is the invoice they published,
 * `not-paid` as the spec's endpoint table says, even with a due date already
 * past; becoming overdue is the later transition (the sweep, or any later read).
 */
const presentAt = (state: Invoice.Invoice, t: number) => Present.invoice(Invoice.asOf(state, t))

/** Writes the events of a step to the outbox: one row per event to the invoice's `callback_url`, if any. */
const emit = (tx: Tx, scope: Scope, events: ReadonlyArray<Invoice.InvoiceEvent>, t: number) =>
  Effect.gen(function* () {
    for (const event of events) {
      const url = event.invoice.callback_url
      if (url === null) continue
      yield* publish(tx, {
        scope,
        event: event.type,
        payload: Present.invoice(event.invoice),
        targets: [{ url, target: "callback_url" }],
        now: t
      }).pipe(orDieOnDuplicate)
    }
  })

/**
 * Books a step of a stored invoice: the numbering (when `counter` is given), the
 * new state with its overdue `due_at`, and the events, in the caller's unit of work.
 * `notify_customer` effects have no port yet (customer e-mail is not modelled).
 */
const book = (tx: Tx, doc: Doc<Invoice.Invoice>, step: Invoice.InvoiceStep, t: number, counter?: Counter) =>
  Effect.gen(function* () {
    const scope = scopeOf(doc)
    const { state, events, effects } = yield* fromStep(step)
    const next = counter === undefined ? state : yield* applyNumbering(tx, scope, counter, state, effects, t, "keep")
    const revised = revise(doc, next, overdueDueAt(next))
    // the number's key moves with the number (an update, a draft numbered when sent); rows stored
    // before numbers were keys get theirs only then
    const numbered =
      next.invoice_number === doc.data.invoice_number ? revised : { ...revised, keys: numberKeys(scope, next) }
    yield* tx.update(numbered).pipe(refuseTakenNumber(next))
    yield* emit(
      tx,
      scope,
      events.map((e) => ({ ...e, invoice: next })),
      t
    )
    return next
  })

/**
 * A stored invoice brought to `t` before a command acts on it: one whose
 * overdue moment has passed but which the sweep has not reached yet is booked
 * overdue first (state and `invoice.overdue`), in the command's unit of work, so
 * what is stored and sent does not depend on when the sweep ran (an update
 * then leaves it overdue, a payment follows the overdue event).
 */
const caughtUp = (tx: Tx, doc: Doc<Invoice.Invoice>, t: number) =>
  Invoice.isDueForOverdue(doc.data, t)
    ? Effect.map(book(tx, doc, Invoice.markOverdue(doc.data, t), t), (state) => revise(doc, state, overdueDueAt(state)))
    : Effect.succeed(doc)

const getInvoiceDoc = (tx: Tx, caller: Caller, id: string) =>
  getScoped<Invoice.Invoice>(tx, "invoice", caller, id, "invoice")

/** Runs one command on one of the caller's invoices, in one unit of work. */
const change = (caller: Caller, id: string, command: (state: Invoice.Invoice, t: number) => Invoice.InvoiceStep) =>
  Effect.gen(function* () {
    const t = yield* now
    const state = yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const doc = yield* caughtUp(tx, yield* getInvoiceDoc(tx, caller, id), t)
        return yield* book(tx, doc, command(doc.data, t), t)
      })
    )
    return presentAt(state, t)
  })

const creation = (published: boolean) =>
  function* (caller: Caller, input: Invoice.CreateInvoice) {
    const config = yield* Config
    const ids = yield* Ids
    const t = yield* now
    const id = yield* ids.uuid
    const state = yield* unitOfWork((tx) =>
      Effect.gen(function* () {
        const ctx: Invoice.InvoiceContext = {
          id,
          reference: shortReference(id),
          now: t,
          business_id: caller.business_id,
          account_id: caller.account_id,
          merchant_name: yield* merchantName(tx, caller),
          test_mode: caller.mode === "test",
          payment_link: `${config.base_url}/pay/invoices/${id}`
        }
        let state: Invoice.Invoice
        if (published) {
          const counter = yield* readCounter(tx, caller)
          const step = yield* fromStep(Invoice.create(input, { ...ctx, next_invoice_number: counter.next }))
          state = yield* applyNumbering(tx, caller, counter, step.state, step.effects, t, "sequential")
        } else {
          state = (yield* fromStep(Invoice.createDraft(input, ctx))).state
        }
        const keys = numberKeys(caller, state)
        yield* tx
          .insert(
            newDoc({ kind: "invoice", id, scope: caller, now: t, data: state, due_at: overdueDueAt(state), keys })
          )
          .pipe(refuseTakenNumber(state))
        return state
      })
    )
    return Present.invoice(state)
  }

/**
 * POST /v1/invoices: published at once (`not-paid`, `sent_date` now). Without
 * the caller's `invoice_number` it takes the business's next sequential number
 * (reference `INV-<n>`), in the same unit of work as the counter's advance.
 */
export const createInvoice = Effect.fn("createInvoice")(creation(true))

/** POST /v1/invoices/draft: status `draft`, `sent_date` null, no sequential number yet. */
export const createDraftInvoice = Effect.fn("createDraftInvoice")(creation(false))

/** GET /v1/invoices/{id}. */
export const getInvoice = Effect.fn("getInvoice")(function* (caller: Caller, id: string) {
  const doc = yield* unitOfWork((tx) => getInvoiceDoc(tx, caller, id))
  return presentAt(doc.data, yield* now)
})

/** GET /v1/invoices: newest first, `{data, meta: {total, limit, offset}}`. */
export const listInvoices = Effect.fn("listInvoices")(function* (caller: Caller, page: Page) {
  const { docs, total } = yield* unitOfWork((tx) => tx.list("invoice", caller, page))
  const t = yield* now
  return {
    data: docs.map((d) => presentAt(d.data as Invoice.Invoice, t)),
    meta: { total, limit: page.limit, offset: page.offset }
  }
})

/** PUT /v1/invoices/{id}: totals recomputed, every creation rule checked again; a paid invoice is `already_paid`. */
export const updateInvoice = Effect.fn("updateInvoice")(function* (
  caller: Caller,
  id: string,
  input: Invoice.UpdateInvoice
) {
  return yield* change(caller, id, (state, t) => Invoice.update(state, input, t))
})

/** POST /v1/invoices/{id}/pay: manual (offline) payment; no event and no ledger entry, the money never passed through us. */
export const payInvoice = Effect.fn("payInvoice")(function* (caller: Caller, id: string) {
  return yield* change(caller, id, Invoice.payManually)
})

/** POST /v1/invoices/{id}/send-reminder: `reminder_count` + 1. */
export const remindInvoice = Effect.fn("remindInvoice")(function* (caller: Caller, id: string) {
  return yield* change(caller, id, Invoice.remind)
})

/**
 * POST /v1/invoices/{id}/send: draft -> not-paid, `sent_date` now; a draft
 * without the caller's number takes the next sequential one here. Answers
 * `not-paid` even when the due date has passed (see `presentAt`).
 */
export const sendInvoice = Effect.fn("sendInvoice")(function* (caller: Caller, id: string) {
  const t = yield* now
  const state = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const doc = yield* getInvoiceDoc(tx, caller, id)
      const counter = yield* readCounter(tx, caller)
      return yield* book(tx, doc, Invoice.send(doc.data, counter.next, t), t, counter)
    })
  )
  return Present.invoice(state)
})

/**
 * POST /v1/test_helpers/invoices/{id}/customer_pay: the customer pays through the
 * link. The invoice becomes paid, `paymentrequest.success` goes to its
 * `callback_url`, and the amount collected is credited to the business balance
 * through `processor_clearing`, all in one unit of work.
 */
export const customerPaysInvoice = Effect.fn("customerPaysInvoice")(function* (caller: Caller, id: string) {
  const ids = yield* Ids
  const t = yield* now
  const state = yield* unitOfWork((tx) =>
    Effect.gen(function* () {
      const doc = yield* caughtUp(tx, yield* getInvoiceDoc(tx, caller, id), t)
      const next = yield* book(tx, doc, Invoice.customerPays(doc.data, t), t)
      yield* tx.post(
        transaction({
          transaction_id: yield* ids.uuid,
          scope: caller,
          now: t,
          cause: `invoice/${id}`,
          lines: move(
            accounts.processor_clearing,
            accounts.business_balance,
            next.currency,
            ledgerUnits(next.amount, next.currency)
          )
        })
      )
      return next
    })
  )
  return presentAt(state, t)
})

/**
 * The overdue sweep: live not-paid invoices whose overdue instant has passed
 * become `overdue` with `invoice.overdue`. Test-mode invoices are never due
 * (their `due_at` is null). A row that can no longer become overdue is cleared.
 */
export const markOverdueInvoices = (limit = 100) =>
  sweepDue("invoice", limit, (tx, doc: Doc<Invoice.Invoice>, t) =>
    Invoice.isDueForOverdue(doc.data, t)
      ? Effect.as(book(tx, doc, Invoice.markOverdue(doc.data, t), t), true)
      : Effect.succeed(false)
  )
