/**
 * Update Invoice over HTTP: an absent field is left as it is, `null` clears
 * the fields an invoice may be without, and the result is checked by the
 * rules of creation (a refused update changes nothing).
 */
import { afterEach, describe, expect, it } from "vitest"
import { expectError, type Setup, setup } from "./helpers.ts"

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

const full = {
  amount: 1000,
  customer: "cust-7",
  customer_email: "awa@example.gm",
  customer_name: "Awa Jallow",
  customer_phone: "+220 701 2345",
  discount: { type: "percentage", amount: 10 },
  due_date: "2030-01-31",
  notes: "Thank you",
  invoice_number: "INV-7",
  callback_url: "https://example.com/hooks",
  sub_account: "Serrekunda branch"
}

describe("PUT /v1/invoices/{id}", () => {
  it("null clears a discount, a due date, notes and the other optional fields; absent keeps them", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const created = await s.call("POST", "/v1/invoices", { key, body: { data: full } })
    expect(created.status).toBe(201)
    expect([created.body.discount, created.body.sub_total, created.body.amount]).toEqual([
      { type: "percentage", amount: 10 },
      1000,
      900
    ])
    const path = `/v1/invoices/${created.body.id}`

    // nothing given: nothing changes, totals included
    const same = await s.call("PUT", path, { key, body: { data: { notes: undefined } } })
    expect(same.status).toBe(200)
    expect({ ...same.body, updatedAt: created.body.updatedAt }).toEqual(created.body)

    const cleared = await s.call("PUT", path, {
      key,
      body: {
        data: {
          discount: null,
          due_date: null,
          notes: null,
          customer_phone: null,
          callback_url: null,
          sub_account: null,
          amount: null,
          currency: null,
          line_items: null
        }
      }
    })
    expect(cleared.status).toBe(200)
    for (const field of ["discount", "due_date", "notes", "customer_phone", "callback_url", "sub_account"]) {
      expect({ field, present: field in cleared.body }).toEqual({ field, present: false })
    }
    // amount, currency and line_items are not cleared by null; the total is the undiscounted amount now
    expect([cleared.body.amount, cleared.body.sub_total, cleared.body.total, cleared.body.currency]).toEqual([
      1000,
      1000,
      1000,
      "GMD"
    ])
    expect([cleared.body.customer, cleared.body.invoice_number, cleared.body.status]).toEqual([
      "cust-7",
      "INV-7",
      "not-paid"
    ])
    const read = await s.call("GET", path, { key })
    expect(read.body).toEqual(cleared.body)

    // a discount can be given again
    const again = await s.call("PUT", path, { key, body: { data: { discount: { type: "fixed", amount: 50 } } } })
    expect([again.status, again.body.amount]).toEqual([200, 950])
  })

  it("a clear the rules of creation refuse is a validation_error and changes nothing", async () => {
    s = setup()
    const { secret_key_test: key } = await s.business()
    const byId = await s.call("POST", "/v1/invoices", { key, body: { data: { amount: 500, customer: "cust-1" } } })
    const path = `/v1/invoices/${byId.body.id}`
    // without customer, an invoice needs customer_email and customer_name
    expectError(
      await s.call("PUT", path, { key, body: { data: { customer: null, notes: "x" } } }),
      400,
      "validation_error"
    )
    // a published invoice keeps its number
    expectError(await s.call("PUT", path, { key, body: { data: { invoice_number: null } } }), 400, "validation_error")
    expect((await s.call("GET", path, { key })).body).toEqual(byId.body)

    // with an email and a name, the customer id may go
    const moved = await s.call("PUT", path, {
      key,
      body: { data: { customer: null, customer_email: "awa@example.gm", customer_name: "Awa" } }
    })
    expect([moved.status, moved.body.customer, moved.body.customer_email]).toEqual([200, "", "awa@example.gm"])

    // "" (how an invoice without a customer id shows it) means none: an invoice read and sent back is accepted as is
    const echoed = await s.call("PUT", path, { key, body: { data: moved.body } })
    expect([echoed.status, { ...echoed.body, updatedAt: moved.body.updatedAt }]).toEqual([200, moved.body])
    const professional = await s.call("POST", "/v1/invoices", {
      key,
      body: {
        data: {
          customer_email: "ebou@example.gm",
          customer_name: "Ebou",
          line_items: [{ item: "sku-1", quantity: 1.5, unit_price: 3.33 }],
          discount: { type: "fixed", amount: 1 }
        }
      }
    })
    const sentBack = await s.call("PUT", `/v1/invoices/${professional.body.id}`, {
      key,
      body: { data: professional.body }
    })
    expect([sentBack.status, { ...sentBack.body, updatedAt: professional.body.updatedAt }]).toEqual([
      200,
      professional.body
    ])
    // but a customer id never becomes "" (§6: a non-empty string), even with an email and a name to stand in
    const named = await s.call("POST", "/v1/invoices", { key, body: { data: { amount: 5, customer: "cust-9" } } })
    expectError(
      await s.call("PUT", `/v1/invoices/${named.body.id}`, { key, body: { data: { customer: "" } } }),
      400,
      "validation_error"
    )
    const reachable = await s.call("POST", "/v1/invoices/draft", {
      key,
      body: { data: { amount: 5, customer: "cust-10", customer_email: "ida@example.gm", customer_name: "Ida" } }
    })
    const blanked = await s.call("PUT", `/v1/invoices/${reachable.body.id}`, {
      key,
      body: { data: { customer: "" } }
    })
    expectError(blanked, 400, "validation_error")
    expect(blanked.body.error.message).toBe("customer must be a non-empty string; send null to remove the customer id.")
    expect((await s.call("GET", `/v1/invoices/${reachable.body.id}`, { key })).body).toEqual(reachable.body)
    expectError(
      await s.call("POST", "/v1/invoices", { key, body: { data: { amount: 5, customer: "" } } }),
      400,
      "validation_error"
    )

    // a wrong type names the field and what it takes
    const wrong = await s.call("PUT", path, { key, body: { data: { customer: 5 } } })
    expectError(wrong, 400, "validation_error")
    expect(wrong.body.error.message).toBe("data.customer must be a string.")

    // a draft's custom number may be cleared: it takes the sequence's when sent
    const draft = await s.call("POST", "/v1/invoices/draft", {
      key,
      body: { data: { amount: 500, customer: "cust-2", invoice_number: "D-1" } }
    })
    const unnumbered = await s.call("PUT", `/v1/invoices/${draft.body.id}`, {
      key,
      body: { data: { invoice_number: null } }
    })
    expect([unnumbered.status, "invoice_number" in unnumbered.body]).toEqual([200, false])
    const sent = await s.call("POST", `/v1/invoices/${draft.body.id}/send`, { key })
    expect([sent.status, sent.body.invoice_number]).toEqual([200, 4]) // three published before it
  })

  it("an overdue invoice keeps a due date: clearing it is refused, moving it is not", async () => {
    s = setup()
    const { secret_key_live: key } = await s.business()
    const inv = await s.call("POST", "/v1/invoices", {
      key,
      body: { data: { amount: 500, customer: "cust-1", due_date: "2026-01-01" } }
    })
    const advance = await s.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 1 } })
    expect(advance.status).toBe(200)
    const path = `/v1/invoices/${inv.body.id}`
    const overdue = await s.call("GET", path, { key })
    expect(overdue.body.status).toBe("overdue")
    const cleared = await s.call("PUT", path, { key, body: { data: { due_date: null, notes: "x" } } })
    expectError(cleared, 400, "validation_error")
    expect(cleared.body.error.message).toContain("keeps a due date")
    expect((await s.call("GET", path, { key })).body).toEqual(overdue.body)
    const moved = await s.call("PUT", path, { key, body: { data: { due_date: "2099-01-01" } } })
    expect([moved.status, moved.body.status, moved.body.due_date]).toEqual([200, "overdue", "2099-01-01"])
  })
})
