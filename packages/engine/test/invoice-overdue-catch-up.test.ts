import { assert, describe, it } from "@effect/vitest"
import type { Invoice } from "@xaalis/core"
import { Store } from "@xaalis/engine"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import type { Caller } from "../src/usecases/common.ts"
import * as Invoices from "../src/usecases/Invoices.ts"
import { business, testLayer } from "./setup.ts"

/**
 * An invoice's overdue mark does not depend on when the sweep ran
 * (docs/decisions.md "Time-driven transitions take effect at their moment, not
 * at the sweep"; "Update never changes status: moving the due date of an overdue
 * invoice leaves it overdue"). A command on an invoice whose due moment has
 * passed, but which the sweep (every second, later when the background lane is
 * busy) has not stored as overdue yet, books the overdue mark first: before,
 * a PUT moving the due date turned an invoice that already read `overdue` back
 * into `not-paid`, a payment skipped the overdue transition, and in both cases
 * `invoice.overdue` was never sent.
 */

const cb = "https://merchant.example/invoices"
const simple = (extra: Partial<Invoice.CreateInvoice> = {}): Invoice.CreateInvoice => ({
  amount: 50000n,
  customer: "cus_1",
  ...extra
})

const events = (scope: Caller) =>
  Effect.gen(function* () {
    const store = yield* Store
    const rows = yield* store.transact((tx) => tx.list("outbox", scope, { limit: 100, offset: 0 }))
    return rows.docs.map((d) => (d.data as { event: string }).event).reverse()
  })

describe("invoice overdue vs commands that reach it before the sweep", () => {
  it.effect("a PUT moving the due date of an invoice that reads overdue leaves it overdue, as after the sweep", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const due = { due_date: "1970-01-01T06:00:00Z", callback_url: cb }
      const swept = yield* Invoices.createInvoice(live, simple(due))
      const racing = yield* Invoices.createInvoice(live, simple(due))
      yield* TestClock.adjust("6 hours")
      // both read overdue: the moment has passed
      assert.strictEqual((yield* Invoices.getInvoice(live, swept.id)).status, "overdue")
      assert.strictEqual((yield* Invoices.getInvoice(live, racing.id)).status, "overdue")
      // `racing` is updated before the sweep gets to it (the sweep runs every second)...
      const putBeforeSweep = yield* Invoices.updateInvoice(live, racing.id, { due_date: "2099-01-01" })
      // ...`swept` after
      yield* Invoices.markOverdueInvoices()
      const putAfterSweep = yield* Invoices.updateInvoice(live, swept.id, { due_date: "2099-01-01" })
      assert.strictEqual(putAfterSweep.status, "overdue")
      // the answer and the stored state must not depend on when the sweep ran
      assert.strictEqual(putBeforeSweep.status, "overdue")
      yield* Invoices.markOverdueInvoices()
      assert.strictEqual((yield* Invoices.getInvoice(live, racing.id)).status, "overdue")
      // and each invoice that went overdue sends invoice.overdue once
      assert.deepStrictEqual(yield* events(live), ["invoice.overdue", "invoice.overdue"])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a customer payment of an invoice that reads overdue sends invoice.overdue first, as after the sweep", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const inv = yield* Invoices.createInvoice(live, simple({ due_date: "1970-01-01T06:00:00Z", callback_url: cb }))
      yield* TestClock.adjust("6 hours")
      assert.strictEqual((yield* Invoices.getInvoice(live, inv.id)).status, "overdue")
      yield* Invoices.customerPaysInvoice(live, inv.id)
      yield* Invoices.markOverdueInvoices()
      // with the sweep first this is ["invoice.overdue", "paymentrequest.success"] (invoices.test.ts)
      assert.deepStrictEqual(yield* events(live), ["invoice.overdue", "paymentrequest.success"])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a manual payment or a reminder of an invoice that reads overdue books the overdue mark first", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const due = { due_date: "1970-01-01T06:00:00Z", callback_url: cb }
      const paid = yield* Invoices.createInvoice(live, simple(due))
      const reminded = yield* Invoices.createInvoice(live, simple(due))
      yield* TestClock.adjust("6 hours")
      assert.strictEqual((yield* Invoices.payInvoice(live, paid.id)).status, "paid")
      const answer = yield* Invoices.remindInvoice(live, reminded.id)
      assert.strictEqual(answer.status, "overdue")
      assert.strictEqual(answer.reminder_count, 1)
      yield* Invoices.markOverdueInvoices()
      // one invoice.overdue each, booked by the command (the sweep found nothing left to do)
      assert.deepStrictEqual(yield* events(live), ["invoice.overdue", "invoice.overdue"])
    }).pipe(Effect.provide(testLayer()))
  )
})
