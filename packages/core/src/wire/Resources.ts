import { Schema } from "effect"
import { conversion_statuses } from "../conversion/Conversion.ts"
import { error_codes } from "../Errors.ts"
import { invoice_statuses } from "../invoice/Invoice.ts"
import { payment_intent_statuses } from "../payment-intent/PaymentIntent.ts"
import { payment_link_statuses } from "../payment-link/PaymentLink.ts"
import { payment_request_statuses } from "../payment-request/PaymentRequest.ts"

/**
 * The JSON shape of every resource the API returns, exactly as the spec lists it
 * (plus the decisions' additions). These describe the wire, not the domain:
 * amounts are JSON numbers (`Schema.Finite`), timestamps ISO 8601 strings, and
 * field names are the spec's (including the camelCase `createdAt`, `updatedAt`,
 * `expiresAt`). Each schema has an `identifier` (its OpenAPI component name) and a
 * description; `Schema.toJsonSchemaDocument(schema)` gives its JSON Schema.
 *
 * Objects are open (extra fields allowed), as the spec leaves fields "not shown".
 */

// ---------------------------------------------------------------- scalars

const Amount = (description: string) => Schema.Finite.annotate({ description })
const DateTime = (description: string) => Schema.String.annotate({ description, format: "date-time" })
const Uuid = (description: string) => Schema.String.annotate({ description, format: "uuid" })
const Uri = (description: string) => Schema.String.annotate({ description, format: "uri" })
const Text = (description: string) => Schema.String.annotate({ description })
const JsonObject = (description: string) => Schema.Record(Schema.String, Schema.Unknown).annotate({ description })
const Count = (description: string) => Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)).annotate({ description })

export const FiatCurrency = Schema.Literals(["GMD", "USD"])
export const Coin = Schema.Literals(["USDT", "USDC"])
export const ChainNetwork = Schema.Literals(["TRC20", "ARC"])

// ---------------------------------------------------------------- payment intent

export const PaymentIntentStatus = Schema.Literals(payment_intent_statuses).annotate({
  description: "requires_payment_method on creation; successful, failed and cancelled are final"
})

/** Response of POST /v1/payments (201), GET /v1/payments/{id}, cancel. */
export const PaymentIntent = Schema.Struct({
  payment_intent_id: Uuid("Payment intent ID"),
  intent_secret: Text("Secret for the hosted payment page"),
  payment_link: Uri("Hosted payment page"),
  amount: Amount("Amount to collect"),
  transaction_fee: Amount("Fee: a configurable percentage of amount, half-up to the minor unit"),
  transaction_fee_type: Schema.Literals(["business", "customer"]).annotate({ description: "Who bears the fee" }),
  currency: FiatCurrency,
  expires_at: DateTime("Creation plus the payment window (default 30 minutes)"),
  status: PaymentIntentStatus,
  metadata: Schema.optionalKey(
    Schema.Record(Schema.String, Schema.Unknown).annotate({
      description: "The caller's metadata, untouched ({} when none)"
    })
  ),
  cancellation_reason: Schema.optionalKey(
    Schema.NullOr(Schema.Literals(["requested", "expired"])).annotate({
      description:
        "Why a cancelled intent was cancelled: requested (POST /v1/payments/{id}/cancel) or expired (its payment window closed); null otherwise"
    })
  ),
  failure_reason: Schema.optionalKey(
    Schema.NullOr(Schema.String).annotate({
      description: "What the processor said when the payment failed; null otherwise"
    })
  )
}).annotate({ identifier: "PaymentIntent", description: "A card or mobile-money payment intent" })

// ---------------------------------------------------------------- stablecoin payment request

