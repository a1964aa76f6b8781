import { Decimal, Limits } from "@xaalis/core"
import proxyaddr from "proxy-addr"

/**
 * The reference server's settings (decisions §9), read from the environment.
 * Every variable has the documented default; a malformed value stops the
 * server at start with a message naming the variable (never a silent default).
 */
export interface ServerConfig {
  readonly port: number
  readonly host: string
  /** Where the embedded durable store keeps its file. */
  readonly dataDir: string
  /** Sandbox on: test helpers served, simulated chain/processor/payouts/rates, sandbox clock. */
  readonly sandbox: boolean
  /** Initial USD→GMD rate (GMD per USD), exact decimal text. */
  readonly rate: string
  readonly conversionFeePercent: string
  readonly paymentRequestFeePercent: string
  readonly paymentFeePercent: string
  /** Token bucket per API key: refill per second and capacity; `false` when RATE_LIMIT_RPS=0. */
  readonly rateLimit: { readonly rps: number; readonly burst: number } | false
  /** Storage: PostgreSQL when DATABASE_URL is set, else the embedded store under DATA_DIR; STORE=memory for a throwaway run. */
  readonly store:
    | { readonly kind: "embedded"; readonly dataDir: string }
    | { readonly kind: "postgres"; readonly url: string }
    | { readonly kind: "memory" }
  /** Base of hosted links (payment pages, invoices) from PUBLIC_BASE_URL; undefined: the address the server listens on. */
  readonly baseUrl: string | undefined
  /**
   * TRUST_PROXY: which peers are reverse proxies whose `X-Forwarded-For` names
   * the client (a number of hops, or addresses, CIDR ranges and the names
   * `loopback`, `linklocal`, `uniquelocal`, comma-separated); undefined: the
   * socket's peer is the client. The client address keys the rate limit of
   * requests without a valid key (hosted pages, docs, business creation).
   */
  readonly trustProxy: TrustProxy | undefined
}

/** Who is a trusted proxy: the nearest `hops` peers, or the peers `proxyaddr` matches. */
export type TrustProxy = { readonly hops: number } | { readonly list: ReadonlyArray<string> }

/** `TRUST_PROXY` as proxy-addr takes it: a function of (address, hop index). */
export const trustFunction = (trust: TrustProxy): ((address: string, hop: number) => boolean) =>
  "hops" in trust ? (_address, hop) => hop < trust.hops : proxyaddr.compile([...trust.list])

const trustProxyOf = (text: string | undefined): TrustProxy | undefined => {
  const value = text?.trim()
  if (value === undefined || value === "" || value === "0") return undefined
  if (/^\d+$/.test(value)) {
    const hops = Number(value)
    if (hops > 10) throw new ConfigError(`TRUST_PROXY as a number of proxies must be from 0 to 10 (got "${value}")`)
    return { hops }
  }
  const list = value.split(",").map((s) => s.trim())
  try {
    proxyaddr.compile(list)
  } catch (e) {
    throw new ConfigError(
      `TRUST_PROXY must be a number of proxies, or addresses, CIDR ranges, loopback, linklocal and uniquelocal separated by commas (got "${value}": ${e instanceof Error ? e.message : String(e)})`
    )
  }
  return { list }
}

export class ConfigError extends Error {
  override readonly name = "ConfigError"
}

export const defaults = {
  PORT: "3000",
  HOST: "127.0.0.1",
  DATA_DIR: "./.data",
  SANDBOX: "1",
  USD_GMD_RATE: "70",
  CONVERSION_FEE_PERCENT: "1",
  PAYMENT_REQUEST_FEE_PERCENT: "1",
  PAYMENT_FEE_PERCENT: "1.5",
  RATE_LIMIT_RPS: "100",
  RATE_LIMIT_BURST: "200"
} as const

type Env = Readonly<Record<string, string | undefined>>

const read = (env: Env, name: keyof typeof defaults): string => {
  const v = env[name]
  return v === undefined || v.trim() === "" ? defaults[name] : v.trim()
}

