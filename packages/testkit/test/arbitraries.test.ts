import {
  Conversion,
  Decimal,
  DomainError,
  decodeJson,
  decodeRequest,
  Invoice,
  PaymentIntent,
  PaymentLink,
  PaymentRequest,
  Quote,
  Reference,
  Requests,
  Resources
} from "@xaalis/core"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arbitraries } from "../src/index.ts"

const SAMPLES = 200

const show = (u: unknown) => JSON.stringify(u, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))

describe("request arbitraries", () => {
  for (const [operation, { schema, arbitrary }] of Object.entries(Arbitraries.requestArbitraries)) {
    it(`${operation}: ${SAMPLES} samples decode with decodeRequest, also from their JSON text`, () => {
      for (const body of fc.sample(arbitrary as fc.Arbitrary<unknown>, SAMPLES)) {
        const r = decodeRequest(schema, body)
        if (Result.isFailure(r)) expect.fail(`${r.failure.message} in ${show(body)}`)
        const j = decodeJson(schema, JSON.stringify(body))
        if (Result.isFailure(j)) expect.fail(`from JSON text: ${j.failure.message} in ${show(body)}`)
      }
    })
  }

  for (const [operation, { schema, arbitrary }] of Object.entries(Arbitraries.invalidRequestArbitraries)) {
    it(`${operation}: ${SAMPLES} invalid samples fail with one validation_error`, () => {
      for (const body of fc.sample(arbitrary as fc.Arbitrary<unknown>, SAMPLES)) {
        const r = decodeRequest(schema, body)
        if (Result.isSuccess(r)) expect.fail(`decoded an invalid body: ${show(body)}`)
        expect(r.failure).toBeInstanceOf(DomainError)
        expect(r.failure.code).toBe("validation_error")
      }
    })
  }

  it("conversion bodies meet the domain rules at rates 20..100; the domain-invalid ones are refused", () => {
    const ctx = (rate: Decimal.Decimal) => ({
      id: "c",
      reference: Reference.conversionReference(0, 0),
      pay_address: "T",
      now: 0,
      rate,
      config: Quote.defaultConversionConfig
    })
    fc.assert(
      fc.property(Arbitraries.createConversionBody, Arbitraries.rate(20, 100), (body, rate) => {
        const command = decodeRequest(Requests.CreateConversionBody, body)
        if (Result.isFailure(command)) return expect.fail(command.failure.message)
        const step = Conversion.create(command.success, ctx(rate))
        if (Result.isFailure(step)) expect.fail(`${step.failure.message} for ${show(body)} at ${Decimal.format(rate)}`)
      }),
      { numRuns: SAMPLES }
    )
    fc.assert(
      fc.property(Arbitraries.domainInvalidCreateConversionBody, Arbitraries.rate(20, 100), (body, rate) => {
        const command = decodeRequest(Requests.CreateConversionBody, body)
        if (Result.isFailure(command)) return expect.fail(`wire refused ${show(body)}: ${command.failure.message}`)
        const step = Conversion.create(command.success, ctx(rate))
        if (Result.isSuccess(step)) expect.fail(`domain accepted ${show(body)}`)
        else expect(step.failure.code).toBe("validation_error")
      }),
      { numRuns: SAMPLES }
    )
  })
})

describe("request arbitraries meet the domain rules", () => {
  const decoded = <S extends Parameters<typeof decodeRequest>[0]>(schema: S, body: unknown): S["Type"] => {
    const r = decodeRequest(schema, body)
    if (Result.isFailure(r)) return expect.fail(r.failure.message)
    return r.success
  }
  const accepted = (step: Result.Result<unknown, DomainError>, body: unknown) => {
    if (Result.isFailure(step)) expect.fail(`${step.failure.message} for ${show(body)}`)
  }

  it("payment intents, payment links, payment requests (before expires_at, rates 20..100) and invoices", () => {
    fc.assert(
      fc.property(
        Arbitraries.createPaymentIntentBody,
        Arbitraries.createPaymentLinkBody,
        Arbitraries.createPaymentRequestBody,
        Arbitraries.rate(20, 100),
        Arbitraries.createInvoiceBody,
        fc.boolean(),
        (intent, link, request, rate, invoice, draft) => {
          accepted(
            PaymentIntent.create(decoded(Requests.CreatePaymentIntentBody, intent).data, {
              payment_intent_id: "pi",
              intent_secret: "s",
              payment_link: "https://pay.example/pi",
              now: 0,
              test_mode: true,
              config: PaymentIntent.defaultPaymentIntentConfig
            }),
            intent
          )
          accepted(
            PaymentLink.create(decoded(Requests.CreatePaymentLinkBody, link).data, { id: "l", url: "u", now: 0 }),
            link
          )
          accepted(
            PaymentRequest.create(
              Arbitraries.toPaymentRequestCommand(decoded(Requests.CreatePaymentRequestBody, request)),
              { id: "r", link: "u", now: 0, rate, config: PaymentRequest.defaultPaymentRequestConfig }
            ),
            request
          )
          const command = Arbitraries.toInvoiceCommand(decoded(Requests.CreateInvoiceBody, invoice).data)
          const ctx = {
            id: "i",
            reference: "INV-1",
            now: 0,
            business_id: "b",
            account_id: "a",
            merchant_name: "Shop",
            test_mode: false,
            payment_link: null
          }
          accepted(
            draft ? Invoice.createDraft(command, ctx) : Invoice.create(command, { ...ctx, next_invoice_number: 1 }),
            invoice
          )
        }
      ),
      { numRuns: SAMPLES }
    )
  })
})

describe("resource arbitraries", () => {
  for (const [name, arbitrary] of Object.entries(Arbitraries.resourceArbitraries)) {
    it(`${name}: ${SAMPLES} samples are valid ${name} wire objects`, () => {
      const schema = Resources.resources[name as keyof typeof Resources.resources]
      const is = Schema.is(Schema.toType(schema) as Schema.Codec<unknown>)
      for (const value of fc.sample(arbitrary as fc.Arbitrary<unknown>, SAMPLES)) {
        if (!is(value)) expect.fail(`not a ${name}: ${show(value)}`)
        // the wire is JSON: nothing is lost by a round trip
        expect(JSON.parse(JSON.stringify(value))).toStrictEqual(value)
      }
    })
  }
})
