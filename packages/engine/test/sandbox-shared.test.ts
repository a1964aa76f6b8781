import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryStore, PayoutFailed, Payouts, Rates, Sandbox, Store } from "@xaalis/engine"
import { Context, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"

/**
 * `Sandbox.layerShared`: two worlds on one Store stand for two server
 * processes on one database. What one is told (a rate, a business's payouts to
 * fail) the other acts on; `Sandbox.layer` keeps the same in its process.
 */
const rate = (text: string) => Decimal.parse(text) as Decimal.Decimal

/** A world's services, built over `store`. */
const worldOn = (store: Store["Service"], initial = "70", shared = true) =>
  Effect.runPromise(
    Layer.build(
      (shared ? Sandbox.layerShared : Sandbox.layer)({ rate: rate(initial) }).pipe(
        Layer.provide(IdsAdapter.layer),
        Layer.provide(Layer.succeed(Store, store))
      )
    ).pipe(Effect.scoped)
  )

const aStore = () =>
  Effect.runPromise(Layer.build(MemoryStore.layer).pipe(Effect.map(Context.get(Store)), Effect.scoped))

const currentRate = async (world: Context.Context<Rates | Sandbox.SandboxControl>) =>
  Decimal.format((await Effect.runPromise(Context.get(world, Rates).current)).rate)

const send = (world: Context.Context<Payouts>, business_id: string, key: string) =>
  Effect.runPromiseExit(
    Context.get(world, Payouts).send({
      idempotency_key: key,
      business_id,
      network: "wave",
      account_number: "7012345",
      account_name: "Awa Njie",
      amount: 10_000n
    })
  )

const failed = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) && exit.cause.reasons.some((r) => r._tag === "Fail" && r.error instanceof PayoutFailed)

describe("Sandbox.layerShared: one sandbox on one store for several processes", () => {
  it("a rate set through one world is quoted by the other after its refresh, and by a world built later", async () => {
    const store = await aStore()
    const a = await worldOn(store)
    const b = await worldOn(store)
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).setRate(rate("72.5")))
    expect(await currentRate(a)).toBe("72.5")
    expect(await currentRate(b)).toBe("70") // not re-read yet
    await Effect.runPromise(Context.get(b, Sandbox.SandboxControl).refresh)
    expect(await currentRate(b)).toBe("72.5")
    // a process started later takes the stored rate over its configured one
    const c = await worldOn(store, "65")
    expect(await currentRate(c)).toBe("72.5")
  })

  it("a rate set with its observation time keeps that time in the other world", async () => {
    const store = await aStore()
    const a = await worldOn(store)
    const b = await worldOn(store)
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).setRate(rate("71"), 1_700_000_000_000))
    await Effect.runPromise(Context.get(b, Sandbox.SandboxControl).refresh)
    const read = await Effect.runPromise(Context.get(b, Rates).current)
    expect({ rate: Decimal.format(read.rate), as_of: read.as_of }).toEqual({ rate: "71", as_of: 1_700_000_000_000 })
  })

  it("a business's payouts to fail are taken down by whichever world sends them, and no other business's", async () => {
    const store = await aStore()
    const a = await worldOn(store)
    const b = await worldOn(store)
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(2, "biz-1"))
    expect(failed(await send(b, "biz-2", "p0"))).toBe(false) // another business is not touched
    expect(failed(await send(b, "biz-1", "p1"))).toBe(true)
    expect(failed(await send(a, "biz-1", "p2"))).toBe(true)
    expect(failed(await send(b, "biz-1", "p3"))).toBe(false) // two asked for, two failed
    expect(failed(await send(a, "biz-1", "p4"))).toBe(false)
    // 0 clears what is left
    await Effect.runPromise(Context.get(b, Sandbox.SandboxControl).failNextPayouts(3, "biz-1"))
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(0, "biz-1"))
    expect(failed(await send(b, "biz-1", "p5"))).toBe(false)
  })

  it("concurrent sends through both worlds fail exactly as many payouts as were asked for", async () => {
    const store = await aStore()
    const a = await worldOn(store)
    const b = await worldOn(store)
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(5, "biz-1"))
    const exits = await Promise.all(Array.from({ length: 12 }, (_, i) => send(i % 3 === 0 ? a : b, "biz-1", `p${i}`)))
    expect(exits.filter(failed)).toHaveLength(5)
  })

  it("Sandbox.layer keeps both in its process: another world on the same store sees neither", async () => {
    const store = await aStore()
    const a = await worldOn(store, "70", false)
    const b = await worldOn(store, "70", false)
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).setRate(rate("80")))
    await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
    await Effect.runPromise(Context.get(b, Sandbox.SandboxControl).refresh)
    expect(await currentRate(b)).toBe("70")
    expect(failed(await send(b, "biz-1", "p1"))).toBe(false)
    expect(failed(await send(a, "biz-1", "p2"))).toBe(true)
  })
})

