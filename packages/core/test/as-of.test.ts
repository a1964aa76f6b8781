/**
 * Time-driven transitions (conversion and payment-request expiry, payment
 * intent expiry, the overdue mark) happen when their moment passes, not when
 * the scheduler's sweep gets to them: the stored result does not depend on the
 * sweep's time, and `asOf(state, now)` shows exactly that result to a read that
 * comes before the sweep.
 */
import { Conversion, Invoice, PaymentIntent, PaymentRequest } from "@xaalis/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./arbitraries.ts"
import { conversionContext, dec, must, T0 } from "./helpers.ts"

const HOUR = 3_600_000
/** Some time at or after a due moment (up to 10 days later). */
const lateness = fc.integer({ min: 0, max: 240 * HOUR })
/** Some time before a due moment. */
const earliness = fc.integer({ min: 1, max: 240 * HOUR })

const conversion = must(Conversion.create({ gmd_amount: 500000n }, conversionContext)).state
const intent = must(
  PaymentIntent.create(
    { amount: 10_000n },
    {
      payment_intent_id: "5a0a4b5e-7d1c-4c3e-9f58-1f2a3b4c5d6e",
      intent_secret: "pi_secret_abc",
      payment_link: "https://pay.example.gm/p/5a0a4b5e",
      now: T0,
      test_mode: false,
      config: PaymentIntent.defaultPaymentIntentConfig
    }
  )
).state
const request = must(
  PaymentRequest.create(
    { amount: 1000n, expires_at: T0 + HOUR },
    {
      id: "pr1",
      link: "https://pay.example/pr1",
      now: T0,
      rate: dec("70"),
      config: PaymentRequest.defaultPaymentRequestConfig
    }
  )
).state
const invoice = must(
  Invoice.create(
    { amount: 100_000n, customer: "cus_1", due_date: "2026-12-10" },
    {
      id: "inv_1",
      reference: "INV-1",
      now: T0,
      business_id: "biz_1",
      account_id: "acc_1",
      merchant_name: "Serrekunda Textiles",
      test_mode: false,
      payment_link: "https://pay.example.gm/i/inv_1",
      next_invoice_number: 1
    }
  )
).state

interface Machine<S> {
  readonly name: string
  readonly open: S
  readonly due: (s: S) => number
  readonly asOf: (s: S, now: number) => S
  readonly sweep: (s: S, now: number) => S
  readonly status: (s: S) => string
  readonly after: string
}

const machines: ReadonlyArray<Machine<never>> = [
  {
    name: "conversion",
    open: conversion,
    due: (s: Conversion.Conversion) => s.invoice_expires_at,
    asOf: Conversion.asOf,
    sweep: (s: Conversion.Conversion, t: number) => must(Conversion.expire(s, t)).state,
    status: (s: Conversion.Conversion) => s.status,
    after: "expired"
  },
  {
    name: "payment intent",
    open: intent,
    due: (s: PaymentIntent.PaymentIntent) => s.expires_at,
    asOf: PaymentIntent.asOf,
    sweep: (s: PaymentIntent.PaymentIntent, t: number) => must(PaymentIntent.expire(s, t)).state,
    status: (s: PaymentIntent.PaymentIntent) => s.status,
    after: "cancelled"
  },
  {
    name: "payment request",
    open: request,
    due: (s: PaymentRequest.PaymentRequest) => s.expires_at as number,
    asOf: PaymentRequest.asOf,
    sweep: (s: PaymentRequest.PaymentRequest, t: number) => must(PaymentRequest.expire(s, t)).state,
    status: (s: PaymentRequest.PaymentRequest) => s.status,
    after: "expired"
  },
  {
    name: "invoice",
    open: invoice,
    due: (s: Invoice.Invoice) => s.overdue_at as number,
    asOf: Invoice.asOf,
    sweep: (s: Invoice.Invoice, t: number) => must(Invoice.markOverdue(s, t)).state,
    status: (s: Invoice.Invoice) => s.status,
    after: "overdue"
  }
] as never

