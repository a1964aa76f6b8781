/**
 * The same gmd-mode quote written with decimal.js, measured once to choose the
 * representation of money (docs/decisions.md, "Money representation").
 */
import { Decimal } from "decimal.js"

const P = new Decimal(1)
const CAP = new Decimal(2)
const NET = new Decimal("1.5")
const HUNDRED = new Decimal(100)

export const quoteGmdDecimalJs = (g: Decimal, r: Decimal): Decimal => {
  const base = g.div(r).toDecimalPlaces(2, Decimal.ROUND_CEIL)
  const service = Decimal.min(base.mul(P).div(HUNDRED).toDecimalPlaces(2, Decimal.ROUND_HALF_UP), CAP)
  return base.add(service).add(NET)
}

export const creditedDecimalJs = (g: Decimal, pay: Decimal, arrived: Decimal): Decimal =>
  Decimal.min(g, g.mul(arrived).div(pay).toDecimalPlaces(2, Decimal.ROUND_FLOOR))
