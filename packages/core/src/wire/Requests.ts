import { Schema } from "effect"
import type { CreateConversion } from "../conversion/Conversion.ts"
import { coins, networks } from "../conversion/Quote.ts"
import { GMD, USD } from "../money/Currency.ts"
import * as Decimal from "../money/Decimal.ts"
import { halfUpDiv, pow10 } from "../money/Rounding.ts"
import { DecimalNumber, IntegerNumber, MinorAmount, QueryInteger } from "./Amount.ts"
import {
  AnyUrl,
  clearable,
  Email,
  HTTP_URL_PATTERN,
  HttpUrl,
  IsoTimestamp,
  isHttpUrl,
  Metadata,
  optional,
  Phone,
  Text,
  UpperCaseLiterals,
  withDefault
} from "./Fields.ts"
import * as L from "./Limits.ts"

export { decodeJson, decodeRequest } from "./Decode.ts"

/**
 * One schema per request body of the spec (and decisions §7/§9), decoding the
 * parsed JSON (`Json.parseJson`) to a typed command: amounts in bigint minor
 * units, rates/percentages/quantities as `Decimal`, names as in the spec.
 *
 * Policy for fields the schema does not list (decisions §7: server-owned fields
 * "are never taken from the caller"): they are dropped silently, like unknown
 * fields, and never reach the command. Every limit is in `Limits.ts`.
 *
 * Decode with `decodeRequest(schema, body)`: one `validation_error` naming the
 * first offending field (`param` = its JSON path, e.g. `data.amount`).
 */

// ---------------------------------------------------------------- shared fields

/** Fiat currencies of payment intents, payment links and invoices. */
export const FiatCurrency = Schema.Literals(["GMD", "USD"]).annotate({ description: "GMD or USD" })
export type FiatCurrency = typeof FiatCurrency.Type

/** A fiat amount, 2 decimal places, positive, at most the GMD maximum (USD's is checked per body). */
const FiatAmount = (description: string) => MinorAmount(GMD, { max: L.gmd_amount_max, description })
/** A fiat amount that may be 0. */
const FiatAmountOrZero = (description: string) =>
  MinorAmount(GMD, { max: L.gmd_amount_max, positive: false, description })

/** A stablecoin amount as it arrives on chain: 6 places, positive. */
const ChainAmount = (description: string) =>
  MinorAmount(L.chain_amount_places, { max: L.chain_amount_max, description })

const Name = (description: string) => Text({ max: L.string_length_max, description })

/** The `{data: {...}}` wrapper of payments, payment links and invoices (decisions §7). */
const Wrapped = <S extends Schema.Top>(data: S, description: string) =>
  Schema.Struct({ data }).annotate({ description })

/** A USD amount above the USD maximum, when the body's currency is USD. */
const usdOver = (minor: bigint | undefined): boolean => minor !== undefined && minor > L.usd_amount_max
/** A bound for messages, without trailing zeros: `1000000000n` cents -> `"10000000"`. */
const amountText = (minor: bigint): string => Decimal.format(Decimal.normalize({ units: minor, scale: 2 }))
const usdMaxMessage = `must be at most ${amountText(L.usd_amount_max)} for USD`
/**
 * The USD maximum as the document states it: a `maximum` on `fields` when the
 * body says `currency: "USD"` (each field's own `maximum` is GMD's, the larger).
 */
const usdMaxRule = (fields: Record<string, unknown>) => ({
  if: { properties: { currency: { const: "USD" } }, required: ["currency"] },
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then, a plain document, never awaited
  then: { properties: fields }
})
const usdMax = { maximum: Number(amountText(L.usd_amount_max)) }
/** A body filter's document: the USD maximum of its `amount`. */
const usdAmountMax = { toJsonSchema: () => usdMaxRule({ amount: usdMax }) }

/** The per-currency maximum, for descriptions (the schema's `maximum` is GMD's: the currency is another field). */
const perCurrencyMax = `at most ${amountText(L.gmd_amount_max)} in GMD, ${amountText(L.usd_amount_max)} in USD`

// ---------------------------------------------------------------- POST /v1/payments

export const PaymentNetwork = Schema.Literals(["wave", "afrimoney", "qmoney"]).annotate({
  description: "Mobile money network"
})

/** A Gambian mobile-money wallet number: 7 digits, as for a conversion's payout_method (decisions §2). */
const ACCOUNT_NUMBER = /^\d{7}$/

