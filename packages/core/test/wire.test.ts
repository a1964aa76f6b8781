import { Result, type Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { CreateConversion } from "../src/conversion/Conversion.ts"
import type { Markup } from "../src/conversion/Quote.ts"
import type { Decimal } from "../src/money/Decimal.ts"
import * as Json from "../src/wire/Json.ts"
import * as L from "../src/wire/Limits.ts"
import * as R from "../src/wire/Requests.ts"

/** Parses `body` as a JSON text exactly as the server does, then decodes it. */
const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, body: unknown, text = JSON.stringify(body)) => {
  const parsed = Json.parseJson(text)
  if (Result.isFailure(parsed)) return parsed
  return R.decodeRequest(schema, parsed.success)
}
const ok = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, body: unknown, text?: string): S["Type"] => {
  const r = decode(schema, body, text)
  if (Result.isFailure(r)) throw new Error(`expected success, got: ${r.failure.message}`)
  return r.success
}
const err = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, body: unknown, text?: string) => {
  const r = decode(schema, body, text)
  if (Result.isSuccess(r)) throw new Error(`expected a failure for ${text ?? JSON.stringify(body)}`)
  expect(r.failure.code).toBe("validation_error")
  return { message: r.failure.message, param: r.failure.param }
}
const data = (fields: Record<string, unknown>) => ({ data: fields })

// ---------------------------------------------------------------- compile-time shape of the commands
type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(_: T) => undefined
assertType<Equals<R.CreatePaymentIntent["amount"], bigint>>(true)
assertType<Equals<R.CreatePaymentIntent["currency"], "GMD" | "USD">>(true)
assertType<Equals<R.CreatePaymentIntent["skip_url_validation"], boolean>>(true)
assertType<Equals<R.LineItem["quantity"], Decimal>>(true)
assertType<Equals<R.ListQuery, { readonly limit: number; readonly offset: number }>>(true)
assertType<Equals<NonNullable<(typeof R.CreateConversionBody.Type)["markup_config"]>, Markup>>(true)
const _isCommand: (c: typeof R.CreateConversionBody.Type) => CreateConversion = (c) => c
void _isCommand

