import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ErrorCode } from "../src/Errors.ts"
import * as Invoice from "../src/invoice/Invoice.ts"
import * as Totals from "../src/invoice/Totals.ts"
import * as Decimal from "../src/money/Decimal.ts"
import type { Step, Transition } from "../src/Transition.ts"

const dec = (text: string): Decimal.Decimal => {
  const d = Decimal.parse(text)
  if (d === undefined) throw new Error(`bad decimal ${text}`)
  return d
}

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0)

const okOf = <S, E, F>(step: Step<S, E, F>): Transition<S, E, F> => {
  if (Result.isFailure(step)) throw new Error(`expected success, got ${step.failure.code}: ${step.failure.message}`)
  return step.success
}
const codeOf = <S, E, F>(step: Step<S, E, F>): ErrorCode | "ok" => (Result.isFailure(step) ? step.failure.code : "ok")

const totalsOf = (input: Totals.TotalsInput): Totals.Totals => {
  const t = Totals.totals(input)
  if (t instanceof Error) throw new Error(`expected totals, got ${t.code}: ${t.message}`)
  return t
}
const totalsError = (input: Totals.TotalsInput): { code: string; param: string | undefined } => {
  const t = Totals.totals(input)
  if (!(t instanceof Error)) throw new Error("expected a validation error")
  return { code: t.code, param: t.param }
}

const ctx: Invoice.InvoiceContext = {
  id: "inv_1",
  reference: "INV-REF-1",
  now: T0,
  business_id: "biz_1",
  account_id: "acc_1",
  merchant_name: "Serrekunda Textiles",
  test_mode: false,
  payment_link: "https://pay.example.gm/i/inv_1"
}
const publish: Invoice.PublishContext = { ...ctx, next_invoice_number: 42 }
const base: Invoice.CreateInvoice = { amount: 100_000n, customer: "cus_1", due_date: "2026-02-10" }

const published = (input: Invoice.CreateInvoice = base, c: Invoice.PublishContext = publish) =>
  okOf(Invoice.create(input, c)).state
const draft = (input: Invoice.CreateInvoice = base, c: Invoice.InvoiceContext = ctx) =>
  okOf(Invoice.createDraft(input, c)).state
const paidInvoice = () => okOf(Invoice.payManually(published(), T0 + 1)).state
const overdueInvoice = () => okOf(Invoice.markOverdue(published(), Date.UTC(2026, 1, 11))).state

