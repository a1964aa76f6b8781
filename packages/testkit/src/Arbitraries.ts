/**
 * fast-check arbitraries for xaalis: every request body of the specification
 * (the wire JSON a client sends, numbers as JSON numbers) and every resource the
 * API returns (the wire shapes of `Resources` in @xaalis/core).
 *
 * ```ts
 * import { Arbitraries } from "@xaalis/testkit"
 * fc.assert(fc.property(Arbitraries.createConversionBody, (body) => { … }))
 * ```
 *
 * Conventions:
 * - Request arbitraries are valid by construction: `decodeRequest(schema, body)`
 *   succeeds, and (unless said otherwise) the decoded command also passes the
 *   domain rules at any USD->GMD rate between 20 and 100 (conversion minimums,
 *   markup limit, 5 USD payment-request minimum, discount <= sub_total, 7-digit
 *   wallets…); timestamps lie in 2020-2099, so an `expires_at` is in the future only
 *   for a clock before it. Optional fields are absent or present, never `undefined`.
 * - `invalid*` arbitraries are one valid body with exactly one field broken
 *   (too many decimal places, a negative or zero amount, a string for a number,
 *   an unknown enum value, a missing required field): decoding fails with one
 *   `validation_error`.
 * - Resources are built from valid domain states (the core's state machines,
 *   driven through random transitions) presented by the engine's presenters, so
 *   they are the objects a real engine returns; the `*State` arbitraries give
 *   the domain states themselves.
 */

import {
  Conversion,
  Decimal,
  DomainError,
  decodeRequest,
  Errors,
  Instant,
  Invoice,
  PaymentIntent,
  PaymentLink,
  PaymentRequest,
  Quote,
  Reference,
  Requests,
  type Resources
} from "@xaalis/core"
import { Present, PresentBilling } from "@xaalis/engine"
import { Result } from "effect"
import fc from "fast-check"

// ---------------------------------------------------------------------------
// Building blocks

/** A wire JSON object: keys whose value is `undefined` are left out. */
type Wire = Record<string, unknown>

const compact = (o: Record<string, unknown>): Wire => {
  const out: Wire = {}
  for (const [k, v] of Object.entries(o)) if (v !== undefined) out[k] = v
  return out
}

const maybe = <T>(arb: fc.Arbitrary<T>, freq = 1): fc.Arbitrary<T | undefined> =>
  fc.option(arb, { nil: undefined, freq })

/** The JSON number of `minor` units at `scale` places (exact: amounts stay within 15 digits). */
export const jsonNumber = (minor: bigint, scale: number): number => Number(Decimal.formatUnits(minor, scale))

/** A positive amount in minor units, as the JSON number a client sends (`12.5` for 1250n at scale 2). */
export const amountNumber = (min: bigint, max: bigint, scale = 2): fc.Arbitrary<number> =>
  fc.bigInt({ min, max }).map((minor) => jsonNumber(minor, scale))

/** Epoch milliseconds between 2020 and 2099 (four-digit years, whole milliseconds). */
export const instant: fc.Arbitrary<number> = fc.integer({ min: 1_577_836_800_000, max: 4_102_444_799_000 })

const ALPHA = "abcdefghijklmnopqrstuvwxyz"
const TEXT_CHARS = [...`${ALPHA}ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_.,'&`, "ë", "ñ", "à", "é", "✓", "Ŋ"]

/**
 * Single-line text of `min` to `max` characters: starts with a letter, never ends
 * with a space (so it has at least `min` characters after trimming), no control
 * characters, valid Unicode.
 */
export const text = (max = 24, min = 1): fc.Arbitrary<string> =>
  fc
    .tuple(
      fc.constantFrom(...ALPHA),
      fc.array(fc.constantFrom(...TEXT_CHARS), { minLength: Math.max(0, min - 1), maxLength: Math.max(0, max - 1) })
    )
    .map(([first, rest]) => {
      const s = (first + rest.join("")).trimEnd()
      return s.length >= min ? s : s + "x".repeat(min - s.length)
    })

const word = (min = 1, max = 10): fc.Arbitrary<string> =>
  fc.array(fc.constantFrom(...ALPHA), { minLength: min, maxLength: max }).map((cs) => cs.join(""))

/** An absolute https URL on an example domain. */
export const httpsUrl: fc.Arbitrary<string> = fc
  .tuple(word(3, 10), fc.array(word(1, 8), { maxLength: 3 }))
  .map(([host, path]) => `https://${host}.example/${path.join("/")}`)

export const email: fc.Arbitrary<string> = fc
  .tuple(word(1, 10), word(2, 10), fc.constantFrom("com", "gm", "org"))
  .map(([local, domain, tld]) => `${local}@${domain}.${tld}`)

/** A Gambian phone number as typed: `+220 7123456`. */
export const phone: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom("+220 ", "+220", "00220 ", ""), fc.stringMatching(/^[2-9]\d{6}$/))
  .map(([prefix, n]) => `${prefix}${n}`)

/** Exactly 7 digits: a Wave or Afrimoney wallet number. */
export const walletNumber: fc.Arbitrary<string> = fc.stringMatching(/^\d{7}$/)

/** Free-form metadata: a small JSON object, as the caller sends it. */
export const metadata: fc.Arbitrary<Wire> = fc
  .dictionary(
    word(1, 12).filter((k) => k !== "__proto__"),
    fc.jsonValue({ maxDepth: 2, depthSize: "small" }),
    {
      maxKeys: 5,
      noNullPrototype: true
    }
  )
  .map((m) => JSON.parse(JSON.stringify(m)) as Wire)
  .filter((m) => JSON.stringify(m).length <= 4_000)

/** An ISO 8601 date-time with `Z` or an offset, or a `YYYY-MM-DD` date. */
export const isoTimestamp: fc.Arbitrary<string> = fc.oneof(
  instant.map(Instant.toIso),
  instant.map(Instant.toIsoDate),
  fc
    .tuple(instant, fc.constantFrom("+00:00", "+01:00", "-05:30", "Z"))
    .map(([ms, zone]) => `${Instant.toIso(ms).slice(0, 19)}${zone}`)
)

