import { describe, expect, it } from "vitest"
import { call, startServerProcess, tempDataDir } from "./harness.ts"

/**
 * Two reference servers on one DATA_DIR (one SQLite file), in sandbox mode:
 * they serve one sandbox. A clock advance or a rate set through one is what
 * the other's next request runs on (found by an audit: a conversion created
 * on the second server right after an advance on the first was born expired,
 * and the rate stayed per server).
 */
describe("two reference servers on one SQLite file", () => {
  it("share the sandbox clock and rate: the other's next request runs on them", async () => {
    const data = tempDataDir()
    const a = await startServerProcess({}, data.dir)
    const b = await startServerProcess({}, data.dir)
    try {
      const key = (await call(a.url, "POST", "/v1/test_helpers/businesses", { body: { name: "Two" } })).body
        .secret_key_live
      expect((await call(b.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })).status).toBe(201)

      const advanced = await call(a.url, "POST", "/v1/test_helpers/clock/advance", { key, body: { seconds: 600 } })
      expect(advanced.status).toBe(200)
      const created = await call(b.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 5000 } })
      expect(created.status).toBe(201)
      expect(Date.parse(created.body.createdAt)).toBeGreaterThanOrEqual(Date.parse(advanced.body.now))
      // not born expired: paid in full at once through the first server, it is applied
      const paid = await call(a.url, "POST", "/v1/test_helpers/chain/transfers", {
        key,
        body: {
          network: "TRC20",
          currency: "USDT",
          to_address: created.body.pay_address,
          amount: created.body.pay_amount
        }
      })
      expect(paid.body.applied).toBe(true)

      expect((await call(a.url, "POST", "/v1/test_helpers/rates", { key, body: { rate: 80 } })).status).toBe(200)
      const quoted = await call(b.url, "POST", "/v1/minting/offramp", { key, body: { gmd_amount: 8000 } })
      expect(quoted.body).toMatchObject({ gmd_rate: 80, pay_amount: 102.5 })
    } finally {
      await a.stop()
      await b.stop()
      data.cleanup()
    }
  }, 30_000)
})