/** The service's keys of a payment request's `metadata` besides `usd_amount` (decisions §4, spec Events rule 3). */
const chargeKeys = {
  quote_id: Text("Payment request ID"),
  gmd_rate: Amount("GMD per USD, locked at creation"),
  fee: Amount("Fee in USD"),
  fee_currency: Schema.Literal("USD"),
  fee_bearer: Schema.Literal("business"),
  payment_history: Schema.Array(
    Schema.Struct({
      amount_paid_usd: Amount("USD paid"),
      amount_paid_gmd: Amount("half_up_butut(amount_paid_usd * gmd_rate)"),
      timestamp: DateTime("When it was received")
    })
  ).annotate({ description: "One entry per payment received; empty until the first" })
}
const usdAmount = Amount("The requested amount in USD")
const callerKeys = [Schema.Record(Schema.String, Schema.Unknown)] as const
const metadataNote =
  "The caller's metadata untouched, plus the service's keys (usd_amount and the charge.succeeded keys); a caller key of the same name is overwritten"

/**
 * A payment request's `metadata` on the object. xaalis always serves every
 * service key; only `usd_amount` is required here, as the spec's object shows it.
 */
const RequestMetadata = Schema.StructWithRest(
  Schema.Struct({
    usd_amount: usdAmount,
    quote_id: Schema.optionalKey(chargeKeys.quote_id),
    gmd_rate: Schema.optionalKey(chargeKeys.gmd_rate),
    fee: Schema.optionalKey(chargeKeys.fee),
    fee_currency: Schema.optionalKey(chargeKeys.fee_currency),
    fee_bearer: Schema.optionalKey(chargeKeys.fee_bearer),
    payment_history: Schema.optionalKey(chargeKeys.payment_history)
  }),
  callerKeys
).annotate({ description: metadataNote })

/** The same `metadata` in `charge.succeeded`, where the spec lists every service key. */
const ChargeMetadata = Schema.StructWithRest(
  Schema.Struct({ usd_amount: usdAmount, ...chargeKeys }),
  callerKeys
).annotate({ description: metadataNote })

/** Response of POST /v1/minting/intents and GET /v1/minting/intents/{id}. */
export const PaymentRequest = Schema.Struct({
  id: Uuid("Payment request ID"),
  status: Schema.Literals(payment_request_statuses),
  amount: Amount(
    "Total paid so far in USD (up to 6 decimal places), accumulating across transfers; not the amount asked for"
  ),
  currency: Schema.Literal("USD"),
  metadata: RequestMetadata,
  business_id: Uuid("Business ID"),
  account_id: Uuid("Account ID"),
  createdAt: DateTime("Creation time"),
  updatedAt: DateTime("Last change"),
  payment_link_id: Schema.NullOr(Text("Hosted payment link ID")).annotate({ description: "null at creation" }),
  token: Schema.NullOr(Text("Token")).annotate({ description: "null at creation" }),
  link: Uri("Hosted payment page; accepts USDT or USDC"),
  expiresAt: Schema.NullOr(DateTime("Deadline")).annotate({ description: "The requested expires_at, or null" }),
  callback_url: Schema.NullOr(Text("Notification address")).annotate({ description: "null when none was given" })
}).annotate({
  identifier: "PaymentRequest",
  description: "A stablecoin payment request, held in USD; completed when amount reaches metadata.usd_amount"
})

// ---------------------------------------------------------------- conversion

const PayoutMethod = Schema.Struct({
  network: Schema.Literals(["wave", "afrimoney"]),
  account_number: Text("7-digit wallet number"),
  account_name: Text("Wallet holder name")
}).annotate({ identifier: "PayoutMethod", description: "Mobile money wallet receiving the dalasi" })

