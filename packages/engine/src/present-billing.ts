import { Currency, Decimal, Instant, type Invoice, Money, type PaymentIntent, type PaymentLink } from "@xaalis/core"

/**
 * Presenters of the billing resources: payment intents, payment links and
 * invoices, in the exact wire shapes of `Resources.PaymentIntent`,
 * `Resources.PaymentLink` and `Resources.Invoice`. Amounts are JSON numbers of
 * the object's currency (`Money.toJsonNumber`), timestamps ISO 8601 (`Instant.toIso`).
 * The same objects are the payloads of the billing webhook events.
 */

const money = (minor: bigint, currency: Currency.FiatCode) => Money.toJsonNumber(minor, Currency.fiat[currency])
const decimal = (d: Decimal.Decimal) => Number(Decimal.format(d))
const iso = Instant.toIso

/**
 * The Payment intent object of the spec (response of POST /v1/payments), plus
 * the caller's `metadata` as sent (the spec's table omits it; without it the
 * metadata a caller stored would never come back, not even in the events).
 */
export const paymentIntent = (pi: PaymentIntent.PaymentIntent) => ({
  payment_intent_id: pi.payment_intent_id,
  intent_secret: pi.intent_secret,
  payment_link: pi.payment_link,
  amount: money(pi.amount, pi.currency),
  transaction_fee: money(pi.transaction_fee, pi.currency),
  transaction_fee_type: pi.transaction_fee_type,
  currency: pi.currency,
  expires_at: iso(pi.expires_at),
  status: pi.status,
  metadata: pi.metadata,
  cancellation_reason: pi.cancellation_reason,
  failure_reason: pi.failure_reason
})

/**
 * The payload of a payment intent's `charge.succeeded` and `charge.failed`:
 * the intent object, plus the charge keys of the spec's Events rule 3 that an
 * intent can answer, so a receiver written for rule 3 finds them: `id` (the
 * intent's id: rule 2 says to match on the payload's `id`), `type`
 * `"payment"`, `reference` (the intent's id), `payment_method` (the
 * mobile-money network, or null), `transaction_reference` (null: the
 * processor port reports no reference), the owner, `test_mode`, `createdAt`,
 * `updatedAt`. `status` stays the intent's (`successful`, `failed`): rule 3's
 * `partially_paid`/`completed` are a stablecoin request's.
 */
export const intentCharge = (
  pi: PaymentIntent.PaymentIntent,
  owner: { readonly business_id: string; readonly account_id: string | null }
) => ({
  id: pi.payment_intent_id,
  type: "payment" as const,
  ...paymentIntent(pi),
  payment_method: pi.network,
  reference: pi.payment_intent_id,
  transaction_reference: null,
  account_id: owner.account_id,
  business_id: owner.business_id,
  test_mode: pi.test_mode,
  createdAt: iso(pi.created_at),
  updatedAt: iso(pi.updated_at)
})

/** The Payment link object: the spec's four fields plus those of decisions §5. */
export const paymentLink = (l: PaymentLink.PaymentLink) => ({
  id: l.id,
  url: l.url,
  amount: money(l.amount, l.currency),
  currency: l.currency,
  title: l.title,
  description: l.description,
  metadata: l.metadata,
  status: l.status,
  createdAt: iso(l.created_at)
})

type InvoiceDiscount = NonNullable<Invoice.Invoice["discount"]>

const discount = (d: InvoiceDiscount, currency: Currency.FiatCode) =>
  d.type === "fixed"
    ? { type: "fixed" as const, amount: money(d.amount, currency) }
    : { type: "percentage" as const, amount: decimal(d.amount) }

/** `key: value` when the value is present, nothing otherwise (the spec's optional fields). */
const opt = <K extends string, V>(key: K, value: V | null): { [P in K]?: V } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * The Invoice object of the spec. Optional fields are left out when they have no
 * value; `line_items` only on a professional invoice; `sent_date` is null for a
 * draft. `customer` is the caller's customer ID, or "" when the invoice names
 * its customer by email and name only.
 */
export const invoice = (inv: Invoice.Invoice) => ({
  id: inv.id,
  reference: inv.reference,
  type: inv.type,
  status: inv.status,
  customer: inv.customer ?? "",
  ...opt("customer_email", inv.customer_email),
  ...opt("customer_name", inv.customer_name),
  ...opt("customer_phone", inv.customer_phone),
  currency: inv.currency,
  business_id: inv.business_id,
  account_id: inv.account_id,
  merchant_name: inv.merchant_name,
  amount: money(inv.amount, inv.currency),
  sub_total: money(inv.sub_total, inv.currency),
  total: money(inv.total, inv.currency),
  ...opt("discount", inv.discount === null ? null : discount(inv.discount, inv.currency)),
  ...opt(
    "line_items",
    inv.line_items.length === 0
      ? null
      : inv.line_items.map((li) => ({
          item: li.item,
          quantity: decimal(li.quantity),
          unit_price: money(li.unit_price, inv.currency),
          total_price: money(li.total_price, inv.currency)
        }))
  ),
  ...opt("due_date", inv.due_date),
  ...opt("invoice_number", inv.invoice_number),
  ...opt("notes", inv.notes),
  sent_date: inv.sent_date === null ? null : iso(inv.sent_date),
  ...opt("paid_date", inv.paid_date === null ? null : iso(inv.paid_date)),
  ...opt("payment_link", inv.payment_link),
  ...opt("callback_url", inv.callback_url),
  ...opt("sub_account", inv.sub_account),
  reminder_count: inv.reminder_count,
  test_mode: inv.test_mode,
  createdAt: iso(inv.created_at),
  updatedAt: iso(inv.updated_at)
})

export type PresentedPaymentIntent = ReturnType<typeof paymentIntent>
export type PresentedPaymentLink = ReturnType<typeof paymentLink>
export type PresentedInvoice = ReturnType<typeof invoice>