describe("POST /v1/payments", () => {
  const S = R.CreatePaymentIntentBody
  it("accepts a minimal body and applies defaults", () => {
    expect(ok(S, data({ amount: 100 }))).toEqual({
      data: { amount: 10000n, currency: "GMD", skip_url_validation: false }
    })
  })

  it("accepts a full body", () => {
    const d = ok(
      S,
      data({
        amount: 10.5,
        currency: "USD",
        return_url: "https://shop.example/done",
        cancel_url: "https://shop.example/cancel",
        callback_url: "https://shop.example/hook",
        network: "wave",
        account_number: "7012345",
        skip_url_validation: false,
        transaction_fee_type: "customer",
        metadata: { order: "A-1", nested: { n: [1, 2] } }
      })
    ).data
    expect(d).toEqual({
      amount: 1050n,
      currency: "USD",
      return_url: "https://shop.example/done",
      cancel_url: "https://shop.example/cancel",
      callback_url: "https://shop.example/hook",
      network: "wave",
      account_number: "7012345",
      skip_url_validation: false,
      transaction_fee_type: "customer",
      metadata: { order: "A-1", nested: { n: [1, 2] } }
    })
  })

  it("drops server-owned and unknown fields instead of applying them", () => {
    const d = ok(
      S,
      data({ amount: 1, status: "successful", transaction_fee: 0, expires_at: "2030-01-01T00:00:00Z", id: "x" }),
      undefined
    )
    expect(d.data).toEqual({ amount: 100n, currency: "GMD", skip_url_validation: false })
    expect(Object.keys(d.data)).not.toContain("status")
  })

  it("treats null on an optional field as absent", () => {
    expect(ok(S, data({ amount: 1, currency: null, return_url: null, metadata: null })).data).toEqual({
      amount: 100n,
      currency: "GMD",
      skip_url_validation: false
    })
  })

  it("rejects with the offending field as param", () => {
    expect(err(S, {})).toEqual({ message: "data is required.", param: "data" })
    expect(err(S, [])).toEqual({ message: "The request body must be a JSON object.", param: undefined })
    expect(err(S, { data: "x" })).toEqual({ message: "data must be an object.", param: "data" })
    expect(err(S, data({}))).toEqual({ message: "data.amount is required.", param: "data.amount" })
    expect(err(S, data({ amount: "10" }))).toEqual({ message: "data.amount must be a number.", param: "data.amount" })
    expect(err(S, data({ amount: 1.001 })).param).toBe("data.amount")
    expect(err(S, data({ amount: 1, currency: "EUR" }))).toEqual({
      message: "data.currency must be one of: GMD, USD.",
      param: "data.currency"
    })
    expect(err(S, data({ amount: 1, network: "orange" })).param).toBe("data.network")
    expect(err(S, data({ amount: 1, skip_url_validation: "true" })).message).toBe(
      "data.skip_url_validation must be true or false."
    )
    expect(err(S, data({ amount: 1, callback_url: "not a url" })).param).toBe("data.callback_url")
    expect(err(S, data({ amount: 1, account_number: "12ab" })).param).toBe("data.account_number")
    // one rule at the edge and in the domain: exactly 7 digits, no +220 form
    for (const bad of ["12345", "+2207012345", "2207012345", "701234a"]) {
      const e = err(S, data({ amount: 1, account_number: bad }))
      expect(e.param, bad).toBe("data.account_number")
      expect(e.message, bad).toContain("exactly 7 digits")
    }
    expect(err(S, data({ amount: 20_000_000, currency: "USD" }))).toEqual({
      message: "data.amount must be at most 10000000 for USD.",
      param: "data.amount"
    })
    expect(ok(S, data({ amount: 20_000_000 })).data.amount).toBe(2_000_000_000n)
  })

  it("accepts app URLs for return/cancel only with skip_url_validation", () => {
    expect(err(S, data({ amount: 1, return_url: "myapp://paid" })).param).toBe("data.return_url")
    expect(ok(S, data({ amount: 1, return_url: "myapp://paid", skip_url_validation: true })).data.return_url).toBe(
      "myapp://paid"
    )
    expect(err(S, data({ amount: 1, callback_url: "myapp://x", skip_url_validation: true })).param).toBe(
      "data.callback_url"
    )
    // never a URL that runs or embeds content where a browser follows it, skipped validation or not
    for (const url of [
      "javascript:alert(1)",
      "JavaScript:alert(1)",
      "vbscript:msgbox(1)",
      "data:text/html,<script>alert(1)</script>",
      "blob:https://x.example/1",
      "file:///etc/passwd"
    ]) {
      for (const field of ["return_url", "cancel_url"]) {
        const e = err(S, data({ amount: 1, [field]: url, skip_url_validation: true }))
        expect([e.param, e.message], url).toEqual([
          `data.${field}`,
          `data.${field} must not use a javascript:, vbscript:, data:, blob: or file: URL.`
        ])
      }
    }
  })

  it("bounds metadata", () => {
    const many = Object.fromEntries(Array.from({ length: L.metadata_keys_max + 1 }, (_, i) => [`k${i}`, i]))
    expect(err(S, data({ amount: 1, metadata: many }))).toEqual({
      message: `data.metadata must have at most ${L.metadata_keys_max} keys.`,
      param: "data.metadata"
    })
    const big = { blob: "x".repeat(L.metadata_bytes_max) }
    expect(err(S, data({ amount: 1, metadata: big })).message).toContain(`${L.metadata_bytes_max} bytes`)
    expect(err(S, data({ amount: 1, metadata: { ["k".repeat(L.metadata_key_length_max + 1)]: 1 } })).param).toBe(
      "data.metadata"
    )
    // a key's length counts characters (code points), as every text limit does: 100 emoji fit, 101 do not
    const emojiKey = (n: number) => "😀".repeat(n)
    expect(ok(S, data({ amount: 1, metadata: { [emojiKey(L.metadata_key_length_max)]: 1 } })).data.metadata).toEqual({
      [emojiKey(L.metadata_key_length_max)]: 1
    })
    expect(err(S, data({ amount: 1, metadata: { [emojiKey(L.metadata_key_length_max + 1)]: 1 } })).message).toBe(
      `data.metadata keys must be at most ${L.metadata_key_length_max} characters.`
    )
    expect(err(S, data({ amount: 1, metadata: [1, 2] })).message).toBe("data.metadata must be an object.")
    expect(err(S, data({ amount: 1, metadata: "x" })).message).toBe("data.metadata must be an object.")
    expect(err(S, data({ amount: 1 }), '{"data":{"amount":1,"metadata":{"__proto__":{"x":1}}}}').param).toBe(
      "data.metadata"
    )
  })

  it("keeps metadata untouched, even numbers no double can hold", () => {
    const text = '{"data":{"amount":1,"metadata":{"precise":0.10000000000000000001,"list":[1,"a",null,true]}}}'
    const d = ok(S, undefined, text).data
    expect(JSON.stringify(d.metadata)).toBe('{"precise":0.10000000000000000001,"list":[1,"a",null,true]}')
  })
})

