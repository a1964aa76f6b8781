import * as Errors from "../Errors.ts"
import { type FiatCode, fiat_codes } from "../money/Currency.ts"
import { characters } from "../Text.ts"
import { fail, ok, type Step } from "../Transition.ts"
import { nextUtcMidnight, parseIso } from "../time/Instant.ts"
import { type Discount, type InvoiceType, type LineItem, type LineItemInput, totals } from "./Totals.ts"

/** The totals arithmetic of decisions §6, reachable as `Invoice.Totals`. */
export * as Totals from "./Totals.ts"

/**
 * The invoice state machine (spec "Invoice", decisions §6):
 *
 *     (create)        -> not-paid   published: sent_date set, number assigned
 *     (create draft)  -> draft      sent_date null, no number yet
 *     draft           -> not-paid   send
 *     not-paid|overdue -> paid      pay (manual) / customer pays (`paymentrequest.success`)
 *     not-paid        -> overdue    live mode only, once the due date has passed (`invoice.overdue`)
 *
 * Paid is final: pay, update or remind on a paid invoice is `already_paid`.
 * Reminding or paying a draft, sending a non-draft, is `invalid_state`.
 *
 * Numbering: an invoice without a caller's `invoice_number` takes the business's
 * next sequential number exactly when it is published (create or send). The engine
 * passes `next_invoice_number` in; the step reports an `invoice_number_consumed`
 * effect when it used it, and only then does the engine advance its counter, so
 * drafts leave no gaps.
 */

export type InvoiceStatus = "draft" | "not-paid" | "paid" | "overdue"
export const invoice_statuses: ReadonlyArray<InvoiceStatus> = ["draft", "not-paid", "paid", "overdue"]

export type InvoiceNumber = string | number

export interface Invoice {
  readonly id: string
  readonly reference: string
  readonly type: InvoiceType
  readonly status: InvoiceStatus
  /** The caller's own customer identifier. */
  readonly customer: string | null
  readonly customer_email: string | null
  readonly customer_name: string | null
  readonly customer_phone: string | null
  readonly currency: FiatCode
  readonly business_id: string
  readonly account_id: string
  readonly merchant_name: string
  /** Payable amount, minor units: equal to `total`. */
  readonly amount: bigint
  /** Before discount, minor units. */
  readonly sub_total: bigint
  /** After discount, minor units. */
  readonly total: bigint
  readonly discount: Discount | null
  /** Empty for a simple invoice. */
  readonly line_items: ReadonlyArray<LineItem>
  /** The due date exactly as sent (`YYYY-MM-DD` or an ISO 8601 date-time with zone). */
  readonly due_date: string | null
  /**
   * The instant from which the invoice is overdue: for a date, 00:00 UTC of the
   * next day; for a date-time, that instant. Null without a due date.
   */
  readonly overdue_at: number | null
  /** Null only on a draft that has no caller's number yet. */
  readonly invoice_number: InvoiceNumber | null
  readonly notes: string | null
  /** Publication instant; null for a draft. */
  readonly sent_date: number | null
  readonly paid_date: number | null
  readonly payment_link: string | null
  readonly callback_url: string | null
  readonly sub_account: string | null
  readonly reminder_count: number
  readonly test_mode: boolean
  readonly created_at: number
  readonly updated_at: number
}

/** Create Invoice / Create Draft Invoice parameters after wire decoding (scales already checked). */
export interface CreateInvoice {
  /** Required unless line items are present; ignored when they are (the amount is computed). */
  readonly amount?: bigint | undefined
  /** Defaults to GMD. */
  readonly currency?: FiatCode | undefined
  readonly customer?: string | undefined
  readonly customer_email?: string | undefined
  readonly customer_name?: string | undefined
  readonly customer_phone?: string | undefined
  readonly line_items?: ReadonlyArray<LineItemInput> | undefined
  readonly discount?: Discount | undefined
  readonly due_date?: string | undefined
  readonly notes?: string | undefined
  readonly invoice_number?: InvoiceNumber | undefined
  readonly callback_url?: string | undefined
  readonly sub_account?: string | undefined
}

