import { Decimal, DomainError, Instant, Invoice, PaymentIntent, type PaymentLink, PaymentRequest } from "@xaalis/core"
import { Effect } from "effect"
import type { Doc, Kind, StoreError, VersionConflict } from "../ports/Store.ts"
import { now, unitOfWork } from "./common.ts"
import type { StoredPaymentRequest } from "./PaymentRequests.ts"

/**
 * What a payer sees on the hosted page behind a link the API hands out
 * (`link`, `payment_link`, `url`): public facts only, never the business's
 * metadata, secrets, callback URLs or the customer's contact details. Anyone
 * holding the link may read it, as with any hosted checkout page; the ids in
 * links are random UUIDs.
 */
export interface HostedPage {
  readonly kind: HostedKind
  readonly id: string
  /** A test-mode object: the page says nothing real is paid. */
  readonly test_mode: boolean
  /** Who is paid: the business's name, so a payer sees it on every page (a title alone could claim anything). */
  readonly merchant: string
  readonly heading: string
  /** The object's status as the API names it (`requires_payment_method`, `not-paid`…). */
  readonly status: string
  /** The status in a payer's words ("Awaiting payment", "Not paid"…). */
  readonly status_text: string
  /** What is asked, formatted for people: `"1,250.00"` (thousands grouped, 2 decimals) and its currency. */
  readonly amount: { readonly value: string; readonly currency: string }
  /** Label and value rows, in display order. */
  readonly facts: ReadonlyArray<readonly [string, string]>
  /** Payment requests: where to send stablecoins. */
  readonly addresses: ReadonlyArray<{ readonly network: string; readonly coin: string; readonly address: string }>
  /** Invoices: the line items. */
  readonly items: ReadonlyArray<{
    readonly item: string
    readonly quantity: string
    readonly unit_price: string
    readonly total_price: string
  }>
  /**
   * Where the payer may go from here: a payment intent's `return_url` once
   * paid, its `cancel_url` once cancelled, failed or expired, or to leave it
   * unpaid (as the business gave them: http(s), or any scheme but the active
   * ones with `skip_url_validation`).
   */
  readonly links: ReadonlyArray<{ readonly label: string; readonly href: string }>
  /**
   * Seconds after which the page reloads itself (it has no script): while a
   * payment is awaited, so a payer sees it arrive; null on a page that will
   * not change by itself.
   */
  readonly refresh_seconds: number | null
}

/** How often a page awaiting a payment reloads itself. */
export const refresh_seconds = 15

/** The objects with a hosted page. */
export type HostedKind = Extract<Kind, "payment_request" | "payment_intent" | "payment_link" | "invoice">

/** `1234567.5` → `1,234,567.5`: the whole part in groups of three. */
const grouped = (text: string): string => {
  const [whole = "", fraction] = text.split(".")
  const sign = whole.startsWith("-") ? "-" : ""
  const digits = whole.slice(sign.length).replace(/\B(?=(\d{3})+$)/g, ",")
  return `${sign}${digits}${fraction === undefined ? "" : `.${fraction}`}`
}
const fiat = (units: bigint) => grouped(Decimal.formatUnits(units, 2))
/** Chain amounts (6 places) shown with at least 2 decimals and no trailing zeros past them. */
const chain = (micros: bigint) => grouped(Decimal.formatUnits(micros, 6).replace(/(\.\d\d\d*?)0+$/, "$1"))

const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
/** `28 Nov 2026, 03:41 UTC` (The Gambia keeps UTC all year). */
const at = (t: number): string => {
  const c = Instant.toCivil(t)
  const two = (n: number) => String(n).padStart(2, "0")
  return `${c.day} ${months[c.month - 1]} ${c.year}, ${two(c.hour)}:${two(c.minute)} UTC`
}
/** A due date (`2026-12-31`, or a date-time) as people read it: `31 Dec 2026`, or with its time. */
const dueText = (due: string): string => {
  const parsed = Instant.parseIso(due)
  if (parsed === undefined) return due
  const c = Instant.toCivil(parsed.ms)
  return parsed.date_only ? `${c.day} ${months[c.month - 1]} ${c.year}` : at(parsed.ms)
}

