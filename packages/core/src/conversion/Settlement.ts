import type { Butut, Cents, Micros } from "../money/Money.ts"
import { floorDiv } from "../money/Rounding.ts"

/** Micros per cent: on-chain amounts have 6 places, `pay_amount` has 2. */
const MICROS_PER_CENT = 10_000n

/**
 * Dalasi credited once `arrived` micro-dollars have arrived on a conversion of
 * `gmd_amount` butut priced at `pay_amount` cents (decisions §3):
 *
 *     credited(A) = min(G, floor_butut(G * A / pay_amount))
 */
export const credited = (gmd_amount: Butut, pay_amount: Cents, arrived: Micros): Butut => {
  const share = floorDiv(gmd_amount * arrived, pay_amount * MICROS_PER_CENT)
  return share < gmd_amount ? share : gmd_amount
}

/** The markup share credited so far: floor to the cent, capped at `markup_share_usd`. */
export const creditedMarkup = (markup_share_usd: Cents, pay_amount: Cents, arrived: Micros): Cents => {
  const share = floorDiv(markup_share_usd * arrived, pay_amount * MICROS_PER_CENT)
  return share < markup_share_usd ? share : markup_share_usd
}

/** What one transfer adds: `credited(A_after) - credited(A_before)`; never negative. */
export const increment = (gmd_amount: Butut, pay_amount: Cents, before: Micros, after: Micros): Butut =>
  credited(gmd_amount, pay_amount, after) - credited(gmd_amount, pay_amount, before)

export type SettledStatus = "underpaid" | "paid" | "overpaid"

/** Status after a transfer: compares the total arrived with `pay_amount`. */
export const statusFor = (pay_amount: Cents, arrived: Micros): SettledStatus => {
  const due = pay_amount * MICROS_PER_CENT
  return arrived < due ? "underpaid" : arrived === due ? "paid" : "overpaid"
}
