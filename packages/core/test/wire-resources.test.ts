import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as R from "../src/wire/Requests.ts"
import * as Res from "../src/wire/Resources.ts"

const is = (schema: Schema.Top) => Schema.is(Schema.toType(schema) as Schema.Codec<unknown>)

describe("resource schemas", () => {
  it("every resource has an identifier and a description", () => {
    for (const [name, schema] of Object.entries(Res.resources)) {
      const annotations = schema.ast.annotations ?? {}
      expect({ name, identifier: typeof annotations.identifier }).toEqual({ name, identifier: "string" })
      expect({ name, description: typeof annotations.description }).toEqual({ name, description: "string" })
    }
  })

  it("Schema.toJsonSchemaDocument works on every resource", () => {
    for (const [name, schema] of Object.entries(Res.resources)) {
      const doc = Schema.toJsonSchemaDocument(schema)
      expect({ name, dialect: doc.dialect }).toEqual({ name, dialect: "draft-2020-12" })
      expect(JSON.parse(JSON.stringify(doc))).toEqual(doc)
    }
  })

  it("documents amounts as JSON numbers and timestamps as date-time strings", () => {
    const doc = Schema.toJsonSchemaDocument(Res.Conversion)
    expect(doc.schema).toEqual({ $ref: "#/$defs/Conversion" })
    const props = (doc.definitions.Conversion as { properties: Record<string, { type?: string; format?: string }> })
      .properties
    expect(props.pay_amount?.type).toBe("number")
    expect(props.invoice_expires_at).toMatchObject({ type: "string", format: "date-time" })
    expect(props.createdAt).toMatchObject({ type: "string", format: "date-time" })
  })

  it("accepts spec-shaped examples", () => {
    const at = "2026-11-21T09:00:00.000Z"
    expect(
      is(Res.PaymentIntent)({
        payment_intent_id: "8f1c1a52-2a53-4a53-9e07-0f1c1a522a53",
        intent_secret: "pi_secret",
        payment_link: "https://pay.example/p/1",
        amount: 100,
        transaction_fee: 1.5,
        transaction_fee_type: "business",
        currency: "GMD",
        expires_at: at,
        status: "requires_payment_method"
      })
    ).toBe(true)
    expect(
      is(Res.PaymentRequest)({
        id: "u",
        status: "pending",
        amount: 0,
        currency: "USD",
        metadata: { usd_amount: 10, order: "A" },
        business_id: "b",
        account_id: "a",
        createdAt: at,
        updatedAt: at,
        payment_link_id: null,
        token: null,
        link: "https://pay.example/r/1",
        expiresAt: null,
        callback_url: null
      })
    ).toBe(true)
    expect(
      is(Res.Conversion)({
        id: "c",
        reference: "MP-20261121-090000-0A1B2C3D",
        status: "pending",
        gmd_amount: 1000,
        gmd_rate: 70,
        fee: 1.64,
        fee_currency: "USD",
        pay_amount: 15.93,
        pay_currency: "USDT",
        network: "TRC20",
        pay_address: "TXyz",
        invoice_expires_at: at,
        actually_paid: 0,
        destination: "service_balance",
        payout_method: null,
        markup_share_usd: 0,
        createdAt: at,
        events: [
          { type: "created", at },
          { type: "transfer", at, tx_hash: "0x1", log_index: 0, amount: 7.965 },
          { type: "status", at, from: "pending", to: "underpaid" }
        ]
      })
    ).toBe(true)
    expect(is(Res.ErrorBody)({ error: { message: "x", code: "validation_error" } })).toBe(true)
    expect(is(Res.ErrorBody)({ error: { message: "x", code: "teapot" } })).toBe(false)
    expect(is(Res.InvoiceList)({ data: [], meta: { total: 0, limit: 10, offset: 0 } })).toBe(true)
    expect(is(Res.WebhookEnvelope)({ event: "ramp.paid", payload: { id: "c" } })).toBe(true)
    expect(is(Res.SandboxChainTransfer)({ tx_hash: "0x1", matched: null, applied: false })).toBe(true)
  })
})

describe("request schemas", () => {
  it("Schema.toJsonSchemaDocument works on every request schema and shows amounts as numbers", () => {
    for (const [name, schema] of Object.entries(R.requests)) {
      const doc = Schema.toJsonSchemaDocument(schema)
      expect({ name, dialect: doc.dialect }).toEqual({ name, dialect: "draft-2020-12" })
    }
    const doc = Schema.toJsonSchemaDocument(R.SetRateBody)
    const rate = (doc.schema as { properties: Record<string, unknown> }).properties.rate
    expect(rate).toMatchObject({ type: "number", exclusiveMinimum: 0 })
    const body = Schema.toJsonSchemaDocument(R.CreatePaymentIntentBody).schema as {
      properties: { data: { properties: Record<string, unknown>; required: Array<string> } }
    }
    expect(body.properties.data.required).toEqual(["amount"])
    expect(body.properties.data.properties.amount).toMatchObject({ type: "number", exclusiveMinimum: 0 })
  })
})