/** A chain transaction hash: `0x` and 64 lowercase hex digits. */
export const txHash: fc.Arbitrary<string> = fc.stringMatching(/^[0-9a-f]{64}$/).map((h) => `0x${h}`)

/** A deposit address of the sandbox's shapes (Tron base58-like or EVM hex). */
export const chainAddress: fc.Arbitrary<string> = fc.oneof(
  fc.stringMatching(/^T[1-9A-HJ-NP-Za-km-z]{33}$/),
  fc.stringMatching(/^0x[0-9a-f]{40}$/)
)

/** A network and a coin it carries (ARC carries USDC only). */
export const networkAndCoin: fc.Arbitrary<{ readonly network: Quote.Network; readonly coin: Quote.Coin }> =
  fc.constantFrom(
    { network: "TRC20", coin: "USDT" },
    { network: "TRC20", coin: "USDC" },
    { network: "ARC", coin: "USDC" }
  )

// ---------------------------------------------------------------------------
// Domain parameters (shared with the finance laws)

/** A USD->GMD rate between `min` and `max` GMD per USD, with up to 4 decimal places. */
export const rate = (min = 1, max = 100): fc.Arbitrary<Decimal.Decimal> =>
  fc
    .tuple(fc.integer({ min: min * 10_000, max: max * 10_000 }), fc.integer({ min: 0, max: 4 }))
    .map(([units, scale]) => Decimal.normalize(Decimal.make(BigInt(units) / 10n ** BigInt(4 - scale), scale)))
    .filter((r) => r.units > 0n && Decimal.compare(r, Decimal.make(BigInt(min), 0)) >= 0)

export const network: fc.Arbitrary<Quote.Network> = fc.constantFrom("TRC20", "ARC")

/** No markup, a fixed USD markup (cents) or a percentage of `base_usd` (up to 10%, two places). */
export const markup: fc.Arbitrary<Quote.Markup | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.bigInt({ min: 0n, max: 500n }).map((value): Quote.Markup => ({ type: "fixed", value })),
  fc
    .integer({ min: 0, max: 1000 })
    .map((v): Quote.Markup => ({ type: "percentage", value: Decimal.make(BigInt(v), 2) }))
)

/** The default conversion configuration with a service fee percentage of 0% to 5%. */
export const conversionConfig: fc.Arbitrary<Quote.ConversionConfig> = fc
  .integer({ min: 0, max: 500 })
  .map((v) => ({ ...Quote.defaultConversionConfig, fee_percent: Decimal.make(BigInt(v), 2) }))

// ---------------------------------------------------------------------------
// Request bodies

const fiatCurrency = fc.constantFrom("GMD", "USD")

/** `data` of POST /v1/payments. */
const paymentIntentData: fc.Arbitrary<Wire> = fc
  .record({
    currency: maybe(fiatCurrency),
    amount: fc.bigInt({ min: 1n, max: 100_000_000n }),
    skip_url_validation: maybe(fc.boolean()),
    return_url: maybe(fc.boolean()),
    cancel_url: maybe(fc.boolean()),
    callback_url: maybe(httpsUrl),
    network: maybe(fc.constantFrom("wave", "afrimoney", "qmoney")),
    account_number: maybe(walletNumber),
    transaction_fee_type: maybe(fc.constantFrom("business", "customer")),
    metadata: maybe(metadata)
  })
  .chain((d) => {
    const url = d.skip_url_validation === true ? fc.oneof(httpsUrl, fc.constant("myapp://payment/done")) : httpsUrl
    return fc.tuple(fc.constant(d), url, url)
  })
  .map(([d, ret, cancel]) =>
    compact({
      ...d,
      amount: jsonNumber(d.amount, 2),
      return_url: d.return_url === true ? ret : undefined,
      cancel_url: d.cancel_url === true ? cancel : undefined
    })
  )

/** POST /v1/payments: `{data: {...}}`. */
export const createPaymentIntentBody: fc.Arbitrary<{ readonly data: Wire }> = paymentIntentData.map((data) => ({
  data
}))

/** `payout_method` of a mobile-money conversion. */
export const payoutMethod: fc.Arbitrary<Wire> = fc.record(
  {
    network: fc.constantFrom("wave", "afrimoney"),
    account_number: walletNumber,
    account_name: text(30, 3)
  },
  { noNullPrototype: true }
)

/**
 * `markup_config` within the default limit (10% of `base_usd`) for the amounts
 * below: fixed up to 2.00 USD, or up to 9.5% (a 10% share can round above the limit).
 */
export const markupConfig: fc.Arbitrary<Wire> = fc.oneof(
  amountNumber(1n, 200n).map((value) => ({ type: "fixed", value })),
  fc.integer({ min: 1, max: 950 }).map((v) => ({ type: "percentage", value: v / 100 }))
)

const conversionCommon = fc.record({
  route: networkAndCoin,
  spellNetwork: fc.boolean(),
  sendCoin: fc.boolean(),
  mobile: fc.boolean(),
  payout_method: payoutMethod,
  callback_url: maybe(httpsUrl),
  markup_config: maybe(markupConfig, 2),
  spelling: fc.nat()
})

const conversionBody = (amount: fc.Arbitrary<Wire>): fc.Arbitrary<Wire> =>
  fc.tuple(amount, conversionCommon).map(([a, c]) => {
    const spellings = [c.route.network, c.route.network.toLowerCase()]
    const defaults = c.route.network === "TRC20" ? c.route.coin === "USDT" : c.route.coin === "USDC"
    return compact({
      ...a,
      network: c.spellNetwork || c.route.network === "ARC" ? spellings[c.spelling % spellings.length] : undefined,
      // the default coin of the network may be left out
      pay_currency: c.sendCoin || !defaults ? c.route.coin : undefined,
      destination: c.mobile ? "mobile_money" : c.spelling % 3 === 0 ? "service_balance" : undefined,
      payout_method: c.mobile ? c.payout_method : undefined,
      callback_url: c.callback_url,
      markup_config: c.markup_config
    })
  })