describe("invoice totals: worked examples (decisions §6)", () => {
  it("simple invoice: sub_total is the amount, no discount", () => {
    expect(totalsOf({ amount: 100_000n })).toEqual({
      line_items: [],
      sub_total: 100_000n,
      discount_amount: 0n,
      total: 100_000n,
      amount: 100_000n,
      type: "simple"
    })
  })

  it("fractional quantities: 2.5 x 12.99 = 32.475 -> 32.48; 1.3333 x 10.00 = 13.333 -> 13.33", () => {
    const t = totalsOf({
      line_items: [
        { item: "fabric-m", quantity: dec("2.5"), unit_price: 1299n },
        { item: "thread", quantity: dec("1.3333"), unit_price: 1000n }
      ]
    })
    expect(t.line_items.map((li) => li.total_price)).toEqual([3248n, 1333n])
    expect(t.sub_total).toBe(4581n)
    expect(t.total).toBe(4581n)
    expect(t.amount).toBe(4581n)
    expect(t.type).toBe("professional")
  })

  it("half-up ties of half a butut round up: 0.5 x 1, 1.5 x 3, 0.0001 x 5000; just below a tie rounds down", () => {
    expect(Totals.lineTotal(dec("0.5"), 1n)).toBe(1n) // 0.5 butut -> 1
    expect(Totals.lineTotal(dec("1.5"), 3n)).toBe(5n) // 4.5 -> 5
    expect(Totals.lineTotal(dec("0.0001"), 5000n)).toBe(1n) // 0.5 -> 1
    expect(Totals.lineTotal(dec("0.0001"), 4999n)).toBe(0n) // 0.4999 -> 0
    expect(Totals.lineTotal(dec("2.5"), 1n)).toBe(3n) // 2.5 -> 3 (not banker's 2)
    expect(Totals.lineTotal(dec("3"), 1250n)).toBe(3750n) // whole quantity: exact
  })

  it("line items with a fixed discount: 3 x 15.00 + 0.25 x 20.00 = 50.00, less 7.50 = 42.50", () => {
    const t = totalsOf({
      line_items: [
        { item: "shirt", quantity: dec("3"), unit_price: 1500n },
        { item: "delivery", quantity: dec("0.25"), unit_price: 2000n }
      ],
      discount: { type: "fixed", amount: 750n }
    })
    expect(t.sub_total).toBe(5000n)
    expect(t.discount_amount).toBe(750n)
    expect(t.total).toBe(4250n)
    expect(t.amount).toBe(4250n)
  })

  it("percentage discounts round half-up to the butut: 50% of 10.01 = 5.005 -> 5.01; 12.5% of 10.04 = 1.255 -> 1.26", () => {
    const a = totalsOf({ amount: 1001n, discount: { type: "percentage", amount: dec("50") } })
    expect([a.discount_amount, a.total]).toEqual([501n, 500n])
    const b = totalsOf({ amount: 1004n, discount: { type: "percentage", amount: dec("12.5") } })
    expect([b.discount_amount, b.total]).toEqual([126n, 878n])
    const c = totalsOf({ amount: 10_000n, discount: { type: "percentage", amount: dec("33.3333") } })
    expect([c.discount_amount, c.total]).toEqual([3333n, 6667n]) // 33.33333 -> 33.33
  })

  it("a 100% discount gives total 0", () => {
    const t = totalsOf({ amount: 25_000n, discount: { type: "percentage", amount: dec("100") } })
    expect([t.sub_total, t.discount_amount, t.total, t.amount]).toEqual([25_000n, 25_000n, 0n, 0n])
  })

  it("a fixed discount above sub_total is rejected; equal to it gives 0", () => {
    expect(totalsError({ amount: 5000n, discount: { type: "fixed", amount: 5001n } })).toEqual({
      code: "validation_error",
      param: "discount.amount"
    })
    expect(totalsOf({ amount: 5000n, discount: { type: "fixed", amount: 5000n } }).total).toBe(0n)
  })

  it("the amount is ignored when line items are present", () => {
    const t = totalsOf({ amount: 999_999n, line_items: [{ item: "a", quantity: dec("2"), unit_price: 700n }] })
    expect(t.amount).toBe(1400n)
  })

  it("rejects invalid inputs with validation_error naming the field", () => {
    const cases: Array<[Totals.TotalsInput, string]> = [
      [{}, "amount"],
      [{ line_items: [] }, "amount"],
      [{ amount: 0n }, "amount"],
      [{ amount: -5n }, "amount"],
      [{ line_items: [{ item: "a", quantity: dec("0.00001"), unit_price: 100n }] }, "line_items[0].quantity"],
      [{ line_items: [{ item: "a", quantity: dec("0"), unit_price: 100n }] }, "line_items[0].quantity"],
      [{ line_items: [{ item: "a", quantity: dec("-1"), unit_price: 100n }] }, "line_items[0].quantity"],
      [
        {
          line_items: [
            { item: "a", quantity: dec("1"), unit_price: 100n },
            { item: "b", quantity: dec("1"), unit_price: 0n }
          ]
        },
        "line_items[1].unit_price"
      ],
      [{ line_items: [{ item: "", quantity: dec("1"), unit_price: 100n }] }, "line_items[0].item"],
      [{ amount: 100n, discount: { type: "percentage", amount: dec("0") } }, "discount.amount"],
      [{ amount: 100n, discount: { type: "percentage", amount: dec("100.0001") } }, "discount.amount"],
      [{ amount: 100n, discount: { type: "percentage", amount: dec("-5") } }, "discount.amount"],
      [{ amount: 100n, discount: { type: "percentage", amount: dec("1.00001") } }, "discount.amount"],
      [{ amount: 100n, discount: { type: "fixed", amount: 0n } }, "discount.amount"]
    ]
    for (const [input, param] of cases) expect(totalsError(input)).toEqual({ code: "validation_error", param })
  })

  it("accepts a quantity with exactly 4 places, and trailing zeros beyond them", () => {
    expect(totalsOf({ line_items: [{ item: "a", quantity: dec("0.1234"), unit_price: 10_000n }] }).sub_total).toBe(
      1234n
    )
    expect(
      totalsOf({ line_items: [{ item: "a", quantity: Decimal.make(1_500_000n, 6), unit_price: 3n }] }).sub_total
    ).toBe(5n)
  })
})