describe("the simulated payout rail answers a key's first outcome", () => {
  it("a key paid before is answered paid again, even with failures asked for, which stay for other keys", async () => {
    for (const shared of [false, true]) {
      const store = await aStore()
      const a = await worldOn(store, "70", shared)
      const first = await send(a, "biz-1", "payout-1")
      expect(Exit.isSuccess(first)).toBe(true)
      await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
      // the sender stopped before booking the outcome and the payout is sent again: paid, same reference
      const again = await send(a, "biz-1", "payout-1")
      expect({ shared, again: Exit.isSuccess(again) ? again.value : again }).toEqual({
        shared,
        again: { reference: "PO-payout-1" }
      })
      expect({ shared, failed: failed(await send(a, "biz-1", "payout-2")) }).toEqual({ shared, failed: true })
      // a failed key fails again when sent again (nothing was paid under it), taking no other failure
      await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
      expect({ shared, failed: failed(await send(a, "biz-1", "payout-2")) }).toEqual({ shared, failed: true })
      expect({ shared, failed: failed(await send(a, "biz-1", "payout-3")) }).toEqual({ shared, failed: true })
      expect({ shared, failed: failed(await send(a, "biz-1", "payout-4")) }).toEqual({ shared, failed: false })
      expect(await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).payouts)).toHaveLength(2)
    }
  })

  it("shared: a key one process paid is answered paid by another", async () => {
    const store = await aStore()
    const a = await worldOn(store)
    const b = await worldOn(store)
    expect(Exit.isSuccess(await send(a, "biz-1", "payout-1"))).toBe(true)
    await Effect.runPromise(Context.get(b, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
    const resent = await send(b, "biz-1", "payout-1")
    expect(Exit.isSuccess(resent) ? resent.value : resent).toEqual({ reference: "PO-payout-1" })
    expect(failed(await send(b, "biz-1", "payout-2"))).toBe(true)
  })

  it("shared: two sends of one key at once get one outcome, with a failure asked for taken once", async () => {
    for (let round = 0; round < 20; round++) {
      const store = await aStore()
      // each unit of work yields a few times, so the two sends interleave
      const slow = Store.of({
        ledger: store.ledger,
        transact: (work) => store.transact((tx) => Effect.andThen(Effect.sleep(1), work(tx)))
      })
      const a = await worldOn(slow)
      const b = await worldOn(slow)
      await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
      const [x, y] = await Promise.all([send(a, "biz-1", "p1"), send(b, "biz-1", "p1")])
      expect({ round, outcomes: [failed(x), failed(y)] }).toEqual({ round, outcomes: [true, true] })
      expect(failed(await send(a, "biz-1", "p2"))).toBe(false)
      // a failure asked for without a business (kept in the process): two sends at once take it once
      await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1))
      const [u, v] = await Promise.all([send(a, "biz-1", "p3"), send(a, "biz-1", "p4")])
      expect({ round, failures: [failed(u), failed(v)].filter(Boolean).length }).toEqual({ round, failures: 1 })
      expect(failed(await send(a, "biz-1", "p5"))).toBe(false)
    }
  })
})

describe("the simulated payout rail decides when a send runs", () => {
  it("a failure asked for between building a send and running it is taken by that send", async () => {
    for (const shared of [false, true]) {
      const store = await aStore()
      const a = await worldOn(store, "70", shared)
      const built = Context.get(a, Payouts).send({
        idempotency_key: "p1",
        business_id: "biz-1",
        network: "wave",
        account_number: "7012345",
        account_name: "Awa Njie",
        amount: 10_000n
      })
      await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).failNextPayouts(1, "biz-1"))
      expect({ shared, failed: failed(await Effect.runPromiseExit(built)) }).toEqual({ shared, failed: true })
      expect(await Effect.runPromise(Context.get(a, Sandbox.SandboxControl).payouts)).toEqual([])
    }
  })
})