/** POST /v1/minting/offramp in gmd mode: `gmd_amount` 3,000 to 1,000,000 GMD (valid at rates 20..100). */
export const createConversionGmdBody: fc.Arbitrary<Wire> = conversionBody(
  amountNumber(300_000n, 100_000_000n).map((gmd_amount) => ({ gmd_amount }))
)

/** POST /v1/minting/offramp in pay mode: `pay_amount` 30 to 10,000 USD (valid at rates 20..100). */
export const createConversionPayBody: fc.Arbitrary<Wire> = conversionBody(
  amountNumber(3_000n, 1_000_000n).map((pay_amount) => ({ pay_amount }))
)

/** POST /v1/minting/offramp (flat), either mode, balance or mobile money, with or without markup. */
export const createConversionBody: fc.Arbitrary<Wire> = fc.oneof(createConversionGmdBody, createConversionPayBody)

/**
 * Conversion bodies that decode but that the domain refuses with
 * `validation_error`: both or neither amount, ARC with USDT, mobile money
 * without a wallet or with a wallet number that is not 7 digits, a wallet for
 * the balance, or an amount below the minimums.
 */
export const domainInvalidCreateConversionBody: fc.Arbitrary<Wire> = fc.oneof(
  fc.tuple(createConversionGmdBody, amountNumber(3_000n, 100_000n)).map(([b, pay_amount]) => ({ ...b, pay_amount })),
  createConversionGmdBody.map(({ gmd_amount: _, ...rest }) => rest),
  createConversionGmdBody.map((b) => ({ ...b, network: "ARC", pay_currency: "USDT" })),
  createConversionGmdBody.map(({ payout_method: _, ...rest }) => ({ ...rest, destination: "mobile_money" })),
  fc
    .tuple(createConversionGmdBody, payoutMethod, fc.stringMatching(/^\d{1,6}$|^\d{8,12}$/))
    .map(([b, w, n]) => ({ ...b, destination: "mobile_money", payout_method: { ...w, account_number: n } })),
  fc
    .tuple(createConversionGmdBody, payoutMethod)
    .map(([b, w]) => ({ ...b, destination: "service_balance", payout_method: w })),
  amountNumber(100n, 39_999n).map((gmd_amount) => ({ gmd_amount })),
  amountNumber(1n, 499n).map((pay_amount) => ({ pay_amount, network: "ARC" }))
)

/** POST /v1/minting/intents (flat): at least 5 USD, or at least 500 GMD (5 USD at rates up to 100). */
export const createPaymentRequestBody: fc.Arbitrary<Wire> = fc
  .record({
    currency: fc.constantFrom(undefined, "USD", "GMD"),
    usd: fc.bigInt({ min: 500n, max: 100_000_000n }),
    gmd: fc.bigInt({ min: 50_000n, max: 10_000_000_000n }),
    metadata: maybe(metadata),
    callback_url: maybe(httpsUrl),
    expires_at: maybe(isoTimestamp)
  })
  .map((r) =>
    compact({
      amount: jsonNumber(r.currency === "GMD" ? r.gmd : r.usd, 2),
      currency: r.currency,
      metadata: r.metadata,
      callback_url: r.callback_url,
      expires_at: r.expires_at
    })
  )

/** `data` of POST /v1/payment-links. */
const paymentLinkData: fc.Arbitrary<Wire> = fc
  .record({
    title: maybe(text(40)),
    amount: fc.bigInt({ min: 1n, max: 100_000_000n }),
    currency: maybe(fiatCurrency),
    description: maybe(text(120)),
    metadata: maybe(metadata)
  })
  .map((d) => compact({ ...d, amount: jsonNumber(d.amount, 2) }))

/** POST /v1/payment-links: `{data: {...}}`. */
export const createPaymentLinkBody: fc.Arbitrary<{ readonly data: Wire }> = paymentLinkData.map((data) => ({ data }))

/** A line item: quantity up to 4 places (0.0001 to 100), unit price 0.01 to 10,000.00. */
export const lineItem: fc.Arbitrary<{ item: string; quantity: number; unit_price: number }> = fc
  .record({
    item: text(20),
    quantity: fc.integer({ min: 1, max: 1_000_000 }),
    unit_price: fc.bigInt({ min: 1n, max: 1_000_000n })
  })
  .map((li) => ({
    item: li.item,
    quantity: jsonNumber(BigInt(li.quantity), 4),
    unit_price: jsonNumber(li.unit_price, 2)
  }))

/** `sum(half_up(quantity * unit_price))` of wire line items, in minor units (as decisions §6). */
const subTotalOf = (items: ReadonlyArray<{ quantity: number; unit_price: number }>): bigint =>
  items.reduce((sum, li) => {
    const q = Decimal.fromNumber(li.quantity) ?? Decimal.zero
    const p = Decimal.toScale(Decimal.fromNumber(li.unit_price) ?? Decimal.zero, 2, "floor")
    return sum + Invoice.Totals.lineTotal(q, p)
  }, 0n)