/** Body `data` of POST /v1/payments. */
export const CreatePaymentIntent = Schema.Struct({
  amount: FiatAmount(`Amount to collect: ${perCurrencyMax}`),
  currency: withDefault(FiatCurrency, "GMD"),
  return_url: optional(AnyUrl("Where the payer is sent after paying")),
  cancel_url: optional(AnyUrl("Where the payer is sent after cancelling")),
  callback_url: optional(HttpUrl("Receives this payment's webhook events")),
  network: optional(PaymentNetwork),
  account_number: optional(
    Text({
      max: L.account_number_length_max,
      description: "Payer's mobile money wallet number: 7 digits, without +220"
    }).check(
      Schema.makeFilter<string>(
        (s) => (ACCOUNT_NUMBER.test(s) ? undefined : "must be exactly 7 digits (the wallet number, without +220)"),
        { toJsonSchema: () => ({ pattern: ACCOUNT_NUMBER.source }) }
      )
    )
  ),
  skip_url_validation: withDefault(Schema.Boolean, false),
  transaction_fee_type: optional(
    Schema.Literals(["business", "customer"]).annotate({ description: "Who bears the fee (default business)" })
  ),
  metadata: optional(Metadata)
}).check(
  Schema.makeFilter(
    (d) => {
      if (d.currency === "USD" && usdOver(d.amount)) return { path: ["amount"], issue: usdMaxMessage }
      if (!d.skip_url_validation) {
        if (d.return_url !== undefined && !isHttpUrl(d.return_url)) {
          return { path: ["return_url"], issue: "must be an absolute http or https URL (or set skip_url_validation)" }
        }
        if (d.cancel_url !== undefined && !isHttpUrl(d.cancel_url)) {
          return { path: ["cancel_url"], issue: "must be an absolute http or https URL (or set skip_url_validation)" }
        }
      }
      return undefined
    },
    {
      // the document's form of the rule above: http(s) redirects unless skip_url_validation is true
      toJsonSchema: () => ({
        allOf: [
          {
            if: { properties: { skip_url_validation: { const: true } }, required: ["skip_url_validation"] },
            else: {
              properties: { return_url: { pattern: HTTP_URL_PATTERN }, cancel_url: { pattern: HTTP_URL_PATTERN } }
            }
          },
          usdMaxRule({ amount: usdMax })
        ]
      })
    }
  )
)
export type CreatePaymentIntent = typeof CreatePaymentIntent.Type
export const CreatePaymentIntentBody = Wrapped(CreatePaymentIntent, "Create a payment intent")

// ---------------------------------------------------------------- POST /v1/minting/offramp

/**
 * Rules the conversion's own validation enforces (decisions §2, with its
 * messages), written into the API description: this filter refuses nothing.
 */
const documents = (jsonSchema: Record<string, unknown>) =>
  Schema.makeFilter<string>(() => undefined, { toJsonSchema: () => jsonSchema })

const PayoutMethod = Schema.Struct({
  network: Schema.Literals(["wave", "afrimoney"]),
  account_number: Text({ max: L.account_number_length_max, description: "7-digit wallet number, without +220" }).check(
    documents({ pattern: ACCOUNT_NUMBER.source })
  ),
  account_name: Text({
    max: L.account_name_length_max,
    description: "Wallet holder name, at least 3 characters after trimming"
  }).check(documents({ minLength: 3, pattern: "^\\s*\\S[\\s\\S]+\\S\\s*$" })) // 3 or more that trimming keeps
}).annotate({ description: "Mobile money wallet receiving the dalasi" })

/** `markup_config`: a fixed USD amount (cents) or a percentage of `base_usd`. */
export const MarkupConfig = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("fixed"),
    value: MinorAmount(USD, {
      positive: false,
      max: L.usd_amount_max,
      description: "Fixed markup in USD (0 or more), at most 10% of the converted USD amount by default"
    })
  }),
  Schema.Struct({
    type: Schema.Literal("percentage"),
    value: DecimalNumber(L.percent_places_max, {
      min: 0,
      max: 100,
      description:
        "Markup as a percentage of the converted USD amount (0 or more); the markup share may be at most 10% of it (the deployment's markup_percent_max, default 10)"
    })
  })
]).annotate({ description: "Reseller markup: {type: fixed, value: USD} or {type: percentage, value: percent}" })

