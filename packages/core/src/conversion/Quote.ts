import * as Decimal from "../money/Decimal.ts"
import type { Butut, Cents } from "../money/Money.ts"
import { ceilDiv, floorDiv, halfUpDiv, pow10 } from "../money/Rounding.ts"

/** Chains a conversion can be paid on. */
export type Network = "TRC20" | "ARC"
export const networks: ReadonlyArray<Network> = ["TRC20", "ARC"]
/** Stablecoins accepted. */
export type Coin = "USDT" | "USDC"
export const coins: ReadonlyArray<Coin> = ["USDT", "USDC"]

/** A reseller's markup: a fixed USD amount or a percentage of `base_usd`. */
export type Markup =
  | { readonly type: "fixed"; readonly value: Cents }
  | { readonly type: "percentage"; readonly value: Decimal.Decimal }

/** Deployment settings of the conversion quote (decisions §2). */
export interface ConversionConfig {
  /** Service fee percentage `p` (1 means 1%). */
  readonly fee_percent: Decimal.Decimal
  /** Cap `C` of the service fee, in cents. */
  readonly fee_cap_usd: Cents
  /** Network fee `N` per chain, in cents. */
  readonly network_fee_usd: Readonly<Record<Network, Cents>>
  /** Minimum `pay_amount` per chain, in cents. */
  readonly pay_amount_min_usd: Readonly<Record<Network, Cents>>
  /** Minimum `gmd_amount`, in butut. */
  readonly gmd_amount_min: Butut
  /** Largest markup accepted, as a percentage of `base_usd`. */
  readonly markup_percent_max: Decimal.Decimal
}

export const defaultConversionConfig: ConversionConfig = {
  fee_percent: Decimal.make(1n, 0),
  fee_cap_usd: 200n,
  network_fee_usd: { TRC20: 150n, ARC: 0n },
  pay_amount_min_usd: { TRC20: 2500n, ARC: 500n },
  gmd_amount_min: 40000n,
  markup_percent_max: Decimal.make(10n, 0)
}

/** The priced parts of a conversion. All amounts in minor units. */
export interface Quote {
  /** Dalasi credited once fully paid. */
  readonly gmd_amount: Butut
  /** `ceil_cent(G / R)`: the dollar value of the dalasi. */
  readonly base_usd: Cents
  /** `min(half_up_cent(base_usd * p / 100), C)`. */
  readonly service_fee_usd: Cents
  /** `N` of the chain. */
  readonly network_fee_usd: Cents
  /** `service + N`: the `fee` field. */
  readonly fee: Cents
  /** The reseller's share, 0 without markup. */
  readonly markup_share_usd: Cents
  /** What the payer sends. In pay mode this is the requested amount itself. */
  readonly pay_amount: Cents
}

/** `x * percent / 100`, rounded half-up to the unit of `x`. */
export const percentOf = (x: bigint, percent: Decimal.Decimal): bigint =>
  halfUpDiv(x * percent.units, 100n * pow10(percent.scale))

/** `ceil_cent(G / R)`: cents needed to buy `gmd` butut at `rate` GMD per USD. */
export const baseUsd = (gmd: Butut, rate: Decimal.Decimal): Cents => ceilDiv(gmd * pow10(rate.scale), rate.units)

export const markupShare = (base: Cents, markup: Markup | undefined): Cents =>
  markup === undefined ? 0n : markup.type === "fixed" ? markup.value : percentOf(base, markup.value)

/**
 * The gmd-mode quote of decisions §2, for `gmd` butut at `rate`.
 * Pure arithmetic: minimums and markup limits are checked by `checkQuote`.
 */
export const quoteGmd = (
  gmd: Butut,
  network: Network,
  rate: Decimal.Decimal,
  markup: Markup | undefined,
  config: ConversionConfig
): Quote => {
  const base_usd = baseUsd(gmd, rate)
  const uncapped = percentOf(base_usd, config.fee_percent)
  const service_fee_usd = uncapped < config.fee_cap_usd ? uncapped : config.fee_cap_usd
  const network_fee_usd = config.network_fee_usd[network]
  const fee = service_fee_usd + network_fee_usd
  const markup_share_usd = markupShare(base_usd, markup)
  return {
    gmd_amount: gmd,
    base_usd,
    service_fee_usd,
    network_fee_usd,
    fee,
    markup_share_usd,
    pay_amount: base_usd + fee + markup_share_usd
  }
}

const BUTUT_PER_DALASI = 100n

/**
 * The pay-mode quote: the largest whole number of dalasi `G` whose gmd-mode
 * `pay_amount` fits in `pay` cents; its fee and markup; `pay_amount` = `pay`.
 * When not even 0 GMD fits (pay below the fixed fees), `gmd_amount` is 0 and the
 * minimum check rejects it.
 *
 * `quoteGmd(G).pay_amount` is non-decreasing in `G` (every step is a monotone
 * rounding of a monotone function), so a close estimate refined by a galloping
 * search finds the largest fitting `G` exactly, in a handful of quotes.
 */