// Quantities up to 4 places, prices up to 10,000,000.00.
const quantityArb = fc
  .tuple(fc.bigInt({ min: 1n, max: 100_000_000n }), fc.integer({ min: 0, max: 4 }))
  .map(([units, scale]) => Decimal.make(units, scale))
const lineItemArb = fc.record({
  item: fc.string({ minLength: 1, maxLength: 20 }),
  quantity: quantityArb,
  unit_price: fc.bigInt({ min: 1n, max: 1_000_000_000n })
})
const percentArb = fc
  .tuple(fc.bigInt({ min: 1n, max: 1_000_000n }), fc.constant(4))
  .map(([units, scale]) => Decimal.make(units, scale))

describe("invoice totals: properties", () => {
  it("each total_price is quantity x unit_price to the nearest butut, ties up; sub_total is their sum", () => {
    fc.assert(
      fc.property(fc.array(lineItemArb, { minLength: 1, maxLength: 8 }), (items) => {
        const t = totalsOf({ line_items: items })
        let sum = 0n
        for (const li of t.line_items) {
          const exact = li.quantity.units * li.unit_price // in units of 10^-scale butut
          const scaled = li.total_price * 10n ** BigInt(li.quantity.scale)
          const one = 10n ** BigInt(li.quantity.scale) // one butut in those units
          // nearest butut, ties up: -1/2 < scaled - exact <= 1/2 (in butut), without division
          expect(2n * (scaled - exact) > -one && 2n * (scaled - exact) <= one).toBe(true)
          sum += li.total_price
        }
        expect(t.sub_total).toBe(sum)
        expect(t.type).toBe("professional")
      })
    )
  })

  it("total = amount = sub_total - discount >= 0 for every valid discount", () => {
    const discountArb = fc.oneof(
      fc.record({ type: fc.constant("percentage" as const), amount: percentArb }),
      fc.record({ type: fc.constant("fixed" as const), amount: fc.bigInt({ min: 1n, max: 2_000_000_000n }) })
    )
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({ amount: fc.bigInt({ min: 1n, max: 10_000_000_000n }) }),
          fc.record({ line_items: fc.array(lineItemArb, { minLength: 1, maxLength: 5 }) })
        ),
        discountArb,
        (body, discount) => {
          const t = Totals.totals({ ...body, discount })
          if (t instanceof Error) {
            // the only way to fail here: a fixed discount above the sub_total
            const sub = totalsOf(body).sub_total
            expect(discount.type === "fixed" && discount.amount > sub).toBe(true)
            expect(t.code).toBe("validation_error")
            return
          }
          expect(t.total).toBe(t.sub_total - t.discount_amount)
          expect(t.amount).toBe(t.total)
          expect(t.total >= 0n).toBe(true)
          expect(t.discount_amount <= t.sub_total).toBe(true)
        }
      )
    )
  })

  it("a 100% discount always gives total 0", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.record({ amount: fc.bigInt({ min: 1n, max: 10_000_000_000n }) }),
          fc.record({ line_items: fc.array(lineItemArb, { minLength: 1, maxLength: 5 }) })
        ),
        fc.constantFrom(dec("100"), Decimal.make(1_000_000n, 4)),
        (body, hundred) => {
          const t = totalsOf({ ...body, discount: { type: "percentage", amount: hundred } })
          expect(t.total).toBe(0n)
          expect(t.discount_amount).toBe(t.sub_total)
        }
      )
    )
  })
})