const at = DateTime("When it happened")
/** One entry of a conversion's `events` timeline (decisions §3). */
export const ConversionEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("created"), at }),
  Schema.Struct({
    type: Schema.Literal("transfer"),
    at,
    tx_hash: Text("Transaction hash"),
    log_index: Count("Log index"),
    amount: Amount("USD received, up to 6 decimal places")
  }),
  Schema.Struct({
    type: Schema.Literal("credit"),
    at,
    gmd_amount: Amount("Dalasi credited by this transfer"),
    markup_usd: Amount("Markup share credited, USD")
  }),
  Schema.Struct({
    type: Schema.Literal("status"),
    at,
    from: Text("Previous status"),
    to: Text("New status")
  }),
  Schema.Struct({
    type: Schema.Literal("payout"),
    at,
    gmd_amount: Amount("Dalasi paid out"),
    outcome: Schema.Literals(["succeeded", "failed"]),
    detail: Schema.optionalKey(Text("Why a payout failed; the dalasi stays in the balance"))
  }),
  Schema.Struct({
    type: Schema.Literal("late_funds"),
    at,
    tx_hash: Text("Transaction hash"),
    log_index: Count("Log index"),
    amount: Amount("USD received after the window; resolved manually using reference")
  }),
  Schema.Struct({ type: Schema.Literal("expired"), at })
]).annotate({ identifier: "ConversionEvent", description: "A timeline entry {type, at, ...}" })

export const ConversionStatus = Schema.Literals(conversion_statuses)

/** Response of POST /v1/minting/offramp and GET /v1/minting/ramps/{id}; also the ramp.* webhook payload. */
export const Conversion = Schema.Struct({
  id: Uuid("Conversion ID"),
  reference: Text("MP-<YYYYMMDD>-<HHMMSS>-<8 uppercase hex>").check(Schema.isPattern(/^MP-\d{8}-\d{6}-[0-9A-F]{8}$/)),
  status: ConversionStatus,
  gmd_amount: Amount("Dalasi received once fully paid"),
  gmd_rate: Amount("Dalasi per US dollar, locked at creation"),
  fee: Amount("Service fee in USD, included in pay_amount; on TRC20 includes the 1.50 USD network fee"),
  fee_currency: Schema.Literal("USD"),
  pay_amount: Amount("Exact amount to send, USD units of the coin"),
  pay_currency: Coin,
  network: ChainNetwork,
  pay_address: Text("Address to send the stablecoin to"),
  invoice_expires_at: DateTime("Creation plus 10 minutes"),
  actually_paid: Amount("USD arrived so far, up to 6 decimal places"),
  destination: Schema.Literals(["service_balance", "mobile_money"]),
  payout_method: Schema.NullOr(PayoutMethod),
  markup_share_usd: Amount("Reseller markup share in USD; 0 without markup"),
  createdAt: DateTime("Creation time"),
  events: Schema.optionalKey(Schema.Array(ConversionEvent).annotate({ description: "Only on lookup: the timeline" }))
}).annotate({ identifier: "Conversion", description: "A stablecoin-to-dalasi conversion (off-ramp)" })

// ---------------------------------------------------------------- payment link

/** Response of POST /v1/payment-links and GET /v1/payment-links/{id}. */
export const PaymentLink = Schema.Struct({
  id: Text("Payment link ID"),
  url: Uri("Payment page"),
  amount: Amount("Amount to collect"),
  currency: FiatCurrency,
  title: Schema.NullOr(Text("Title")).annotate({ description: "null when none was given" }),
  description: Schema.NullOr(Text("Description")).annotate({ description: "null when none was given" }),
  metadata: JsonObject("The caller's metadata, untouched ({} when none)"),
  status: Schema.Literals(payment_link_statuses),
  createdAt: DateTime("Creation time")
}).annotate({ identifier: "PaymentLink", description: "A reusable payment link" })

// ---------------------------------------------------------------- invoice

export const InvoiceLineItem = Schema.Struct({
  item: Text("Product SKU or ID"),
  quantity: Amount("Quantity, up to 4 decimal places"),
  unit_price: Amount("Price of one unit"),
  total_price: Amount("half_up(quantity * unit_price), calculated by the service")
}).annotate({ identifier: "LineItem", description: "An invoice line" })

export const InvoiceDiscount = Schema.Struct({
  type: Schema.Literals(["fixed", "percentage"]),
  amount: Amount("A fixed amount, or a percentage in (0, 100]")
}).annotate({ identifier: "Discount", description: "An invoice discount" })

