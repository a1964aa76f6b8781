import { Store, StoreChanges } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Setup, setup } from "./helpers.ts"

/**
 * Two API instances on one store, as two server processes on one PostgreSQL
 * database: an advance of the sandbox clock made through one is seen by the
 * other's due loop and clock helper, without a restart.
 */
let a: Setup
let b: Setup
afterEach(async () => {
  await a.api.dispose()
  await b.api.dispose()
})

const nowOf = async (s: Setup, key: string) => {
  const res = await s.call("GET", "/v1/test_helpers/clock", { key })
  expect(res.status).toBe(200)
  return Date.parse(res.body.now)
}

describe("the sandbox clock across instances on one store", () => {
  it("another instance's advance reaches this one's due loop and its clock helper", async () => {
    a = setup()
    b = setup({ store: Layer.succeed(Store, a.store) })
    const business = await a.business()
    const key = business.secret_key_live
    await b.api.ready() // built (its clock read) before the advance
    const start = await nowOf(b, key)

    // a conversion through B, then an advance through A past its 10-minute window
    const created = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
    expect(created.status).toBe(201)
    const advanced = await a.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 3600 } })
    expect(advanced.status).toBe(200)
    expect(Date.parse(advanced.body.now)).toBeGreaterThanOrEqual(start + 3_600_000)

    // B's due loop runs on the shared time: a conversion B creates now is stamped an hour on
    await b.api.runDue()
    const later = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
    expect(later.status).toBe(201)
    expect(Date.parse(later.body.createdAt)).toBeGreaterThanOrEqual(start + 3_600_000)
    const first = await b.call("GET", `/v1/minting/ramps/${created.body.id}`, { key })
    expect(first.body.status).toBe("expired")

    // B's clock helper re-reads the stored advance at once (no due pass in between)
    const again = await a.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 86_400 } })
    expect(again.status).toBe(200)
    expect(await nowOf(b, key)).toBeGreaterThanOrEqual(start + 3_600_000 + 86_400_000)
    expect(a.faults).toEqual([])
    expect(b.faults).toEqual([])
  })

  it("with sharedSandbox, a request answered after another instance's advance is stamped with the advanced time", async () => {
    a = setup({ sharedSandbox: true })
    b = setup({ store: Layer.succeed(Store, a.store), sharedSandbox: true })
    const business = await a.business()
    const key = business.secret_key_live
    await b.api.ready()
    const advanced = await a.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 3600 } })
    expect(advanced.status).toBe(200)
    const advancedTo = Date.parse(advanced.body.now)
    // no due pass on B in between: its request reads the stored offset itself
    const created = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
    expect(created.status).toBe(201)
    expect(Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(advancedTo)
    // so it is not born expired: a full payment at once through A is applied
    const paid = await a.call("POST", "/v1/test_helpers/chain/transfers", {
      key,
      body: {
        network: "TRC20",
        currency: "USDT",
        to_address: created.body.pay_address,
        amount: created.body.pay_amount
      }
    })
    expect(paid.body.applied).toBe(true)
    expect((await b.call("GET", `/v1/minting/ramps/${created.body.id}`, { key })).body.status).toBe("paid")
    expect(a.faults).toEqual([])
    expect(b.faults).toEqual([])
  })

  it("with sharedSandbox, a rate and a fail_next sent to one instance act on the other", async () => {
    a = setup({ sharedSandbox: true })
    b = setup({ store: Layer.succeed(Store, a.store), sharedSandbox: true })
    const business = await a.business()
    const key = business.secret_key_live
    await b.api.ready() // built (its rate read) before the rate is set
    expect((await a.call("POST", "/v1/test_helpers/rates", { key, body: { rate: 80 } })).status).toBe(200)
    // quoted by B at A's rate: 8,000 GMD at 80 is 100.00 USD, plus 1.00 service and 1.50 network fee
    const quoted = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 8000 } })
    expect(quoted.status).toBe(201)
    expect(quoted.body).toMatchObject({ gmd_rate: 80, pay_amount: 102.5 })

    // the next payout fails on B, which receives the transfer and so sends the payout
    const failNext = await a.call("POST", "/v1/test_helpers/payouts/fail_next", { key, body: { count: 1 } })
    expect(failNext.body).toEqual({ count: 1 })
    const wallet = { network: "wave", account_number: "7654321", account_name: "Awa Jallow" }
    const payoutsThroughB = async () => {
      const c = await b.call("POST", "/v1/minting/offramp", {
        key,
        body: { gmd_amount: 8000, destination: "mobile_money", payout_method: wallet }
      })
      expect(c.status).toBe(201)
      const paid = await b.call("POST", "/v1/test_helpers/chain/transfers", {
        key,
        body: { network: "TRC20", currency: "USDT", to_address: c.body.pay_address, amount: c.body.pay_amount }
      })
      expect(paid.body.applied).toBe(true)
      const events = (await b.call("GET", `/v1/minting/ramps/${c.body.id}`, { key })).body.events
      return events.filter((e: { type: string }) => e.type === "payout").map((e: { outcome: string }) => e.outcome)
    }
    expect(await payoutsThroughB()).toEqual(["failed"])
    // the dalasi of the failed payout stayed in the balance; the next one goes out
    expect((await a.call("GET", "/v1/balance", { key })).body.available).toBe(8000)
    expect(await payoutsThroughB()).toEqual(["succeeded"])
    expect((await a.call("GET", "/v1/balance", { key })).body.available).toBe(8000)
    expect(a.faults).toEqual([])
    expect(b.faults).toEqual([])
  })

  it("with sharedSandbox and a store that tells its changes, the clock and rate are re-read only when another connection committed", async () => {
    // B's store says whether another connection committed (SQLite's data_version); here a stub the test moves
    let version = 1
    a = setup({ sharedSandbox: true })
    const changes = Layer.succeed(StoreChanges, StoreChanges.of({ version: Effect.sync(() => version) }))
    b = setup({ store: Layer.merge(Layer.succeed(Store, a.store), changes), sharedSandbox: true })
    const business = await a.business()
    const key = business.secret_key_live
    await b.api.ready()
    expect((await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })).status).toBe(201)
    const before = Date.now()
    const advanced = await a.call("POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 3600 } })
    const advancedTo = Date.parse(advanced.body.now)
    expect((await a.call("POST", "/v1/test_helpers/rates", { key, body: { rate: 80 } })).status).toBe(200)
    // the version did not move: B trusts what it read and reads nothing (this stub lies; SQLite's does not)
    const stale = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 8000 } })
    expect(stale.body.gmd_rate).toBe(70)
    expect(Date.parse(stale.body.createdAt)).toBeLessThan(before + 3_600_000)
    // another connection committed: B re-reads the clock and the rate before its next request
    version = 2
    const fresh = await b.call("POST", "/v1/minting/offramp", { key, body: { gmd_amount: 8000 } })
    expect(fresh.body).toMatchObject({ gmd_rate: 80, pay_amount: 102.5 })
    expect(Date.parse(fresh.body.createdAt)).toBeGreaterThanOrEqual(advancedTo)
    expect(a.faults).toEqual([])
    expect(b.faults).toEqual([])
  })
})