const invoiceData: fc.Arbitrary<Wire> = fc
  .record({
    currency: maybe(fiatCurrency),
    amount: fc.bigInt({ min: 1n, max: 100_000_000n }),
    line_items: fc.option(fc.array(lineItem, { minLength: 1, maxLength: 8 }), { nil: undefined }),
    zeroAmountWithItems: fc.boolean(),
    customer: maybe(text(40)),
    customer_email: email,
    customer_name: text(40),
    sendContact: fc.boolean(),
    customer_phone: maybe(phone),
    discount: fc.oneof(
      fc.constant(undefined),
      fc.integer({ min: 1, max: 1_000_000 }).map((v) => ({ type: "percentage" as const, permyriad: v })),
      fc.integer({ min: 1, max: 10_000 }).map((v) => ({ type: "fixed" as const, permyriad: v }))
    ),
    due_date: maybe(isoTimestamp),
    notes: maybe(text(200)),
    invoice_number: maybe(fc.oneof(text(20), fc.integer({ min: 1, max: 1_000_000_000 }))),
    callback_url: maybe(httpsUrl),
    sub_account: maybe(text(20))
  })
  .map((d) => {
    const items = d.line_items
    const sub_total = items === undefined ? d.amount : subTotalOf(items)
    // a fixed discount is a share of sub_total, so it never exceeds it
    const discount =
      d.discount === undefined
        ? undefined
        : d.discount.type === "percentage"
          ? { type: "percentage", amount: jsonNumber(BigInt(d.discount.permyriad), 4) }
          : sub_total * BigInt(d.discount.permyriad) >= 10_000n
            ? { type: "fixed", amount: jsonNumber((sub_total * BigInt(d.discount.permyriad)) / 10_000n, 2) }
            : undefined
    const contact = d.customer === undefined || d.sendContact
    return compact({
      currency: d.currency,
      // with line items the amount is computed: absent, or 0 as the spec says
      amount: items === undefined ? jsonNumber(d.amount, 2) : d.zeroAmountWithItems ? 0 : undefined,
      line_items: items,
      customer: d.customer,
      customer_email: contact ? d.customer_email : undefined,
      customer_name: contact ? d.customer_name : undefined,
      customer_phone: d.customer_phone,
      discount,
      due_date: d.due_date,
      notes: d.notes,
      invoice_number: d.invoice_number,
      callback_url: d.callback_url,
      sub_account: d.sub_account
    })
  })

/**
 * POST /v1/invoices and POST /v1/invoices/draft (same parameters): an amount or
 * line items (then `amount` absent or 0), an optional discount (a fixed one never
 * above sub_total), a customer ID or an email and a name.
 */
export const createInvoiceBody: fc.Arbitrary<{ readonly data: Wire }> = invoiceData.map((data) => ({ data }))

/** POST /v1/invoices/draft: the same parameters as Create Invoice. */
export const createDraftInvoiceBody: fc.Arbitrary<{ readonly data: Wire }> = createInvoiceBody

/**
 * PUT /v1/invoices/{id}: any subset of the create parameters. Wire-valid; whether
 * the domain accepts it depends on the invoice it is applied to (a fixed
 * discount above the new sub_total, line items removed without an amount…).
 */
export const updateInvoiceBody: fc.Arbitrary<{ readonly data: Wire }> = fc
  .tuple(invoiceData, fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }))
  .map(([full, keep]) => {
    const data: Wire = {}
    for (const [i, [k, v]] of Object.entries(full).entries()) if (keep[i % keep.length] === true) data[k] = v
    return { data }
  })

/** The query of a list endpoint, as query-string values: `limit` 1..100, `offset` >= 0. */
export const listQuery: fc.Arbitrary<Record<string, string>> = fc
  .record({
    limit: maybe(fc.integer({ min: 1, max: 100 })),
    offset: maybe(fc.integer({ min: 0, max: 100_000 }))
  })
  .map((q) => {
    const out: Record<string, string> = {}
    if (q.limit !== undefined) out.limit = String(q.limit)
    if (q.offset !== undefined) out.offset = String(q.offset)
    return out
  })

/** POST /v1/test_helpers/chain/transfers: up to 100,000 USD with 6 places. */
export const chainTransferBody: fc.Arbitrary<Wire> = fc
  .record({
    route: networkAndCoin,
    spelling: fc.nat(2),
    to_address: chainAddress,
    amount: fc.bigInt({ min: 1n, max: 100_000_000_000n }),
    tx_hash: maybe(txHash),
    log_index: maybe(fc.integer({ min: 0, max: 1_000 }))
  })
  .map((t) =>
    compact({
      network: [t.route.network, t.route.network.toLowerCase(), t.route.network][t.spelling],
      currency: t.route.coin,
      to_address: t.to_address,
      amount: jsonNumber(t.amount, 6),
      tx_hash: t.tx_hash,
      log_index: t.log_index
    })
  )

/** POST /v1/test_helpers/businesses. */
export const createBusinessBody: fc.Arbitrary<Wire> = fc
  .record({ name: maybe(text(40)), webhook_url: maybe(httpsUrl) })
  .map(compact)

/** POST /v1/test_helpers/rates: 0.00000001 to 1,000 GMD per USD, up to 8 places. */
export const setRateBody: fc.Arbitrary<Wire> = fc
  .bigInt({ min: 1n, max: 100_000_000_000n })
  .map((units) => ({ rate: jsonNumber(units, 8) }))

/** POST /v1/test_helpers/clock/advance: one second to ten years. */
export const advanceClockBody: fc.Arbitrary<Wire> = fc
  .integer({ min: 1, max: 315_576_000 })
  .map((seconds) => ({ seconds }))

/** POST /v1/test_helpers/minting/intents/{id}/pay. */
export const payPaymentRequestBody: fc.Arbitrary<Wire> = fc
  .record({ route: networkAndCoin, lower: fc.boolean(), amount: fc.bigInt({ min: 1n, max: 100_000_000_000n }) })
  .map((p) => ({
    amount: jsonNumber(p.amount, 6),
    currency: p.route.coin,
    network: p.lower ? p.route.network.toLowerCase() : p.route.network
  }))

/** POST /v1/test_helpers/payouts/fail_next. */
export const failNextPayoutsBody: fc.Arbitrary<Wire> = fc.integer({ min: 0, max: 1_000 }).map((count) => ({ count }))

/** POST /v1/test_helpers/payments/{id}/fail: no reason, or one. */
export const failPaymentBody: fc.Arbitrary<Wire> = fc
  .option(text(255), { nil: undefined })
  .map((reason) => (reason === undefined ? {} : { reason }))

/** Every request schema of `Requests.requests` with its valid-body arbitrary. */
/** A request schema (as `decodeRequest` takes it) and an arbitrary of bodies for it. */
export interface RequestArbitrary {
  readonly schema: Parameters<typeof decodeRequest>[0]
  readonly arbitrary: fc.Arbitrary<unknown>
}