/** Body of POST /v1/minting/offramp (flat). Decodes to the engine's `CreateConversion`. */
export const CreateConversionBody = Schema.Struct({
  gmd_amount: optional(
    MinorAmount(GMD, {
      max: L.gmd_amount_max,
      description: `Dalasi wanted, at least 400; its pay_amount at the current rate must be at most ${amountText(L.usd_amount_max)} USD`
    })
  ),
  pay_amount: optional(
    MinorAmount(USD, {
      max: L.usd_amount_max,
      description: "Stablecoin amount to send, USD: at least 25 on TRC20, 5 on ARC; its dalasi at most 1,000,000,000"
    })
  ),
  pay_currency: optional(Schema.Literals(coins)),
  network: optional(UpperCaseLiterals(networks)),
  destination: optional(Schema.Literals(["service_balance", "mobile_money"])),
  payout_method: optional(PayoutMethod),
  callback_url: optional(HttpUrl("Receives this conversion's updates")),
  markup_config: optional(MarkupConfig)
}).annotate({ description: "Create a stablecoin-to-dalasi conversion. Send exactly one of gmd_amount and pay_amount." })
// Compile-time proof that the decoded body is the engine's command.
const _conversionIsCommand = (c: typeof CreateConversionBody.Type): CreateConversion => c
void _conversionIsCommand

// ---------------------------------------------------------------- POST /v1/minting/intents

/** Body of POST /v1/minting/intents (flat). */
export const CreatePaymentRequestBody = Schema.Struct({
  amount: FiatAmount(
    `Amount asked for; GMD is converted to USD at the current rate. In USD (given or converted): at least 5, at most ${amountText(L.usd_amount_max)}`
  ),
  currency: withDefault(Schema.Literals(["USD", "GMD"]), "USD"),
  metadata: optional(Metadata),
  callback_url: optional(HttpUrl("Receives charge.succeeded for this request")),
  expires_at: optional(IsoTimestamp("Deadline"))
})
  .check(
    Schema.makeFilter(
      (d) => (d.currency === "USD" && usdOver(d.amount) ? { path: ["amount"], issue: usdMaxMessage } : undefined),
      usdAmountMax
    )
  )
  .annotate({ description: "Create a stablecoin payment request" })
export type CreatePaymentRequest = typeof CreatePaymentRequestBody.Type

// ---------------------------------------------------------------- POST /v1/payment-links

/** Body `data` of POST /v1/payment-links. `amount` is required; `currency` defaults to GMD. */
export const CreatePaymentLink = Schema.Struct({
  title: optional(Name("Shown on the payment page")),
  amount: FiatAmount(`Amount to collect: ${perCurrencyMax}`),
  currency: withDefault(FiatCurrency, "GMD"),
  description: optional(
    Text({ max: L.description_length_max, multiline: true, description: "Shown on the payment page" })
  ),
  metadata: optional(Metadata)
}).check(
  Schema.makeFilter(
    (d) => (d.currency === "USD" && usdOver(d.amount) ? { path: ["amount"], issue: usdMaxMessage } : undefined),
    usdAmountMax
  )
)
export type CreatePaymentLink = typeof CreatePaymentLink.Type
export const CreatePaymentLinkBody = Wrapped(CreatePaymentLink, "Create a payment link")

// ---------------------------------------------------------------- invoices

/** A line item; `total_price` is computed by the service and ignored when sent. */
export const LineItem = Schema.Struct({
  item: Text({ max: L.line_item_length_max, description: "Product SKU or ID" }),
  quantity: DecimalNumber(L.quantity_places_max, {
    min: 0,
    exclusiveMin: true,
    max: L.quantity_max,
    description: "Quantity, positive"
  }),
  unit_price: FiatAmount(`Price of one unit: ${perCurrencyMax}; the line totals add up to at most as much`)
})
export type LineItem = typeof LineItem.Type

/** `discount`: a fixed amount (minor units) or a percentage in (0, 100]. */
export const Discount = Schema.Union([
  Schema.Struct({ type: Schema.Literal("fixed"), amount: FiatAmount(`Fixed discount: ${perCurrencyMax}`) }),
  Schema.Struct({
    type: Schema.Literal("percentage"),
    amount: DecimalNumber(L.percent_places_max, {
      min: 0,
      exclusiveMin: true,
      max: 100,
      description: "Percentage discount"
    })
  })
]).annotate({ description: "Discount: {type: fixed, amount} or {type: percentage, amount}" })
export type Discount = typeof Discount.Type

