import { PaymentRequest } from "@xaalis/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./arbitraries.ts"
import { dec, must, mustFail, T0 } from "./helpers.ts"

const ctx = {
  id: "pr1",
  link: "https://pay.example/pr1",
  now: T0,
  rate: dec("70"),
  config: PaymentRequest.defaultPaymentRequestConfig
}
const pay = (amount: bigint, tx = "0x1", log_index = 0): PaymentRequest.IncomingPayment => ({
  network: "TRC20",
  coin: "USDT",
  tx_hash: tx,
  log_index,
  amount
})

describe("payment request machine: arrival and stamp", () => {
  it("lateness is decided by when a payment arrived (`now`); it is stamped `at`", () => {
    const pr = must(PaymentRequest.create({ amount: 1000n, expires_at: T0 + 60_000 }, ctx)).state
    const got = must(PaymentRequest.receivePayment(pr, pay(1_000_000n), T0 + 59_999, T0 + 60_010))
    expect(got.state.status).toBe("partially_paid")
    expect(got.state.payments[0]?.at).toBe(T0 + 60_010)
    expect(got.state.updated_at).toBe(T0 + 60_010)
    const late = must(PaymentRequest.receivePayment(pr, pay(1_000_000n, "0x2"), T0 + 60_000, T0 + 60_010))
    expect([late.state.status, late.state.late_funds[0]?.at]).toEqual(["expired", T0 + 60_010])
  })
})

describe("payment request machine: the amount maximum after conversion", () => {
  it("a GMD amount worth more than 10,000,000.00 USD at the current rate is refused, naming the rate", () => {
    const e = mustFail(
      PaymentRequest.create({ amount: 100_000_000_000n, currency: "GMD" }, { ...ctx, rate: dec("0.0001") })
    )
    expect(e.code).toBe("validation_error")
    expect(e.param).toBe("amount")
    expect(e.message).toContain("above the maximum of 10000000.00 USD")
    expect(e.message).toContain("0.0001 GMD per USD")
    // 1,000,000,000.00 GMD is 14,285,714.29 USD at 70: refused; half of it passes
    expect(mustFail(PaymentRequest.create({ amount: 100_000_000_000n, currency: "GMD" }, ctx)).param).toBe("amount")
    expect(PaymentRequest.create({ amount: 50_000_000_000n, currency: "GMD" }, ctx)._tag).toBe("Success")
  })
})

describe("payment request machine: examples", () => {
  it("10.00 USD paid in two parts: partially_paid then completed, charge.succeeded each time", () => {
    const pr = must(PaymentRequest.create({ amount: 1000n, metadata: { order: "A-1" } }, ctx)).state
    expect(pr).toMatchObject({ status: "pending", amount: 0n, usd_amount: 1000n, fee: 10n, expires_at: null })
    const a = must(PaymentRequest.receivePayment(pr, pay(4_000_000n, "0xa"), T0 + 1))
    expect(a.state.status).toBe("partially_paid")
    expect(a.events[0]?.type).toBe("charge.succeeded")
    expect(a.events[0]?.payment.amount_paid_gmd).toBe(28000n)
    const b = must(PaymentRequest.receivePayment(a.state, pay(6_000_000n, "0xb"), T0 + 2))
    expect(b.state.status).toBe("completed")
    expect(b.state.amount).toBe(10_000_000n)
    const c = must(PaymentRequest.receivePayment(b.state, pay(1n, "0xc"), T0 + 3))
    expect(c.state.status).toBe("completed")
    expect(c.events).toHaveLength(1)
    expect(c.state.payments).toHaveLength(3)
    expect(c.state.metadata).toEqual({ order: "A-1" })
  })

  it("duplicates are refused; a payment after expires_at is late funds and expires the request", () => {
    const pr = must(PaymentRequest.create({ amount: 1000n, expires_at: T0 + 60_000 }, ctx)).state
    const a = must(PaymentRequest.receivePayment(pr, pay(1_000_000n), T0))
    expect(mustFail(PaymentRequest.receivePayment(a.state, pay(1_000_000n), T0)).code).toBe("duplicate_transfer")
    const late = must(PaymentRequest.receivePayment(a.state, pay(9_000_000n, "0x2"), T0 + 60_000))
    expect(late.state.status).toBe("expired")
    expect(late.state.amount).toBe(1_000_000n)
    expect(late.events).toEqual([])
    expect(late.effects.map((e) => e.type)).toEqual(["late_funds"])
  })

  it("expire only once the deadline passed and only before completion; past deadlines are refused at creation", () => {
    const pr = must(PaymentRequest.create({ amount: 1000n, expires_at: T0 + 60_000 }, ctx)).state
    expect(mustFail(PaymentRequest.expire(pr, T0 + 59_999)).code).toBe("invalid_state")
    expect(must(PaymentRequest.expire(pr, T0 + 60_000)).state.status).toBe("expired")
    expect(mustFail(PaymentRequest.create({ amount: 1000n, expires_at: T0 }, ctx)).param).toBe("expires_at")
    const done = must(PaymentRequest.receivePayment(pr, pay(10_000_000n), T0)).state
    expect(mustFail(PaymentRequest.expire(done, T0 + 999_999)).code).toBe("invalid_state")
  })

  it("the fee is capped at 2.00 USD", () => {
    expect(must(PaymentRequest.create({ amount: 50_000n }, ctx)).state.fee).toBe(200n)
  })
})