export const InvoiceStatus = Schema.Literals(invoice_statuses)

const optionalText = (description: string) => Schema.optionalKey(Text(description))

/** Response of every invoice operation; also the paymentrequest.success and invoice.overdue payload. */
export const Invoice = Schema.Struct({
  id: Text("Invoice ID"),
  reference: Text("Invoice reference"),
  type: Schema.Literals(["simple", "professional"]).annotate({ description: "professional when there are line items" }),
  status: InvoiceStatus,
  customer: Text("Customer ID"),
  customer_email: optionalText("Customer email"),
  customer_name: optionalText("Customer name"),
  customer_phone: optionalText("Customer phone"),
  currency: FiatCurrency,
  business_id: Text("Business ID"),
  account_id: Text("Account ID"),
  merchant_name: Text("Business name shown to the customer"),
  amount: Amount("Payable amount, after discount"),
  sub_total: Schema.optionalKey(Amount("Before discount")),
  total: Schema.optionalKey(Amount("After discount")),
  discount: Schema.optionalKey(InvoiceDiscount),
  line_items: Schema.optionalKey(Schema.Array(InvoiceLineItem)),
  due_date: optionalText("Due date as given (ISO 8601 or YYYY-MM-DD)"),
  invoice_number: Schema.optionalKey(
    Schema.Union([Schema.String, Schema.Finite]).annotate({ description: "Custom or assigned number" })
  ),
  notes: optionalText("Notes"),
  sent_date: Schema.NullOr(DateTime("When it was published")).annotate({ description: "null for a draft" }),
  paid_date: Schema.optionalKey(DateTime("When it was paid")),
  payment_link: Schema.optionalKey(Uri("Where the customer pays")),
  callback_url: optionalText("Receives invoice status updates"),
  sub_account: optionalText("Sub-account for split payments"),
  reminder_count: Count("Reminders sent"),
  test_mode: Schema.Boolean,
  createdAt: DateTime("Creation time"),
  updatedAt: DateTime("Last change")
}).annotate({ identifier: "Invoice", description: "An invoice" })

// ---------------------------------------------------------------- balance, lists, errors

/** Response of GET /v1/balance. */
export const Balance = Schema.Struct({
  currency: Schema.Literal("GMD"),
  available: Amount("Dalasi available"),
  balances: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        currency: Schema.Literals(["GMD", "USD"]),
        available: Amount("Available in this currency (USD: markup shares and stablecoin payments, 6 places)")
      })
    ).annotate({ description: "Every currency the business holds: GMD (as above), then USD" })
  ),
  test_mode: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "Balance", description: "The business balance" })

export const ListMeta = Schema.Struct({
  total: Count("Objects matching, all pages"),
  limit: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })).annotate({ description: "Page size" }),
  offset: Count("Objects skipped")
}).annotate({ identifier: "ListMeta", description: "Pagination of a list" })

/** A page of a list endpoint, newest first: `{data, meta: {total, limit, offset}}`. */
export const List = <S extends Schema.Top>(item: S, identifier: string) =>
  Schema.Struct({ data: Schema.Array(item), meta: ListMeta }).annotate({
    identifier,
    description: "A page of objects, newest first"
  })

export const PaymentIntentList = List(PaymentIntent, "PaymentIntentList")
export const PaymentRequestList = List(PaymentRequest, "PaymentRequestList")
export const ConversionList = List(Conversion, "ConversionList")
export const PaymentLinkList = List(PaymentLink, "PaymentLinkList")
export const InvoiceList = List(Invoice, "InvoiceList")

/** Every error answer: `{error: {message, code}}`. */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({
    message: Text("For humans; wording may change"),
    code: Schema.Literals(error_codes).annotate({ description: "Stable, machine-readable" })
  })
}).annotate({ identifier: "Error", description: "An error" })

// ---------------------------------------------------------------- webhooks