const InvoiceNumber = Schema.Union([
  Text({ max: L.invoice_number_length_max, description: "Custom invoice number" }),
  IntegerNumber({ min: 1, max: L.invoice_number_max, description: "Custom invoice number" })
]).annotate({
  description:
    'Custom invoice number, unique in the business and mode (one another invoice has is a validation_error; 5 and "5" are one number). Without it, a published invoice takes the next number of the sequence not already taken.'
})

/** The invoice parameters an update may clear with `null` (the rest: `amount`, `line_items`, `currency`). */
/** Decisions §6: any non-empty string (`min` 0 on an update, where `""` means none). */
const customerId = (min: number) =>
  Text({ max: L.customer_length_max, opaque: true, min, description: "Your customer ID: any non-empty string" })

const invoiceClearable = {
  customer: customerId(1),
  customer_email: Email,
  customer_name: Name("Customer name"),
  customer_phone: Phone,
  discount: Discount,
  due_date: IsoTimestamp("Due date"),
  notes: Text({ max: L.notes_length_max, multiline: true, description: "Printed on the invoice" }),
  invoice_number: InvoiceNumber,
  callback_url: HttpUrl("Receives invoice status updates"),
  sub_account: Name("Sub-account for split payments")
}
const c = invoiceClearable // short, for the two field lists below

/** What `null` means on an update's `amount`, `line_items` and `currency`, which an invoice cannot be without. */
const keptOnUpdate = "null or absent leaves it as it is"

const invoiceAmountFields = (nullMeans?: string) => ({
  amount: optional(
    FiatAmountOrZero(
      `Without line items: the amount before any discount (the invoice's sub_total; its amount is this less the discount), greater than 0, ${perCurrencyMax}; ignored with line items`
    ),
    nullMeans
  ),
  line_items: optional(
    Schema.Array(LineItem)
      .check(Schema.isMaxLength(L.line_items_max, { message: `must have at most ${L.line_items_max} items` }))
      .annotate({ description: "The invoice's lines; its sub_total is the sum of their total_price" }),
    nullMeans
  )
})

const invoiceFields = {
  ...invoiceAmountFields(),
  customer: optional(c.customer),
  customer_email: optional(c.customer_email),
  customer_name: optional(c.customer_name),
  customer_phone: optional(c.customer_phone),
  discount: optional(c.discount),
  due_date: optional(c.due_date),
  notes: optional(c.notes),
  invoice_number: optional(c.invoice_number),
  callback_url: optional(c.callback_url),
  sub_account: optional(c.sub_account)
}

/** `sum(half_up_butut(quantity * unit_price))`, as §6 computes it. */
const lineTotal = (items: ReadonlyArray<LineItem>): bigint =>
  items.reduce((sum, li) => sum + halfUpDiv(li.quantity.units * li.unit_price, pow10(li.quantity.scale)), 0n)

interface InvoiceAmounts {
  readonly currency?: FiatCurrency
  readonly amount?: bigint
  readonly line_items?: ReadonlyArray<LineItem>
  readonly discount?: Discount | null
}

/** The document's part of `invoiceAmountProblem`: the USD maximums (what the line totals add up to is not expressible). */
const invoiceUsdMax = {
  toJsonSchema: () =>
    usdMaxRule({
      amount: usdMax,
      discount: { properties: { amount: usdMax } },
      line_items: { items: { properties: { unit_price: usdMax } } }
    })
}

/**
 * The document's part of Create Invoice's own rules: `amount` (> 0) without
 * line items, `customer_email` and `customer_name` without `customer` (null
 * counts as absent), and the USD maximums.
 */
const invoiceCreateRules = {
  toJsonSchema: () => ({
    allOf: [
      {
        if: { properties: { line_items: { type: "array", minItems: 1 } }, required: ["line_items"] },
        else: { required: ["amount"], properties: { amount: { type: "number", exclusiveMinimum: 0 } } }
      },
      {
        if: { properties: { customer: { type: "string" } }, required: ["customer"] },
        else: {
          required: ["customer_email", "customer_name"],
          properties: { customer_email: { type: "string" }, customer_name: { type: "string" } }
        }
      },
      invoiceUsdMax.toJsonSchema()
    ]
  })
}