describe("invoice creation", () => {
  it("Create Invoice publishes: not-paid, sent_date now, number from the sequence (consumed), customer notified", () => {
    const step = okOf(
      Invoice.create(
        {
          currency: "USD",
          customer_email: "awa@example.gm",
          customer_name: "Awa Jallow",
          line_items: [{ item: "sku-1", quantity: dec("2"), unit_price: 1250n }],
          discount: { type: "percentage", amount: dec("10") },
          due_date: "2026-02-10",
          notes: "Thank you",
          callback_url: "https://merchant.example/hooks",
          sub_account: "sub_9"
        },
        publish
      )
    )
    const inv = step.state
    expect(inv).toMatchObject({
      id: "inv_1",
      reference: "INV-REF-1",
      type: "professional",
      status: "not-paid",
      customer: null,
      customer_email: "awa@example.gm",
      customer_name: "Awa Jallow",
      currency: "USD",
      merchant_name: "Serrekunda Textiles",
      sub_total: 2500n,
      total: 2250n,
      amount: 2250n,
      invoice_number: 42,
      sent_date: T0,
      paid_date: null,
      reminder_count: 0,
      test_mode: false,
      created_at: T0,
      updated_at: T0,
      due_date: "2026-02-10",
      overdue_at: Date.UTC(2026, 1, 11)
    })
    expect(inv.line_items[0]?.total_price).toBe(2500n)
    expect(step.events).toEqual([])
    expect(step.effects).toEqual([
      { type: "invoice_number_consumed", invoice_number: 42 },
      { type: "notify_customer", reason: "invoice" }
    ])
  })

  it("a caller's invoice_number is kept and the sequence is not consumed", () => {
    for (const n of ["INV-2026-007", 7]) {
      const step = okOf(Invoice.create({ ...base, invoice_number: n }, publish))
      expect(step.state.invoice_number).toBe(n)
      expect(step.effects).toEqual([{ type: "notify_customer", reason: "invoice" }])
    }
  })

  it("Create Draft: status draft, sent_date null, no number, nothing consumed or sent", () => {
    const step = okOf(Invoice.createDraft(base, ctx))
    expect(step.state).toMatchObject({ status: "draft", sent_date: null, invoice_number: null, type: "simple" })
    expect(step.events).toEqual([])
    expect(step.effects).toEqual([])
  })

  it("currency defaults to GMD", () => {
    expect(published().currency).toBe("GMD")
  })

  it("due_date: a date becomes overdue at 00:00 UTC of the next day, a date-time at that instant", () => {
    expect(published({ ...base, due_date: "2026-12-31" }).overdue_at).toBe(Date.UTC(2027, 0, 1))
    expect(published({ ...base, due_date: "2026-03-10T15:30:00+01:00" }).overdue_at).toBe(Date.UTC(2026, 2, 10, 14, 30))
    expect(published({ ...base, due_date: "2026-03-10T15:30:00Z" }).due_date).toBe("2026-03-10T15:30:00Z")
    // without a zone: The Gambia's time, which is UTC; kept as sent
    expect(published({ ...base, due_date: "2026-03-10T15:30:00" }).overdue_at).toBe(Date.UTC(2026, 2, 10, 15, 30))
    expect(published({ ...base, due_date: "2026-03-10T15:30:00" }).due_date).toBe("2026-03-10T15:30:00")
    const noDue = published({ amount: 100n, customer: "c" })
    expect([noDue.due_date, noDue.overdue_at]).toEqual([null, null])
  })

  it("rejects the create rules of the spec with validation_error", () => {
    const cases: Array<[Invoice.CreateInvoice, string]> = [
      [{ customer: "c" }, "amount"],
      [{ amount: 100n }, "customer_email"],
      [{ amount: 100n, customer_email: "a@b.gm" }, "customer_name"],
      [{ amount: 100n, customer_name: "Awa" }, "customer_email"],
      [{ amount: 100n, customer: "" }, "customer"],
      [{ amount: 100n, customer: "x".repeat(256) }, "customer"],
      [{ amount: 100n, customer_email: "not-an-email", customer_name: "Awa" }, "customer_email"],
      [{ amount: 100n, customer_email: "a@b.gm", customer_name: "   " }, "customer_name"],
      [{ ...base, due_date: "10/02/2026" }, "due_date"],
      [{ ...base, due_date: "2026-02-30" }, "due_date"],
      [{ ...base, due_date: "2026-02-10T24:00:00" }, "due_date"],
      [{ ...base, invoice_number: "" }, "invoice_number"],
      [{ ...base, invoice_number: 0 }, "invoice_number"],
      [{ ...base, invoice_number: 1.5 }, "invoice_number"],
      [{ ...base, callback_url: "ftp://x" }, "callback_url"],
      [{ ...base, customer_phone: "call me" }, "customer_phone"],
      [{ ...base, currency: "EUR" as "GMD" }, "currency"]
    ]
    for (const [input, param] of cases) {
      for (const step of [Invoice.create(input, publish), Invoice.createDraft(input, ctx)]) {
        expect(Result.isFailure(step)).toBe(true)
        if (Result.isFailure(step)) expect([step.failure.code, step.failure.param]).toEqual(["validation_error", param])
      }
    }
  })

  it("customer: any non-empty string up to 255 characters (counted as characters, not UTF-16 units)", () => {
    expect(published({ amount: 100n, customer: "x".repeat(255) }).customer).toHaveLength(255)
    expect(published({ amount: 100n, customer: "🙂".repeat(255) }).customer).toBe("🙂".repeat(255))
    expect(codeOf(Invoice.create({ amount: 100n, customer: "🙂".repeat(256) }, publish))).toBe("validation_error")
    // customer alone suffices; email and name alone suffice
    expect(codeOf(Invoice.create({ amount: 100n, customer_email: "a@b.gm", customer_name: "Awa" }, publish))).toBe("ok")
  })

  it("refuses a sequence number that is not a positive whole number", () => {
    expect(codeOf(Invoice.create(base, { ...ctx, next_invoice_number: 0 }))).toBe("validation_error")
    expect(codeOf(Invoice.send(draft(), 2.5, T0))).toBe("validation_error")
  })
})