describe("POST /v1/minting/offramp", () => {
  const S = R.CreateConversionBody
  it("accepts a minimal body without defaults (resolveRequest applies them)", () => {
    expect(ok(S, { gmd_amount: 1000 })).toEqual({ gmd_amount: 100000n })
    expect(ok(S, {})).toEqual({}) // both/neither is Conversion.resolveRequest's rule
  })

  it("accepts a full body and normalises network", () => {
    expect(
      ok(S, {
        pay_amount: 30.25,
        pay_currency: "USDC",
        network: "arc",
        destination: "mobile_money",
        payout_method: { network: "afrimoney", account_number: "7012345", account_name: "Awa Jallow" },
        callback_url: "https://reseller.example/ramp",
        markup_config: { type: "percentage", value: 1.25 }
      })
    ).toEqual({
      pay_amount: 3025n,
      pay_currency: "USDC",
      network: "ARC",
      destination: "mobile_money",
      payout_method: { network: "afrimoney", account_number: "7012345", account_name: "Awa Jallow" },
      callback_url: "https://reseller.example/ramp",
      markup_config: { type: "percentage", value: { units: 125n, scale: 2 } }
    })
    expect(ok(S, { gmd_amount: 500, network: "Trc20", markup_config: { type: "fixed", value: 2 } })).toEqual({
      gmd_amount: 50000n,
      network: "TRC20",
      markup_config: { type: "fixed", value: 200n }
    })
  })

  it("rejects types, scales and limits with the right param", () => {
    expect(err(S, { gmd_amount: 400.001 }).param).toBe("gmd_amount")
    expect(err(S, { pay_amount: "30" }).param).toBe("pay_amount")
    expect(err(S, { pay_amount: 25.001 })).toEqual({
      message: "pay_amount must have at most 2 decimal places.",
      param: "pay_amount"
    })
    expect(err(S, { gmd_amount: 1000, pay_currency: "DAI" }).param).toBe("pay_currency")
    expect(err(S, { gmd_amount: 1000, network: "ERC20" })).toEqual({
      message: "network must be one of: TRC20, ARC.",
      param: "network"
    })
    expect(err(S, { gmd_amount: 1000, destination: "bank" }).param).toBe("destination")
    expect(
      err(S, { gmd_amount: 1000, payout_method: { network: "wave", account_number: 7012345, account_name: "Awa" } })
        .param
    ).toBe("payout_method.account_number")
    expect(
      err(S, { gmd_amount: 1000, payout_method: { network: "qmoney", account_number: "7012345", account_name: "Awa" } })
        .param
    ).toBe("payout_method.network")
    expect(err(S, { gmd_amount: 1000, markup_config: { type: "flat", value: 1 } })).toEqual({
      message: "markup_config.type must be one of: fixed, percentage.",
      param: "markup_config.type"
    })
    expect(err(S, { gmd_amount: 1000, markup_config: { type: "fixed", value: 1.005 } }).param).toBe(
      "markup_config.value"
    )
    // a zero markup is no markup: taken (the spec sets no minimum; docs/decisions.md: values >= 0)
    expect(ok(S, { gmd_amount: 1000, markup_config: { type: "percentage", value: 0 } }).markup_config).toEqual({
      type: "percentage",
      value: { units: 0n, scale: 0 }
    })
    expect(ok(S, { gmd_amount: 1000, markup_config: { type: "fixed", value: 0 } }).markup_config).toEqual({
      type: "fixed",
      value: 0n
    })
    for (const value of [-0.01, -1]) {
      expect(err(S, { gmd_amount: 1000, markup_config: { type: "percentage", value } }).param).toBe(
        "markup_config.value"
      )
      expect(err(S, { gmd_amount: 1000, markup_config: { type: "fixed", value } }).param).toBe("markup_config.value")
    }
    expect(err(S, { gmd_amount: 1000, markup_config: { type: "percentage", value: 1.00001 } }).param).toBe(
      "markup_config.value"
    )
    expect(err(S, { gmd_amount: 1000, markup_config: 5 })).toEqual({
      message: "markup_config must be an object.",
      param: "markup_config"
    })
  })
})

