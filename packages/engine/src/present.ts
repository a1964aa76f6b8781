import { type Conversion, Currency, Decimal, Instant, Money, type PaymentRequest, type Resources } from "@xaalis/core"

/** The wire Conversion object (the schema of `@xaalis/core` Resources). */
export type ConversionWire = typeof Resources.Conversion.Type

/** Who owns an object, as the wire shows it. */
export interface Owner {
  readonly business_id: string
  readonly account_id: string
  readonly test_mode: boolean
}

const gmd = (butut: bigint) => Money.toJsonNumber(butut, Currency.GMD)
const usd = (cents: bigint) => Money.toJsonNumber(cents, Currency.USD)
const chain = (micros: bigint) => Money.toJsonNumber(micros, Currency.USD_CHAIN)
const rate = (r: Decimal.Decimal) => Number(Decimal.format(r))
const iso = Instant.toIso

const timelineEntry = (e: Conversion.TimelineEntry): Record<string, unknown> => {
  switch (e.type) {
    case "created":
    case "expired":
      return { type: e.type, at: iso(e.at) }
    case "transfer":
    case "late_funds":
      return { type: e.type, at: iso(e.at), tx_hash: e.tx_hash, log_index: e.log_index, amount: chain(e.amount) }
    case "credit":
      return { type: e.type, at: iso(e.at), gmd_amount: gmd(e.gmd), markup_usd: usd(e.markup_usd) }
    case "status":
      return { type: e.type, at: iso(e.at), from: e.from, to: e.to }
    case "payout":
      return {
        type: e.type,
        at: iso(e.at),
        gmd_amount: gmd(e.gmd),
        outcome: e.outcome,
        ...(e.detail === undefined ? {} : { detail: e.detail })
      }
  }
}

/** The Conversion object of the spec; `events` only on lookup. */
export const conversion = (c: Conversion.Conversion, options: { readonly timeline: boolean }): ConversionWire => ({
  id: c.id,
  reference: c.reference,
  status: c.status,
  gmd_amount: gmd(c.gmd_amount),
  gmd_rate: rate(c.gmd_rate),
  fee: usd(c.fee),
  fee_currency: "USD" as const,
  pay_amount: usd(c.pay_amount),
  pay_currency: c.pay_currency,
  network: c.network,
  pay_address: c.pay_address,
  invoice_expires_at: iso(c.invoice_expires_at),
  actually_paid: chain(c.actually_paid),
  destination: c.destination,
  payout_method: c.payout_method,
  markup_share_usd: usd(c.markup_share_usd),
  createdAt: iso(c.created_at),
  ...(options.timeline ? { events: c.timeline.map(timelineEntry) as unknown as ConversionWire["events"] & {} } : {})
})

/**
 * A payment request's `metadata` (decisions §4): the caller's object plus the
 * service's keys, `usd_amount` and those `charge.succeeded` carries, the same
 * on the object and in its events; a caller key of the same name is overwritten.
 * `payment_history` is empty until the first payment.
 */
const requestMetadata = (r: PaymentRequest.PaymentRequest) => ({
  ...r.metadata,
  quote_id: r.id,
  usd_amount: usd(r.usd_amount),
  gmd_rate: rate(r.gmd_rate),
  fee: usd(r.fee),
  fee_currency: "USD" as const,
  fee_bearer: "business" as const,
  payment_history: r.payments.map((p) => ({
    amount_paid_usd: chain(p.amount_paid_usd),
    amount_paid_gmd: gmd(p.amount_paid_gmd),
    timestamp: iso(p.at)
  }))
})

/** The Stablecoin payment request object of the spec. */
export const paymentRequest = (r: PaymentRequest.PaymentRequest, owner: Owner) => ({
  id: r.id,
  status: r.status,
  amount: chain(r.amount),
  currency: "USD" as const,
  metadata: requestMetadata(r),
  business_id: owner.business_id,
  account_id: owner.account_id,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
  payment_link_id: null,
  token: null,
  link: r.link,
  expiresAt: r.expires_at === null ? null : iso(r.expires_at),
  callback_url: r.callback_url
})

/** `charge.succeeded` payload for a payment request (spec, Events rule 3). */
export const chargeSucceeded = (
  r: PaymentRequest.PaymentRequest,
  payment: PaymentRequest.ReceivedPayment,
  owner: Owner
) => ({
  id: r.id,
  type: "payment" as const,
  status: r.status,
  amount: chain(r.amount),
  currency: "USD" as const,
  payment_method: payment.network,
  reference: r.id,
  transaction_reference: payment.tx_hash,
  account_id: owner.account_id,
  business_id: owner.business_id,
  test_mode: owner.test_mode,
  metadata: requestMetadata(r),
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at)
})

/**
 * `transfer.succeeded` payload: one mobile-money payout of a conversion's
 * credited dalasi reached the wallet (the spec lists the event and leaves its
 * payload and conditions open; see docs/decisions.md).
 */
export const transferSucceeded = (t: {
  readonly id: string
  readonly amount: bigint
  readonly wallet: Conversion.PayoutMethod
  readonly rail_reference: string | null
  readonly conversion: Conversion.Conversion
  readonly test_mode: boolean
  readonly created_at: number
  readonly updated_at: number
}) => ({
  id: t.id,
  object: "transfer" as const,
  status: "succeeded" as const,
  amount: gmd(t.amount),
  currency: "GMD" as const,
  destination: "mobile_money" as const,
  network: t.wallet.network,
  account_number: t.wallet.account_number,
  account_name: t.wallet.account_name,
  transaction_reference: t.rail_reference,
  conversion_id: t.conversion.id,
  reference: t.conversion.reference,
  test_mode: t.test_mode,
  createdAt: iso(t.created_at),
  updatedAt: iso(t.updated_at)
})