describe.each(machines.map((m) => [m.name, m] as const))("%s: asOf", (_, m: Machine<never>) => {
  it("before its moment, a read shows the stored state unchanged", () => {
    fc.assert(
      fc.property(earliness, (early) => {
        expect(m.asOf(m.open, m.due(m.open) - early)).toBe(m.open)
      }),
      { numRuns: runs(100) }
    )
  })

  it("at or after it, a read shows what the sweep stores, whenever the sweep runs", () => {
    fc.assert(
      fc.property(lateness, lateness, (readLate, sweepLate) => {
        const due = m.due(m.open)
        const read = m.asOf(m.open, due + readLate)
        expect(m.status(read)).toBe(m.after)
        expect(read).toStrictEqual(m.sweep(m.open, due + sweepLate))
        // once stored, a later read shows the stored state as it is
        const stored = m.sweep(m.open, due + sweepLate)
        expect(m.asOf(stored, due + readLate)).toBe(stored)
      }),
      { numRuns: runs(100) }
    )
  })
})

describe("stamps", () => {
  it("the expiry is stamped when the window closed, not when it was swept", () => {
    const late = conversion.invoice_expires_at + 5 * HOUR
    const swept = Conversion.asOf(conversion, late)
    expect(swept.timeline.slice(-2)).toStrictEqual([
      { type: "status", at: conversion.invoice_expires_at, from: "pending", to: "expired" },
      { type: "expired", at: conversion.invoice_expires_at }
    ])
    expect(PaymentIntent.asOf(intent, intent.expires_at + HOUR).updated_at).toBe(intent.expires_at)
    expect(PaymentRequest.asOf(request, T0 + 3 * HOUR).updated_at).toBe(T0 + HOUR)
    expect(Invoice.asOf(invoice, (invoice.overdue_at as number) + HOUR).updated_at).toBe(invoice.overdue_at)
  })

  it("late funds stamp the expiry at the deadline and the funds when they came", () => {
    const t = conversion.invoice_expires_at + HOUR
    const late = must(
      Conversion.applyTransfer(
        conversion,
        { network: "TRC20", coin: "USDT", tx_hash: "0x1", log_index: 0, amount: 1_000_000n },
        t
      )
    ).state
    expect(late.timeline.slice(-3).map((e) => [e.type, e.at])).toStrictEqual([
      ["status", conversion.invoice_expires_at],
      ["expired", conversion.invoice_expires_at],
      ["late_funds", t]
    ])
  })

  it("a conversion's timeline stays in time order when a payout was recorded after the window closed", () => {
    const mobile = must(
      Conversion.create(
        {
          gmd_amount: 500000n,
          destination: "mobile_money",
          payout_method: { network: "wave", account_number: "7012345", account_name: "Awa Jallow" }
        },
        { ...conversionContext, id: "c2", reference: "MP-20261121-090507-DEADBEEE", pay_address: "TXYW" }
      )
    ).state
    const half = must(
      Conversion.applyTransfer(
        mobile,
        { network: "TRC20", coin: "USDT", tx_hash: "0x1", log_index: 0, amount: 30_000_000n },
        T0 + 1000
      )
    ).state
    const payoutAt = half.invoice_expires_at + 30_000
    const paidOut = must(Conversion.recordPayout(half, { gmd: 200_000n, outcome: "succeeded" }, payoutAt)).state
    const expired = Conversion.asOf(paidOut, payoutAt + HOUR)
    expect(expired.status).toBe("expired")
    const times = expired.timeline.map((e) => e.at)
    expect(times).toStrictEqual([...times].sort((a, b) => a - b))
    expect(expired.timeline.at(-1)).toStrictEqual({ type: "expired", at: payoutAt })
  })

  it("final states are never changed by a read", () => {
    const paid = must(
      Conversion.applyTransfer(
        conversion,
        { network: "TRC20", coin: "USDT", tx_hash: "0x1", log_index: 0, amount: conversion.pay_amount * 10_000n },
        T0
      )
    ).state
    expect(Conversion.asOf(paid, T0 + 100 * HOUR)).toBe(paid)
    const cancelled = must(PaymentIntent.cancel(intent, T0 + 1)).state
    expect(PaymentIntent.asOf(cancelled, T0 + 100 * HOUR)).toBe(cancelled)
    const paidInvoice = must(Invoice.payManually(invoice, T0 + 1)).state
    expect(Invoice.asOf(paidInvoice, T0 + 10_000 * HOUR)).toBe(paidInvoice)
    const testInvoice = { ...invoice, test_mode: true }
    expect(Invoice.asOf(testInvoice, T0 + 10_000 * HOUR)).toBe(testInvoice)
  })
})
