import { Conversion, Settlement } from "@xaalis/core"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "./arbitraries.ts"
import { conversionContext, dec, must, mustFail, T0 } from "./helpers.ts"

const ctx = conversionContext
const fresh = (input: Conversion.CreateConversion = { gmd_amount: 500000n }) =>
  must(Conversion.create(input, ctx)).state
const transfer = (amount: bigint, tx = "0xabc", log_index = 0): Conversion.ChainTransfer => ({
  network: "TRC20",
  coin: "USDT",
  tx_hash: tx,
  log_index,
  amount
})

describe("conversion machine: examples", () => {
  it("pending -> underpaid -> paid, with ramp events and proportional credit", () => {
    const c = fresh() // 5,000 GMD for 73.64 USD
    const half = must(Conversion.applyTransfer(c, transfer(36_820_000n, "0x1"), T0 + 1000))
    expect(half.state.status).toBe("underpaid")
    expect(half.events.map((e) => e.type)).toEqual(["ramp.underpaid"])
    expect(half.effects).toEqual([{ type: "credit", gmd: 250000n, markup_usd: 0n, payout: null }])
    const rest = must(Conversion.applyTransfer(half.state, transfer(36_820_000n, "0x2"), T0 + 2000))
    expect(rest.state.status).toBe("paid")
    expect(rest.state.credited_gmd).toBe(500000n)
    expect(rest.events.map((e) => e.type)).toEqual(["ramp.paid"])
    const more = must(Conversion.applyTransfer(rest.state, transfer(1n, "0x3"), T0 + 3000))
    expect(more.state.status).toBe("overpaid")
    expect(more.effects).toEqual([])
    expect(more.events.map((e) => e.type)).toEqual(["ramp.overpaid"])
  })

  it("a duplicate transfer (same network, tx hash, log index) is refused; another log index is not", () => {
    const c = must(Conversion.applyTransfer(fresh(), transfer(10_000_000n, "0xAA", 1), T0)).state
    expect(mustFail(Conversion.applyTransfer(c, transfer(10_000_000n, "0xaa", 1), T0)).code).toBe("duplicate_transfer")
    expect(must(Conversion.applyTransfer(c, transfer(10_000_000n, "0xAA", 2), T0)).state.actually_paid).toBe(
      20_000_000n
    )
  })

  it("the keys an older version (hashes only lowercased) may have given a transfer are found", () => {
    const id = (tx_hash: string) => ({ network: "TRC20" as const, tx_hash, log_index: 0 })
    expect(Conversion.legacyTransferKeys(id("0xabcd"))).toEqual(["TRC20:abcd:0"])
    expect(Conversion.legacyTransferKeys(id("0XABCD"))).toEqual(["TRC20:abcd:0"])
    expect(Conversion.legacyTransferKeys(id("ABCD"))).toEqual(["TRC20:abcd:0"])
    expect(Conversion.legacyTransferKeys(id(" 0xabcd "))).toEqual(["TRC20: 0xabcd :0", "TRC20:abcd:0"])
    expect(Conversion.legacyTransferKeys(id("Tx-Ref"))).toEqual([])
    // a state that recorded `abcd` (an older version's key) refuses it however it is spelled now
    const old = { ...fresh(), applied_transfers: ["TRC20:abcd:0"] }
    for (const tx of ["abcd", "0xabcd", "0XABCD", "ABCD"]) {
      expect(mustFail(Conversion.applyTransfer(old, transfer(1_000_000n, tx), T0)).code).toBe("duplicate_transfer")
    }
  })

  it("lateness is decided by when a transfer arrived (`now`); its entries are stamped `at`", () => {
    const c = fresh()
    const before = c.invoice_expires_at - 1
    const step = must(Conversion.applyTransfer(c, transfer(10_000_000n, "0xe"), before, before + 5))
    expect(step.state.actually_paid).toBe(10_000_000n)
    expect(step.state.timeline.slice(1).map((e) => e.at)).toEqual([before + 5, before + 5, before + 5])
    const late = must(
      Conversion.applyTransfer(c, transfer(10_000_000n, "0xf"), c.invoice_expires_at, c.invoice_expires_at + 7)
    )
    expect(late.effects.map((e) => e.type)).toEqual(["late_funds"])
    expect(late.state.timeline.at(-1)).toMatchObject({ type: "late_funds", at: c.invoice_expires_at + 7 })
  })

  it("a transfer at the deadline is late: not applied, conversion expired, no event", () => {
    const c = fresh()
    const late = must(Conversion.applyTransfer(c, transfer(73_640_000n), c.invoice_expires_at))
    expect(late.state.status).toBe("expired")
    expect(late.state.actually_paid).toBe(0n)
    expect(late.events).toEqual([])
    expect(late.effects.map((e) => e.type)).toEqual(["late_funds"])
  })

  it("paid conversions never expire; a wrong coin is refused", () => {
    const paid = must(Conversion.applyTransfer(fresh(), transfer(73_640_000n), T0)).state
    expect(mustFail(Conversion.expire(paid, T0 + 3_600_000)).code).toBe("invalid_state")
    expect(mustFail(Conversion.applyTransfer(fresh(), { ...transfer(1n), coin: "USDC" }, T0)).code).toBe(
      "validation_error"
    )
  })

  it("expiry before the window closes is refused; after, pending becomes expired without event", () => {
    const c = fresh()
    expect(mustFail(Conversion.expire(c, c.invoice_expires_at - 1)).code).toBe("invalid_state")
    const e = must(Conversion.expire(c, c.invoice_expires_at))
    expect(e.state.status).toBe("expired")
    expect(e.events).toEqual([])
    expect(mustFail(Conversion.expire(e.state, c.invoice_expires_at)).code).toBe("invalid_state")
  })

  it("a dalasi amount whose stablecoin price passes the amount maximum (a very low rate) is refused", () => {
    const low = { ...ctx, rate: dec("0.0000001") }
    const e = mustFail(Conversion.create({ gmd_amount: 100_000_000_000n }, low))
    expect(e.code).toBe("validation_error")
    expect(e.param).toBe("gmd_amount")
    expect(e.message).toContain("above the maximum of 10000000.00 USD")
    // 10,000.00 GMD costs over 100,000,000,000 USD at that rate: refused too; at 70, 500,000,000.00 GMD passes
    expect(mustFail(Conversion.create({ gmd_amount: 1_000_000n }, low)).param).toBe("gmd_amount")
    expect(Conversion.create({ gmd_amount: 50_000_000_000n }, ctx)._tag).toBe("Success")
  })

  it("a stablecoin amount whose dalasi passes the gmd_amount maximum (a very high rate) is refused", () => {
    const high = { ...ctx, rate: dec("150") }
    // 6,700,000.00 USD at 150 GMD/USD would credit 1,004,999,475 GMD: above the 1,000,000,000 a gmd_amount may be
    const e = mustFail(Conversion.create({ pay_amount: 670_000_000n }, high))
    expect([e.code, e.param]).toEqual(["validation_error", "pay_amount"])
    expect(e.message).toBe(
      "At the current rate this conversion would credit 1004999475.00 GMD, above the maximum of 1000000000.00 GMD; send a smaller pay_amount."
    )
    // the largest price in range passes, as does its dalasi amount asked in gmd mode
    const top = must(Conversion.create({ gmd_amount: 100_000_000_000n }, high)).state
    expect(must(Conversion.create({ pay_amount: top.pay_amount }, high)).state.gmd_amount).toBe(100_000_000_000n)
  })

  it("creation rules: both or neither amount, ARC with USDT, payout method", () => {
    expect(mustFail(Conversion.create({}, ctx)).code).toBe("validation_error")
    expect(mustFail(Conversion.create({ gmd_amount: 500000n, pay_amount: 10000n }, ctx)).code).toBe("validation_error")
    expect(mustFail(Conversion.create({ gmd_amount: 500000n, network: "ARC", pay_currency: "USDT" }, ctx)).param).toBe(
      "pay_currency"
    )
    expect(mustFail(Conversion.create({ gmd_amount: 500000n, destination: "mobile_money" }, ctx)).param).toBe(
      "payout_method"
    )
    const wallet = { network: "wave" as const, account_number: "123456", account_name: "Awa" }
    expect(
      mustFail(Conversion.create({ gmd_amount: 500000n, destination: "mobile_money", payout_method: wallet }, ctx))
        .param
    ).toBe("payout_method.account_number")
    const short = { ...wallet, account_number: "1234567", account_name: " A  " }
    expect(
      mustFail(Conversion.create({ gmd_amount: 500000n, destination: "mobile_money", payout_method: short }, ctx)).param
    ).toBe("payout_method.account_name")
    // at least 3 characters (code points) after trimming, not UTF-16 units: two emoji are two characters
    for (const account_name of ["😀😀", " a😀 ", "\u{1F1EC}\u{1F1F2}"]) {
      expect(
        mustFail(
          Conversion.create(
            { gmd_amount: 500000n, destination: "mobile_money", payout_method: { ...short, account_name } },
            ctx
          )
        ).param,
        account_name
      ).toBe("payout_method.account_name")
    }
    for (const account_name of ["😀😀😀", " Awa ", "Ñdè"]) {
      expect(
        Conversion.create(
          { gmd_amount: 500000n, destination: "mobile_money", payout_method: { ...short, account_name } },
          ctx
        )._tag,
        account_name
      ).toBe("Success")
    }
    const ok = must(
      Conversion.create(
        { gmd_amount: 500000n, destination: "mobile_money", payout_method: { ...wallet, account_number: "7654321" } },
        ctx
      )
    )
    expect(ok.state.payout_method?.account_number).toBe("7654321")
  })

  it("mobile money: credits carry the payout wallet; payout outcomes land on the timeline", () => {
    const wallet = { network: "afrimoney" as const, account_number: "7654321", account_name: "Awa Jallow" }
    const c = must(
      Conversion.create({ gmd_amount: 500000n, destination: "mobile_money", payout_method: wallet }, ctx)
    ).state
    const t = must(Conversion.applyTransfer(c, transfer(73_640_000n), T0))
    expect(t.effects).toEqual([{ type: "credit", gmd: 500000n, markup_usd: 0n, payout: wallet }])
    const failed = must(
      Conversion.recordPayout(t.state, { gmd: 500000n, outcome: "failed", detail: "wallet closed" }, T0)
    )
    expect(failed.state.timeline.at(-1)).toMatchObject({ type: "payout", outcome: "failed" })
    expect(mustFail(Conversion.recordPayout(fresh(), { gmd: 1n, outcome: "succeeded" }, T0)).code).toBe("invalid_state")
  })
})