describe("invoice transitions", () => {
  it("send: draft -> not-paid, sent_date set, next number consumed", () => {
    const step = okOf(Invoice.send(draft(), 7, T0 + 1000))
    expect(step.state).toMatchObject({
      status: "not-paid",
      sent_date: T0 + 1000,
      invoice_number: 7,
      updated_at: T0 + 1000
    })
    expect(step.effects).toEqual([
      { type: "invoice_number_consumed", invoice_number: 7 },
      { type: "notify_customer", reason: "invoice" }
    ])
  })

  it("send keeps a draft's own number and consumes nothing", () => {
    const step = okOf(Invoice.send(draft({ ...base, invoice_number: "A-1" }), 7, T0))
    expect(step.state.invoice_number).toBe("A-1")
    expect(step.effects).toEqual([{ type: "notify_customer", reason: "invoice" }])
  })

  it("remind increments reminder_count on not-paid and overdue, status unchanged", () => {
    const once = okOf(Invoice.remind(published(), T0 + 1))
    expect(once.state).toMatchObject({ status: "not-paid", reminder_count: 1 })
    expect(once.effects).toEqual([{ type: "notify_customer", reason: "reminder" }])
    const twice = okOf(Invoice.remind(once.state, T0 + 2)).state
    expect(twice.reminder_count).toBe(2)
    expect(okOf(Invoice.remind(overdueInvoice(), T0 + 3)).state).toMatchObject({ status: "overdue", reminder_count: 1 })
  })

  it("manual pay: not-paid or overdue -> paid with paid_date and no event", () => {
    for (const inv of [published(), overdueInvoice()]) {
      const step = okOf(Invoice.payManually(inv, T0 + 5))
      expect(step.state).toMatchObject({ status: "paid", paid_date: T0 + 5 })
      expect(step.events).toEqual([])
    }
  })

  it("customer pays: -> paid with event paymentrequest.success carrying the paid invoice", () => {
    for (const inv of [published(), overdueInvoice()]) {
      const step = okOf(Invoice.customerPays(inv, T0 + 5))
      expect(step.state).toMatchObject({ status: "paid", paid_date: T0 + 5 })
      expect(step.events).toEqual([{ type: "paymentrequest.success", invoice: step.state }])
    }
  })

  it("overdue: from 00:00 UTC after the due date, live mode, event invoice.overdue with the invoice", () => {
    const inv = published()
    expect(Invoice.isDueForOverdue(inv, Date.UTC(2026, 1, 11) - 1)).toBe(false)
    expect(codeOf(Invoice.markOverdue(inv, Date.UTC(2026, 1, 11) - 1))).toBe("invalid_state")
    expect(Invoice.isDueForOverdue(inv, Date.UTC(2026, 1, 11))).toBe(true)
    const step = okOf(Invoice.markOverdue(inv, Date.UTC(2026, 1, 11)))
    expect(step.state.status).toBe("overdue")
    expect(step.state.due_date).toBe("2026-02-10")
    expect(step.events).toEqual([{ type: "invoice.overdue", invoice: step.state }])
  })

  it("update recomputes totals and keeps status, dates and counters", () => {
    const inv = okOf(Invoice.remind(published(), T0 + 1)).state
    const step = okOf(
      Invoice.update(
        inv,
        {
          line_items: [{ item: "x", quantity: dec("1.5"), unit_price: 333n }],
          discount: { type: "fixed", amount: 100n },
          notes: "revised"
        },
        T0 + 2
      )
    )
    expect(step.state).toMatchObject({
      type: "professional",
      sub_total: 500n, // 499.5 -> 500
      total: 400n,
      amount: 400n,
      notes: "revised",
      status: "not-paid",
      reminder_count: 1,
      sent_date: T0,
      invoice_number: 42,
      created_at: T0,
      updated_at: T0 + 2
    })
    expect(step.events).toEqual([])
    expect(step.effects).toEqual([])
  })

  it("update of a simple invoice keeps its pre-discount amount when only the discount changes", () => {
    const inv = published({ ...base, discount: { type: "fixed", amount: 10_000n } })
    expect(inv.amount).toBe(90_000n)
    const next = okOf(Invoice.update(inv, { discount: { type: "percentage", amount: dec("50") } }, T0)).state
    expect([next.sub_total, next.amount]).toEqual([100_000n, 50_000n])
    const cleared = okOf(Invoice.update(next, { discount: null }, T0)).state
    expect([cleared.sub_total, cleared.amount, cleared.discount]).toEqual([100_000n, 100_000n, null])
  })

  it("update: removing line items needs an amount; null clears optional fields; rules are re-checked", () => {
    const pro = published({ customer: "c", line_items: [{ item: "a", quantity: dec("1"), unit_price: 500n }] })
    expect(codeOf(Invoice.update(pro, { line_items: [] }, T0))).toBe("validation_error")
    const simple = okOf(Invoice.update(pro, { line_items: [], amount: 800n }, T0)).state
    expect([simple.type, simple.amount, simple.line_items]).toEqual(["simple", 800n, []])
    expect(codeOf(Invoice.update(published(), { customer: null }, T0))).toBe("validation_error")
    expect(codeOf(Invoice.update(published(), { discount: { type: "fixed", amount: 100_001n } }, T0))).toBe(
      "validation_error"
    )
    expect(codeOf(Invoice.update(published(), { invoice_number: null }, T0))).toBe("validation_error")
    expect(
      okOf(Invoice.update(draft({ ...base, invoice_number: 3 }), { invoice_number: null }, T0)).state.invoice_number
    ).toBe(null)
    const moved = okOf(Invoice.update(published(), { due_date: "2026-05-01" }, T0)).state
    expect(moved.overdue_at).toBe(Date.UTC(2026, 4, 2))
    expect(okOf(Invoice.update(moved, { due_date: null }, T0)).state.overdue_at).toBe(null)
  })

  it('update: customer "" changes nothing on an invoice without a customer id and never replaces one', () => {
    const withId = published({ ...base, customer_email: "awa@example.gm", customer_name: "Awa" })
    // §6: a customer id is a non-empty string, even when an email and a name would let it go
    const refused = Invoice.update(withId, { customer: "" }, T0)
    expect(codeOf(refused)).toBe("validation_error")
    expect(Result.isFailure(refused) ? refused.failure.message : "").toBe(
      "customer must be a non-empty string; send null to remove the customer id."
    )
    const without = okOf(Invoice.update(withId, { customer: null }, T0)).state
    expect(without.customer).toBe(null)
    // read back, an invoice without an id shows "": echoed, it is the same invoice
    const echoed = okOf(Invoice.update(without, { customer: "", notes: "thanks" }, T0)).state
    expect([echoed.customer, echoed.notes]).toEqual([null, "thanks"])
    expect(okOf(Invoice.update(without, { customer: "cus_2" }, T0)).state.customer).toBe("cus_2")
  })

  it("update may edit a draft and an overdue invoice without changing their status", () => {
    expect(okOf(Invoice.update(draft(), { amount: 5n }, T0)).state).toMatchObject({ status: "draft", amount: 5n })
    expect(okOf(Invoice.update(overdueInvoice(), { amount: 5n }, T0)).state).toMatchObject({
      status: "overdue",
      amount: 5n
    })
    // an overdue invoice keeps a due date: it may move, not go
    expect(okOf(Invoice.update(overdueInvoice(), { due_date: "2099-01-01" }, T0)).state.status).toBe("overdue")
    expect(codeOf(Invoice.update(overdueInvoice(), { due_date: null }, T0))).toBe("validation_error")
  })

  describe("every illegal transition fails with its exact code", () => {
    const cmds: Record<string, Invoice.InvoiceCommand> = {
      update: { type: "update", input: { amount: 1n } },
      send: { type: "send", next_invoice_number: 99 },
      remind: { type: "remind" },
      pay: { type: "pay" },
      customer_pay: { type: "customer_pay" },
      mark_overdue: { type: "mark_overdue" }
    }
    const late = Date.UTC(2030, 0, 1)
    const table: Array<[string, () => Invoice.Invoice, keyof typeof cmds, ErrorCode]> = [
      ["draft", () => draft(), "remind", "invalid_state"],
      ["draft", () => draft(), "pay", "invalid_state"],
      ["draft", () => draft(), "customer_pay", "invalid_state"],
      ["draft", () => draft(), "mark_overdue", "invalid_state"],
      ["not-paid", () => published(), "send", "invalid_state"],
      ["overdue", () => overdueInvoice(), "send", "invalid_state"],
      ["overdue", () => overdueInvoice(), "mark_overdue", "invalid_state"],
      ["paid", paidInvoice, "pay", "already_paid"],
      ["paid", paidInvoice, "customer_pay", "already_paid"],
      ["paid", paidInvoice, "update", "already_paid"],
      ["paid", paidInvoice, "remind", "already_paid"],
      ["paid", paidInvoice, "send", "invalid_state"],
      ["paid", paidInvoice, "mark_overdue", "invalid_state"],
      [
        "not-paid in test mode",
        () => published(base, { ...publish, test_mode: true }),
        "mark_overdue",
        "invalid_state"
      ],
      ["not-paid without due date", () => published({ amount: 1n, customer: "c" }), "mark_overdue", "invalid_state"]
    ]
    for (const [status, make, cmd, code] of table) {
      it(`${cmd} on ${status} -> ${code}`, () => {
        const command = cmds[cmd]
        if (command === undefined) throw new Error(cmd)
        expect(codeOf(Invoice.transition(make(), command, late))).toBe(code)
      })
    }
  })

  it("paid is final under any sequence of commands", () => {
    const commandArb = fc.oneof(
      fc.constant<Invoice.InvoiceCommand>({ type: "pay" }),
      fc.constant<Invoice.InvoiceCommand>({ type: "customer_pay" }),
      fc.constant<Invoice.InvoiceCommand>({ type: "remind" }),
      fc.constant<Invoice.InvoiceCommand>({ type: "mark_overdue" }),
      fc.integer({ min: 1, max: 1000 }).map((n): Invoice.InvoiceCommand => ({ type: "send", next_invoice_number: n })),
      fc
        .bigInt({ min: 1n, max: 10n ** 9n })
        .map((a): Invoice.InvoiceCommand => ({ type: "update", input: { amount: a } }))
    )
    fc.assert(
      fc.property(fc.array(commandArb, { maxLength: 20 }), fc.integer({ min: 0, max: 10 ** 6 }), (commands, dt) => {
        const start = paidInvoice()
        let state = start
        for (const c of commands) {
          const step = Invoice.transition(state, c, Date.UTC(2030, 0, 1) + dt)
          expect(Result.isFailure(step)).toBe(true)
          if (Result.isSuccess(step)) state = step.success.state
        }
        expect(state).toBe(start)
      })
    )
  })
})