/** Amount ranges that depend on the currency and on the line items. */
const invoiceAmountProblem = (d: InvoiceAmounts) => {
  const max = L.amountMax(d.currency ?? "GMD")
  const maxText = `must be at most ${amountText(max)}${d.currency === "USD" ? " for USD" : ""}`
  if (d.amount !== undefined && d.amount > max) return { path: ["amount"], issue: maxText }
  const items = d.line_items ?? []
  for (const [i, li] of items.entries()) {
    if (li.unit_price > max) return { path: ["line_items", i, "unit_price"], issue: maxText }
  }
  if (items.length > 0 && lineTotal(items) > max) {
    return { path: ["line_items"], issue: `must add up to at most ${amountText(max)}` }
  }
  if (d.discount?.type === "fixed" && d.discount.amount > max) return { path: ["discount", "amount"], issue: maxText }
  return undefined
}

/** Body `data` of Create Invoice and Create Draft Invoice (same parameters). */
export const CreateInvoice = Schema.Struct({
  ...invoiceFields,
  currency: withDefault(FiatCurrency, "GMD")
}).check(
  Schema.makeFilter((d) => {
    const hasItems = d.line_items !== undefined && d.line_items.length > 0
    if (!hasItems && (d.amount === undefined || d.amount === 0n)) {
      return d.amount === undefined
        ? { path: ["amount"], issue: "is required when there are no line_items" }
        : { path: ["amount"], issue: "must be greater than 0 when there are no line_items" }
    }
    if (d.customer === undefined) {
      if (d.customer_email === undefined)
        return { path: ["customer_email"], issue: "is required when customer is not given" }
      if (d.customer_name === undefined)
        return { path: ["customer_name"], issue: "is required when customer is not given" }
    }
    return invoiceAmountProblem(d)
  }, invoiceCreateRules)
)
export type CreateInvoice = typeof CreateInvoice.Type
export const CreateInvoiceBody = Wrapped(
  CreateInvoice,
  "Create an invoice (or a draft). Without line_items, amount is required; without customer, customer_email and customer_name are"
)

/**
 * Body `data` of Update Invoice: the create parameters, all optional, no
 * defaults. Absent leaves a field as it is; `null` clears the fields an
 * invoice may be without (a discount, a due date, notes, ...; the rules of
 * creation are checked again on the result). `null` on `amount`, `line_items`
 * or `currency` leaves them as they are.
 */
export const UpdateInvoice = Schema.Struct({
  ...invoiceAmountFields(keptOnUpdate),
  currency: optional(FiatCurrency, keptOnUpdate),
  // "" is how an invoice without a customer id shows `customer`: sent back, it changes nothing (the core
  // refuses it on an invoice that has a customer id)
  customer: clearable(
    customerId(0).annotate({
      description:
        'Your customer ID: any non-empty string; null removes it. "" (how an invoice without one shows it) changes nothing on such an invoice and is refused on one that has an ID'
    })
  ),
  customer_email: clearable(c.customer_email),
  customer_name: clearable(c.customer_name),
  customer_phone: clearable(c.customer_phone),
  discount: clearable(c.discount),
  due_date: clearable(c.due_date),
  notes: clearable(c.notes),
  invoice_number: clearable(c.invoice_number),
  callback_url: clearable(c.callback_url),
  sub_account: clearable(c.sub_account)
}).check(Schema.makeFilter((d) => invoiceAmountProblem(d), invoiceUsdMax))
export type UpdateInvoice = typeof UpdateInvoice.Type
export const UpdateInvoiceBody = Wrapped(UpdateInvoice, "Update an invoice")

/** The core's input of a creation from its decoded `data`: `due_date` as the caller wrote it. */
export const createInvoiceInput = (d: CreateInvoice) => ({ ...d, due_date: d.due_date?.text })

/**
 * The core's input of an update from its decoded `data`: `due_date` as
 * written, `null` (clear) kept.
 */
export const updateInvoiceInput = (d: UpdateInvoice) => ({
  ...d,
  due_date: d.due_date === null ? null : d.due_date?.text
})

// ---------------------------------------------------------------- lists