export const requestArbitraries: Readonly<Record<keyof typeof Requests.requests, RequestArbitrary>> = {
  "POST /v1/payments": { schema: Requests.CreatePaymentIntentBody, arbitrary: createPaymentIntentBody },
  "POST /v1/minting/offramp": { schema: Requests.CreateConversionBody, arbitrary: createConversionBody },
  "POST /v1/minting/intents": { schema: Requests.CreatePaymentRequestBody, arbitrary: createPaymentRequestBody },
  "POST /v1/payment-links": { schema: Requests.CreatePaymentLinkBody, arbitrary: createPaymentLinkBody },
  "POST /v1/invoices": { schema: Requests.CreateInvoiceBody, arbitrary: createInvoiceBody },
  "POST /v1/invoices/draft": { schema: Requests.CreateInvoiceBody, arbitrary: createDraftInvoiceBody },
  "PUT /v1/invoices/{id}": { schema: Requests.UpdateInvoiceBody, arbitrary: updateInvoiceBody },
  "GET (lists)": { schema: Requests.ListQuery, arbitrary: listQuery },
  "POST /v1/test_helpers/businesses": { schema: Requests.CreateBusinessBody, arbitrary: createBusinessBody },
  "POST /v1/test_helpers/rates": { schema: Requests.SetRateBody, arbitrary: setRateBody },
  "POST /v1/test_helpers/clock/advance": { schema: Requests.AdvanceClockBody, arbitrary: advanceClockBody },
  "POST /v1/test_helpers/chain/transfers": { schema: Requests.ChainTransferBody, arbitrary: chainTransferBody },
  "POST /v1/test_helpers/minting/intents/{id}/pay": {
    schema: Requests.PayPaymentRequestBody,
    arbitrary: payPaymentRequestBody
  },
  "POST /v1/test_helpers/payments/{id}/fail": { schema: Requests.FailPaymentBody, arbitrary: failPaymentBody },
  "POST /v1/test_helpers/payouts/fail_next": { schema: Requests.FailNextPayoutsBody, arbitrary: failNextPayoutsBody }
}

// ---------------------------------------------------------------------------
// Invalid request bodies: one field broken

/** Marks a key to delete. */
const ABSENT: unique symbol = Symbol("absent")
type Breakage = readonly [path: ReadonlyArray<string>, value: unknown]

const setPath = (body: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return value
  const obj: Wire = typeof body === "object" && body !== null && !Array.isArray(body) ? { ...(body as Wire) } : {}
  const next = setPath(obj[head], rest, value)
  if (next === ABSENT) delete obj[head]
  else obj[head] = next
  return obj
}

const breaking = <T>(valid: fc.Arbitrary<T>, breakages: ReadonlyArray<Breakage>): fc.Arbitrary<Wire> =>
  fc.tuple(valid, fc.constantFrom(...breakages)).map(([body, [path, value]]) => setPath(body, path, value) as Wire)

/** Values no positive 2-place amount accepts. */
const badAmounts = [10.001, -5, 0, "10", null, true, 1e300, 0.001] as const
const badAmountsAt = (path: ReadonlyArray<string>, values: ReadonlyArray<unknown> = badAmounts): Array<Breakage> =>
  values.filter((v) => v !== null).map((v) => [path, v] as const)

export const invalidCreatePaymentIntentBody: fc.Arbitrary<Wire> = breaking(createPaymentIntentBody, [
  ...badAmountsAt(["data", "amount"]),
  [["data", "amount"], ABSENT],
  [["data"], ABSENT],
  [["data"], [1, 2]],
  [["data", "currency"], "EUR"],
  [["data", "network"], "mpesa"],
  [["data", "callback_url"], "ftp://x.example/hook"],
  [["data", "account_number"], "12ab"],
  [
    ["data", "metadata"],
    [1, 2, 3]
  ]
])

export const invalidCreateConversionBody: fc.Arbitrary<Wire> = breaking(createConversionGmdBody, [
  ...badAmountsAt(["gmd_amount"]),
  [["network"], "ERC20"],
  [["pay_currency"], "DAI"],
  [["destination"], "bank"],
  [["payout_method"], { network: "mpesa", account_number: "1234567", account_name: "Awa" }],
  [["markup_config"], { type: "fixed", value: -1 }],
  [["markup_config"], { type: "percentage", value: 101 }],
  [["markup_config"], { type: "share", value: 1 }],
  [["callback_url"], "not a url"]
])

export const invalidCreatePaymentRequestBody: fc.Arbitrary<Wire> = breaking(createPaymentRequestBody, [
  ...badAmountsAt(["amount"]),
  [["amount"], ABSENT],
  [["currency"], "EUR"],
  [["expires_at"], "tomorrow"],
  [["expires_at"], "2026-02-30"],
  [["expires_at"], "2026-11-21T24:00:00Z"],
  [["expires_at"], "2026-11-21T09:00:00+25:00"],
  [["metadata"], "order-1"]
])

export const invalidCreatePaymentLinkBody: fc.Arbitrary<Wire> = breaking(createPaymentLinkBody, [
  ...badAmountsAt(["data", "amount"]),
  [["data", "amount"], ABSENT],
  [["data", "currency"], "XOF"],
  [["data", "title"], ""],
  [["data", "title"], "   "]
])

export const invalidCreateInvoiceBody: fc.Arbitrary<Wire> = breaking(
  createInvoiceBody.map(({ data }) => ({ data: { ...data, line_items: undefined, amount: 12.5 } })),
  [
    ...badAmountsAt(["data", "amount"], [10.001, -5, "10", true]),
    [["data", "amount"], ABSENT],
    [["data", "line_items"], [{ item: "A", quantity: 1.00001, unit_price: 1 }]],
    [["data", "line_items"], [{ item: "", quantity: 1, unit_price: 1 }]],
    [["data", "line_items"], [{ item: "A", quantity: 0, unit_price: 1 }]],
    [["data", "discount"], { type: "percentage", amount: 100.5 }],
    [["data", "discount"], { type: "voucher", amount: 1 }],
    [["data", "due_date"], "next week"],
    [["data", "customer_email"], "not-an-email"],
    [["data", "currency"], "EUR"]
  ]
)

