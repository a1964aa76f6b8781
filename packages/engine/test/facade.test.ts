import { Decimal, DomainError } from "@xaalis/core"
import { createEngine } from "@xaalis/engine"
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
      expect(k2).toEqual(k1)
      const clash = await engine
        .createConversion(live, { gmd_amount: 7000 }, { idempotency_key: "order-42" })
        .catch((e: unknown) => e)
      expect((clash as DomainError).code).toBe("idempotency_conflict")
    } finally {
      await engine.dispose()
    }
  })
})
