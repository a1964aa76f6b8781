import type { LedgerEntry, Scope } from "../ports/Store.ts"

/** Ledger accounts of one business and mode. */
export const accounts = {
  /** What the service owes the business: its balance. */
  business_balance: "business_balance",
  /** Stablecoins received for conversions, against which dalasi is credited. */
  conversion_clearing: "conversion_clearing",
  /** Stablecoins received for payment requests. */
  stablecoin_clearing: "stablecoin_clearing",
  /** Dalasi sent out through mobile-money payouts. */
  payout_clearing: "payout_clearing",
  /** Money collected by the card/mobile-money processor. */
  processor_clearing: "processor_clearing",
  /** The service's fees. */
  fee_revenue: "fee_revenue"
} as const

export type Line = readonly [account: string, currency: "GMD" | "USD", amount: bigint]

/**
 * One balanced ledger transaction: `debit` and `credit` pairs per currency,
 * given as signed lines that must sum to zero (the store refuses otherwise).
 * Zero lines are dropped. USD lines are micro-dollars.
 */
export const transaction = (input: {
  readonly transaction_id: string
  readonly scope: Scope
  readonly now: number
  readonly cause: string
  readonly lines: ReadonlyArray<Line>
}): ReadonlyArray<LedgerEntry> => {
  // `map` over an array of known length allocates the result once; zero lines are rare
  // (lines are read by index: destructuring a tuple goes through the iterator protocol)
  const lines = input.lines.some((line) => line[2] === 0n) ? input.lines.filter((line) => line[2] !== 0n) : input.lines
  return lines.map((line, i) => ({
    id: `${input.transaction_id}:${i}`,
    transaction_id: input.transaction_id,
    business_id: input.scope.business_id,
    mode: input.scope.mode,
    account: line[0],
    currency: line[1],
    amount: line[2],
    created_at: input.now,
    cause: input.cause
  }))
}

/** Moves `amount` from `from` to `to`: debit `from` (+), credit `to` (−) in signed form. */
export const move = (from: string, to: string, currency: "GMD" | "USD", amount: bigint): ReadonlyArray<Line> => [
  [from, currency, amount],
  [to, currency, -amount]
]
