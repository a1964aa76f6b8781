import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ErrorCode } from "../src/Errors.ts"
import * as Decimal from "../src/money/Decimal.ts"
import * as PaymentIntent from "../src/payment-intent/PaymentIntent.ts"
import * as PaymentLink from "../src/payment-link/PaymentLink.ts"
import type { Step, Transition } from "../src/Transition.ts"

const T0 = Date.UTC(2026, 0, 15, 10, 0, 0)
const THIRTY_MIN = 30 * 60 * 1000

const okOf = <S, E, F>(step: Step<S, E, F>): Transition<S, E, F> => {
  if (Result.isFailure(step)) throw new Error(`expected success, got ${step.failure.code}: ${step.failure.message}`)
  return step.success
}
const codeOf = <S, E, F>(step: Step<S, E, F>): ErrorCode | "ok" => (Result.isFailure(step) ? step.failure.code : "ok")
const failure = <S, E, F>(step: Step<S, E, F>): { code: string; param: string | undefined } => {
  if (Result.isSuccess(step)) throw new Error("expected a failure")
  return { code: step.failure.code, param: step.failure.param }
}

const ctx: PaymentIntent.CreateContext = {
  payment_intent_id: "5a0a4b5e-7d1c-4c3e-9f58-1f2a3b4c5d6e",
  intent_secret: "pi_secret_abc",
  payment_link: "https://pay.example.gm/p/5a0a4b5e",
  now: T0,
  test_mode: true,
  config: PaymentIntent.defaultPaymentIntentConfig
}

const fee = (amount: bigint, percent?: string): bigint => {
  const q = PaymentIntent.quoteFee(
    { amount },
    percent === undefined
      ? PaymentIntent.defaultPaymentIntentConfig
      : { ...PaymentIntent.defaultPaymentIntentConfig, fee_percent: Decimal.parse(percent) ?? Decimal.zero }
  )
  if (q instanceof Error) throw q
  return q.transaction_fee
}

const created = (input: PaymentIntent.CreatePaymentIntent = { amount: 10_000n }) =>
  okOf(PaymentIntent.create(input, ctx)).state
const inStatus = (status: PaymentIntent.PaymentIntentStatus): PaymentIntent.PaymentIntent => ({
  ...created(),
  status
})

const commandArb: fc.Arbitrary<PaymentIntent.PaymentIntentCommand> = fc.oneof(
  fc.constant({ type: "start_processing" as const }),
  fc.constant({ type: "succeed" as const }),
  fc.option(fc.string(), { nil: undefined }).map((reason) => ({ type: "fail" as const, reason })),
  fc.constant({ type: "cancel" as const }),
  fc.constant({ type: "expire" as const })
)

describe("payment intent fees: worked examples (decisions §5, default 1.5%)", () => {
  it("100.00 GMD -> 1.50 exactly", () => expect(fee(10_000n)).toBe(150n))
  it("1.00 GMD -> 1.5 butut, a tie, rounds up to 0.02", () => expect(fee(100n)).toBe(2n))
  it("3.33 GMD -> 4.995 butut rounds to 0.05; 0.33 -> 0.495 rounds to 0.00", () => {
    expect(fee(333n)).toBe(5n)
    expect(fee(33n)).toBe(0n)
  })
  it("19.99 USD -> 29.985 cents rounds to 0.30", () => expect(fee(1999n)).toBe(30n))
  it("a configured 2.75% of 123.45 -> 339.4875 butut rounds to 3.39; 0% -> 0", () => {
    expect(fee(12_345n, "2.75")).toBe(339n)
    expect(fee(12_345n, "0")).toBe(0n)
  })
  it("quoteFee says who pays what", () => {
    expect(PaymentIntent.quoteFee({ amount: 10_000n })).toEqual({
      amount: 10_000n,
      currency: "GMD",
      transaction_fee: 150n,
      transaction_fee_type: "business",
      customer_pays: 10_000n,
      business_receives: 9_850n
    })
    expect(PaymentIntent.quoteFee({ amount: 10_000n, currency: "USD", transaction_fee_type: "customer" })).toEqual({
      amount: 10_000n,
      currency: "USD",
      transaction_fee: 150n,
      transaction_fee_type: "customer",
      customer_pays: 10_150n,
      business_receives: 10_000n
    })
  })
  it("fee = half_up(amount x 1.5 / 100) for every amount", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 10n ** 15n }), (amount) => {
        const f = fee(amount)
        // nearest butut, ties up: -1/2 < f - amount*15/1000 <= 1/2, scaled by 2000
        const d = 2000n * f - 2n * 15n * amount
        expect(d > -1000n && d <= 1000n).toBe(true)
      })
    )
  })
})