const integer = (env: Env, name: keyof typeof defaults, min: number, max: number): number => {
  const text = read(env, name)
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max} (got "${text}")`)
  }
  return Number(text)
}

/** A decimal in [min, max], kept as text: the engine parses it exactly. */
const decimal = (env: Env, name: keyof typeof defaults, min: string, max: string | undefined): string => {
  const text = read(env, name)
  const d = Decimal.parse(text)
  const lo = Decimal.parse(min) as Decimal.Decimal
  const hi = max === undefined ? undefined : (Decimal.parse(max) as Decimal.Decimal)
  if (d === undefined || Decimal.compare(d, lo) < 0 || (hi !== undefined && Decimal.compare(d, hi) > 0)) {
    throw new ConfigError(
      `${name} must be a decimal number ${max === undefined ? `above ${min}` : `from ${min} to ${max}`} (got "${text}")`
    )
  }
  return text
}

const flag = (env: Env, name: keyof typeof defaults): boolean => {
  const text = read(env, name).toLowerCase()
  if (["1", "true", "yes", "on"].includes(text)) return true
  if (["0", "false", "no", "off"].includes(text)) return false
  throw new ConfigError(`${name} must be 1 or 0 (got "${text}")`)
}

/**
 * A libpq connection URL (`postgres://` or `postgresql://`), checked at start:
 * a typo in the scheme, or text that is no URL, would otherwise surface later
 * as a DNS failure that does not name the variable. The password is never
 * echoed.
 */
const postgresUrl = (text: string): string => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new ConfigError("DATABASE_URL must be a postgres:// or postgresql:// URL (got something that is not a URL)")
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new ConfigError(`DATABASE_URL must be a postgres:// or postgresql:// URL (got a ${url.protocol}// URL)`)
  }
  return text
}

/** Reads the configuration from `env` (normally `process.env`). Throws `ConfigError`. */
export const fromEnv = (env: Env): ServerConfig => {
  const port = integer(env, "PORT", 0, 65_535)
  const host = read(env, "HOST")
  const dataDir = read(env, "DATA_DIR")
  // the limits of a rate set through POST /v1/test_helpers/rates: the same rate is refused at start as there
  const rate = read(env, "USD_GMD_RATE")
  const parsedRate = Decimal.parse(rate)
  if (
    parsedRate === undefined ||
    !Decimal.isPositive(parsedRate) ||
    Decimal.compare(parsedRate, Decimal.parse(String(Limits.rate_max)) as Decimal.Decimal) > 0 ||
    Decimal.places(parsedRate) > Limits.rate_places_max
  ) {
    throw new ConfigError(
      `USD_GMD_RATE must be a decimal number above 0, at most ${Limits.rate_max}, with at most ${Limits.rate_places_max} decimal places (got "${rate}")`
    )
  }
  const rps = integer(env, "RATE_LIMIT_RPS", 0, 1_000_000)
  const burst = integer(env, "RATE_LIMIT_BURST", 1, 1_000_000)
  const databaseUrl = env.DATABASE_URL?.trim()
  const storeKind = env.STORE?.trim().toLowerCase()
  if (storeKind !== undefined && storeKind !== "" && !["embedded", "postgres", "memory"].includes(storeKind)) {
    throw new ConfigError(`STORE must be embedded, postgres or memory (got "${env.STORE}")`)
  }
  const store: ServerConfig["store"] =
    storeKind === "memory"
      ? { kind: "memory" }
      : storeKind === "postgres" || (storeKind !== "embedded" && databaseUrl !== undefined && databaseUrl !== "")
        ? databaseUrl === undefined || databaseUrl === ""
          ? (() => {
              throw new ConfigError("STORE=postgres needs DATABASE_URL")
            })()
          : { kind: "postgres", url: postgresUrl(databaseUrl) }
        : { kind: "embedded", dataDir }
  const baseUrl = env.PUBLIC_BASE_URL?.trim() || undefined
  if (baseUrl !== undefined && !/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(baseUrl)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL without query (got "${baseUrl}")`)
  }
  return {
    port,
    host,
    dataDir,
    sandbox: flag(env, "SANDBOX"),
    rate,
    conversionFeePercent: decimal(env, "CONVERSION_FEE_PERCENT", "0", "100"),
    paymentRequestFeePercent: decimal(env, "PAYMENT_REQUEST_FEE_PERCENT", "0", "100"),
    paymentFeePercent: decimal(env, "PAYMENT_FEE_PERCENT", "0", "100"),
    rateLimit: rps === 0 ? false : { rps, burst },
    store,
    baseUrl,
    trustProxy: trustProxyOf(env.TRUST_PROXY)
  }
}
