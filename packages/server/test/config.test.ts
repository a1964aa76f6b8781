import { describe, expect, it } from "vitest"
import { ConfigError, fromEnv, type TrustProxy, trustFunction } from "../src/config.ts"

describe("server configuration from the environment (decisions §9)", () => {
  it("has the documented defaults", () => {
    const c = fromEnv({})
    expect(c).toStrictEqual({
      port: 3000,
      host: "127.0.0.1",
      dataDir: "./.data",
      sandbox: true,
      rate: "70",
      conversionFeePercent: "1",
      paymentRequestFeePercent: "1",
      paymentFeePercent: "1.5",
      rateLimit: { rps: 100, burst: 200 },
      store: { kind: "embedded", dataDir: "./.data" },
      baseUrl: undefined,
      trustProxy: undefined
    })
  })

  it("reads every variable", () => {
    const c = fromEnv({
      PORT: "8080",
      HOST: "0.0.0.0",
      DATA_DIR: "/var/lib/xaalis",
      SANDBOX: "0",
      USD_GMD_RATE: "71.25",
      CONVERSION_FEE_PERCENT: "0.5",
      PAYMENT_REQUEST_FEE_PERCENT: "2",
      PAYMENT_FEE_PERCENT: "0",
      RATE_LIMIT_RPS: "5",
      RATE_LIMIT_BURST: "10",
      PUBLIC_BASE_URL: "https://pay.example.gm",
      TRUST_PROXY: "1"
    })
    expect(c.port).toBe(8080)
    expect(c.host).toBe("0.0.0.0")
    expect(c.sandbox).toBe(false)
    expect(c.rate).toBe("71.25")
    expect([c.conversionFeePercent, c.paymentRequestFeePercent, c.paymentFeePercent]).toStrictEqual(["0.5", "2", "0"])
    expect(c.rateLimit).toStrictEqual({ rps: 5, burst: 10 })
    expect(c.store).toStrictEqual({ kind: "embedded", dataDir: "/var/lib/xaalis" })
    expect(c.baseUrl).toBe("https://pay.example.gm")
    expect(c.trustProxy).toStrictEqual({ hops: 1 })
  })

  it("TRUST_PROXY: none by default, a number of proxies, or addresses, ranges and names; anything else names the variable", () => {
    expect(fromEnv({}).trustProxy).toBeUndefined()
    expect(fromEnv({ TRUST_PROXY: " " }).trustProxy).toBeUndefined()
    expect(fromEnv({ TRUST_PROXY: "0" }).trustProxy).toBeUndefined()
    expect(fromEnv({ TRUST_PROXY: "2" }).trustProxy).toStrictEqual({ hops: 2 })
    const listed = fromEnv({ TRUST_PROXY: "loopback, 10.0.0.0/8,fd00::/8" }).trustProxy
    expect(listed).toStrictEqual({ list: ["loopback", "10.0.0.0/8", "fd00::/8"] })
    const trusts = trustFunction(listed as TrustProxy)
    expect([trusts("127.0.0.1", 0), trusts("10.1.2.3", 1), trusts("203.0.113.9", 1)]).toStrictEqual([true, true, false])
    const hops = trustFunction({ hops: 1 })
    expect([hops("203.0.113.9", 0), hops("10.1.2.3", 1)]).toStrictEqual([true, false])
    expect(() => fromEnv({ TRUST_PROXY: "11" })).toThrow(/TRUST_PROXY/)
    expect(() => fromEnv({ TRUST_PROXY: "nginx" })).toThrow(/TRUST_PROXY.*"nginx"/)
    expect(() => fromEnv({ TRUST_PROXY: "10.0.0.0/33" })).toThrow(/TRUST_PROXY/)
  })

  it("picks PostgreSQL when DATABASE_URL is set, memory or embedded when STORE says so", () => {
    expect(fromEnv({ DATABASE_URL: "postgres://db/x" }).store).toStrictEqual({
      kind: "postgres",
      url: "postgres://db/x"
    })
    expect(fromEnv({ DATABASE_URL: "postgres://db/x", STORE: "embedded" }).store.kind).toBe("embedded")
    expect(fromEnv({ STORE: "memory" }).store).toStrictEqual({ kind: "memory" })
    expect(() => fromEnv({ STORE: "postgres" })).toThrow(/DATABASE_URL/)
    expect(() => fromEnv({ STORE: "redis" })).toThrow(/STORE/)
  })

  it("USD_GMD_RATE takes what the rates helper takes: up to 8 decimal places, up to 1,000,000", () => {
    expect(fromEnv({ USD_GMD_RATE: "70.12345678" }).rate).toBe("70.12345678")
    expect(fromEnv({ USD_GMD_RATE: "1000000" }).rate).toBe("1000000")
    // trailing zeros are not places of the rate
    expect(fromEnv({ USD_GMD_RATE: "70.1000000000" }).rate).toBe("70.1000000000")
    // one message states every limit, whichever was missed (it once said "from 0 to 1000000", and 0 is refused)
    for (const value of ["0", "1000001", "70.123456789", "seventy"]) {
      expect(() => fromEnv({ USD_GMD_RATE: value })).toThrow(
        `USD_GMD_RATE must be a decimal number above 0, at most 1000000, with at most 8 decimal places (got "${value}")`
      )
    }
  })

  it("DATABASE_URL: postgres:// and postgresql:// URLs, a socket directory in the query included; no password echoed", () => {
    for (const url of [
      "postgres://xaalis:secret@db.internal:5432/xaalis?sslmode=verify-full",
      "postgresql://127.0.0.1/test",
      "postgres:///xaalis?host=/var/run/postgresql"
    ]) {
      expect(fromEnv({ DATABASE_URL: url }).store).toStrictEqual({ kind: "postgres", url })
    }
    const refused = (() => {
      try {
        fromEnv({ DATABASE_URL: "postgress://xaalis:secret@db/x" })
        return ""
      } catch (e) {
        return String((e as Error).message)
      }
    })()
    expect(refused).toContain("DATABASE_URL")
    expect(refused).not.toContain("secret")
  })

  it("RATE_LIMIT_RPS=0 turns rate limiting off", () => {
    expect(fromEnv({ RATE_LIMIT_RPS: "0" }).rateLimit).toBe(false)
  })

  it.each([
    ["PORT", "70000"],
    ["PORT", "abc"],
    ["PORT", "-1"],
    ["SANDBOX", "maybe"],
    ["USD_GMD_RATE", "0"],
    ["USD_GMD_RATE", "-70"],
    ["USD_GMD_RATE", "seventy"],
    // the limits of POST /v1/test_helpers/rates
    ["USD_GMD_RATE", "70.123456789"],
    ["USD_GMD_RATE", "1000000.01"],
    ["CONVERSION_FEE_PERCENT", "101"],
    ["PAYMENT_FEE_PERCENT", "x"],
    ["RATE_LIMIT_BURST", "0"],
    ["RATE_LIMIT_RPS", "2.5"],
    ["DATABASE_URL", "not a url"],
    ["DATABASE_URL", "postgress://postgres@127.0.0.1/xaalis"],
    ["DATABASE_URL", "mysql://127.0.0.1/xaalis"],
    ["PUBLIC_BASE_URL", "/"],
    ["PUBLIC_BASE_URL", "pay.example.gm"]
  ])("refuses %s=%s with a message naming the variable", (name, value) => {
    expect(() => fromEnv({ [name]: value })).toThrow(ConfigError)
    expect(() => fromEnv({ [name]: value })).toThrow(new RegExp(name))
  })
})