// ---------------------------------------------------------------------------
// Model-based test: the machine against a model of status, reminder_count, paid.

interface Model {
  status: Invoice.InvoiceStatus
  reminder_count: number
  paid: boolean
  numbered: boolean
  next_number: number
  amount: bigint
  readonly test_mode: boolean
  readonly overdue_at: number
}
interface Real {
  invoice: Invoice.Invoice
  next_number: number
  now: number
}

const expectOutcome = <S, E, F>(step: Step<S, E, F>, expected: ErrorCode | "ok"): Transition<S, E, F> | undefined => {
  expect(codeOf(step)).toBe(expected)
  return Result.isSuccess(step) ? step.success : undefined
}

const same = (m: Model, r: Real): void => {
  expect(r.invoice.status).toBe(m.status)
  expect(r.invoice.reminder_count).toBe(m.reminder_count)
  expect(r.invoice.paid_date !== null).toBe(m.paid)
  expect(r.invoice.invoice_number !== null).toBe(m.numbered)
  expect(r.invoice.amount).toBe(m.amount)
  expect(r.next_number).toBe(m.next_number)
}

class Send implements fc.Command<Model, Real> {
  check = () => true
  run(m: Model, r: Real): void {
    r.now += 1
    const t = expectOutcome(
      Invoice.send(r.invoice, r.next_number, r.now),
      m.status === "draft" ? "ok" : "invalid_state"
    )
    if (t !== undefined) {
      expect(t.state.sent_date).toBe(r.now)
      const consumed = t.effects.filter((e) => e.type === "invoice_number_consumed")
      expect(consumed.length).toBe(m.numbered ? 0 : 1)
      if (!m.numbered) {
        expect(t.state.invoice_number).toBe(r.next_number)
        r.next_number += 1
        m.next_number += 1
      }
      r.invoice = t.state
      m.status = "not-paid"
      m.numbered = true
    }
    same(m, r)
  }
  toString = () => "send"
}