describe("POST /v1/minting/intents", () => {
  const S = R.CreatePaymentRequestBody
  it("accepts minimal and full bodies", () => {
    expect(ok(S, { amount: 5 })).toEqual({ amount: 500n, currency: "USD" })
    expect(
      ok(S, {
        amount: 1000,
        currency: "GMD",
        metadata: { order: 7 },
        callback_url: "https://shop.example/hook",
        expires_at: "2026-12-01T10:00:00+01:00"
      })
    ).toEqual({
      amount: 100000n,
      currency: "GMD",
      metadata: { order: 7 },
      callback_url: "https://shop.example/hook",
      expires_at: { text: "2026-12-01T10:00:00+01:00", ms: Date.UTC(2026, 11, 1, 9), date_only: false }
    })
  })

  it("reads a date-time without a zone as The Gambia's time: UTC", () => {
    for (const [text, ms] of [
      ["2026-12-01T10:00:00", Date.UTC(2026, 11, 1, 10)],
      ["2026-12-01T10:00", Date.UTC(2026, 11, 1, 10)],
      ["2026-12-01 10:00:00.250", Date.UTC(2026, 11, 1, 10, 0, 0, 250)]
    ] as const) {
      expect(ok(S, { amount: 5, expires_at: text }).expires_at, text).toEqual({ text, ms, date_only: false })
      expect(ok(S, { amount: 5, expires_at: text }).expires_at?.ms).toBe(
        ok(S, { amount: 5, expires_at: `${text}Z` }).expires_at?.ms
      )
    }
  })

  it("rejects bad fields", () => {
    expect(err(S, { amount: 5, currency: "EUR" }).param).toBe("currency")
    expect(err(S, { amount: 5, expires_at: "next week" }).param).toBe("expires_at")
    expect(err(S, { amount: 5, expires_at: "2026-12-01T10:00:00+24:00" }).param).toBe("expires_at")
    expect(err(S, { amount: 5, expires_at: "2026-12-01T10:00:00GMT" }).param).toBe("expires_at")
    expect(err(S, { amount: 5, expires_at: 1796115600000 }).param).toBe("expires_at")
    expect(err(S, { amount: 5.001 }).param).toBe("amount")
    expect(err(S, { amount: 20_000_000 }).param).toBe("amount") // over the USD maximum
    expect(ok(S, { amount: 20_000_000, currency: "GMD" }).amount).toBe(2_000_000_000n)
  })
})

describe("POST /v1/payment-links", () => {
  const S = R.CreatePaymentLinkBody
  it("accepts minimal and full bodies", () => {
    expect(ok(S, data({ amount: 250 }))).toEqual({ data: { amount: 25000n, currency: "GMD" } })
    expect(
      ok(
        S,
        data({ title: "Ticket", amount: 10, currency: "USD", description: "Line 1\nLine 2", metadata: { event: "x" } })
      ).data
    ).toEqual({
      title: "Ticket",
      amount: 1000n,
      currency: "USD",
      description: "Line 1\nLine 2",
      metadata: { event: "x" }
    })
  })

  it("rejects bad fields", () => {
    expect(err(S, data({})).param).toBe("data.amount")
    expect(err(S, data({ amount: 1, title: "" })).message).toBe("data.title must not be empty.")
    expect(err(S, data({ amount: 1, title: "a\nb" })).message).toBe("data.title must not contain control characters.")
    expect(err(S, data({ amount: 1, title: "x".repeat(L.string_length_max + 1) })).message).toBe(
      `data.title must be at most ${L.string_length_max} characters.`
    )
    expect(err(S, data({ amount: 1, description: "x".repeat(L.description_length_max + 1) })).param).toBe(
      "data.description"
    )
    expect(err(S, data({ amount: 1, title: "\ud800" })).message).toBe("data.title must be valid Unicode text.")
  })

  it("refuses C1 controls, bidi embeddings, overrides and isolates, and line separators outside free text", () => {
    for (const title of [
      "a\u0085b",
      "a\u009bb",
      "a\u007fb",
      "Refund \u202e00.0001\u202c GMD",
      "\u202a\u202b\u202d",
      "\u2066x\u2069",
      "\u2067x",
      "\u2068x",
      "a\u2028b",
      "a\u2029b",
      // bidi marks: a leading one sets the direction of a page's <bdi> ("\u200f1000 - 1" read "1 - 1000")
      "\u200f1000 - 1",
      "\u061c1000.00-1",
      "a\u200eb"
    ]) {
      expect(err(S, data({ amount: 1, title })).message, JSON.stringify(title)).toBe(
        "data.title must not contain control characters."
      )
    }
    // free text takes line breaks, the separators included, but no bidi controls
    expect(ok(S, data({ amount: 1, description: "a\u2028b\u2029c\nd" })).data.description).toBe("a\u2028b\u2029c\nd")
    expect(err(S, data({ amount: 1, description: "a\u202eb" })).param).toBe("data.description")
    // nothing visible is blank: white space and zero-width characters alone
    for (const title of ["\u200b", " \u200b\u200c\u200d ", "\u2060", "\ufeff", "\u180e", "\u3000"]) {
      expect(err(S, data({ amount: 1, title })).message, JSON.stringify(title)).toBe("data.title must not be blank.")
    }
    // right-to-left text and the characters around the ranges are text; joiners inside text too
    for (const title of [
      "متجر كيرابا",
      "שלום",
      "a\u00a0b",
      "a\u2027b",
      "a\u202fb",
      "a\u2065b",
      "a\u206ab",
      "é",
      "a\u200db",
      "👩\u200d💻",
      "a\u200dc\u061bd",
      "a\u200dc\u061dd"
    ]) {
      expect(ok(S, data({ amount: 1, title })).data.title, JSON.stringify(title)).toBe(title)
    }
  })
})

