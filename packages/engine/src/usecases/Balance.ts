import { Currency, Money } from "@xaalis/core"
import { Effect } from "effect"
import { accounts } from "../ledger/Ledger.ts"
import { type Caller, unitOfWork } from "./common.ts"

/**
 * GET /v1/balance, derived from the ledger: the business balance account is a
 * liability (credited with negative amounts), so what the business holds is
 * minus its sum. USD (markup shares, stablecoin payments) is kept at 6 places.
 */
export const getBalance = Effect.fn("getBalance")(function* (caller: Caller) {
  const rows = yield* unitOfWork((tx) => tx.balances(caller))
  const held = (currency: "GMD" | "USD") =>
    -rows
      .filter((r) => r.account === accounts.business_balance && r.currency === currency)
      .reduce((s, r) => s + r.amount, 0n)
  const gmd = held("GMD")
  const usd = held("USD")
  return {
    currency: "GMD" as const,
    available: Money.toJsonNumber(gmd, Currency.GMD),
    balances: [
      { currency: "GMD" as const, available: Money.toJsonNumber(gmd, Currency.GMD) },
      { currency: "USD" as const, available: Money.toJsonNumber(usd, Currency.USD_CHAIN) }
    ],
    test_mode: caller.mode === "test"
  }
})