/**
 * Update Invoice: every field optional. `undefined` keeps the current value,
 * `null` clears an optional field, `line_items: []` turns the invoice back into
 * a simple one (then `amount` is required unless it already was simple).
 */
export interface UpdateInvoice {
  readonly amount?: bigint | undefined
  readonly currency?: FiatCode | undefined
  readonly customer?: string | null | undefined
  readonly customer_email?: string | null | undefined
  readonly customer_name?: string | null | undefined
  readonly customer_phone?: string | null | undefined
  readonly line_items?: ReadonlyArray<LineItemInput> | undefined
  readonly discount?: Discount | null | undefined
  readonly due_date?: string | null | undefined
  readonly notes?: string | null | undefined
  readonly invoice_number?: InvoiceNumber | null | undefined
  readonly callback_url?: string | null | undefined
  readonly sub_account?: string | null | undefined
}

/** What the engine supplies to a creation. */
export interface InvoiceContext {
  readonly id: string
  readonly reference: string
  readonly now: number
  readonly business_id: string
  readonly account_id: string
  readonly merchant_name: string
  readonly test_mode: boolean
  /** Hosted page where the customer pays. */
  readonly payment_link: string | null
}

/** A publishing creation also receives the business's next sequential number. */
export interface PublishContext extends InvoiceContext {
  readonly next_invoice_number: number
}

export type InvoiceEvent =
  | { readonly type: "paymentrequest.success"; readonly invoice: Invoice }
  | { readonly type: "invoice.overdue"; readonly invoice: Invoice }

/** Work the engine must do after a step. */
export type InvoiceEffect =
  /** The sequential number was used: advance the business's counter past it. */
  | { readonly type: "invoice_number_consumed"; readonly invoice_number: number }
  /** Deliver the invoice (publication) or a payment reminder to the customer. */
  | { readonly type: "notify_customer"; readonly reason: "invoice" | "reminder" }

export type InvoiceStep = Step<Invoice, InvoiceEvent, InvoiceEffect>