describe("invoices", () => {
  const S = R.CreateInvoiceBody
  const fullInvoice = {
    amount: 0,
    customer: "cus_123",
    customer_email: "awa@example.gm",
    customer_name: "Awa Jallow",
    customer_phone: "+220 701 2345",
    line_items: [
      { item: "SKU-1", quantity: 1.5, unit_price: 10, total_price: 999 },
      { item: "SKU-2", quantity: 2, unit_price: 0.5 }
    ],
    discount: { type: "percentage", amount: 10 },
    due_date: "2026-12-31",
    notes: "Thanks!\nPay by Friday.",
    invoice_number: "INV-0001",
    callback_url: "https://shop.example/invoices",
    sub_account: "branch-2",
    currency: "USD",
    status: "paid",
    paid_date: "2026-01-01",
    reminder_count: 9
  }

  it("accepts minimal bodies (amount + customer, or line items + email and name)", () => {
    expect(ok(S, data({ amount: 100, customer: "cus_1" }))).toEqual({
      data: { amount: 10000n, customer: "cus_1", currency: "GMD" }
    })
    expect(
      ok(
        S,
        data({
          customer_email: "a@b.gm",
          customer_name: "A B",
          line_items: [{ item: "x", quantity: 1, unit_price: 5 }]
        })
      ).data
    ).toEqual({
      customer_email: "a@b.gm",
      customer_name: "A B",
      line_items: [{ item: "x", quantity: { units: 1n, scale: 0 }, unit_price: 500n }],
      currency: "GMD"
    })
  })

  it("takes customer as any non-empty string of up to 255 characters (code points), NUL included", () => {
    for (const customer of [
      " ",
      "a\nb",
      "\t",
      "a\u0000b",
      "\u0000",
      "x".repeat(255),
      "😀".repeat(255),
      "é".repeat(255)
    ]) {
      expect(ok(S, data({ amount: 1, customer })).data.customer).toBe(customer)
    }
    for (const [customer, message] of [
      ["", "must not be empty"],
      ["x".repeat(256), "at most 255 characters"],
      ["😀".repeat(256), "at most 255 characters"],
      ["\ud800", "valid Unicode"]
    ] as const) {
      const e = err(S, data({ amount: 1, customer }))
      expect(e.param, customer).toBe("data.customer")
      expect(e.message, customer).toContain(message)
    }
    // other text fields keep their rules, with lengths in characters too
    expect(ok(S, data({ amount: 1, customer: "c", customer_name: "😀".repeat(100) })).data.customer_name).toBeDefined()
    expect(err(S, data({ amount: 1, customer: "c", customer_name: " " })).message).toContain("blank")
    expect(err(S, data({ amount: 1, customer: "c", customer_name: "a\nb" })).message).toContain("control")
  })

  it("accepts a full body; total_price and server-owned fields are dropped", () => {
    const d = ok(S, data(fullInvoice)).data
    expect(d).toEqual({
      amount: 0n,
      customer: "cus_123",
      customer_email: "awa@example.gm",
      customer_name: "Awa Jallow",
      customer_phone: "+220 701 2345",
      line_items: [
        { item: "SKU-1", quantity: { units: 15n, scale: 1 }, unit_price: 1000n },
        { item: "SKU-2", quantity: { units: 2n, scale: 0 }, unit_price: 50n }
      ],
      discount: { type: "percentage", amount: { units: 10n, scale: 0 } },
      due_date: { text: "2026-12-31", ms: Date.UTC(2026, 11, 31), date_only: true },
      notes: "Thanks!\nPay by Friday.",
      invoice_number: "INV-0001",
      callback_url: "https://shop.example/invoices",
      sub_account: "branch-2",
      currency: "USD"
    })
    expect(ok(S, data({ amount: 1, customer: "c", invoice_number: 42 })).data.invoice_number).toBe(42)
    expect(ok(S, data({ amount: 1, customer: "c", discount: { type: "fixed", amount: 0.5 } })).data.discount).toEqual({
      type: "fixed",
      amount: 50n
    })
  })

  it("enforces the spec's conditional requirements", () => {
    expect(err(S, data({ customer: "c" }))).toEqual({
      message: "data.amount is required when there are no line_items.",
      param: "data.amount"
    })
    expect(err(S, data({ customer: "c", amount: 0 })).param).toBe("data.amount")
    expect(err(S, data({ customer: "c", line_items: [] })).param).toBe("data.amount")
    expect(err(S, data({ amount: 1 })).param).toBe("data.customer_email")
    // one rule, one message: 0 and -1 are refused alike (the wire said "at least 0" and the core "positive")
    for (const unit_price of [0, -1]) {
      expect(err(S, data({ customer: "c", line_items: [{ item: "x", quantity: 1, unit_price }] }))).toEqual({
        message: "data.line_items[0].unit_price must be greater than 0.",
        param: "data.line_items[0].unit_price"
      })
    }
    for (const invoice_number of [0, -1]) {
      expect(err(S, data({ amount: 1, customer: "c", invoice_number })).message).toBe(
        "data.invoice_number must be greater than 0."
      )
    }
    expect(err(S, data({ amount: 1, customer_email: "a@b.gm" })).param).toBe("data.customer_name")
  })

  it("rejects bad fields with the right param", () => {
    const base = { amount: 1, customer: "c" }
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ amount: 1.234 }, "data.amount"],
      [{ customer: "" }, "data.customer"],
      [{ customer: "x".repeat(L.customer_length_max + 1) }, "data.customer"],
      [{ customer_email: "awa" }, "data.customer_email"],
      [{ customer_phone: "call me" }, "data.customer_phone"],
      [{ line_items: "x" }, "data.line_items"],
      [{ line_items: [{ item: "x", quantity: 0, unit_price: 1 }] }, "data.line_items[0].quantity"],
      [{ line_items: [{ item: "x", quantity: 1.00001, unit_price: 1 }] }, "data.line_items[0].quantity"],
      [{ line_items: [{ item: "x", quantity: 1, unit_price: -1 }] }, "data.line_items[0].unit_price"],
      [{ line_items: [{ item: "x", quantity: 1, unit_price: 1.001 }] }, "data.line_items[0].unit_price"],
      [{ line_items: [{ item: "x", quantity: 1 }] }, "data.line_items[0].unit_price"],
      [{ line_items: [{ quantity: 1, unit_price: 1 }] }, "data.line_items[0].item"],
      [{ discount: { type: "percentage", amount: 100.5 } }, "data.discount.amount"],
      [{ discount: { type: "fixed", amount: 0 } }, "data.discount.amount"],
      [{ discount: { type: "half", amount: 1 } }, "data.discount.type"],
      [{ due_date: "31/12/2026" }, "data.due_date"],
      [{ due_date: "2026-02-30" }, "data.due_date"],
      [{ notes: "x".repeat(L.notes_length_max + 1) }, "data.notes"],
      [{ invoice_number: true }, "data.invoice_number"],
      [{ invoice_number: 1.5 }, "data.invoice_number"],
      [{ invoice_number: "x".repeat(L.invoice_number_length_max + 1) }, "data.invoice_number"],
      [{ callback_url: "ftp://x" }, "data.callback_url"],
      [{ sub_account: 5 }, "data.sub_account"],
      [{ currency: "XOF" }, "data.currency"]
    ]
    for (const [fields, param] of cases) {
      expect({ fields, param: err(S, data({ ...base, ...fields })).param }).toEqual({ fields, param })
    }
    expect(err(S, data({ ...base, invoice_number: true })).message).toBe(
      "data.invoice_number must be a string or a number."
    )
  })

  it("bounds line items and their total", () => {
    const item = { item: "x", quantity: 1, unit_price: 1 }
    const many = Array.from({ length: L.line_items_max + 1 }, () => item)
    expect(err(S, data({ customer: "c", line_items: many }))).toEqual({
      message: `data.line_items must have at most ${L.line_items_max} items.`,
      param: "data.line_items"
    })
    expect(ok(S, data({ customer: "c", line_items: many.slice(1) })).data.line_items).toHaveLength(L.line_items_max)
    const huge = [{ item: "x", quantity: L.quantity_max, unit_price: 1_000_000 }]
    expect(err(S, data({ customer: "c", line_items: huge })).param).toBe("data.line_items")
    expect(err(S, data({ customer: "c", currency: "USD", amount: 10_000_001 })).param).toBe("data.amount")
  })

  it("update: everything optional, no defaults, same field rules", () => {
    const U = R.UpdateInvoiceBody
    expect(ok(U, data({}))).toEqual({ data: {} })
    expect(ok(U, data({ notes: "n", status: "paid" }))).toEqual({ data: { notes: "n" } })
    expect(err(U, data({ amount: "1" })).param).toBe("data.amount")
    expect(err(U, data({ line_items: [{ item: "x", quantity: -1, unit_price: 1 }] })).param).toBe(
      "data.line_items[0].quantity"
    )
  })
})

