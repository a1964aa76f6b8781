import { Store } from "@xaalis/engine"
import { Layer } from "effect"
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

  it("with sharedSandboxClock, a request answered after another instance's advance is stamped with the advanced time", async () => {
    a = setup({ sharedSandboxClock: true })
    b = setup({ store: Layer.succeed(Store, a.store), sharedSandboxClock: true })
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
})
