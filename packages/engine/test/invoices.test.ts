import { assert, describe, it } from "@effect/vitest"
import { Decimal, type Invoice, Resources } from "@xaalis/core"
import { Balance, Store, unbalanced } from "@xaalis/engine"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"
import type { Caller } from "../src/usecases/common.ts"
import * as Invoices from "../src/usecases/Invoices.ts"
import { business, codeOf, testLayer } from "./setup.ts"

/** The catalogue code of the failure of `effect` (fails the test if it succeeds). */
const failCode = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), codeOf)

const isInvoice = Schema.is(Schema.toType(Resources.Invoice) as Schema.Codec<unknown>)
const page = { limit: 10, offset: 0 }
const cb = "https://merchant.example/invoices"
const dec = (s: string) => Decimal.parse(s) as Decimal.Decimal

const simple = (extra: Partial<Invoice.CreateInvoice> = {}): Invoice.CreateInvoice => ({
  amount: 50000n,
  customer: "cus_1",
  ...extra
})

/** The spec's main example: 2.5 x 12.99 + 1 x 300.00 with 10 % off = 299.23. */
const professional: Invoice.CreateInvoice = {
  customer_email: "awa@example.gm",
  customer_name: "Awa Jallow",
  customer_phone: "+220 701 2345",
  line_items: [
    { item: "BEANS-250G", quantity: dec("2.5"), unit_price: 1299n },
    { item: "GRINDER", quantity: dec("1"), unit_price: 30000n }
  ],
  discount: { type: "percentage", amount: dec("10") },
  due_date: "1970-01-02",
  notes: "Thank you",
  callback_url: cb,
  sub_account: "kairaba-serrekunda"
}

const outbox = (scope: Caller) =>
  Effect.gen(function* () {
    const store = yield* Store
    const rows = yield* store.transact((tx) => tx.list("outbox", scope, { limit: 100, offset: 0 }))
    return rows.docs
      .map((d) => d.data as { event: string; url: string; body: string })
      .map((r) => ({ ...r, parsed: JSON.parse(r.body) as { event: string; payload: Record<string, unknown> } }))
      .reverse()
  })

const storedDoc = (id: string) => Effect.flatMap(Store, (s) => s.transact((tx) => tx.get("invoice", id)))
const counter = (scope: Caller) =>
  Effect.flatMap(Store, (s) => s.transact((tx) => tx.get("counter", Invoices.counterId(scope))))