/** Query of every list endpoint: `limit` 1..100 (default 10), `offset` >= 0 (default 0). Values are query strings. */
export const ListQuery = Schema.Struct({
  limit: withDefault(
    QueryInteger({ min: 1, max: L.page_limit_max, description: `Page size, 1 to ${L.page_limit_max}` }),
    L.page_limit_default
  ),
  offset: withDefault(QueryInteger({ min: 0, max: L.page_offset_max, description: "Objects to skip" }), 0)
})
export type ListQuery = typeof ListQuery.Type

// ---------------------------------------------------------------- sandbox helpers (decisions §9)

/** POST /v1/test_helpers/businesses */
export const CreateBusinessBody = Schema.Struct({
  name: optional(Name("Business name")),
  webhook_url: optional(HttpUrl("Receives the business's webhooks"))
})
export type CreateBusiness = typeof CreateBusinessBody.Type

/** POST /v1/test_helpers/rates: the USD->GMD rate (GMD per USD). */
export const SetRateBody = Schema.Struct({
  rate: DecimalNumber(L.rate_places_max, { min: 0, exclusiveMin: true, max: L.rate_max, description: "GMD per USD" })
})
export type SetRate = typeof SetRateBody.Type

/** POST /v1/test_helpers/clock/advance */
export const AdvanceClockBody = Schema.Struct({
  seconds: IntegerNumber({
    min: 1,
    max: L.clock_advance_seconds_max,
    description: "Seconds to move the sandbox clock forward"
  })
})
export type AdvanceClock = typeof AdvanceClockBody.Type

/** POST /v1/test_helpers/chain/transfers: a confirmed transfer arrives. */
export const ChainTransferBody = Schema.Struct({
  network: UpperCaseLiterals(networks),
  currency: Schema.Literals(coins),
  to_address: Text({ max: L.address_length_max, description: "Receiving address" }),
  amount: ChainAmount("Amount transferred, USD units of the coin"),
  tx_hash: optional(
    Text({ max: L.tx_hash_length_max, description: "Transaction hash (generated when absent)" }).check(
      Schema.makeFilter<string>((s) => (/\s/.test(s) ? "must not contain spaces" : undefined))
    )
  ),
  log_index: optional(IntegerNumber({ min: 0, max: L.log_index_max, description: "Log index in the transaction" }))
})
export type ChainTransferRequest = typeof ChainTransferBody.Type

/** POST /v1/test_helpers/minting/intents/{id}/pay: a payer pays through the hosted page. */
export const PayPaymentRequestBody = Schema.Struct({
  amount: ChainAmount("Amount paid, USD units of the coin"),
  currency: Schema.Literals(coins),
  network: UpperCaseLiterals(networks)
})
export type PayPaymentRequest = typeof PayPaymentRequestBody.Type

/** POST /v1/test_helpers/payouts/fail_next (0 clears). */
export const FailNextPayoutsBody = Schema.Struct({
  count: IntegerNumber({ min: 0, max: L.payouts_fail_next_max, description: "How many of the next payouts fail" })
})
export type FailNextPayouts = typeof FailNextPayoutsBody.Type

/** POST /v1/test_helpers/payments/{id}/fail: what the processor says, shown as the intent's `failure_reason`. */
export const FailPaymentBody = Schema.Struct({
  reason: optional(Name("The processor's reason, shown as failure_reason"))
})
export type FailPayment = typeof FailPaymentBody.Type

/** Every request schema by operation, for documentation and tests. */
export const requests = {
  "POST /v1/payments": CreatePaymentIntentBody,
  "POST /v1/minting/offramp": CreateConversionBody,
  "POST /v1/minting/intents": CreatePaymentRequestBody,
  "POST /v1/payment-links": CreatePaymentLinkBody,
  "POST /v1/invoices": CreateInvoiceBody,
  "POST /v1/invoices/draft": CreateInvoiceBody,
  "PUT /v1/invoices/{id}": UpdateInvoiceBody,
  "GET (lists)": ListQuery,
  "POST /v1/test_helpers/businesses": CreateBusinessBody,
  "POST /v1/test_helpers/rates": SetRateBody,
  "POST /v1/test_helpers/clock/advance": AdvanceClockBody,
  "POST /v1/test_helpers/chain/transfers": ChainTransferBody,
  "POST /v1/test_helpers/minting/intents/{id}/pay": PayPaymentRequestBody,
  "POST /v1/test_helpers/payments/{id}/fail": FailPaymentBody,
  "POST /v1/test_helpers/payouts/fail_next": FailNextPayoutsBody
} as const