class Remind implements fc.Command<Model, Real> {
  check = () => true
  run(m: Model, r: Real): void {
    r.now += 1
    const expected = m.paid ? "already_paid" : m.status === "draft" ? "invalid_state" : "ok"
    const t = expectOutcome(Invoice.remind(r.invoice, r.now), expected)
    if (t !== undefined) {
      r.invoice = t.state
      m.reminder_count += 1
    }
    same(m, r)
  }
  toString = () => "remind"
}

class Pay implements fc.Command<Model, Real> {
  readonly by_customer: boolean
  constructor(by_customer: boolean) {
    this.by_customer = by_customer
  }
  check = () => true
  run(m: Model, r: Real): void {
    r.now += 1
    const expected = m.paid ? "already_paid" : m.status === "draft" ? "invalid_state" : "ok"
    const step = this.by_customer ? Invoice.customerPays(r.invoice, r.now) : Invoice.payManually(r.invoice, r.now)
    const t = expectOutcome(step, expected)
    if (t !== undefined) {
      expect(t.state.paid_date).toBe(r.now)
      expect(t.events.map((e) => e.type)).toEqual(this.by_customer ? ["paymentrequest.success"] : [])
      r.invoice = t.state
      m.status = "paid"
      m.paid = true
    }
    same(m, r)
  }
  toString = () => (this.by_customer ? "customer_pay" : "pay")
}