describe("payment intent creation", () => {
  it("creates in requires_payment_method with defaults, expiry 30 min, event payment_intent.created", () => {
    const step = okOf(PaymentIntent.create({ amount: 10_000n }, ctx))
    expect(step.state).toEqual({
      payment_intent_id: ctx.payment_intent_id,
      intent_secret: "pi_secret_abc",
      payment_link: "https://pay.example.gm/p/5a0a4b5e",
      amount: 10_000n,
      transaction_fee: 150n,
      transaction_fee_type: "business",
      currency: "GMD",
      expires_at: T0 + THIRTY_MIN,
      status: "requires_payment_method",
      return_url: null,
      cancel_url: null,
      callback_url: null,
      network: null,
      account_number: null,
      skip_url_validation: false,
      metadata: {},
      test_mode: true,
      cancellation_reason: null,
      failure_reason: null,
      created_at: T0,
      updated_at: T0
    })
    expect(step.events).toEqual([{ type: "payment_intent.created", payment_intent: step.state }])
  })

  it("takes the optional fields and a configured window", () => {
    const state = okOf(
      PaymentIntent.create(
        {
          amount: 2_500n,
          currency: "USD",
          transaction_fee_type: "customer",
          return_url: "https://shop.example/ok",
          cancel_url: "https://shop.example/cancel",
          callback_url: "https://shop.example/hook",
          network: "qmoney",
          account_number: "7012345",
          metadata: { order: "A-17" }
        },
        { ...ctx, config: { fee_percent: Decimal.make(2n, 0), expiry_window_ms: 5 * 60_000 } }
      )
    ).state
    expect(state).toMatchObject({
      currency: "USD",
      transaction_fee: 50n,
      transaction_fee_type: "customer",
      network: "qmoney",
      account_number: "7012345",
      metadata: { order: "A-17" },
      expires_at: T0 + 5 * 60_000
    })
  })

  it("rejects invalid requests with validation_error naming the field", () => {
    const cases: Array<[PaymentIntent.CreatePaymentIntent, string]> = [
      [{ amount: 0n }, "amount"],
      [{ amount: -1n }, "amount"],
      [{ amount: 100n, currency: "EUR" as "GMD" }, "currency"],
      [{ amount: 100n, transaction_fee_type: "merchant" as "business" }, "transaction_fee_type"],
      [{ amount: 100n, network: "orange" as "wave" }, "network"],
      [{ amount: 100n, account_number: "12345" }, "account_number"],
      [{ amount: 100n, return_url: "not a url" }, "return_url"],
      [{ amount: 100n, callback_url: "" }, "callback_url"],
      [{ amount: 100n, metadata: [] as unknown as Record<string, unknown> }, "metadata"]
    ]
    for (const [input, param] of cases) {
      expect(failure(PaymentIntent.create(input, ctx))).toEqual({ code: "validation_error", param })
    }
  })

  it("counts URL lengths in characters (code points), as the wire schema does", () => {
    const long = `https://x.example/${"😀".repeat(2048 - 18)}` // 2,048 characters, 4,078 UTF-16 units
    expect(PaymentIntent.create({ amount: 100n, return_url: long }, ctx)._tag).toBe("Success")
    expect(failure(PaymentIntent.create({ amount: 100n, return_url: `${long}x` }, ctx))).toEqual({
      code: "validation_error",
      param: "return_url"
    })
  })

  it("skip_url_validation accepts URLs that are not http(s), but not empty ones nor ones that run code", () => {
    expect(
      codeOf(PaymentIntent.create({ amount: 100n, return_url: "myapp://done", skip_url_validation: true }, ctx))
    ).toBe("ok")
    expect(codeOf(PaymentIntent.create({ amount: 100n, return_url: "", skip_url_validation: true }, ctx))).toBe(
      "validation_error"
    )
    for (const url of ["javascript:alert(1)", " JAVASCRIPT:alert(1)", "data:text/html,x", "vbscript:x", "file:///x"]) {
      expect(
        failure(PaymentIntent.create({ amount: 100n, cancel_url: url, skip_url_validation: true }, ctx)),
        url
      ).toEqual({ code: "validation_error", param: "cancel_url" })
    }
  })

  it("refuses a fee percentage outside [0, 100] and a non-positive window", () => {
    const bad = [
      { fee_percent: Decimal.make(-1n, 0), expiry_window_ms: THIRTY_MIN },
      { fee_percent: Decimal.make(1001n, 1), expiry_window_ms: THIRTY_MIN },
      { fee_percent: Decimal.make(1n, 0), expiry_window_ms: 0 }
    ]
    for (const config of bad)
      expect(codeOf(PaymentIntent.create({ amount: 100n }, { ...ctx, config }))).toBe("validation_error")
  })
})