describe("decodeJson", () => {
  it("parses and decodes a body text in one step", () => {
    expect(R.decodeJson(R.SetRateBody, '{"rate": 70.25}')).toEqual(Result.succeed({ rate: { units: 7025n, scale: 2 } }))
    const bad = R.decodeJson(R.SetRateBody, '{"rate": ')
    expect(Result.isFailure(bad) && bad.failure.message).toBe("Malformed JSON body")
    const precise = R.decodeJson(R.CreatePaymentLinkBody, '{"data":{"amount":100.10000000000000001}}')
    expect(Result.isFailure(precise) && precise.failure.param).toBe("data.amount")
  })
})

describe("list query", () => {
  const S = R.ListQuery
  const q = (input: unknown) => R.decodeRequest(S, input)
  it("defaults and parses query strings", () => {
    expect(q({})).toEqual(Result.succeed({ limit: 10, offset: 0 }))
    expect(q({ limit: "100", offset: "20", sort: "x" })).toEqual(Result.succeed({ limit: 100, offset: 20 }))
    expect(q({ limit: "1" })).toEqual(Result.succeed({ limit: 1, offset: 0 }))
  })
  it("rejects out-of-range and malformed values", () => {
    for (const [input, param] of [
      [{ limit: "0" }, "limit"],
      [{ limit: "101" }, "limit"],
      [{ limit: "ten" }, "limit"],
      [{ limit: "5.5" }, "limit"],
      [{ offset: "-1" }, "offset"],
      [{ offset: ["1", "2"] }, "offset"]
    ] as const) {
      const r = q(input)
      expect(Result.isFailure(r) && r.failure.param).toBe(param)
    }
    const r = q({ limit: "500" })
    expect(Result.isFailure(r) && r.failure.message).toBe(`limit must be a whole number from 1 to ${L.page_limit_max}.`)
  })
})