/** Statuses in a payer's words. */
const statusTexts: Record<string, string> = {
  pending: "Awaiting payment",
  partially_paid: "Partially paid",
  completed: "Paid",
  expired: "Expired",
  initialized: "Awaiting payment",
  requires_payment_method: "Awaiting payment",
  processing: "Processing",
  successful: "Paid",
  failed: "Failed",
  cancelled: "Cancelled",
  active: "Open for payment",
  inactive: "Closed",
  "not-paid": "Not paid",
  overdue: "Overdue",
  paid: "Paid"
}
const statusText = (status: string): string => statusTexts[status] ?? status

const notFound = new DomainError({ code: "not_found", message: "No such payment page." })

/** Micro-units (6 places, a chain amount) in `cents` (2 places). */
const micros_per_cent = 10_000n

const requestPage = (doc: Doc<StoredPaymentRequest>, t: number, merchant: string): HostedPage => {
  const r = PaymentRequest.asOf(doc.data.request, t)
  const open = r.status === "pending" || r.status === "partially_paid"
  // what the payer still has to send (to the 6 places a coin has), or what was sent beyond the amount asked
  const asked = r.usd_amount * micros_per_cent
  const left =
    open && r.amount > 0n && r.amount < asked ? [["Left to pay", `${chain(asked - r.amount)} USD`] as const] : []
  const extra = r.amount > asked ? [["Paid more than asked", `${chain(r.amount - asked)} USD`] as const] : []
  return {
    kind: "payment_request",
    id: r.id,
    test_mode: doc.mode === "test",
    merchant,
    heading: open ? "Pay with USDT or USDC" : r.status === "completed" ? "Paid in full" : "This request has expired",
    status: r.status,
    status_text: statusText(r.status),
    amount: { value: fiat(r.usd_amount), currency: "USD" },
    facts: [
      ["Paid so far", `${chain(r.amount)} USD`],
      ...left,
      ...extra,
      ...(r.expires_at === null || !open ? [] : [["Pay before", at(r.expires_at)] as const]),
      ...(r.status === "expired" && r.amount > 0n
        ? [
            [
              "What you paid",
              `Received by ${merchant === "" ? "the business" : merchant}: contact them about it`
            ] as const
          ]
        : [])
    ],
    // where to send: only while the request takes payments
    addresses: open ? doc.data.addresses.map((a) => ({ network: a.network, coin: a.coin, address: a.address })) : [],
    items: [],
    links: [],
    refresh_seconds: open ? refresh_seconds : null
  }
}

const intentHeadings: Record<string, string> = {
  successful: "Paid",
  failed: "The payment failed",
  cancelled: "This payment was cancelled"
}

const intentPage = (doc: Doc<PaymentIntent.PaymentIntent>, t: number, merchant: string): HostedPage => {
  const p = PaymentIntent.asOf(doc.data, t)
  const total = p.transaction_fee_type === "customer" ? p.amount + p.transaction_fee : p.amount
  const final = PaymentIntent.isTerminal(p.status)
  return {
    kind: "payment_intent",
    id: p.payment_intent_id,
    test_mode: p.test_mode,
    merchant,
    heading:
      p.status === "cancelled" && p.cancellation_reason === "expired"
        ? "This payment expired"
        : (intentHeadings[p.status] ?? "Pay by mobile money"),
    status: p.status,
    status_text: p.status === "cancelled" && p.cancellation_reason === "expired" ? "Expired" : statusText(p.status),
    amount: { value: fiat(total), currency: p.currency },
    facts: [
      ...(p.transaction_fee_type === "customer"
        ? [["Of which fee", `${fiat(p.transaction_fee)} ${p.currency}`] as const]
        : []),
      ...(p.network === null ? [] : [["Network", p.network] as const]),
      ...(final ? [] : [["Pay before", at(p.expires_at)] as const])
    ],
    addresses: [],
    items: [],
    links: intentLinks(p, merchant),
    // processing included: the outcome is on its way
    refresh_seconds: final ? null : refresh_seconds
  }
}