export const customer_length_max = 255
export const name_length_max = 255
export const email_length_max = 254
export const phone_length_max = 32
export const notes_length_max = 5000
export const url_length_max = 2048
export const invoice_number_length_max = 255

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
const PHONE = /^\+?[0-9][0-9 ().-]*$/
const URL_LIKE = /^https?:\/\/[^\s/?#]+\S*$/i

/** The caller-editable fields, normalised (absent = null). */
interface Fields {
  readonly currency: FiatCode
  readonly customer: string | null
  readonly customer_email: string | null
  readonly customer_name: string | null
  readonly customer_phone: string | null
  readonly discount: Discount | null
  readonly due_date: string | null
  readonly notes: string | null
  readonly invoice_number: InvoiceNumber | null
  readonly callback_url: string | null
  readonly sub_account: string | null
}

const stringProblem = (
  value: string | null,
  param: string,
  max: number,
  pattern?: RegExp
): Errors.DomainError | undefined => {
  if (value === null) return undefined
  if (typeof value !== "string" || value.length === 0 || characters(value) > max) {
    return Errors.validation(`${param} must be a non-empty string of at most ${max} characters.`, param)
  }
  if (pattern !== undefined && !pattern.test(value)) return Errors.validation(`${param} is not valid.`, param)
  return undefined
}

/** The instant an invoice due on `due_date` becomes overdue, or an error for an unreadable date. */
export const overdueInstant = (due_date: string): number | Errors.DomainError => {
  const parsed = parseIso(due_date)
  if (parsed === undefined) {
    return Errors.validation("due_date must be a date (YYYY-MM-DD) or an ISO 8601 date-time.", "due_date")
  }
  return parsed.date_only ? nextUtcMidnight(parsed.ms) : parsed.ms
}

const invoiceNumberProblem = (n: InvoiceNumber | null): Errors.DomainError | undefined => {
  if (n === null) return undefined
  if (typeof n === "number") {
    return Number.isSafeInteger(n) && n > 0
      ? undefined
      : Errors.validation("A numeric invoice_number must be a positive whole number.", "invoice_number")
  }
  return stringProblem(n, "invoice_number", invoice_number_length_max)
}

/** Checks the fields and resolves the overdue instant. */
const checkFields = (f: Fields): { overdue_at: number | null } | Errors.DomainError => {
  if (!fiat_codes.includes(f.currency)) return Errors.validation("currency must be GMD or USD.", "currency")
  if (f.customer === null && (f.customer_email === null || f.customer_name === null)) {
    return Errors.validation(
      "Give either customer, or both customer_email and customer_name.",
      f.customer_email === null ? "customer_email" : "customer_name"
    )
  }
  const problem =
    stringProblem(f.customer, "customer", customer_length_max) ??
    stringProblem(f.customer_email, "customer_email", email_length_max, EMAIL) ??
    stringProblem(f.customer_name, "customer_name", name_length_max) ??
    stringProblem(f.customer_phone, "customer_phone", phone_length_max, PHONE) ??
    stringProblem(f.notes, "notes", notes_length_max) ??
    stringProblem(f.callback_url, "callback_url", url_length_max, URL_LIKE) ??
    stringProblem(f.sub_account, "sub_account", name_length_max) ??
    invoiceNumberProblem(f.invoice_number)
  if (problem !== undefined) return problem
  if (f.customer_name !== null && f.customer_name.trim().length === 0) {
    return Errors.validation("customer_name must not be blank.", "customer_name")
  }
  if (f.due_date === null) return { overdue_at: null }
  const overdue_at = overdueInstant(f.due_date)
  return overdue_at instanceof Errors.DomainError ? overdue_at : { overdue_at }
}

const nextNumberProblem = (next: number): Errors.DomainError | undefined =>
  Number.isSafeInteger(next) && next > 0
    ? undefined
    : Errors.validation("next_invoice_number must be a positive whole number.", "next_invoice_number")

/** The number a publication gives the invoice, and whether the sequence was used. */
const publicationNumber = (
  given: InvoiceNumber | null,
  next: number
): { invoice_number: InvoiceNumber; effects: Array<InvoiceEffect> } | Errors.DomainError => {
  if (given !== null) return { invoice_number: given, effects: [] }
  const problem = nextNumberProblem(next)
  if (problem !== undefined) return problem
  return { invoice_number: next, effects: [{ type: "invoice_number_consumed", invoice_number: next }] }
}

const fieldsOfCreate = (input: CreateInvoice): Fields => ({
  currency: input.currency ?? "GMD",
  customer: input.customer ?? null,
  customer_email: input.customer_email ?? null,
  customer_name: input.customer_name ?? null,
  customer_phone: input.customer_phone ?? null,
  discount: input.discount ?? null,
  due_date: input.due_date ?? null,
  notes: input.notes ?? null,
  invoice_number: input.invoice_number ?? null,
  callback_url: input.callback_url ?? null,
  sub_account: input.sub_account ?? null
})

const build = (input: CreateInvoice, ctx: InvoiceContext): Invoice | Errors.DomainError => {
  const fields = fieldsOfCreate(input)
  const checked = checkFields(fields)
  if (checked instanceof Errors.DomainError) return checked
  const t = totals({ amount: input.amount, line_items: input.line_items, discount: fields.discount })
  if (t instanceof Errors.DomainError) return t
  return {
    id: ctx.id,
    reference: ctx.reference,
    type: t.type,
    status: "draft",
    ...fields,
    business_id: ctx.business_id,
    account_id: ctx.account_id,
    merchant_name: ctx.merchant_name,
    amount: t.amount,
    sub_total: t.sub_total,
    total: t.total,
    line_items: t.line_items,
    overdue_at: checked.overdue_at,
    sent_date: null,
    paid_date: null,
    payment_link: ctx.payment_link,
    reminder_count: 0,
    test_mode: ctx.test_mode,
    created_at: ctx.now,
    updated_at: ctx.now
  }
}

/**
 * Create Invoice: published immediately. Status `not-paid`, `sent_date` = now,
 * `invoice_number` the caller's or `ctx.next_invoice_number` (then reported as
 * consumed). The customer is sent the invoice.
 */
export const create = (input: CreateInvoice, ctx: PublishContext): InvoiceStep => {
  const draft = build(input, ctx)
  if (draft instanceof Errors.DomainError) return fail(draft)
  const numbered = publicationNumber(draft.invoice_number, ctx.next_invoice_number)
  if (numbered instanceof Errors.DomainError) return fail(numbered)
  return ok(
    { ...draft, status: "not-paid", sent_date: ctx.now, invoice_number: numbered.invoice_number },
    [],
    [...numbered.effects, { type: "notify_customer", reason: "invoice" }]
  )
}

/** Create Draft Invoice: status `draft`, `sent_date` null, no sequential number taken. */
export const createDraft = (input: CreateInvoice, ctx: InvoiceContext): InvoiceStep => {
  const draft = build(input, ctx)
  return draft instanceof Errors.DomainError ? fail(draft) : ok(draft)
}

const pick = <T>(given: T | null | undefined, current: T | null): T | null => (given === undefined ? current : given)

/**
 * Update Invoice: fields given replace the current ones, totals are recomputed
 * and every rule of creation is checked again on the result. Status, dates and
 * counters never change. A paid invoice is `already_paid`.
 */
export const update = (state: Invoice, input: UpdateInvoice, now: number): InvoiceStep => {
  if (state.status === "paid") {
    return fail(Errors.alreadyPaid("This invoice is already paid and can no longer be changed."))
  }
  // `customer: ""` is how an invoice without a customer id shows it: sent back, it changes nothing. It
  // never replaces a customer id (§6: a non-empty string); `null` removes one.
  if (input.customer === "" && state.customer !== null) {
    return fail(
      Errors.validation("customer must be a non-empty string; send null to remove the customer id.", "customer")
    )
  }
  const fields: Fields = {
    currency: input.currency ?? state.currency,
    customer: input.customer === "" ? null : pick(input.customer, state.customer),
    customer_email: pick(input.customer_email, state.customer_email),
    customer_name: pick(input.customer_name, state.customer_name),
    customer_phone: pick(input.customer_phone, state.customer_phone),
    discount: pick(input.discount, state.discount),
    due_date: pick(input.due_date, state.due_date),
    notes: pick(input.notes, state.notes),
    invoice_number: pick(input.invoice_number, state.invoice_number),
    callback_url: pick(input.callback_url, state.callback_url),
    sub_account: pick(input.sub_account, state.sub_account)
  }
  if (fields.invoice_number === null && state.status !== "draft") {
    return fail(Errors.validation("A published invoice keeps its invoice_number.", "invoice_number"))
  }
  if (fields.due_date === null && state.status === "overdue") {
    return fail(Errors.validation("An overdue invoice keeps a due date; give a new one instead.", "due_date"))
  }
  const checked = checkFields(fields)
  if (checked instanceof Errors.DomainError) return fail(checked)
  const line_items: ReadonlyArray<LineItemInput> = input.line_items ?? state.line_items
  // Without line items the base amount is the new `amount`, else the current
  // simple invoice's pre-discount amount (`sub_total`).
  const amount = input.amount ?? (state.type === "simple" ? state.sub_total : undefined)
  const t = totals({ amount, line_items, discount: fields.discount })
  if (t instanceof Errors.DomainError) return fail(t)
  return ok({
    ...state,
    ...fields,
    type: t.type,
    amount: t.amount,
    sub_total: t.sub_total,
    total: t.total,
    line_items: t.line_items,
    overdue_at: checked.overdue_at,
    updated_at: now
  })
}

/**
 * Send Draft Invoice: draft -> not-paid, `sent_date` = now; an invoice without a
 * number takes `next_invoice_number` (reported as consumed). Any other status is
 * `invalid_state`.
 */
export const send = (state: Invoice, next_invoice_number: number, now: number): InvoiceStep => {
  if (state.status !== "draft") {
    return fail(Errors.invalidState(`Only a draft invoice can be sent; this invoice is ${state.status}.`))
  }
  const numbered = publicationNumber(state.invoice_number, next_invoice_number)
  if (numbered instanceof Errors.DomainError) return fail(numbered)
  return ok(
    { ...state, status: "not-paid", sent_date: now, invoice_number: numbered.invoice_number, updated_at: now },
    [],
    [...numbered.effects, { type: "notify_customer", reason: "invoice" }]
  )
}

/** Send Reminder: `reminder_count` + 1, status unchanged. Draft: `invalid_state`; paid: `already_paid`. */
export const remind = (state: Invoice, now: number): InvoiceStep => {
  if (state.status === "paid") return fail(Errors.alreadyPaid("This invoice is already paid; no reminder is sent."))
  if (state.status === "draft") return fail(Errors.invalidState("A draft invoice has not been sent; send it first."))
  return ok(
    { ...state, reminder_count: state.reminder_count + 1, updated_at: now },
    [],
    [{ type: "notify_customer", reason: "reminder" }]
  )
}

const paid = (state: Invoice, now: number): Invoice | Errors.DomainError => {
  if (state.status === "paid") return Errors.alreadyPaid("This invoice is already paid.")
  if (state.status === "draft") return Errors.invalidState("A draft invoice cannot be paid; send it first.")
  return { ...state, status: "paid", paid_date: now, updated_at: now }
}

/** Pay Invoice (manual, offline payment): not-paid or overdue -> paid, `paid_date` = now. No event. */
export const payManually = (state: Invoice, now: number): InvoiceStep => {
  const next = paid(state, now)
  return next instanceof Errors.DomainError ? fail(next) : ok(next)
}

/** The customer pays through the link: as `payManually`, plus event `paymentrequest.success`. */
export const customerPays = (state: Invoice, now: number): InvoiceStep => {
  const next = paid(state, now)
  return next instanceof Errors.DomainError ? fail(next) : ok(next, [{ type: "paymentrequest.success", invoice: next }])
}

/** Whether `markOverdue` would succeed now: a live not-paid invoice whose due date has passed. */
export const isDueForOverdue = (state: Invoice, now: number): boolean =>
  !state.test_mode && state.status === "not-paid" && state.overdue_at !== null && now >= state.overdue_at

/**
 * The due date passes: not-paid -> overdue, event `invoice.overdue`. Live mode
 * only: a test-mode invoice never becomes overdue. Refused (`invalid_state`) in
 * any other status, without a due date, or before `overdue_at`. `updated_at` is
 * `overdue_at`, when it happened, not when the scheduler got to it (see `asOf`).
 */
export const markOverdue = (state: Invoice, now: number): InvoiceStep => {
  if (state.test_mode) return fail(Errors.invalidState("Test-mode invoices never become overdue."))
  if (state.status !== "not-paid") {
    return fail(Errors.invalidState(`Only a not-paid invoice can become overdue; this invoice is ${state.status}.`))
  }
  if (state.overdue_at === null) return fail(Errors.invalidState("This invoice has no due date."))
  if (now < state.overdue_at) return fail(Errors.invalidState("The due date of this invoice has not passed yet."))
  const next: Invoice = { ...state, status: "overdue", updated_at: Math.max(state.updated_at, state.overdue_at) }
  return ok(next, [{ type: "invoice.overdue", invoice: next }])
}

/**
 * The invoice as it stands at `now`: once its due date has passed, a live
 * not-paid invoice reads overdue even if the scheduler has not stored it yet;
 * exactly the state the sweep will store (`updated_at` is `overdue_at`).
 */
export const asOf = (state: Invoice, now: number): Invoice => {
  if (!isDueForOverdue(state, now)) return state
  const step = markOverdue(state, now)
  return step._tag === "Success" ? step.success.state : state
}

export type InvoiceCommand =
  | { readonly type: "update"; readonly input: UpdateInvoice }
  | { readonly type: "send"; readonly next_invoice_number: number }
  | { readonly type: "remind" }
  | { readonly type: "pay" }
  | { readonly type: "customer_pay" }
  | { readonly type: "mark_overdue" }

/** The machine as one function: `(state, command, now) -> Result<{state, events, effects}, DomainError>`. */
export const transition = (state: Invoice, command: InvoiceCommand, now: number): InvoiceStep => {
  switch (command.type) {
    case "update":
      return update(state, command.input, now)
    case "send":
      return send(state, command.next_invoice_number, now)
    case "remind":
      return remind(state, now)
    case "pay":
      return payManually(state, now)
    case "customer_pay":
      return customerPays(state, now)
    case "mark_overdue":
      return markOverdue(state, now)
  }
}