describe("payment intent transitions", () => {
  it("start processing -> succeed: charge.succeeded with the successful intent", () => {
    const processing = okOf(PaymentIntent.startProcessing(created(), T0 + 1)).state
    expect(processing.status).toBe("processing")
    const step = okOf(PaymentIntent.succeed(processing, T0 + 2))
    expect(step.state).toMatchObject({ status: "successful", updated_at: T0 + 2 })
    expect(step.events).toEqual([{ type: "charge.succeeded", payment_intent: step.state }])
  })

  it("the processor may report an outcome without a processing step (sandbox helpers)", () => {
    expect(okOf(PaymentIntent.succeed(created(), T0 + 1)).state.status).toBe("successful")
    const failed = okOf(PaymentIntent.failCharge(created(), "insufficient funds", T0 + 1))
    expect(failed.state).toMatchObject({ status: "failed", failure_reason: "insufficient funds" })
    expect(failed.events).toEqual([{ type: "charge.failed", payment_intent: failed.state }])
  })

  it("cancel: payment_intent.cancelled, reason requested", () => {
    for (const status of ["initialized", "requires_payment_method"] as const) {
      const step = okOf(PaymentIntent.cancel(inStatus(status), T0 + 1))
      expect(step.state).toMatchObject({ status: "cancelled", cancellation_reason: "requested" })
      expect(step.events).toEqual([{ type: "payment_intent.cancelled", payment_intent: step.state }])
    }
  })

  it("expire at expires_at exactly: cancelled with reason expired and payment_intent.cancelled", () => {
    for (const status of ["initialized", "requires_payment_method", "processing"] as const) {
      expect(codeOf(PaymentIntent.expire(inStatus(status), T0 + THIRTY_MIN - 1))).toBe("invalid_state")
      const step = okOf(PaymentIntent.expire(inStatus(status), T0 + THIRTY_MIN))
      expect(step.state).toMatchObject({ status: "cancelled", cancellation_reason: "expired" })
      expect(step.events).toEqual([{ type: "payment_intent.cancelled", payment_intent: step.state }])
    }
  })

  describe("every illegal transition fails with invalid_state", () => {
    const commands: ReadonlyArray<PaymentIntent.PaymentIntentCommand> = [
      { type: "start_processing" },
      { type: "succeed" },
      { type: "fail" },
      { type: "cancel" },
      { type: "expire" }
    ]
    for (const status of PaymentIntent.terminal_statuses) {
      for (const command of commands) {
        it(`${command.type} on ${status}`, () => {
          expect(codeOf(PaymentIntent.transition(inStatus(status), command, T0 + 2 * THIRTY_MIN))).toBe("invalid_state")
        })
      }
    }
    it("start_processing on processing", () => {
      expect(codeOf(PaymentIntent.startProcessing(inStatus("processing"), T0 + 1))).toBe("invalid_state")
    })
    it("cancel on processing", () => {
      expect(codeOf(PaymentIntent.cancel(inStatus("processing"), T0 + 1))).toBe("invalid_state")
    })
    it("start_processing at or after expires_at", () => {
      expect(codeOf(PaymentIntent.startProcessing(created(), T0 + THIRTY_MIN))).toBe("invalid_state")
    })
    it("expire before expires_at", () => {
      expect(codeOf(PaymentIntent.expire(created(), T0 + THIRTY_MIN - 1))).toBe("invalid_state")
    })
  })

  it("terminal states stay terminal, unchanged, under random command sequences", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PaymentIntent.payment_intent_statuses),
        fc.array(fc.tuple(commandArb, fc.integer({ min: 0, max: 2 * THIRTY_MIN })), { maxLength: 25 }),
        (initial, steps) => {
          let state = inStatus(initial)
          let frozen: PaymentIntent.PaymentIntent | undefined = PaymentIntent.isTerminal(initial) ? state : undefined
          for (const [command, dt] of steps) {
            const step = PaymentIntent.transition(state, command, T0 + dt)
            if (frozen !== undefined) {
              expect(codeOf(step)).toBe("invalid_state")
              continue
            }
            if (Result.isSuccess(step)) {
              state = step.success.state
              if (PaymentIntent.isTerminal(state.status)) frozen = state
            }
          }
          if (frozen !== undefined) expect(state).toBe(frozen)
        }
      )
    )
  })
})