describe("sandbox helper bodies (decisions §9)", () => {
  it("businesses", () => {
    expect(ok(R.CreateBusinessBody, {})).toEqual({})
    expect(ok(R.CreateBusinessBody, { name: "Shop", webhook_url: "http://127.0.0.1:4000/hook" })).toEqual({
      name: "Shop",
      webhook_url: "http://127.0.0.1:4000/hook"
    })
    expect(err(R.CreateBusinessBody, { webhook_url: "hook" }).param).toBe("webhook_url")
    expect(err(R.CreateBusinessBody, { name: 1 }).param).toBe("name")
  })

  it("rates", () => {
    expect(ok(R.SetRateBody, { rate: 70 })).toEqual({ rate: { units: 70n, scale: 0 } })
    expect(ok(R.SetRateBody, { rate: 70.12345678 })).toEqual({ rate: { units: 7012345678n, scale: 8 } })
    expect(err(R.SetRateBody, { rate: 0 })).toEqual({ message: "rate must be greater than 0.", param: "rate" })
    expect(err(R.SetRateBody, { rate: -70 }).param).toBe("rate")
    expect(err(R.SetRateBody, { rate: "70" }).param).toBe("rate")
    expect(err(R.SetRateBody, { rate: 1.123456789 }).param).toBe("rate")
    expect(err(R.SetRateBody, {})).toEqual({ message: "rate is required.", param: "rate" })
  })

  it("clock advance", () => {
    expect(ok(R.AdvanceClockBody, { seconds: 601 })).toEqual({ seconds: 601 })
    expect(err(R.AdvanceClockBody, { seconds: 0 }).param).toBe("seconds")
    expect(err(R.AdvanceClockBody, { seconds: 1.5 }).message).toBe("seconds must be a whole number.")
    expect(err(R.AdvanceClockBody, { seconds: L.clock_advance_seconds_max + 1 }).param).toBe("seconds")
    expect(err(R.AdvanceClockBody, { seconds: "60" }).param).toBe("seconds")
  })

  it("chain transfers", () => {
    const minimal = { network: "trc20", currency: "USDT", to_address: "TXyz", amount: 25.5 }
    expect(ok(R.ChainTransferBody, minimal)).toEqual({
      network: "TRC20",
      currency: "USDT",
      to_address: "TXyz",
      amount: 25_500_000n
    })
    expect(ok(R.ChainTransferBody, { ...minimal, amount: 0.000001, tx_hash: "0xabc", log_index: 3 })).toEqual({
      network: "TRC20",
      currency: "USDT",
      to_address: "TXyz",
      amount: 1n,
      tx_hash: "0xabc",
      log_index: 3
    })
    expect(err(R.ChainTransferBody, { ...minimal, amount: 0.0000001 })).toEqual({
      message: "amount must have at most 6 decimal places.",
      param: "amount"
    })
    for (const tx_hash of [" 0xabc", "0xabc ", "0x ab"]) {
      expect(err(R.ChainTransferBody, { ...minimal, tx_hash }), tx_hash).toEqual({
        message: "tx_hash must not contain spaces.",
        param: "tx_hash"
      })
    }
    expect(err(R.ChainTransferBody, { ...minimal, network: "BTC" }).param).toBe("network")
    expect(err(R.ChainTransferBody, { ...minimal, currency: "usdt" }).param).toBe("currency")
    expect(err(R.ChainTransferBody, { ...minimal, to_address: "" }).param).toBe("to_address")
    expect(err(R.ChainTransferBody, { ...minimal, log_index: -1 }).param).toBe("log_index")
    expect(err(R.ChainTransferBody, { network: "ARC" }).param).toBe("currency")
  })

  it("payment request pay", () => {
    expect(ok(R.PayPaymentRequestBody, { amount: 5, currency: "USDC", network: "ARC" })).toEqual({
      amount: 5_000_000n,
      currency: "USDC",
      network: "ARC"
    })
    expect(err(R.PayPaymentRequestBody, { amount: 5, currency: "USDC" }).param).toBe("network")
    expect(err(R.PayPaymentRequestBody, { amount: -5, currency: "USDC", network: "ARC" }).param).toBe("amount")
  })

  it("payouts fail_next", () => {
    expect(ok(R.FailNextPayoutsBody, { count: 2 })).toEqual({ count: 2 })
    expect(ok(R.FailNextPayoutsBody, { count: 0 })).toEqual({ count: 0 })
    expect(err(R.FailNextPayoutsBody, { count: -1 }).param).toBe("count")
    expect(err(R.FailNextPayoutsBody, { count: L.payouts_fail_next_max + 1 }).param).toBe("count")
  })
})