export const invalidChainTransferBody: fc.Arbitrary<Wire> = breaking(chainTransferBody, [
  [["amount"], 1.0000001],
  [["amount"], 0],
  [["amount"], -1],
  [["amount"], "5"],
  [["network"], "ETH"],
  [["currency"], "DAI"],
  [["to_address"], ""],
  [["to_address"], ABSENT],
  [["log_index"], -1],
  [["log_index"], 1.5]
])

export const invalidListQuery: fc.Arbitrary<Wire> = breaking(listQuery, [
  [["limit"], "0"],
  [["limit"], "101"],
  [["limit"], "-1"],
  [["limit"], "1.5"],
  [["limit"], "ten"],
  [["offset"], "-1"],
  [["offset"], " 1"]
])

/** Every `invalid*` arbitrary with the schema that must refuse it. */
export const invalidRequestArbitraries: Readonly<Record<string, RequestArbitrary>> = {
  "POST /v1/payments": { schema: Requests.CreatePaymentIntentBody, arbitrary: invalidCreatePaymentIntentBody },
  "POST /v1/minting/offramp": { schema: Requests.CreateConversionBody, arbitrary: invalidCreateConversionBody },
  "POST /v1/minting/intents": {
    schema: Requests.CreatePaymentRequestBody,
    arbitrary: invalidCreatePaymentRequestBody
  },
  "POST /v1/payment-links": { schema: Requests.CreatePaymentLinkBody, arbitrary: invalidCreatePaymentLinkBody },
  "POST /v1/invoices": { schema: Requests.CreateInvoiceBody, arbitrary: invalidCreateInvoiceBody },
  "GET (lists)": { schema: Requests.ListQuery, arbitrary: invalidListQuery },
  "POST /v1/test_helpers/chain/transfers": { schema: Requests.ChainTransferBody, arbitrary: invalidChainTransferBody }
}

// ---------------------------------------------------------------------------
// Decoded commands (for building domain states)

const decoded = <S extends Parameters<typeof decodeRequest>[0]>(schema: S, body: unknown): S["Type"] => {
  const r = decodeRequest(schema, body)
  if (Result.isFailure(r)) throw new Error(`testkit arbitrary produced an invalid body: ${r.failure.message}`)
  return r.success as S["Type"]
}

/** The domain command of a decoded invoice body (`due_date` as the text sent). */
export const toInvoiceCommand = (d: Requests.CreateInvoice): Invoice.CreateInvoice => {
  const { due_date, ...rest } = d
  return due_date === undefined ? rest : { ...rest, due_date: due_date.text }
}

/** The domain command of a decoded payment-request body (`expires_at` in epoch ms). */
export const toPaymentRequestCommand = (d: Requests.CreatePaymentRequest): PaymentRequest.CreatePaymentRequest => {
  const { expires_at, ...rest } = d
  return expires_at === undefined ? rest : { ...rest, expires_at: expires_at.ms }
}

const must = <S>(step: Result.Result<{ readonly state: S }, DomainError>): S | undefined =>
  Result.isSuccess(step) ? step.success.state : undefined

const defined = <T>(x: T | undefined): x is T => x !== undefined

// ---------------------------------------------------------------------------
// Domain states, driven through random transitions

/** A conversion step: a transfer of a share (or more) of pay_amount, a late one, an expiry, a payout record. */
type ConversionStep =
  | { readonly type: "transfer"; readonly permille: number; readonly late: boolean }
  | { readonly type: "expire" }
  | { readonly type: "payout"; readonly ok: boolean }

const conversionStep: fc.Arbitrary<ConversionStep> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant("transfer" as const),
      permille: fc.integer({ min: 1, max: 1_500 }),
      late: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.constant({ type: "expire" as const }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant("payout" as const), ok: fc.boolean() }) }
)

/** A conversion as stored by the engine, after 0 to 6 random steps. */
export const conversionState: fc.Arbitrary<Conversion.Conversion> = fc
  .record({
    body: createConversionBody,
    rate: rate(20, 100),
    now: instant,
    id: fc.uuid(),
    random32: fc.integer({ min: 0, max: 0xffff_ffff }),
    address: chainAddress,
    steps: fc.array(conversionStep, { maxLength: 6 }),
    hashes: fc.array(txHash, { minLength: 6, maxLength: 6 })
  })
  .map(({ body, rate: r, now, id, random32, address, steps, hashes }) => {
    const command = decoded(Requests.CreateConversionBody, body)
    let state = must(
      Conversion.create(command, {
        id,
        reference: Reference.conversionReference(now, random32),
        pay_address: address,
        now,
        rate: r,
        config: Quote.defaultConversionConfig
      })
    )
    if (state === undefined) return undefined
    let t = now
    for (const [i, step] of steps.entries()) {
      t += 30_000
      const s: Conversion.Conversion = state
      if (step.type === "transfer") {
        const amount = (s.pay_amount * 10_000n * BigInt(step.permille)) / 1_000n
        const at = step.late ? s.invoice_expires_at + 1 : t
        state =
          must(
            Conversion.applyTransfer(
              s,
              {
                network: s.network,
                coin: s.pay_currency,
                tx_hash: hashes[i] ?? `0x${i}`,
                log_index: i,
                amount: amount > 0n ? amount : 1n
              },
              at
            )
          ) ?? s
      } else if (step.type === "expire") {
        state = must(Conversion.expire(s, s.invoice_expires_at)) ?? s
      } else if (s.credited_gmd > 0n) {
        state =
          must(
            Conversion.recordPayout(
              s,
              step.ok
                ? { gmd: s.credited_gmd, outcome: "succeeded" }
                : { gmd: s.credited_gmd, outcome: "failed", detail: "sandbox: payout failed" },
              t
            )
          ) ?? s
      }
    }
    return state
  })
  .filter(defined)