// ---------------------------------------------------------------------------
// Model-based test of the payment intent machine.

interface Model {
  status: PaymentIntent.PaymentIntentStatus
  readonly expires_at: number
}
interface Real {
  intent: PaymentIntent.PaymentIntent
}

const terminal = (s: PaymentIntent.PaymentIntentStatus) => s === "successful" || s === "failed" || s === "cancelled"
const awaiting = (s: PaymentIntent.PaymentIntentStatus) => s === "initialized" || s === "requires_payment_method"

/** The model's answer: the next status and event, or the error code. */
const modelStep = (
  m: Model,
  command: PaymentIntent.PaymentIntentCommand,
  now: number
): { status: PaymentIntent.PaymentIntentStatus; event: string | null } | "invalid_state" => {
  if (terminal(m.status)) return "invalid_state"
  switch (command.type) {
    case "start_processing":
      return awaiting(m.status) && now < m.expires_at ? { status: "processing", event: null } : "invalid_state"
    case "succeed":
      return { status: "successful", event: "charge.succeeded" }
    case "fail":
      return { status: "failed", event: "charge.failed" }
    case "cancel":
      return awaiting(m.status) ? { status: "cancelled", event: "payment_intent.cancelled" } : "invalid_state"
    case "expire":
      return now >= m.expires_at ? { status: "cancelled", event: "payment_intent.cancelled" } : "invalid_state"
  }
}

class Run implements fc.Command<Model, Real> {
  readonly command: PaymentIntent.PaymentIntentCommand
  readonly late: boolean
  constructor(command: PaymentIntent.PaymentIntentCommand, late: boolean) {
    this.command = command
    this.late = late
  }
  check = () => true
  run(m: Model, r: Real): void {
    const now = this.late ? m.expires_at : m.expires_at - 1
    const expected = modelStep(m, this.command, now)
    const step = PaymentIntent.transition(r.intent, this.command, now)
    if (expected === "invalid_state") {
      expect(codeOf(step)).toBe("invalid_state")
    } else {
      const t = okOf(step)
      expect(t.state.status).toBe(expected.status)
      expect(t.events.map((e) => e.type)).toEqual(expected.event === null ? [] : [expected.event])
      for (const e of t.events) expect(e.payment_intent).toBe(t.state)
      if (expected.status === "cancelled") {
        expect(t.state.cancellation_reason).toBe(this.command.type === "expire" ? "expired" : "requested")
      }
      expect(t.state.amount).toBe(r.intent.amount)
      expect(t.state.transaction_fee).toBe(r.intent.transaction_fee)
      r.intent = t.state
      m.status = expected.status
    }
    expect(r.intent.status).toBe(m.status)
  }
  toString = () => `${this.command.type}(${this.late ? "at expiry" : "before expiry"})`
}

