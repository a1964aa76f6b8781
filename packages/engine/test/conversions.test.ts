import { assert, describe, it } from "@effect/vitest"
import {
  Balance,
  Conversions,
  type Doc,
  Payouts,
  Sandbox,
  Store,
  type Timeline,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Deferred, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { business, codeOf, gatedRail, testLayer, toWallet } from "./setup.ts"

const transfer = (to_address: string, amount: bigint, tx_hash: string, log_index = 0) => ({
  network: "TRC20" as const,
  coin: "USDT" as const,
  to_address,
  amount,
  tx_hash,
  log_index
})

/** 5,000 GMD paid in USDC on ARC: 72.14 USD (no network fee on ARC). */
const arcConversion = { gmd_amount: 500000n, network: "ARC", pay_currency: "USDC" } as const
const arcTransfer = (to_address: string, amount: bigint, tx_hash: string) =>
  ({ ...transfer(to_address, amount, tx_hash), network: "ARC", coin: "USDC" }) as const

const ledgerBalanced = Effect.gen(function* () {
  const store = yield* Store
  const entries = yield* store.ledger
  assert.deepStrictEqual(unbalanced(entries), [])
  return entries
})

describe("conversions through the engine", () => {
  it.effect("create, two partial transfers credit the ledger proportionally, events go to the outbox", () =>
    Effect.gen(function* () {
      const { live } = yield* business("https://merchant.example/hooks")
      const c = yield* Conversions.createConversion(live, {
        gmd_amount: 500000n,
        callback_url: "https://merchant.example/cb"
      })
      assert.strictEqual(c.status, "pending")
      assert.strictEqual(c.pay_amount, 73.64)
      assert.match(c.reference, /^MP-\d{8}-\d{6}-[0-9A-F]{8}$/)
      const first = yield* Transfers.applyChainTransfer(transfer(c.pay_address, 36_820_000n, "0xa"))
      assert.deepStrictEqual(first, { tx_hash: "0xa", matched: { object: "conversion", id: c.id }, applied: true })
      assert.strictEqual((yield* Balance.getBalance(live)).available, 2500)
      const again = yield* Transfers.applyChainTransfer(transfer(c.pay_address, 36_820_000n, "0xa"))
      assert.strictEqual(again.applied, false)
      assert.strictEqual((yield* Balance.getBalance(live)).available, 2500)
      yield* Transfers.applyChainTransfer(transfer(c.pay_address, 36_820_000n, "0xb"))
      const read = yield* Conversions.getConversion(live, c.id)
      assert.strictEqual(read.status, "paid")
      assert.strictEqual(read.actually_paid, 73.64)
      assert.deepStrictEqual(
        read.events?.map((e) => e.type),
        ["created", "transfer", "credit", "status", "transfer", "credit", "status"]
      )
      assert.strictEqual((yield* Balance.getBalance(live)).available, 5000)
      yield* ledgerBalanced
      // two events x two targets (callback_url and the business webhook)
      const outbox = yield* Effect.flatMap(Store, (s) =>
        s.transact((tx) => tx.list("outbox", live, { limit: 100, offset: 0 }))
      )
      assert.strictEqual(outbox.total, 4)
      const bodies = outbox.docs.map((d) => JSON.parse((d.data as { body: string }).body).event).sort()
      assert.deepStrictEqual(bodies, ["ramp.paid", "ramp.paid", "ramp.underpaid", "ramp.underpaid"])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("an ARC deposit address matches whatever the letter case of the report (EVM hex); TRC20's is exact", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const arc = yield* Conversions.createConversion(live, arcConversion)
      assert.match(arc.pay_address, /^0x[0-9a-f]{40}$/)
      const checksummed = `0x${arc.pay_address.slice(2).toUpperCase()}`
      const onArc = yield* Transfers.applyChainTransfer(arcTransfer(checksummed, 72_140_000n, "0xc"))
      assert.deepStrictEqual(onArc, { tx_hash: "0xc", matched: { object: "conversion", id: arc.id }, applied: true })
      assert.strictEqual((yield* Conversions.getConversion(live, arc.id)).status, "paid")
      // base58 is case-sensitive: another case is another address, nothing is credited
      const trc = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const swapped = [...trc.pay_address]
        .map((ch) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()))
        .join("")
      const onTron = yield* Transfers.applyChainTransfer(transfer(swapped, 73_640_000n, "0xd"))
      assert.deepStrictEqual(onTron, { tx_hash: "0xd", matched: null, applied: false })
      assert.strictEqual((yield* Conversions.getConversion(live, trc.id)).status, "pending")
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("an ARC address claimed in mixed case before keys were lowercased is still found as issued", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const arc = yield* Conversions.createConversion(live, arcConversion)
      const issued = `0x${arc.pay_address.slice(2).toUpperCase()}` // as a mixed-case adapter issued it
      // the row as an older version stored it: its address claim in the case it was issued
      const store = yield* Store
      yield* store.transact((tx) =>
        Effect.flatMap(tx.get("conversion", arc.id), (doc) =>
          tx.update({
            ...doc!,
            version: doc!.version + 1,
            keys: doc!.keys.map((k) => (k.startsWith("addr:") ? `addr:ARC:USDC:${issued}` : k))
          })
        )
      )
      const outcome = yield* Transfers.applyChainTransfer(arcTransfer(issued, 72_140_000n, "0xe"))
      assert.deepStrictEqual(outcome, { tx_hash: "0xe", matched: { object: "conversion", id: arc.id }, applied: true })
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("one chain transfer however its hash is spelled (0x or not, case, spaces) is applied once", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const h = "ab12cd34".repeat(8)
      const spellings = [h, `0x${h}`, `0X${h.toUpperCase()}`, ` ${h} `, h.toUpperCase()]
      const outcomes = []
      for (const tx_hash of spellings)
        outcomes.push((yield* Transfers.applyChainTransfer(transfer(c.pay_address, 20_000_000n, tx_hash))).applied)
      assert.deepStrictEqual(outcomes, [true, false, false, false, false])
      assert.strictEqual((yield* Conversions.getConversion(live, c.id)).actually_paid, 20)
      // an identity row an older version wrote under the unprefixed hash, for a conversion it created (the
      // row without the mark this version sets), still stops a re-report
      const old = "cd34ab12".repeat(8)
      const store = yield* Store
      yield* store.transact((tx) =>
        Effect.flatMap(tx.get("conversion", c.id), (found) => {
          const doc = found as Doc<Timeline.StoredConversion>
          const { canonical_keys: _, ...older } = doc.data
          return tx.update({ ...doc, version: doc.version + 1, data: older })
        })
      )
      yield* store.transact((tx) =>
        tx.insert({
          kind: "transfer",
          id: `TRC20:${old}:0`,
          business_id: null,
          mode: null,
          created_at: 0,
          version: 1,
          due_at: null,
          keys: [],
          data: {}
        })
      )
      assert.isFalse((yield* Transfers.applyChainTransfer(transfer(c.pay_address, 20_000_000n, old))).applied)
      // and reported now with the prefix, in either case: the same transfer
      assert.isFalse((yield* Transfers.applyChainTransfer(transfer(c.pay_address, 20_000_000n, `0x${old}`))).applied)
      assert.isFalse(
        (yield* Transfers.applyChainTransfer(transfer(c.pay_address, 20_000_000n, `0X${old.toUpperCase()}`))).applied
      )
      assert.strictEqual((yield* Conversions.getConversion(live, c.id)).actually_paid, 20)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("a conversion this version created skips the lookups of older keys (one query each)", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      const inner = yield* Store
      const looked: Array<string> = []
      const counting = Store.of({
        ledger: inner.ledger,
        transact: (work) =>
          inner.transact((tx) =>
            work({
              ...tx,
              get: (kind, id) => {
                if (kind === "transfer") looked.push(id)
                return tx.get(kind, id)
              }
            })
          )
      })
      const apply = (tx_hash: string) =>
        Transfers.applyChainTransfer(transfer(c.pay_address, 10_000_000n, tx_hash)).pipe(
          Effect.provideService(Store, counting)
        )
      assert.isTrue((yield* apply(`0x${"ab".repeat(32)}`)).applied)
      assert.isTrue((yield* apply("CD".repeat(32))).applied)
      assert.deepStrictEqual(looked, [])
      // a stray transfer (no conversion of this version to vouch for it) is still checked
      yield* Transfers.applyChainTransfer(transfer("TNobodysAddress", 1n, `0x${"ef".repeat(32)}`)).pipe(
        Effect.provideService(Store, counting)
      )
      assert.deepStrictEqual(looked, [`TRC20:${"ef".repeat(32)}:0`])
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("test keys are refused; another business's conversion is not found", () =>
    Effect.gen(function* () {
      const a = yield* business()
      const b = yield* business()
      const err = yield* Effect.flip(Conversions.createConversion(a.test, { gmd_amount: 500000n }))
      assert.strictEqual(codeOf(err), "permission_denied")
      const c = yield* Conversions.createConversion(a.live, { gmd_amount: 500000n })
      const nf = yield* Effect.flip(Conversions.getConversion(b.live, c.id))
      assert.strictEqual(codeOf(nf), "not_found")
      const bad = yield* Effect.flip(Conversions.createConversion(a.live, { gmd_amount: 100000n }))
      assert.strictEqual(codeOf(bad), "validation_error")
      assert.strictEqual((yield* Conversions.listConversions(a.live, { limit: 10, offset: 0 })).meta.total, 1)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("expiry after 10 minutes sends no event; a later transfer is late funds, not credited", () =>
    Effect.gen(function* () {
      const { live } = yield* business()
      const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n })
      yield* TestClock.adjust("9 minutes")
      assert.strictEqual(yield* Conversions.expireDueConversions(), 0)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Conversions.expireDueConversions(), 1)
      assert.strictEqual((yield* Conversions.getConversion(live, c.id)).status, "expired")
      const late = yield* Transfers.applyChainTransfer(transfer(c.pay_address, 73_640_000n, "0xlate"))
      assert.deepStrictEqual(late.applied, false)
      assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
      assert.strictEqual((yield* Conversions.getConversion(live, c.id)).actually_paid, 0)
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("concurrent payout runs send each payout once: the run that claims it sends, the others skip it", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const { rail, sends } = gatedRail(gate)
      yield* Effect.gen(function* () {
        const { live } = yield* business()
        const c = yield* Conversions.createConversion(live, { gmd_amount: 500000n, ...toWallet })
        // the transfer books the payout and starts a run, whose send is now in flight
        const paying = yield* Effect.forkChild(
          Transfers.applyChainTransfer(transfer(c.pay_address, 73_640_000n, "0x1"))
        )
        while (sends() === 0) yield* Effect.yieldNow
        // meanwhile the scheduler and another transfer's run look for due payouts
        const others = yield* Effect.forkChild(
          Effect.all([Conversions.runDuePayouts(), Conversions.runDuePayouts()], { concurrency: 2 })
        )
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(paying)
        yield* Fiber.join(others)
        assert.strictEqual(sends(), 1)
        assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
        const read = yield* Conversions.getConversion(live, c.id)
        const outcomes = read.events?.filter((e) => e.type === "payout").map((e) => (e as { outcome: string }).outcome)
        assert.deepStrictEqual(outcomes, ["succeeded"])
        yield* ledgerBalanced
      }).pipe(Effect.provideService(Payouts, rail))
    }).pipe(Effect.provide(testLayer()))
  )

  it.effect("mobile money: each credit is paid out; a failed payout leaves the dalasi in the balance", () =>
    Effect.gen(function* () {
      const { live } = yield* business("https://merchant.example/hooks")
      const control = yield* Sandbox.SandboxControl
      const c = yield* Conversions.createConversion(live, {
        gmd_amount: 500000n,
        ...toWallet,
        callback_url: "https://merchant.example/cb"
      })
      yield* Transfers.applyChainTransfer(transfer(c.pay_address, 36_820_000n, "0x1"))
      assert.strictEqual((yield* Balance.getBalance(live)).available, 0)
      yield* control.failNextPayouts(1)
      yield* Transfers.applyChainTransfer(transfer(c.pay_address, 36_820_000n, "0x2"))
      assert.strictEqual((yield* Balance.getBalance(live)).available, 2500)
      const read = yield* Conversions.getConversion(live, c.id)
      const payouts = read.events?.filter((e) => e.type === "payout").map((e) => (e as { outcome: string }).outcome)
      assert.deepStrictEqual(payouts, ["succeeded", "failed"])
      assert.strictEqual((yield* control.payouts).length, 1)
      // transfer.succeeded for the payout that reached the wallet (not for the failed one), to both targets
      const outbox = yield* Effect.flatMap(Store, (st) =>
        st.transact((tx) => tx.list("outbox", live, { limit: 100, offset: 0 }))
      )
      const transfers = outbox.docs
        .map((d) => d.data as { url: string; body: string; event_id: string })
        .filter((r) => JSON.parse(r.body).event === "transfer.succeeded")
      assert.deepStrictEqual(transfers.map((r) => r.url).sort(), [
        "https://merchant.example/cb",
        "https://merchant.example/hooks"
      ])
      assert.strictEqual(transfers[0]?.event_id, transfers[1]?.event_id)
      const payload = JSON.parse(transfers[0]!.body).payload
      assert.deepStrictEqual(
        { ...payload, id: "-", transaction_reference: "-", createdAt: "-", updatedAt: "-" },
        {
          id: "-",
          object: "transfer",
          status: "succeeded",
          amount: 2500,
          currency: "GMD",
          destination: "mobile_money",
          network: "wave",
          account_number: "7654321",
          account_name: "Awa Jallow",
          transaction_reference: "-",
          conversion_id: c.id,
          reference: c.reference,
          test_mode: false,
          createdAt: "-",
          updatedAt: "-"
        }
      )
      assert.strictEqual(typeof payload.transaction_reference, "string")
      yield* ledgerBalanced
    }).pipe(Effect.provide(testLayer()))
  )
})