export const EventName = Schema.Literals([
  "payment_intent.created",
  "payment_intent.cancelled",
  "charge.succeeded",
  "charge.failed",
  "transfer.succeeded",
  "ramp.underpaid",
  "ramp.paid",
  "ramp.overpaid",
  "paymentrequest.success",
  "invoice.overdue"
])

/** Body of every webhook delivery. */
export const WebhookEnvelope = Schema.Struct({
  event: EventName,
  payload: JsonObject("The object the event is about")
}).annotate({ identifier: "WebhookEnvelope", description: "A webhook delivery: {event, payload}" })

/** `charge.succeeded` payload for a stablecoin payment request (spec, Events rule 3). */
export const ChargeSucceededPayload = Schema.Struct({
  id: Uuid("Payment request ID"),
  type: Schema.Literal("payment"),
  status: Schema.Literals(["partially_paid", "completed"]),
  amount: Amount("USD paid so far (running total)"),
  currency: Schema.Literal("USD"),
  payment_method: Text("Network, e.g. TRC20"),
  reference: Text("Reference"),
  transaction_reference: Text("Transaction reference"),
  account_id: Uuid("Account ID"),
  business_id: Uuid("Business ID"),
  test_mode: Schema.Boolean,
  metadata: ChargeMetadata,
  createdAt: DateTime("Creation time"),
  updatedAt: DateTime("Last change")
}).annotate({
  identifier: "ChargeSucceededPayload",
  description: "charge.succeeded payload of a stablecoin payment request"
})

// ---------------------------------------------------------------- sandbox helpers (decisions §9)

/** 201 of POST /v1/test_helpers/businesses. */
export const SandboxBusiness = Schema.Struct({
  id: Text("Business ID"),
  account_id: Text("Account ID"),
  name: Text("Business name"),
  secret_key_test: Text("sk_test_ key"),
  secret_key_live: Text("sk_live_ key"),
  webhook_secret: Text("whsec_<base64 of 32 bytes>")
}).annotate({ identifier: "SandboxBusiness", description: "A sandbox business and its keys" })

/** Answer of POST /v1/test_helpers/rates. */
export const SandboxRate = Schema.Struct({ rate: Amount("Current GMD per USD") }).annotate({
  identifier: "SandboxRate",
  description: "The current USD->GMD rate"
})

/** Answer of GET /v1/test_helpers/clock and POST /v1/test_helpers/clock/advance. */
export const SandboxClock = Schema.Struct({ now: DateTime("Sandbox time") }).annotate({
  identifier: "SandboxClock",
  description: "The sandbox clock"
})

/** Answer of POST /v1/test_helpers/chain/transfers. */
export const SandboxChainTransfer = Schema.Struct({
  tx_hash: Text("Transaction hash"),
  matched: Schema.NullOr(
    Schema.Struct({
      object: Schema.Literals(["conversion", "payment_request"]),
      id: Text("Matched object ID")
    })
  ),
  applied: Schema.Boolean.annotate({ description: "false for a duplicate or a late transfer" })
}).annotate({ identifier: "SandboxChainTransfer", description: "How a simulated transfer was handled" })

/** Answer of POST /v1/test_helpers/payouts/fail_next. */
export const SandboxFailNext = Schema.Struct({ count: Count("Payouts that will fail next") }).annotate({
  identifier: "SandboxFailNext",
  description: "Queued payout failures"
})

/** Every resource schema, for documentation and tests. */
export const resources = {
  PaymentIntent,
  PaymentRequest,
  Conversion,
  ConversionEvent,
  PaymentLink,
  Invoice,
  Balance,
  PaymentIntentList,
  PaymentRequestList,
  ConversionList,
  PaymentLinkList,
  InvoiceList,
  ErrorBody,
  WebhookEnvelope,
  ChargeSucceededPayload,
  SandboxBusiness,
  SandboxRate,
  SandboxClock,
  SandboxChainTransfer,
  SandboxFailNext
} as const