describe("payment intent machine: model-based", () => {
  it("behaves like the model under random command sequences", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<PaymentIntent.PaymentIntentStatus>("initialized", "requires_payment_method"),
        fc.commands([fc.tuple(commandArb, fc.boolean()).map(([c, late]) => new Run(c, late))], { maxCommands: 20 }),
        (initial, cmds) => {
          const intent = inStatus(initial)
          fc.modelRun(() => ({ model: { status: initial, expires_at: intent.expires_at }, real: { intent } }), cmds)
        }
      )
    )
  })
})

// ---------------------------------------------------------------------------
// Payment links.

describe("payment links", () => {
  const linkCtx: PaymentLink.CreateContext = { id: "pl_1", url: "https://pay.example.gm/l/pl_1", now: T0 }

  it("creates an active link with the caller's fields, currency GMD by default", () => {
    const step = okOf(
      PaymentLink.create(
        { amount: 50_000n, title: "Tailoring deposit", description: "50%", metadata: { k: 1 } },
        linkCtx
      )
    )
    expect(step.state).toEqual({
      id: "pl_1",
      url: "https://pay.example.gm/l/pl_1",
      title: "Tailoring deposit",
      description: "50%",
      amount: 50_000n,
      currency: "GMD",
      metadata: { k: 1 },
      status: "active",
      created_at: T0,
      updated_at: T0
    })
    expect(step.events).toEqual([])
    expect(okOf(PaymentLink.create({ amount: 1n, currency: "USD" }, linkCtx)).state).toMatchObject({
      currency: "USD",
      title: null,
      description: null,
      metadata: {}
    })
  })

  it("rejects invalid links with validation_error", () => {
    const cases: Array<[PaymentLink.CreatePaymentLink, string]> = [
      [{ amount: 0n }, "amount"],
      [{ amount: 1n, currency: "XOF" as "GMD" }, "currency"],
      [{ amount: 1n, title: "" }, "title"],
      [{ amount: 1n, title: "t".repeat(256) }, "title"],
      [{ amount: 1n, metadata: null as unknown as Record<string, unknown> }, "metadata"]
    ]
    for (const [input, param] of cases) {
      expect(failure(PaymentLink.create(input, linkCtx))).toEqual({ code: "validation_error", param })
    }
  })

  it("deactivates and activates; asking for the current status is invalid_state", () => {
    const active = okOf(PaymentLink.create({ amount: 100n }, linkCtx)).state
    expect(codeOf(PaymentLink.activate(active, T0 + 1))).toBe("invalid_state")
    const inactive = okOf(PaymentLink.deactivate(active, T0 + 1)).state
    expect(inactive).toMatchObject({ status: "inactive", updated_at: T0 + 1 })
    expect(codeOf(PaymentLink.deactivate(inactive, T0 + 2))).toBe("invalid_state")
    expect(okOf(PaymentLink.transition(inactive, { type: "activate" }, T0 + 3)).state.status).toBe("active")
  })

  it("status always alternates under random command sequences", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<"activate" | "deactivate">("activate", "deactivate"), { maxLength: 30 }),
        (cmds) => {
          let state = okOf(PaymentLink.create({ amount: 100n }, linkCtx)).state
          for (const type of cmds) {
            const legal = (type === "activate") === (state.status === "inactive")
            const step = PaymentLink.transition(state, { type }, T0)
            expect(codeOf(step)).toBe(legal ? "ok" : "invalid_state")
            if (Result.isSuccess(step)) state = step.success.state
          }
        }
      )
    )
  })
})