describe("invoices: creation and presentation", () => {
  it.effect("a published invoice: totals, number 1, INV-1, link, merchant name, exact wire shape", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, professional)
      assert.isTrue(isInvoice(inv))
      assert.deepStrictEqual(inv, {
        id: inv.id,
        reference: "INV-1",
        type: "professional",
        status: "not-paid",
        customer: "",
        customer_email: "awa@example.gm",
        customer_name: "Awa Jallow",
        customer_phone: "+220 701 2345",
        currency: "GMD",
        business_id: live.business_id,
        account_id: live.account_id,
        merchant_name: "Kairaba Coffee",
        amount: 299.23,
        sub_total: 332.48,
        total: 299.23,
        discount: { type: "percentage", amount: 10 },
        line_items: [
          { item: "BEANS-250G", quantity: 2.5, unit_price: 12.99, total_price: 32.48 },
          { item: "GRINDER", quantity: 1, unit_price: 300, total_price: 300 }
        ],
        due_date: "1970-01-02",
        invoice_number: 1,
        notes: "Thank you",
        sent_date: "1970-01-01T00:00:00.000Z",
        payment_link: `http://127.0.0.1:3000/pay/invoices/${inv.id}`,
        callback_url: cb,
        sub_account: "kairaba-serrekunda",
        reminder_count: 0,
        test_mode: false,
        createdAt: "1970-01-01T00:00:00.000Z",
        updatedAt: "1970-01-01T00:00:00.000Z"
      })
      const doc = yield* storedDoc(inv.id)
      assert.strictEqual(doc?.business_id, live.business_id)
      assert.strictEqual(doc?.mode, "live")
      assert.strictEqual(doc?.due_at, 2 * 86_400_000)
      assert.deepStrictEqual(yield* Invoices.getInvoice(live, inv.id), inv)
      // creation sends no webhook event
      assert.strictEqual((yield* outbox(live)).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a simple invoice with a fixed discount; a draft has sent_date null, status draft and no number", () =>
    Effect.gen(function* () {
      const { test } = yield* business()
      const inv = yield* Invoices.createInvoice(test, simple({ discount: { type: "fixed", amount: 5000n } }))
      assert.isTrue(isInvoice(inv))
      assert.strictEqual(inv.type, "simple")
      assert.strictEqual(inv.sub_total, 500)
      assert.strictEqual(inv.amount, 450)
      assert.deepStrictEqual(inv.discount, { type: "fixed", amount: 50 })
      assert.isFalse("line_items" in inv)
      assert.isFalse("due_date" in inv)
      assert.isFalse("paid_date" in inv)
      assert.strictEqual(inv.customer, "cus_1")
      assert.strictEqual(inv.test_mode, true)
      const draft = yield* Invoices.createDraftInvoice(test, simple({ currency: "USD", amount: 1999n }))
      assert.isTrue(isInvoice(draft))
      assert.strictEqual(draft.status, "draft")
      assert.strictEqual(draft.sent_date, null)
      assert.isFalse("invoice_number" in draft)
      assert.strictEqual(draft.amount, 19.99)
      assert.strictEqual(draft.currency, "USD")
      assert.match(draft.reference, /^INV-[0-9A-F]{8}$/)
      const doc = yield* storedDoc(draft.id)
      assert.strictEqual(doc?.due_at, null)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("invalid input is validation_error and consumes no number", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const bad: Array<Invoice.CreateInvoice> = [
        { amount: 100n },
        { amount: 100n, customer_email: "awa@example.gm" },
        { amount: 100n, customer_name: "Awa", customer_email: "not-an-email" },
        { customer: "c" },
        simple({ amount: 0n }),
        simple({ discount: { type: "fixed", amount: 50001n } }),
        simple({ discount: { type: "percentage", amount: dec("100.5") } }),
        simple({ due_date: "tomorrow" }),
        simple({ line_items: [{ item: "X", quantity: dec("1.00001"), unit_price: 100n }] }),
        simple({ invoice_number: 0 })
      ]
      for (const input of bad) {
        assert.strictEqual(yield* failCode(Invoices.createInvoice(live, input)), "validation_error")
        assert.strictEqual(yield* failCode(Invoices.createDraftInvoice(live, input)), "validation_error")
      }
      assert.strictEqual((yield* Invoices.listInvoices(live, page)).meta.total, 0)
      assert.strictEqual(yield* counter(live), undefined)
      assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 1)
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("invoices: numbering", () => {
  it.effect("1, 2, 3 with a draft in between: the draft takes its number only when sent; no gaps", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      const first = yield* Invoices.createInvoice(live, simple())
      const draft = yield* Invoices.createDraftInvoice(live, simple())
      const second = yield* Invoices.createInvoice(live, simple())
      assert.deepStrictEqual([first.invoice_number, second.invoice_number], [1, 2])
      assert.deepStrictEqual([first.reference, second.reference], ["INV-1", "INV-2"])
      assert.isFalse("invoice_number" in (yield* Invoices.getInvoice(live, draft.id)))
      yield* TestClock.adjust("1 hour")
      const sent = yield* Invoices.sendInvoice(live, draft.id)
      assert.strictEqual(sent.status, "not-paid")
      assert.strictEqual(sent.invoice_number, 3)
      // the reference handed out with the draft stays: references never change
      assert.match(draft.reference, /^INV-[0-9A-F]{8}$/)
      assert.strictEqual(sent.reference, draft.reference)
      assert.strictEqual(sent.sent_date, "1970-01-01T01:00:00.000Z")
      assert.isTrue(isInvoice(sent))
      // the caller's own number does not take one from the sequence
      const custom = yield* Invoices.createInvoice(live, simple({ invoice_number: "KC-2026-007" }))
      assert.strictEqual(custom.invoice_number, "KC-2026-007")
      assert.match(custom.reference, /^INV-[0-9A-F]{8}$/)
      const customDraft = yield* Invoices.createDraftInvoice(live, simple({ invoice_number: 77 }))
      assert.strictEqual((yield* Invoices.sendInvoice(live, customDraft.id)).invoice_number, 77)
      assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 4)
      assert.deepStrictEqual((yield* counter(live))?.data, { next: 5 })
      // each mode and each business has its own sequence
      assert.strictEqual((yield* Invoices.createInvoice(test, simple())).invoice_number, 1)
      assert.deepStrictEqual((yield* counter(test))?.data, { next: 2 })
      const other = yield* business()
      assert.strictEqual((yield* Invoices.createInvoice(other.live, simple())).invoice_number, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "an invoice number names one invoice per business and mode: a taken one is refused, the sequence skips it",
    () =>
      Effect.gen(function* () {
        const { live, test } = yield* business()
        const listed = Effect.map(Invoices.listInvoices(live, page), (l) => l.meta.total)
        assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 1)
        // the caller's own numbers: 2 as a number, "3" as text, "KC-7" as text
        assert.strictEqual((yield* Invoices.createInvoice(live, simple({ invoice_number: 2 }))).invoice_number, 2)
        yield* Invoices.createDraftInvoice(live, simple({ invoice_number: "3" }))
        yield* Invoices.createInvoice(live, simple({ invoice_number: "KC-7" }))
        assert.strictEqual(yield* listed, 4)

        // a taken number is refused at creation (5 and "5" are one number), and nothing is stored
        for (const invoice_number of [1, "1", 2, "2", 3, "KC-7"] as const) {
          const refused = yield* Effect.flip(Invoices.createInvoice(live, simple({ invoice_number })))
          assert.strictEqual(codeOf(refused), "validation_error")
          assert.include((refused as { message: string }).message, "is already used by another invoice")
          assert.strictEqual(
            codeOf(yield* Effect.flip(Invoices.createDraftInvoice(live, simple({ invoice_number })))),
            "validation_error"
          )
        }
        assert.strictEqual(yield* listed, 4)
        // the sequence skips the numbers callers took (2, and the draft's "3"): never a repeat
        assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 4)
        const draft = yield* Invoices.createDraftInvoice(live, simple())
        yield* Invoices.createInvoice(live, simple({ invoice_number: 6 }))
        assert.strictEqual((yield* Invoices.sendInvoice(live, draft.id)).invoice_number, 5)
        assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 7)
        assert.deepStrictEqual((yield* counter(live))?.data, { next: 8 })

        // an update to a taken number is refused and changes nothing; to a free one, it frees the old one
        const own = yield* Invoices.createInvoice(live, simple({ invoice_number: "KC-8" }))
        assert.strictEqual(
          codeOf(yield* Effect.flip(Invoices.updateInvoice(live, own.id, { invoice_number: 4 }))),
          "validation_error"
        )
        assert.strictEqual((yield* Invoices.getInvoice(live, own.id)).invoice_number, "KC-8")
        assert.strictEqual(
          (yield* Invoices.updateInvoice(live, own.id, { invoice_number: "KC-8" })).invoice_number,
          "KC-8"
        )
        assert.strictEqual(
          (yield* Invoices.updateInvoice(live, own.id, { invoice_number: "KC-9" })).invoice_number,
          "KC-9"
        )
        assert.strictEqual(
          (yield* Invoices.createInvoice(live, simple({ invoice_number: "KC-8" }))).invoice_number,
          "KC-8"
        )

        // another mode, another business: the same numbers are free there
        assert.strictEqual((yield* Invoices.createInvoice(test, simple({ invoice_number: 2 }))).invoice_number, 2)
        assert.strictEqual((yield* Invoices.createInvoice(test, simple())).invoice_number, 1)
        const other = yield* business()
        assert.strictEqual(
          (yield* Invoices.createInvoice(other.live, simple({ invoice_number: "KC-7" }))).invoice_number,
          "KC-7"
        )
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("two concurrent creations with one number: one invoice has it, the other is refused", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const outcomes = yield* Effect.all(
        Array.from({ length: 4 }, () =>
          Effect.result(Invoices.createInvoice(live, simple({ invoice_number: "KC-1" })))
        ),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(outcomes.filter((o) => o._tag === "Success").length, 1)
      assert.deepStrictEqual(
        outcomes.filter((o) => o._tag === "Failure").map((o) => codeOf(o.failure)),
        ["validation_error", "validation_error", "validation_error"]
      )
      assert.strictEqual((yield* Invoices.listInvoices(live, page)).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("concurrent publications take distinct consecutive numbers", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const created = yield* Effect.all(
        Array.from({ length: 6 }, (_, i) =>
          i % 2 === 0
            ? Invoices.createInvoice(live, simple())
            : Effect.flatMap(Invoices.createDraftInvoice(live, simple()), (d) => Invoices.sendInvoice(live, d.id))
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(created.map((i) => i.invoice_number).sort(), [1, 2, 3, 4, 5, 6])
      assert.deepStrictEqual((yield* counter(live))?.data, { next: 7 })
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("sending a non-draft is invalid_state and consumes nothing", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, simple())
      assert.strictEqual(yield* failCode(Invoices.sendInvoice(live, inv.id)), "invalid_state")
      yield* Invoices.payInvoice(live, inv.id)
      assert.strictEqual(yield* failCode(Invoices.sendInvoice(live, inv.id)), "invalid_state")
      assert.deepStrictEqual((yield* counter(live))?.data, { next: 2 })
      assert.strictEqual((yield* Invoices.createInvoice(live, simple())).invoice_number, 2)
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("invoices: update, remind, pay", () => {
  it.effect("update recomputes totals and keeps status, dates and number; paid is already_paid", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, simple({ due_date: "1970-01-05" }))
      yield* TestClock.adjust("1 minute")
      const updated = yield* Invoices.updateInvoice(live, inv.id, {
        amount: 70000n,
        discount: { type: "percentage", amount: dec("12.5") },
        due_date: "1970-01-10",
        notes: "Updated"
      })
      assert.isTrue(isInvoice(updated))
      assert.strictEqual(updated.sub_total, 700)
      assert.strictEqual(updated.amount, 612.5)
      assert.strictEqual(updated.status, "not-paid")
      assert.strictEqual(updated.invoice_number, 1)
      assert.strictEqual(updated.sent_date, inv.sent_date)
      assert.strictEqual(updated.createdAt, inv.createdAt)
      assert.strictEqual(updated.updatedAt, "1970-01-01T00:01:00.000Z")
      assert.strictEqual((yield* storedDoc(inv.id))?.due_at, 10 * 86_400_000)
      const cleared = yield* Invoices.updateInvoice(live, inv.id, { notes: null, discount: null })
      assert.isFalse("notes" in cleared)
      assert.isFalse("discount" in cleared)
      assert.strictEqual(cleared.amount, 700)
      for (const input of [
        { customer: null },
        { invoice_number: null },
        { amount: -1n },
        { due_date: "1970-13-01" }
      ] satisfies Array<Invoice.UpdateInvoice>) {
        assert.strictEqual(yield* failCode(Invoices.updateInvoice(live, inv.id, input)), "validation_error")
      }
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).amount, 700)
      yield* Invoices.payInvoice(live, inv.id)
      const paid = yield* failCode(Invoices.updateInvoice(live, inv.id, { notes: "late edit" }))
      assert.strictEqual(paid, "already_paid")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a draft can be updated and stays a draft without a number", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const draft = yield* Invoices.createDraftInvoice(live, simple())
      const updated = yield* Invoices.updateInvoice(live, draft.id, {
        line_items: [{ item: "CUP", quantity: dec("3"), unit_price: 2500n }],
        due_date: "1970-01-02"
      })
      assert.strictEqual(updated.status, "draft")
      assert.strictEqual(updated.type, "professional")
      assert.strictEqual(updated.amount, 75)
      assert.isFalse("invoice_number" in updated)
      assert.strictEqual((yield* storedDoc(draft.id))?.due_at, null)
      assert.strictEqual(yield* counter(live), undefined)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("reminders increment reminder_count; drafts are invalid_state, paid invoices already_paid", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, simple())
      assert.strictEqual((yield* Invoices.remindInvoice(live, inv.id)).reminder_count, 1)
      const twice = yield* Invoices.remindInvoice(live, inv.id)
      assert.strictEqual(twice.reminder_count, 2)
      assert.strictEqual(twice.status, "not-paid")
      const draft = yield* Invoices.createDraftInvoice(live, simple())
      assert.strictEqual(yield* failCode(Invoices.remindInvoice(live, draft.id)), "invalid_state")
      yield* Invoices.payInvoice(live, inv.id)
      assert.strictEqual(yield* failCode(Invoices.remindInvoice(live, inv.id)), "already_paid")
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).reminder_count, 2)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "manual pay: paid with paid_date, no event, no ledger; again is already_paid; a draft is invalid_state",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const inv = yield* Invoices.createInvoice(live, simple({ callback_url: cb, due_date: "1970-01-02" }))
        yield* TestClock.adjust("2 hours")
        const paid = yield* Invoices.payInvoice(live, inv.id)
        assert.isTrue(isInvoice(paid))
        assert.strictEqual(paid.status, "paid")
        assert.strictEqual(paid.paid_date, "1970-01-01T02:00:00.000Z")
        assert.strictEqual((yield* outbox(live)).length, 0)
        const store = yield* Store
        assert.strictEqual((yield* store.ledger).length, 0)
        assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
        assert.strictEqual((yield* storedDoc(inv.id))?.due_at, null)
        assert.strictEqual(yield* failCode(Invoices.payInvoice(live, inv.id)), "already_paid")
        assert.strictEqual(yield* failCode(Invoices.customerPaysInvoice(live, inv.id)), "already_paid")
        const draft = yield* Invoices.createDraftInvoice(live, simple())
        assert.strictEqual(yield* failCode(Invoices.payInvoice(live, draft.id)), "invalid_state")
        assert.strictEqual(yield* failCode(Invoices.customerPaysInvoice(live, draft.id)), "invalid_state")
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect(
    "customer pays: paid, paymentrequest.success with the presented invoice, balance credited, ledger balanced",
    () =>
      Effect.gen(function* () {
        const { live } = yield* business()
        const inv = yield* Invoices.createInvoice(live, professional)
        yield* TestClock.adjust("3 hours")
        const paid = yield* Invoices.customerPaysInvoice(live, inv.id)
        assert.strictEqual(paid.status, "paid")
        assert.strictEqual(paid.paid_date, "1970-01-01T03:00:00.000Z")
        const rows = yield* outbox(live)
        assert.strictEqual(rows.length, 1)
        assert.strictEqual(rows[0]?.event, "paymentrequest.success")
        assert.strictEqual(rows[0]?.url, cb)
        assert.deepStrictEqual(rows[0]?.parsed, { event: "paymentrequest.success", payload: paid })
        assert.isTrue(isInvoice(rows[0]?.parsed.payload))
        assert.strictEqual((yield* Balance.getBalance(live)).available, 299.23)
        const store = yield* Store
        const entries = yield* store.ledger
        assert.deepStrictEqual(unbalanced(entries), [])
        assert.deepStrictEqual(
          entries.map((e) => [e.account, e.currency, e.amount, e.cause]),
          [
            ["processor_clearing", "GMD", 29923n, `invoice/${inv.id}`],
            ["business_balance", "GMD", -29923n, `invoice/${inv.id}`]
          ]
        )
        assert.strictEqual(yield* failCode(Invoices.customerPaysInvoice(live, inv.id)), "already_paid")
        assert.strictEqual((yield* Balance.getBalance(live)).available, 299.23)
        assert.strictEqual((yield* outbox(live)).length, 1)
      }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a USD invoice paid by the customer is credited in micro-dollars; no callback_url, no outbox row", () =>
    Effect.gen(function* () {
      const { test } = yield* business()
      const inv = yield* Invoices.createInvoice(test, simple({ currency: "USD", amount: 1999n }))
      yield* Invoices.customerPaysInvoice(test, inv.id)
      const balance = yield* Balance.getBalance(test)
      assert.strictEqual(balance.available, 0)
      assert.strictEqual(balance.balances[1]?.available, 19.99)
      const store = yield* Store
      const entries = yield* store.ledger
      assert.deepStrictEqual(unbalanced(entries), [])
      assert.deepStrictEqual(
        entries.map((e) => e.amount),
        [19_990_000n, -19_990_000n]
      )
      assert.strictEqual((yield* outbox(test)).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("invoices: overdue", () => {
  it.effect("live not-paid invoices become overdue at 00:00 UTC after the due date; test, draft and paid never", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      const due = { due_date: "1970-01-02", callback_url: cb }
      const liveInv = yield* Invoices.createInvoice(live, simple(due))
      const testInv = yield* Invoices.createInvoice(test, simple(due))
      const draft = yield* Invoices.createDraftInvoice(live, simple(due))
      const paid = yield* Invoices.createInvoice(live, simple(due))
      yield* Invoices.payInvoice(live, paid.id)
      const noDate = yield* Invoices.createInvoice(live, simple({ callback_url: cb }))
      assert.strictEqual((yield* storedDoc(testInv.id))?.due_at, null)
      // the due date itself is not late yet
      yield* TestClock.adjust("47 hours")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 0)
      assert.strictEqual((yield* Invoices.getInvoice(live, liveInv.id)).status, "not-paid")
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 1)
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 0)
      const overdue = yield* Invoices.getInvoice(live, liveInv.id)
      assert.strictEqual(overdue.status, "overdue")
      assert.strictEqual(overdue.due_date, "1970-01-02")
      assert.strictEqual((yield* Invoices.getInvoice(test, testInv.id)).status, "not-paid")
      assert.strictEqual((yield* Invoices.getInvoice(live, draft.id)).status, "draft")
      assert.strictEqual((yield* Invoices.getInvoice(live, paid.id)).status, "paid")
      assert.strictEqual((yield* Invoices.getInvoice(live, noDate.id)).status, "not-paid")
      const rows = yield* outbox(live)
      assert.deepStrictEqual(
        rows.map((r) => r.event),
        ["invoice.overdue"]
      )
      assert.deepStrictEqual(rows[0]?.parsed, { event: "invoice.overdue", payload: overdue })
      assert.strictEqual((yield* outbox(test)).length, 0)
      // overdue can still be reminded and paid, and then pays out with the success event
      assert.strictEqual((yield* Invoices.remindInvoice(live, liveInv.id)).status, "overdue")
      const settled = yield* Invoices.customerPaysInvoice(live, liveInv.id)
      assert.strictEqual(settled.status, "paid")
      assert.deepStrictEqual(
        (yield* outbox(live)).map((r) => r.event),
        ["invoice.overdue", "paymentrequest.success"]
      )
      assert.strictEqual((yield* Balance.getBalance(live)).available, 500)
      // a draft with a past due date sent later answers not-paid (the spec's Send Draft Invoice),
      // reads overdue from then on, and is swept at the next run
      const sent = yield* Invoices.sendInvoice(live, draft.id)
      assert.deepStrictEqual([sent.status, sent.sent_date !== null], ["not-paid", true])
      assert.strictEqual((yield* Invoices.getInvoice(live, draft.id)).status, "overdue")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 1)
      assert.strictEqual((yield* Invoices.getInvoice(live, draft.id)).status, "overdue")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("Create Invoice answers not-paid even with a past due date; the overdue step follows", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      yield* TestClock.adjust("3 days")
      const created = yield* Invoices.createInvoice(live, simple({ due_date: "1970-01-01", callback_url: cb }))
      assert.strictEqual(created.status, "not-paid")
      assert.strictEqual(((yield* storedDoc(created.id))?.data as { status: string } | undefined)?.status, "not-paid")
      assert.strictEqual((yield* outbox(live)).length, 0)
      // a read shows it as of now, and the sweep books the transition with its event
      assert.strictEqual((yield* Invoices.getInvoice(live, created.id)).status, "overdue")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 1)
      assert.deepStrictEqual(
        (yield* outbox(live)).map((r) => [r.event, r.parsed.payload.status]),
        [["invoice.overdue", "overdue"]]
      )
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a date-time due date is overdue from that instant; moving it later postpones the sweep", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, simple({ due_date: "1970-01-01T06:00:00Z" }))
      assert.strictEqual((yield* storedDoc(inv.id))?.due_at, 6 * 3_600_000)
      yield* Invoices.updateInvoice(live, inv.id, { due_date: "1970-01-01T08:00:00+01:00" })
      assert.strictEqual((yield* storedDoc(inv.id))?.due_at, 7 * 3_600_000)
      yield* TestClock.adjust("6 hours")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 0)
      yield* TestClock.adjust("1 hour")
      assert.strictEqual(yield* Invoices.markOverdueInvoices(), 1)
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).status, "overdue")
      assert.strictEqual((yield* storedDoc(inv.id))?.due_at, null)
      // no callback_url: the state changes, nothing is queued
      assert.strictEqual((yield* outbox(live)).length, 0)
    }).pipe(Effect.provide(testLayer()))
  )
})

describe("invoices: scoping and listing", () => {
  it.effect("another business's or the other mode's invoice is not_found for every operation", () =>
    Effect.gen(function* () {
      const a = yield* business()
      const b = yield* business()
      const inv = yield* Invoices.createInvoice(a.live, simple())
      const draft = yield* Invoices.createDraftInvoice(a.live, simple())
      for (const other of [b.live, b.test, a.test]) {
        const codes = [
          yield* Effect.flip(Invoices.getInvoice(other, inv.id)),
          yield* Effect.flip(Invoices.updateInvoice(other, inv.id, { notes: "x" })),
          yield* Effect.flip(Invoices.payInvoice(other, inv.id)),
          yield* Effect.flip(Invoices.remindInvoice(other, inv.id)),
          yield* Effect.flip(Invoices.customerPaysInvoice(other, inv.id)),
          yield* Effect.flip(Invoices.sendInvoice(other, draft.id))
        ].map(codeOf)
        assert.deepStrictEqual(codes, Array(6).fill("not_found"))
        assert.strictEqual((yield* Invoices.listInvoices(other, page)).meta.total, 0)
      }
      assert.strictEqual(yield* failCode(Invoices.getInvoice(a.live, "missing")), "not_found")
      // nothing changed, and the other scopes' counters were not touched
      assert.strictEqual((yield* Invoices.getInvoice(a.live, inv.id)).status, "not-paid")
      assert.strictEqual((yield* Invoices.getInvoice(a.live, draft.id)).status, "draft")
      assert.strictEqual(yield* counter(a.test), undefined)
      assert.strictEqual(yield* counter(b.live), undefined)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("list: newest first, {data, meta}, paged", () =>
    Effect.gen(function* () {
      const { live, test } = yield* business()
      for (let i = 1; i <= 3; i++) {
        yield* Invoices.createInvoice(live, simple({ amount: BigInt(i * 100) }))
        yield* TestClock.adjust("1 second")
      }
      yield* Invoices.createDraftInvoice(live, simple({ amount: 400n }))
      yield* Invoices.createInvoice(test, simple())
      const all = yield* Invoices.listInvoices(live, page)
      assert.deepStrictEqual(all.meta, { total: 4, limit: 10, offset: 0 })
      assert.deepStrictEqual(
        all.data.map((i) => i.amount),
        [4, 3, 2, 1]
      )
      assert.isTrue(all.data.every(isInvoice))
      const p = yield* Invoices.listInvoices(live, { limit: 2, offset: 1 })
      assert.deepStrictEqual(p.meta, { total: 4, limit: 2, offset: 1 })
      assert.deepStrictEqual(
        p.data.map((i) => i.invoice_number),
        [3, 2]
      )
    }).pipe(Effect.provide(testLayer()))
  )
})