describe("payment request machine: model-based", () => {
  it("running total, status and terminal states agree with the model", () => {
    type M = { now: number; status: PaymentRequest.PaymentRequestStatus; total: bigint; seen: Set<number> }
    type R = { state: PaymentRequest.PaymentRequest; now: number; events: number }
    const deadline = T0 + 600_000
    const usd = 2_500n // 25.00 USD
    class Pay implements fc.Command<M, R> {
      readonly amount: bigint
      readonly tx: number
      constructor(amount: bigint, tx: number) {
        this.amount = amount
        this.tx = tx
      }
      check = () => true
      run(m: M, r: R) {
        const res = PaymentRequest.receivePayment(r.state, pay(this.amount, `0x${this.tx}`), r.now)
        const before = m.status
        if (m.seen.has(this.tx)) {
          expect(Result.isFailure(res) && res.failure.code).toBe("duplicate_transfer")
          return
        }
        m.seen.add(this.tx)
        const step = must(res)
        if (m.status === "expired" || (m.now >= deadline && m.status !== "completed")) {
          m.status = "expired"
          expect(step.events).toEqual([])
        } else {
          m.total += this.amount
          m.status = m.total >= usd * 10_000n ? "completed" : "partially_paid"
          expect(step.events).toHaveLength(1)
          expect(step.events[0]?.request.amount).toBe(m.total)
        }
        r.state = step.state
        expect(r.state.status).toBe(m.status)
        expect(r.state.amount).toBe(m.total)
        if (before === "completed") expect(m.status).toBe("completed")
        if (before === "expired") expect(m.status).toBe("expired")
      }
      toString = () => `pay(${this.amount}, ${this.tx})`
    }
    class Advance implements fc.Command<M, R> {
      readonly ms: number
      constructor(ms: number) {
        this.ms = ms
      }
      check = () => true
      run(m: M, r: R) {
        m.now += this.ms
        r.now += this.ms
      }
      toString = () => `advance(${this.ms})`
    }
    const cmds = [
      fc.tuple(fc.bigInt({ min: 1n, max: 15_000_000n }), fc.integer({ min: 0, max: 5 })).map(([a, t]) => new Pay(a, t)),
      fc.integer({ min: 1, max: 300_000 }).map((ms) => new Advance(ms))
    ]
    fc.assert(
      fc.property(fc.commands(cmds, { maxCommands: 30 }), (c) => {
        const state = must(PaymentRequest.create({ amount: usd, expires_at: deadline }, ctx)).state
        fc.modelRun(
          () => ({
            model: { now: T0, status: "pending", total: 0n, seen: new Set<number>() } as M,
            real: { state, now: T0, events: 0 }
          }),
          c
        )
      }),
      { numRuns: runs(300) }
    )
  })
})