/** Back to the business: `return_url` once paid, `cancel_url` otherwise (also to leave an open payment). */
const intentLinks = (p: PaymentIntent.PaymentIntent, merchant: string): HostedPage["links"] => {
  const to = merchant === "" ? "the business" : merchant
  if (p.status === "successful") return p.return_url === null ? [] : [{ label: `Back to ${to}`, href: p.return_url }]
  if (p.cancel_url === null || p.status === "processing") return []
  return [{ label: PaymentIntent.isTerminal(p.status) ? `Back to ${to}` : `Leave without paying`, href: p.cancel_url }]
}

const linkPage = (doc: Doc<PaymentLink.PaymentLink>, merchant: string): HostedPage => {
  const l = doc.data
  return {
    kind: "payment_link",
    id: l.id,
    test_mode: doc.mode === "test",
    merchant,
    heading: l.title ?? "Payment",
    status: l.status,
    status_text: statusText(l.status),
    amount: { value: fiat(l.amount), currency: l.currency },
    facts: l.description === null ? [] : [["Description", l.description]],
    addresses: [],
    items: [],
    links: [],
    refresh_seconds: null
  }
}

const invoicePage = (doc: Doc<Invoice.Invoice>, t: number): HostedPage => {
  const i = Invoice.asOf(doc.data, t)
  const paid = i.status === "paid"
  // the number is in the heading while the invoice is open, a fact once the heading says it is paid
  const number = i.invoice_number === null || !paid ? [] : [["Invoice number", String(i.invoice_number)] as const]
  return {
    kind: "invoice",
    id: i.id,
    test_mode: i.test_mode,
    merchant: i.merchant_name,
    // once paid the page says so and stops asking: no due date, the day it was paid
    heading: paid ? "Paid in full" : i.invoice_number === null ? "Invoice" : `Invoice ${i.invoice_number}`,
    status: i.status,
    status_text: statusText(i.status),
    amount: { value: fiat(i.amount), currency: i.currency },
    facts: [
      ...number,
      ...(i.sent_date === null ? [] : [["Issued", at(i.sent_date)] as const]),
      ["Sub-total", `${fiat(i.sub_total)} ${i.currency}`],
      ...(i.total === i.sub_total ? [] : [["Discount", `${fiat(i.sub_total - i.total)} ${i.currency}`] as const]),
      ...(paid
        ? i.paid_date === null
          ? []
          : [["Paid on", at(i.paid_date)] as const]
        : i.due_date === null
          ? []
          : [["Due", dueText(i.due_date)] as const]),
      ...(i.notes === null ? [] : [["Notes", i.notes] as const])
    ],
    addresses: [],
    items: i.line_items.map((li) => ({
      item: li.item,
      quantity: grouped(Decimal.format(li.quantity)),
      unit_price: fiat(li.unit_price),
      total_price: fiat(li.total_price)
    })),
    links: [],
    refresh_seconds: null
  }
}

/**
 * The hosted page of the object `id` of `kind` as it stands now (an expiry or
 * overdue mark that fell due shows before the scheduler stores it), or
 * `not_found`: also for an invoice still in draft (its link is handed out when
 * it is published).
 */
export const hostedPage = (kind: HostedKind, id: string) =>
  Effect.flatMap(now, (t) =>
    unitOfWork((tx) =>
      Effect.flatMap(tx.get(kind, id), (doc): Effect.Effect<HostedPage, DomainError | StoreError | VersionConflict> => {
        if (doc === undefined) return Effect.fail(notFound)
        const merchantOf = Effect.map(
          doc.business_id === null ? Effect.succeed(undefined) : tx.get("business", doc.business_id),
          (b) => (b?.data as { readonly name?: string } | undefined)?.name ?? ""
        )
        switch (kind) {
          case "payment_request":
            return Effect.map(merchantOf, (m) => requestPage(doc as Doc<StoredPaymentRequest>, t, m))
          case "payment_intent":
            return Effect.map(merchantOf, (m) => intentPage(doc as Doc<PaymentIntent.PaymentIntent>, t, m))
          case "payment_link":
            return Effect.map(merchantOf, (m) => linkPage(doc as Doc<PaymentLink.PaymentLink>, m))
          case "invoice": {
            const invoice = doc as Doc<Invoice.Invoice>
            return invoice.data.status === "draft" ? Effect.fail(notFound) : Effect.succeed(invoicePage(invoice, t))
          }
        }
      })
    )
  )