// ---- model-based: random interleavings against a simple model ----

interface Model {
  now: number
  status: Conversion.ConversionStatus
  arrived: bigint
  seen: Set<string>
}
interface Real {
  state: Conversion.Conversion
  creditedSum: bigint
  now: number
}

const G = 500000n
const PAY = 7364n

const check = (m: Model, r: Real) => {
  expect(r.state.status).toBe(m.status)
  expect(r.state.actually_paid).toBe(m.arrived)
  expect(r.creditedSum).toBe(r.state.credited_gmd)
  expect(r.state.credited_gmd).toBe(Settlement.credited(G, PAY, m.arrived))
  expect(r.state.credited_gmd <= G).toBe(true)
}

class SendTransfer implements fc.Command<Model, Real> {
  readonly amount: bigint
  readonly tx: number
  constructor(amount: bigint, tx: number) {
    this.amount = amount
    this.tx = tx
  }
  check = () => true
  run(m: Model, r: Real) {
    const key = `TRC20:0x${this.tx}:0`
    const before = m.status
    const result = Conversion.applyTransfer(r.state, transfer(this.amount, `0x${this.tx}`), r.now)
    if (m.seen.has(key)) {
      expect(Result.isFailure(result) && result.failure.code).toBe("duplicate_transfer")
    } else {
      const step = must(result)
      m.seen.add(key)
      if (m.now >= T0 + Conversion.payment_window_ms || m.status === "expired") {
        if (m.status === "pending" || m.status === "underpaid") m.status = "expired"
        expect(step.events).toEqual([])
      } else {
        m.arrived += this.amount
        m.status = Settlement.statusFor(PAY, m.arrived)
        expect(step.events.map((e) => e.type)).toEqual([`ramp.${m.status}`])
      }
      for (const e of step.effects) if (e.type === "credit") r.creditedSum += e.gmd
      r.state = step.state
    }
    if (before === "expired") expect(m.status).toBe("expired")
    if (before === "paid" || before === "overpaid") expect(["paid", "overpaid"]).toContain(m.status)
    check(m, r)
  }
  toString = () => `transfer(${this.amount}, 0x${this.tx})`
}