/** A stablecoin payment request after 0 to 5 payments (some late) or an expiry. */
export const paymentRequestState: fc.Arbitrary<PaymentRequest.PaymentRequest> = fc
  .record({
    body: createPaymentRequestBody,
    rate: rate(20, 100),
    now: instant,
    window: fc.option(fc.integer({ min: 60_000, max: 86_400_000 }), { nil: undefined }),
    id: fc.uuid(),
    payments: fc.array(
      fc.record({
        permille: fc.integer({ min: 1, max: 1_200 }),
        late: fc.boolean(),
        route: networkAndCoin,
        hash: txHash
      }),
      { maxLength: 5 }
    ),
    expire: fc.boolean()
  })
  .map(({ body, rate: r, now, window, id, payments, expire }) => {
    const { expires_at: _, ...command } = toPaymentRequestCommand(decoded(Requests.CreatePaymentRequestBody, body))
    let state = must(
      PaymentRequest.create(window === undefined ? command : { ...command, expires_at: now + window }, {
        id,
        link: `https://pay.example/requests/${id}`,
        now,
        rate: r,
        config: PaymentRequest.defaultPaymentRequestConfig
      })
    )
    if (state === undefined) return undefined
    let t = now
    for (const [i, p] of payments.entries()) {
      t += 1_000
      const s: PaymentRequest.PaymentRequest = state
      const amount = (s.usd_amount * 10_000n * BigInt(p.permille)) / 1_000n
      const at = p.late && s.expires_at !== null ? s.expires_at : t
      state =
        must(
          PaymentRequest.receivePayment(
            s,
            {
              network: p.route.network,
              coin: p.route.coin,
              tx_hash: p.hash,
              log_index: i,
              amount: amount > 0n ? amount : 1n
            },
            at
          )
        ) ?? s
    }
    if (expire && state.expires_at !== null) state = must(PaymentRequest.expire(state, state.expires_at)) ?? state
    return state
  })
  .filter(defined)

/** A payment intent, fresh or after one outcome (success, failure, cancel, expiry). */
export const paymentIntentState: fc.Arbitrary<PaymentIntent.PaymentIntent> = fc
  .record({
    body: createPaymentIntentBody,
    now: instant,
    id: fc.uuid(),
    secret: fc.stringMatching(/^[A-Za-z0-9_-]{32}$/),
    test_mode: fc.boolean(),
    outcome: fc.constantFrom("none", "processing", "succeed", "fail", "cancel", "expire")
  })
  .map(({ body, now, id, secret, test_mode, outcome }) => {
    const command = decoded(Requests.CreatePaymentIntentBody, body).data
    const created = must(
      PaymentIntent.create(command, {
        payment_intent_id: id,
        intent_secret: `pi_secret_${secret}`,
        payment_link: `https://pay.example/pay/${id}`,
        now,
        test_mode,
        config: PaymentIntent.defaultPaymentIntentConfig
      })
    )
    if (created === undefined) return undefined
    const t = now + 1_000
    const step =
      outcome === "processing"
        ? PaymentIntent.startProcessing(created, t)
        : outcome === "succeed"
          ? PaymentIntent.succeed(created, t)
          : outcome === "fail"
            ? PaymentIntent.failCharge(created, "declined", t)
            : outcome === "cancel"
              ? PaymentIntent.cancel(created, t)
              : outcome === "expire"
                ? PaymentIntent.expire(created, created.expires_at)
                : undefined
    return step === undefined ? created : (must(step) ?? created)
  })
  .filter(defined)

/** A payment link, active or deactivated. */
export const paymentLinkState: fc.Arbitrary<PaymentLink.PaymentLink> = fc
  .record({ body: createPaymentLinkBody, now: instant, id: fc.uuid(), deactivate: fc.boolean() })
  .map(({ body, now, id, deactivate }) => {
    const created = must(
      PaymentLink.create(decoded(Requests.CreatePaymentLinkBody, body).data, {
        id,
        url: `https://pay.example/links/${id}`,
        now
      })
    )
    if (created === undefined) return undefined
    return deactivate ? (must(PaymentLink.deactivate(created, now + 1)) ?? created) : created
  })
  .filter(defined)

type InvoiceStepName = "send" | "remind" | "pay" | "customer_pay" | "overdue"

/** An invoice (published or draft) after 0 to 4 random commands. */
export const invoiceState: fc.Arbitrary<Invoice.Invoice> = fc
  .record({
    body: createInvoiceBody,
    now: instant,
    id: fc.uuid(),
    business_id: fc.uuid(),
    account_id: fc.uuid(),
    merchant: text(30),
    test_mode: fc.boolean(),
    draft: fc.boolean(),
    next: fc.integer({ min: 1, max: 10_000 }),
    steps: fc.array(fc.constantFrom<InvoiceStepName>("send", "remind", "pay", "customer_pay", "overdue"), {
      maxLength: 4
    })
  })
  .map(({ body, now, id, business_id, account_id, merchant, test_mode, draft, next, steps }) => {
    const command = toInvoiceCommand(decoded(Requests.CreateInvoiceBody, body).data)
    const ctx: Invoice.InvoiceContext = {
      id,
      reference: `INV-${id.replace(/-/g, "").slice(-8).toUpperCase()}`,
      now,
      business_id,
      account_id,
      merchant_name: merchant,
      test_mode,
      payment_link: `https://pay.example/invoices/${id}`
    }
    let state = must(
      draft ? Invoice.createDraft(command, ctx) : Invoice.create(command, { ...ctx, next_invoice_number: next })
    )
    if (state === undefined) return undefined
    let t = now
    for (const step of steps) {
      t += 60_000
      const s: Invoice.Invoice = state
      const r =
        step === "send"
          ? Invoice.send(s, next, t)
          : step === "remind"
            ? Invoice.remind(s, t)
            : step === "pay"
              ? Invoice.payManually(s, t)
              : step === "customer_pay"
                ? Invoice.customerPays(s, t)
                : Invoice.markOverdue(s, Math.max(t, s.overdue_at ?? t))
      state = must(r) ?? s
    }
    return state
  })
  .filter(defined)

// ---------------------------------------------------------------------------
// Resources (wire shapes)

const owner = fc.record({ business_id: fc.uuid(), account_id: fc.uuid(), test_mode: fc.boolean() })

