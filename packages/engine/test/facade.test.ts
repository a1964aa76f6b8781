import { Decimal, DomainError } from "@xaalis/core"
import { createEngine, MemoryStore, Store, StoreError } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"

describe("Promise facade", () => {
  it("runs a conversion end to end with plain async calls and rejects with catalogue errors", async () => {
    const engine = createEngine({ sandbox: { rate: Decimal.parse("70") as Decimal.Decimal } })
    try {
      const biz = await engine.createBusiness({ name: "Shop" })
      expect(biz.secret_key_live).toMatch(/^sk_live_/)
      expect(biz.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      const live = await engine.authenticate(biz.secret_key_live)
      const test = await engine.authenticate(biz.secret_key_test)
      const c = await engine.createConversion(live, { gmd_amount: 5000, network: "trc20" })
      expect(c).toMatchObject({ status: "pending", gmd_amount: 5000, pay_amount: 73.64, fee: 2.21, network: "TRC20" })
      const r = await engine.sandboxTransfer({
        network: "TRC20",
        currency: "USDT",
        to_address: c.pay_address,
        amount: 73.64
      })
      expect(r).toMatchObject({ matched: { object: "conversion", id: c.id }, applied: true })
      expect((await engine.getConversion(live, c.id)).status).toBe("paid")
      expect((await engine.getBalance(live)).available).toBe(5000)

      const errors = await Promise.all([
        engine.authenticate("sk_live_nope").catch((e: unknown) => e),
        engine.createConversion(test, { gmd_amount: 5000 }).catch((e: unknown) => e),
        engine.createConversion(live, { gmd_amount: 5000.001 }).catch((e: unknown) => e),
        engine.getConversion(live, "00000000-0000-4000-8000-000000000000").catch((e: unknown) => e)
      ])
      expect(errors.every((e) => e instanceof DomainError)).toBe(true)
      expect(errors.map((e) => (e as DomainError).code)).toEqual([
        "authentication_error",
        "permission_denied",
        "validation_error",
        "not_found"
      ])
      expect((errors[2] as DomainError).status).toBe(400)

      const k1 = await engine.createConversion(live, { gmd_amount: 6000 }, { idempotency_key: "order-42" })
      const k2 = await engine.createConversion(live, { gmd_amount: 6000 }, { idempotency_key: "order-42" })
      // the same body with its members in another order is the same request, as over HTTP
      const k3 = await engine.createConversion(
        live,
        { network: "TRC20", gmd_amount: 6000 },
        { idempotency_key: "order-43" }
      )
      const k4 = await engine.createConversion(
        live,
        { gmd_amount: 6000, network: "TRC20" },
        { idempotency_key: "order-43" }
      )
      expect(k4).toEqual(k3)
      expect(k2).toEqual(k1)
      const clash = await engine
        .createConversion(live, { gmd_amount: 7000 }, { idempotency_key: "order-42" })
        .catch((e: unknown) => e)
      expect((clash as DomainError).code).toBe("idempotency_conflict")

      const rolled = await engine.rollApiKey({ business_id: biz.id, mode: "live" })
      expect(await engine.authenticate(rolled.secret_key)).toEqual(live)
      const revoked = await engine.authenticate(biz.secret_key_live).catch((e: unknown) => e)
      expect((revoked as DomainError).code).toBe("authentication_error")
      const tooLong = await engine
        .rollApiKey({ business_id: biz.id, mode: "test", expires_in_seconds: 8 * 86_400 })
        .catch((e: unknown) => e)
      expect((tooLong as DomainError).code).toBe("validation_error")
      expect(await engine.authenticate(biz.secret_key_test)).toEqual(test)
      const secret = await engine.rollWebhookSecret({ business_id: biz.id, expires_in_seconds: 60 })
      expect(secret.webhook_secret).toMatch(/^whsec_/)
      expect(secret.webhook_secret).not.toBe(biz.webhook_secret)
    } finally {
      await engine.dispose()
    }
  })
})

describe("Promise facade: every resource", () => {
  it("payment intents, links, invoices, payment requests and the scheduler through plain async calls", async () => {
    const engine = createEngine({ sandbox: { rate: Decimal.parse("70") as Decimal.Decimal } })
    try {
      const biz = await engine.createBusiness({ name: "Shop" })
      const test = await engine.authenticate(biz.secret_key_test)
      const live = await engine.authenticate(biz.secret_key_live)

      const dry = await engine.createPaymentIntent(test, { data: { amount: 100 } }, { dry_run: true })
      expect(dry).toMatchObject({
        amount: 100,
        transaction_fee: 1.5,
        currency: "GMD",
        status: "requires_payment_method"
      })
      expect((await engine.listPaymentIntents(test)).meta.total).toBe(0)
      const pi = await engine.createPaymentIntent(test, { data: { amount: 100 } })
      expect((await engine.reportPaymentOutcome(test, pi.payment_intent_id, "succeeded")).status).toBe("successful")
      const again = await engine.cancelPaymentIntent(test, pi.payment_intent_id).catch((e: unknown) => e)
      expect((again as DomainError).code).toBe("invalid_state")
      expect((await engine.getBalance(test)).available).toBe(98.5)

      const link = await engine.createPaymentLink(test, { data: { title: "Coffee", amount: 250, currency: "GMD" } })
      expect(link).toMatchObject({ amount: 250, currency: "GMD" })
      expect((await engine.getPaymentLink(test, link.id)).id).toBe(link.id)

      const draft = await engine.createInvoice(
        test,
        { data: { amount: 500, customer: "cus_1", due_date: "2030-01-31", discount: { type: "fixed", amount: 50 } } },
        { draft: true }
      )
      expect([draft.status, draft.amount, draft.due_date]).toEqual(["draft", 450, "2030-01-31"])
      // an update's null clears (absent keeps): as over HTTP
      const cleared = await engine.updateInvoice(test, draft.id, { data: { due_date: null, discount: null } })
      expect([cleared.amount, "due_date" in cleared, "discount" in cleared, cleared.customer]).toEqual([
        500,
        false,
        false,
        "cus_1"
      ])
      const sent = await engine.sendInvoice(test, draft.id)
      expect(sent.status).toBe("not-paid")
      expect(sent.invoice_number).toBe(1)
      expect((await engine.remindInvoice(test, draft.id)).reminder_count).toBe(1)
      expect((await engine.sandboxCustomerPaysInvoice(test, draft.id)).status).toBe("paid")
      expect(((await engine.payInvoice(test, draft.id).catch((e: unknown) => e)) as DomainError).code).toBe(
        "already_paid"
      )
      expect((await engine.listInvoices(test, { limit: "5" })).meta).toEqual({ total: 1, limit: 5, offset: 0 })

      const pr = await engine.createPaymentRequest(live, { amount: 10 })
      const open = await engine.hostedPage("payment_request", pr.id)
      expect(open.addresses.map((a) => `${a.network}/${a.coin}`)).toEqual(["TRC20/USDT", "TRC20/USDC", "ARC/USDC"])
      const paid = await engine.sandboxPayPaymentRequest(live, pr.id, { amount: 10, currency: "USDC", network: "arc" })
      expect(paid).toMatchObject({ matched: { object: "payment_request", id: pr.id }, applied: true })
      expect((await engine.getPaymentRequest(live, pr.id)).status).toBe("completed")
      const page = await engine.hostedPage("payment_request", pr.id)
      expect(page).toMatchObject({
        kind: "payment_request",
        status: "completed",
        test_mode: false,
        heading: "Paid in full"
      })
      expect(page.merchant).toBe(open.merchant)
      expect(page.merchant).not.toBe("")
      expect(page.amount).toEqual({ value: "10.00", currency: "USD" })
      // paid in full: no more addresses to send to, no deadline
      expect([page.addresses, page.facts.map(([k]) => k)]).toEqual([[], ["Paid so far"]])
      expect(((await engine.hostedPage("invoice", pr.id).catch((e: unknown) => e)) as DomainError).code).toBe(
        "not_found"
      )
      expect((await engine.listPaymentRequests(live)).meta.total).toBe(1)

      const due = await engine.runDue()
      expect(due.conversions_expired).toBe(0)
      expect((await engine.listFailedWebhooks(test)).total).toBe(0)
    } finally {
      await engine.dispose()
    }
  })
})

describe("Promise facade: a store layer that can fail", () => {
  it("takes a store whose layer may fail (a durable store's): built, it serves; failed, every call rejects with internal_error", async () => {
    const rate = Decimal.parse("70") as Decimal.Decimal
    // a layer with an error channel, as SqliteStore.layerFromDataDir and PostgresStore.layer have
    const fallible: Layer.Layer<Store, StoreError> = Layer.effect(Store, MemoryStore.makeMemoryStore)
    const working = createEngine({ store: fallible, sandbox: { rate } })
    try {
      const biz = await working.createBusiness({ name: "Shop" })
      expect((await working.getBalance(await working.authenticate(biz.secret_key_test))).available).toBe(0)
    } finally {
      await working.dispose()
    }

    const causes: Array<unknown> = []
    const broken = createEngine({
      store: Layer.effect(Store, Effect.fail(new StoreError({ message: "cannot open /var/lib/xaalis/db.sqlite" }))),
      sandbox: { rate },
      onError: (cause) => causes.push(cause)
    })
    try {
      // ready() names the reason to the operator at start-up
      const notReady = await broken.ready().then(
        () => undefined,
        (e: unknown) => e
      )
      expect(String((notReady as Error | undefined)?.message)).toContain("cannot open /var/lib/xaalis/db.sqlite")
      for (const call of [() => broken.createBusiness({ name: "Shop" }), () => broken.authenticate("sk_test_x")]) {
        const e = await call().catch((x: unknown) => x)
        expect(e).toBeInstanceOf(DomainError)
        expect((e as DomainError).code).toBe("internal_error")
        expect((e as DomainError).message).not.toContain("/var/lib")
      }
      // the caller learns nothing of internals; onError gets each cause
      expect(causes).toHaveLength(2)
      for (const cause of causes) expect(`${JSON.stringify(cause)} ${String(cause)}`).toContain("/var/lib/xaalis")
    } finally {
      await broken.dispose().catch(() => undefined)
    }
  })
})