class Advance implements fc.Command<Model, Real> {
  readonly ms: number
  constructor(ms: number) {
    this.ms = ms
  }
  check = () => true
  run(m: Model, r: Real) {
    m.now += this.ms
    r.now += this.ms
  }
  toString = () => `advance(${this.ms})`
}

class Expire implements fc.Command<Model, Real> {
  check = () => true
  run(m: Model, r: Real) {
    const result = Conversion.expire(r.state, r.now)
    const open = m.status === "pending" || m.status === "underpaid"
    if (open && m.now >= T0 + Conversion.payment_window_ms) {
      r.state = must(result).state
      m.status = "expired"
    } else {
      expect(Result.isFailure(result) && result.failure.code).toBe("invalid_state")
    }
    check(m, r)
  }
  toString = () => "expire"
}

describe("conversion machine: model-based", () => {
  it("random transfers, duplicates, clock advances and expiries agree with the model", () => {
    const commands = [
      fc
        .tuple(fc.bigInt({ min: 1n, max: 40_000_000n }), fc.integer({ min: 0, max: 6 }))
        .map(([a, t]) => new SendTransfer(a, t)),
      fc.integer({ min: 1, max: 400_000 }).map((ms) => new Advance(ms)),
      fc.constant(new Expire())
    ]
    fc.assert(
      fc.property(fc.commands(commands, { maxCommands: 40 }), (cmds) => {
        const model: Model = { now: T0, status: "pending", arrived: 0n, seen: new Set() }
        const real: Real = { state: fresh(), creditedSum: 0n, now: T0 }
        fc.modelRun(() => ({ model, real }), cmds)
      }),
      { numRuns: runs(300) }
    )
  })
})