describe("properties", () => {
  /** A valid body per schema and a string field (path, max length) inside it. */
  const stringFields: ReadonlyArray<{
    schema: Schema.ConstraintDecoder<unknown>
    body: (s: string) => unknown
    param: string
    max: number
  }> = [
    {
      schema: R.CreatePaymentLinkBody,
      body: (s) => data({ amount: 1, title: s }),
      param: "data.title",
      max: L.string_length_max
    },
    {
      schema: R.CreatePaymentLinkBody,
      body: (s) => data({ amount: 1, description: s }),
      param: "data.description",
      max: L.description_length_max
    },
    {
      schema: R.CreateInvoiceBody,
      body: (s) => data({ amount: 1, customer: s }),
      param: "data.customer",
      max: L.customer_length_max
    },
    {
      schema: R.CreateInvoiceBody,
      body: (s) => data({ amount: 1, customer: "c", notes: s }),
      param: "data.notes",
      max: L.notes_length_max
    },
    {
      schema: R.CreateInvoiceBody,
      body: (s) => data({ customer: "c", line_items: [{ item: s, quantity: 1, unit_price: 1 }] }),
      param: "data.line_items[0].item",
      max: L.line_item_length_max
    },
    {
      schema: R.CreateConversionBody,
      body: (s) => ({
        gmd_amount: 500,
        payout_method: { network: "wave", account_number: "7012345", account_name: s }
      }),
      param: "payout_method.account_name",
      max: L.account_name_length_max
    },
    { schema: R.CreateBusinessBody, body: (s) => ({ name: s }), param: "name", max: L.string_length_max },
    {
      schema: R.ChainTransferBody,
      body: (s) => ({ network: "ARC", currency: "USDC", to_address: "a", amount: 1, tx_hash: s }),
      param: "tx_hash",
      max: L.tx_hash_length_max
    }
  ]

  it("any body with a too-long string is refused, naming that field", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...stringFields),
        fc.integer({ min: 1, max: 500 }),
        fc.constantFrom("a", "é", "€", "x y"),
        (field, over, unit) => {
          const s = unit.repeat(Math.ceil((field.max + over) / unit.length))
          const e = err(field.schema, field.body(s))
          expect(e.param).toBe(field.param)
          expect(e.message).toBe(`${field.param} must be at most ${field.max} characters.`)
        }
      )
    )
  })

  it("the same bodies at the maximum length are accepted", () => {
    for (const field of stringFields) {
      expect(Result.isSuccess(decode(field.schema, field.body("a".repeat(field.max))))).toBe(true)
    }
  })

  it("any invoice line with <= 4-place quantity and 2-place price decodes exactly", () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 1n, max: 10_000_000n }),
        fc.bigInt({ min: 1n, max: 100_000n }),
        (quantity_units, price) => {
          const quantity = Number((Number(quantity_units) / 10_000).toFixed(4))
          const unit_price = Number((Number(price) / 100).toFixed(2))
          const d = ok(R.CreateInvoiceBody, data({ customer: "c", line_items: [{ item: "x", quantity, unit_price }] }))
          const [line] = d.data.line_items ?? []
          expect(line?.unit_price).toBe(price)
          expect(line && (line.quantity.units * 10_000n) / 10n ** BigInt(line.quantity.scale)).toBe(quantity_units)
        }
      )
    )
  })
})