export const quotePay = (
  pay: Cents,
  network: Network,
  rate: Decimal.Decimal,
  markup: Markup | undefined,
  config: ConversionConfig
): Quote => {
  const priceOf = pricer(network, rate, markup, config)
  const fits = (dalasi: bigint) => dalasi >= 0n && priceOf(dalasi) <= pay
  let g = estimateDalasi(pay, network, rate, markup, config)
  if (fits(g)) {
    // gallop up until it stops fitting, then bisect between the last fit and the miss
    let step = 1n
    while (fits(g + step)) {
      g += step
      step *= 2n
    }
    g = largestFit(g, g + step, fits)
  } else if (!fits(0n)) {
    g = 0n
  } else {
    // gallop down until something fits (0 does), then bisect
    let step = 1n
    let miss = g
    let below = g - step < 0n ? 0n : g - step
    while (!fits(below)) {
      miss = below
      step *= 2n
      below = g - step < 0n ? 0n : g - step
    }
    g = largestFit(below, miss, fits)
  }
  const quote = quoteGmd(g * BUTUT_PER_DALASI, network, rate, markup, config)
  return {
    gmd_amount: quote.gmd_amount,
    base_usd: quote.base_usd,
    service_fee_usd: quote.service_fee_usd,
    network_fee_usd: quote.network_fee_usd,
    fee: quote.fee,
    markup_share_usd: quote.markup_share_usd,
    pay_amount: pay
  }
}

/**
 * `dalasi -> quoteGmd(dalasi).pay_amount` with the constants hoisted and no
 * allocation: the same formula as `quoteGmd` (a property test checks they agree),
 * used by the pay-mode search, which probes a few prices per quote.
 */
export const pricer = (
  network: Network,
  rate: Decimal.Decimal,
  markup: Markup | undefined,
  config: ConversionConfig
): ((dalasi: bigint) => Cents) => {
  const bututScale = BUTUT_PER_DALASI * pow10(rate.scale)
  const feeUnits = config.fee_percent.units
  const feeDen = 100n * pow10(config.fee_percent.scale)
  const cap = config.fee_cap_usd
  const fixed = config.network_fee_usd[network] + (markup?.type === "fixed" ? markup.value : 0n)
  const markupUnits = markup?.type === "percentage" ? markup.value.units : 0n
  const markupDen = markup?.type === "percentage" ? 100n * pow10(markup.value.scale) : 1n
  return (dalasi) => {
    const base = ceilDiv(dalasi * bututScale, rate.units)
    const uncapped = halfUpDiv(base * feeUnits, feeDen)
    const markupShare = markupUnits === 0n ? 0n : halfUpDiv(base * markupUnits, markupDen)
    return base + (uncapped < cap ? uncapped : cap) + fixed + markupShare
  }
}

/** Largest `x` in `[fit, miss)` with `fits(x)`, given `fits(fit)` and `!fits(miss)`. */
const largestFit = (fit: bigint, miss: bigint, fits: (x: bigint) => boolean): bigint => {
  let lo = fit
  let hi = miss
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n
    if (fits(mid)) lo = mid
    else hi = mid
  }
  return lo
}

/**
 * A starting point for the search: the dalasi whose price, ignoring rounding,
 * equals `pay`, in one exact division (`G = (pay - fixed) * R / (1 + p + m)`, or
 * with the capped fee when the cap binds). Only a guess, usually exact or one
 * below; `quotePay` verifies and corrects it.
 */
const estimateDalasi = (
  pay: Cents,
  network: Network,
  rate: Decimal.Decimal,
  markup: Markup | undefined,
  config: ConversionConfig
): bigint => {
  const scale = Math.max(config.fee_percent.scale, markup?.type === "percentage" ? markup.value.scale : 0)
  const hundred = 100n * pow10(scale)
  const p = config.fee_percent.units * pow10(scale - config.fee_percent.scale)
  const m = markup?.type === "percentage" ? markup.value.units * pow10(scale - markup.value.scale) : 0n
  const fixed = config.network_fee_usd[network] + (markup?.type === "fixed" ? markup.value : 0n)
  const toDalasi = pow10(rate.scale) * BUTUT_PER_DALASI
  // uncapped: base * (1 + p + m) = pay - fixed
  let dalasi = floorDiv((pay - fixed) * hundred * rate.units, (hundred + p + m) * toDalasi)
  const base = floorDiv((pay - fixed) * hundred, hundred + p + m)
  if (base * p >= config.fee_cap_usd * hundred) {
    // the cap binds: base * (1 + m) = pay - fixed - C
    dalasi = floorDiv((pay - fixed - config.fee_cap_usd) * hundred * rate.units, (hundred + m) * toDalasi)
  }
  return dalasi < 0n ? 0n : dalasi
}