class MarkOverdue implements fc.Command<Model, Real> {
  readonly late: boolean
  constructor(late: boolean) {
    this.late = late
  }
  check = () => true
  run(m: Model, r: Real): void {
    const now = this.late ? m.overdue_at : m.overdue_at - 1
    const expected = m.test_mode || m.status !== "not-paid" || !this.late ? "invalid_state" : "ok"
    const t = expectOutcome(Invoice.markOverdue(r.invoice, now), expected)
    if (t !== undefined) {
      expect(t.events).toEqual([{ type: "invoice.overdue", invoice: t.state }])
      r.invoice = t.state
      m.status = "overdue"
    }
    same(m, r)
  }
  toString = () => `mark_overdue(${this.late ? "late" : "early"})`
}

class Update implements fc.Command<Model, Real> {
  readonly amount: bigint
  constructor(amount: bigint) {
    this.amount = amount
  }
  check = () => true
  run(m: Model, r: Real): void {
    r.now += 1
    const t = expectOutcome(Invoice.update(r.invoice, { amount: this.amount }, r.now), m.paid ? "already_paid" : "ok")
    if (t !== undefined) {
      r.invoice = t.state
      m.amount = this.amount
    }
    same(m, r)
  }
  toString = () => `update(${this.amount})`
}

describe("invoice machine: model-based", () => {
  it("behaves like the model under random command sequences", () => {
    const commandArbs = [
      fc.constant(new Send()),
      fc.constant(new Remind()),
      fc.boolean().map((b) => new Pay(b)),
      fc.boolean().map((b) => new MarkOverdue(b)),
      fc.bigInt({ min: 1n, max: 10n ** 9n }).map((a) => new Update(a))
    ]
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.boolean(),
        fc.commands(commandArbs, { maxCommands: 30 }),
        (as_draft, test_mode, custom_number, cmds) => {
          const input: Invoice.CreateInvoice = custom_number ? { ...base, invoice_number: "C-1" } : base
          const c = { ...publish, test_mode, next_invoice_number: 1 }
          const step = as_draft ? Invoice.createDraft(input, c) : Invoice.create(input, c)
          const created = okOf(step)
          const consumed = created.effects.some((e) => e.type === "invoice_number_consumed")
          const setup = () => ({
            model: {
              status: created.state.status,
              reminder_count: 0,
              paid: false,
              numbered: created.state.invoice_number !== null,
              next_number: consumed ? 2 : 1,
              amount: base.amount ?? 0n,
              test_mode,
              overdue_at: Date.UTC(2026, 1, 11)
            } satisfies Model,
            real: { invoice: created.state, next_number: consumed ? 2 : 1, now: T0 } satisfies Real
          })
          fc.modelRun(setup, cmds)
        }
      )
    )
  })
})
