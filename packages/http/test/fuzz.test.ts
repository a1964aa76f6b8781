import { Resources } from "@xaalis/core"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, conforms, type Setup, setup } from "./helpers.ts"

const deep = process.env.XAALIS_DEEP === "1"
const runs = deep ? 2_000 : 60
/** Room for the deep runs (the list totals grow with every accepted body); not a speed check. */
const timeout = deep ? 600_000 : 60_000

interface Endpoint {
  readonly path: string
  readonly list: string
  /** A valid body, and how to put a field into it (wrapped in `data` or flat). */
  readonly valid: Record<string, unknown>
  readonly wrapped: boolean
  readonly fields: ReadonlyArray<string>
  readonly response:
    | typeof Resources.Invoice
    | typeof Resources.PaymentIntent
    | typeof Resources.Conversion
    | typeof Resources.PaymentLink
    | typeof Resources.PaymentRequest
}

const invoiceFields = [
  "amount",
  "customer",
  "customer_email",
  "customer_name",
  "customer_phone",
  "line_items",
  "discount",
  "due_date",
  "notes",
  "invoice_number",
  "callback_url",
  "sub_account",
  "currency"
]

const endpoints: ReadonlyArray<Endpoint> = [
  {
    path: "/v1/payments",
    list: "/v1/payments",
    valid: { amount: 100 },
    wrapped: true,
    fields: [
      "amount",
      "currency",
      "return_url",
      "cancel_url",
      "callback_url",
      "network",
      "account_number",
      "skip_url_validation",
      "transaction_fee_type",
      "metadata"
    ],
    response: Resources.PaymentIntent
  },
  {
    path: "/v1/payment-links",
    list: "/v1/payment-links",
    valid: { amount: 100 },
    wrapped: true,
    fields: ["title", "amount", "currency", "description", "metadata"],
    response: Resources.PaymentLink
  },
  {
    path: "/v1/minting/offramp",
    list: "/v1/minting/ramps",
    valid: { gmd_amount: 5000 },
    wrapped: false,
    fields: [
      "gmd_amount",
      "pay_amount",
      "pay_currency",
      "network",
      "destination",
      "payout_method",
      "callback_url",
      "markup_config"
    ],
    response: Resources.Conversion
  },
  {
    path: "/v1/minting/intents",
    list: "/v1/minting/intents",
    valid: { amount: 10 },
    wrapped: false,
    fields: ["amount", "currency", "metadata", "callback_url", "expires_at"],
    response: Resources.PaymentRequest
  },
  {
    path: "/v1/invoices",
    list: "/v1/invoices",
    valid: { amount: 100, customer: "c" },
    wrapped: true,
    fields: invoiceFields,
    response: Resources.Invoice
  },
  {
    path: "/v1/invoices/draft",
    list: "/v1/invoices",
    valid: { amount: 100, customer: "c" },
    wrapped: true,
    fields: invoiceFields,
    response: Resources.Invoice
  }
]

let s: Setup
let key: string
beforeAll(async () => {
  s = setup({ rateLimit: false })
  key = (await s.business()).secret_key_live
})
afterAll(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

const total = async (list: string) => (await s.call("GET", list, { key })).body.meta.total as number

/** The answer is a 201 with the resource, or the error object with a 4xx; a refusal stored nothing. */
const checkOne = async (e: Endpoint, send: () => Promise<Answer>) => {
  const before = await total(e.list)
  const res = await send()
  const after = await total(e.list)
  if (res.status === 201) {
    expect(conforms(e.response, res.body)).toBe(true)
    expect(after).toBe(before + 1)
    return
  }
  expect(res.status).toBeGreaterThanOrEqual(400)
  expect(res.status).toBeLessThan(500)
  expect(conforms(Resources.ErrorBody, res.body)).toBe(true)
  expect(Object.keys(res.body)).toEqual(["error"])
  expect(after).toBe(before)
}

const json = { "content-type": "application/json" }

describe.each(endpoints)("fuzzing POST $path", (e) => {
  it(
    "arbitrary JSON values as the body never give a 5xx",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.jsonValue(), (value) => checkOne(e, () => s.call("POST", e.path, { key, body: value }))),
        { numRuns: runs }
      )
    },
    timeout
  )

  it(
    "arbitrary strings as the body never give a 5xx",
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.json()), (raw) =>
          checkOne(e, () => s.call("POST", e.path, { key, raw, headers: json }))
        ),
        { numRuns: runs }
      )
    },
    timeout
  )

  it(
    "a wrong value in any one field never gives a 5xx",
    async () => {
      const wrongValue = fc.oneof(
        fc.jsonValue(),
        fc.constantFrom(null, true, "", " ", "1e400", -1, 0, Number.MAX_VALUE, 1e-7, 2 ** 53 + 1, [], {}, [1], {
          a: 1
        }),
        fc.string()
      )
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...e.fields), wrongValue, (field, value) => {
          const inner = { ...e.valid, [field]: value }
          return checkOne(e, () => s.call("POST", e.path, { key, body: e.wrapped ? { data: inner } : inner }))
        }),
        { numRuns: runs }
      )
    },
    timeout
  )
})