/** The Conversion object, with or without its `events` timeline. */
export const conversionResource = fc
  .tuple(conversionState, fc.boolean())
  .map(([c, timeline]) => Present.conversion(c, { timeline }))

/** The Stablecoin payment request object. */
export const paymentRequestResource = fc
  .tuple(paymentRequestState, owner)
  .map(([r, o]) => Present.paymentRequest(r, { ...o, test_mode: false }))

/** The `charge.succeeded` payload of a payment request that received at least one payment. */
export const chargeSucceededPayload = fc
  .tuple(
    // the state a charge.succeeded is sent from: right after a received payment
    paymentRequestState.filter(
      (r) => r.payments.length > 0 && (r.status === "partially_paid" || r.status === "completed")
    ),
    owner
  )
  .map(([r, o]) =>
    Present.chargeSucceeded(r, r.payments[r.payments.length - 1] as PaymentRequest.ReceivedPayment, {
      ...o,
      test_mode: false
    })
  )

export const paymentIntentResource = paymentIntentState.map(PresentBilling.paymentIntent)
export const paymentLinkResource = paymentLinkState.map(PresentBilling.paymentLink)
export const invoiceResource = invoiceState.map(PresentBilling.invoice)

/** GET /v1/balance. */
export const balanceResource = fc
  .record({ gmd: fc.bigInt({ min: 0n, max: 100_000_000_000n }), test_mode: maybe(fc.boolean()) })
  .map((b) => compact({ currency: "GMD", available: jsonNumber(b.gmd, 2), test_mode: b.test_mode }))

/** `{error: {message, code}}` for every code of the catalogue. */
export const errorBody = fc
  .record({ code: fc.constantFrom(...Errors.error_codes), message: text(80) })
  .map(({ code, message }) => new DomainError({ code, message }).toJSON())

const list = <T>(item: fc.Arbitrary<T>) =>
  fc
    .record({
      data: fc.array(item, { maxLength: 3 }),
      more: fc.integer({ min: 0, max: 1_000 }),
      limit: fc.integer({ min: 1, max: 100 }),
      offset: fc.integer({ min: 0, max: 1_000 })
    })
    .map(({ data, more, limit, offset }) => ({ data, meta: { total: offset + data.length + more, limit, offset } }))

export const paymentIntentList = list(paymentIntentResource)
export const paymentRequestList = list(paymentRequestResource)
export const conversionList = list(conversionResource)
export const paymentLinkList = list(paymentLinkResource)
export const invoiceList = list(invoiceResource)

/** A webhook delivery body `{event, payload}` with the payload the event carries. */
export const webhookEnvelope = fc.oneof(
  conversionState
    .filter((c) => c.status === "underpaid" || c.status === "paid" || c.status === "overpaid")
    .map((c) => ({ event: `ramp.${c.status}`, payload: Present.conversion(c, { timeline: false }) })),
  chargeSucceededPayload.map((payload) => ({ event: "charge.succeeded", payload })),
  paymentIntentState.map((pi) => ({
    event:
      pi.status === "successful"
        ? "charge.succeeded"
        : pi.status === "failed"
          ? "charge.failed"
          : pi.status === "cancelled"
            ? "payment_intent.cancelled"
            : "payment_intent.created",
    payload: PresentBilling.paymentIntent(pi)
  })),
  invoiceState
    .filter((inv) => inv.status === "paid" || inv.status === "overdue")
    .map((inv) => ({
      event: inv.status === "paid" ? "paymentrequest.success" : "invoice.overdue",
      payload: PresentBilling.invoice(inv)
    }))
)

const base64url = (n: number) => fc.stringMatching(new RegExp(`^[A-Za-z0-9_-]{${n}}$`))

export const sandboxBusiness = fc
  .record({
    id: fc.uuid(),
    account_id: fc.uuid(),
    name: text(40),
    test: base64url(32),
    live: base64url(32),
    secret: fc.uint8Array({ minLength: 32, maxLength: 32 })
  })
  .map((b) => ({
    id: b.id,
    account_id: b.account_id,
    name: b.name,
    secret_key_test: `sk_test_${b.test}`,
    secret_key_live: `sk_live_${b.live}`,
    webhook_secret: `whsec_${Buffer.from(b.secret).toString("base64")}`
  }))

export const sandboxRate = setRateBody
export const sandboxClock = instant.map((ms) => ({ now: Instant.toIso(ms) }))
export const sandboxChainTransfer = fc
  .record({
    tx_hash: txHash,
    matched: fc.option(fc.tuple(fc.constantFrom("conversion", "payment_request"), fc.uuid()), { nil: null }),
    applied: fc.boolean()
  })
  .map((t) => ({
    tx_hash: t.tx_hash,
    matched: t.matched === null ? null : { object: t.matched[0], id: t.matched[1] },
    applied: t.matched !== null && t.applied
  }))
export const sandboxFailNext = failNextPayoutsBody

/** Every resource schema of `Resources.resources` with its arbitrary. */
export const resourceArbitraries = {
  PaymentIntent: paymentIntentResource,
  PaymentRequest: paymentRequestResource,
  Conversion: conversionResource,
  ConversionEvent: conversionState
    .filter((c) => c.timeline.length > 0)
    .chain((c) => fc.constantFrom(...(Present.conversion(c, { timeline: true }).events ?? []))),
  PaymentLink: paymentLinkResource,
  Invoice: invoiceResource,
  Balance: balanceResource,
  PaymentIntentList: paymentIntentList,
  PaymentRequestList: paymentRequestList,
  ConversionList: conversionList,
  PaymentLinkList: paymentLinkList,
  InvoiceList: invoiceList,
  ErrorBody: errorBody,
  WebhookEnvelope: webhookEnvelope,
  ChargeSucceededPayload: chargeSucceededPayload,
  SandboxBusiness: sandboxBusiness,
  SandboxRate: sandboxRate,
  SandboxClock: sandboxClock,
  SandboxChainTransfer: sandboxChainTransfer,
  SandboxFailNext: sandboxFailNext
} as const satisfies Record<keyof typeof Resources.resources, fc.Arbitrary<unknown>>
