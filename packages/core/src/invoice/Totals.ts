import { percentOf } from "../conversion/Quote.ts"
import * as Errors from "../Errors.ts"
import * as Decimal from "../money/Decimal.ts"
import { halfUpDiv, pow10 } from "../money/Rounding.ts"
import { characters } from "../Text.ts"

/**
 * Invoice totals (decisions §6). Amounts are minor units of the invoice's
 * currency (butut for GMD, cents for USD); quantities and percentages are exact
 * decimals. Every rounding is half-up to the minor unit:
 *
 *     total_price     = half_up(quantity * unit_price)
 *     sub_total       = sum of total_price, or `amount` when there are no line items
 *     discount_amount = half_up(sub_total * value / 100)   (percentage, value in (0, 100])
 *                     = value                              (fixed, value <= sub_total)
 *     total = amount  = sub_total - discount_amount
 */

export type InvoiceType = "simple" | "professional"

/** Places a line-item quantity may have (decisions §6). */
export const quantity_places_max = 4
/** Places a percentage discount may have (not ruled; chosen to match quantities). */
export const percentage_places_max = 4
/** Longest line-item `item` identifier, in characters. */
export const item_length_max = 255

/** A line item as sent: `total_price` is never taken from the caller. */
export interface LineItemInput {
  /** Product SKU or ID. */
  readonly item: string
  /** Positive, at most 4 decimal places. */
  readonly quantity: Decimal.Decimal
  /** Minor units, positive. */
  readonly unit_price: bigint
}

export interface LineItem extends LineItemInput {
  /** `half_up(quantity * unit_price)`, minor units. */
  readonly total_price: bigint
}

/** The spec's Discount: `amount` is minor units (fixed) or a percentage value. */
export type Discount =
  | { readonly type: "fixed"; readonly amount: bigint }
  | { readonly type: "percentage"; readonly amount: Decimal.Decimal }

export interface TotalsInput {
  /** Required when there are no line items; ignored when there are (it is computed). */
  readonly amount?: bigint | undefined
  /** An empty array counts as no line items. */
  readonly line_items?: ReadonlyArray<LineItemInput> | undefined
  readonly discount?: Discount | null | undefined
}

export interface Totals {
  readonly line_items: ReadonlyArray<LineItem>
  readonly sub_total: bigint
  readonly discount_amount: bigint
  readonly total: bigint
  /** The payable amount: equal to `total`. */
  readonly amount: bigint
  readonly type: InvoiceType
}

/** `half_up(quantity * unit_price)` to the minor unit. */
export const lineTotal = (quantity: Decimal.Decimal, unit_price: bigint): bigint =>
  halfUpDiv(quantity.units * unit_price, pow10(quantity.scale))

/** The discount in minor units of a valid discount on `sub_total` (not checked here: see `totals`). */
export const discountAmount = (sub_total: bigint, discount: Discount | null | undefined): bigint =>
  discount === null || discount === undefined
    ? 0n
    : discount.type === "fixed"
      ? discount.amount
      : percentOf(sub_total, discount.amount)

const lineItemProblem = (li: LineItemInput, i: number): Errors.DomainError | undefined => {
  const at = `line_items[${i}]`
  if (typeof li.item !== "string" || li.item.length === 0 || characters(li.item) > item_length_max) {
    return Errors.validation(
      `${at}.item must be a non-empty string of at most ${item_length_max} characters.`,
      `${at}.item`
    )
  }
  if (!Decimal.isPositive(li.quantity)) {
    return Errors.validation(`${at}.quantity must be positive.`, `${at}.quantity`)
  }
  if (Decimal.places(li.quantity) > quantity_places_max) {
    return Errors.validation(`${at}.quantity has more than ${quantity_places_max} decimal places.`, `${at}.quantity`)
  }
  if (li.unit_price <= 0n) {
    return Errors.validation(`${at}.unit_price must be positive.`, `${at}.unit_price`)
  }
  return undefined
}

const ONE_HUNDRED = Decimal.make(100n, 0)

const discountProblem = (sub_total: bigint, discount: Discount): Errors.DomainError | undefined => {
  if (discount.type === "percentage") {
    const p = discount.amount
    if (!Decimal.isPositive(p) || Decimal.compare(p, ONE_HUNDRED) > 0) {
      return Errors.validation("A percentage discount must be greater than 0 and at most 100.", "discount.amount")
    }
    if (Decimal.places(p) > percentage_places_max) {
      return Errors.validation(
        `A percentage discount has at most ${percentage_places_max} decimal places.`,
        "discount.amount"
      )
    }
    return undefined
  }
  if (discount.type === "fixed") {
    if (discount.amount <= 0n) return Errors.validation("A fixed discount must be positive.", "discount.amount")
    if (discount.amount > sub_total) {
      return Errors.validation("A fixed discount must not exceed the sub_total.", "discount.amount")
    }
    return undefined
  }
  return Errors.validation("discount.type must be fixed or percentage.", "discount.type")
}

/**
 * The totals of decisions §6, or the `validation_error` of the first rule broken:
 * a line item (empty `item`, quantity not positive or with more than 4 places,
 * `unit_price` not positive), a missing or non-positive `amount` without line
 * items, a percentage outside (0, 100], a fixed discount not positive or above
 * `sub_total`.
 */
export const totals = (input: TotalsInput): Totals | Errors.DomainError => {
  const items = input.line_items ?? []
  let sub_total: bigint
  const line_items: Array<LineItem> = []
  if (items.length > 0) {
    sub_total = 0n
    for (const [i, li] of items.entries()) {
      const problem = lineItemProblem(li, i)
      if (problem !== undefined) return problem
      const total_price = lineTotal(li.quantity, li.unit_price)
      line_items.push({ item: li.item, quantity: li.quantity, unit_price: li.unit_price, total_price })
      sub_total += total_price
    }
  } else {
    if (input.amount === undefined) {
      return Errors.validation("amount is required when there are no line_items.", "amount")
    }
    if (input.amount <= 0n)
      return Errors.validation("amount must be greater than 0 when there are no line_items.", "amount")
    sub_total = input.amount
  }
  const discount = input.discount ?? null
  if (discount !== null) {
    const problem = discountProblem(sub_total, discount)
    if (problem !== undefined) return problem
  }
  const discount_amount = discountAmount(sub_total, discount)
  const total = sub_total - discount_amount
  return {
    line_items,
    sub_total,
    discount_amount,
    total,
    amount: total,
    type: line_items.length > 0 ? "professional" : "simple"
  }
}
