/**
 * Shared by the tests and their child processes: an engine on a given Store
 * layer, a sandbox business, transfers, and an audit of every money invariant.
 */

import { Decimal, Settlement } from "@xaalis/core"
import {
  Businesses,
  Conversions,
  IdsAdapter,
  type LedgerEntry,
  MemoryNotifier,
  Sandbox,
  Store,
  Timeline,
  Transfers,
  unbalanced
} from "@xaalis/engine"
import { Effect, Layer } from "effect"

/** The sandbox world at 70 GMD/USD, crypto ids (several processes share one file), the memory notifier. */
export const engineOn = <E>(store: Layer.Layer<Store, E>) =>
  Layer.mergeAll(
    store,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    MemoryNotifier.layer
  )

export const WEBHOOK = "https://merchant.example/hooks"

/** A business with a webhook URL and its live caller. */
export const business = Effect.gen(function* () {
  const created = yield* Businesses.createBusiness({ name: "Kairaba Coffee", webhook_url: WEBHOOK })
  const live = yield* Businesses.authenticate(created.secret_key_live)
  return { id: live.business_id, key: created.secret_key_live, live }
})

/** A 5,000 GMD conversion credited to the balance (73.64 USD at 70); its id and deposit address. */
export const conversion = (live: Parameters<typeof Conversions.createConversion>[0]) =>
  Effect.map(Conversions.createConversion(live, { gmd_amount: 500_000n }), (c) => ({
    id: c.id,
    address: c.pay_address
  }))

export const transfer = (to_address: string, amount: bigint, tx_hash: string) => ({
  network: "TRC20" as const,
  coin: "USDT" as const,
  to_address,
  amount,
  tx_hash,
  log_index: 0
})

export const applyTransfer = (to_address: string, amount: bigint, tx_hash: string) =>
  Transfers.applyChainTransfer(transfer(to_address, amount, tx_hash))

/** The store key of a transfer's identity row. */
export const transferKey = (tx_hash: string) => `TRC20:${tx_hash.toLowerCase()}:0`

export interface ConversionAudit {
  readonly id: string
  readonly actually_paid: bigint
  readonly credited: bigint
  readonly applied: number
  /** The identity keys of the transfers applied (`transferKey`). */
  readonly keys: ReadonlyArray<string>
}

const ALL = { limit: 100_000, offset: 0 }

/**
 * Every invariant of the money, as a list of problems (empty when all hold):
 * - the ledger is balanced (`unbalanced` is empty);
 * - per conversion: no transfer applied twice (`applied_transfers` unique, each
 *   with its own identity row matched to this conversion), `actually_paid` is
 *   the sum of the applied transfers (no lost update), the business balance was
 *   credited exactly `credited(actually_paid)` and never more than `gmd_amount`,
 *   and (with `oneCreditPerTransfer`) by exactly one ledger transaction per
 *   applied transfer.
 */
export const audit = (businesses: ReadonlyArray<string>, options?: { readonly oneCreditPerTransfer?: boolean }) =>
  Effect.gen(function* () {
    const store = yield* Store
    const problems: Array<string> = []
    const ledger = yield* store.ledger
    const broken = unbalanced(ledger)
    if (broken.length > 0) problems.push(`unbalanced ledger transactions: ${broken.join(", ")}`)
    const byCause = new Map<string, Array<LedgerEntry>>()
    for (const e of ledger) {
      const lines = byCause.get(e.cause) ?? []
      lines.push(e)
      byCause.set(e.cause, lines)
    }
    const conversions: Array<ConversionAudit> = []
    for (const business_id of businesses) {
      const { docs } = yield* store.transact((tx) => tx.list("conversion", { business_id, mode: "live" }, ALL))
      for (const row of docs) {
        const whole = yield* store.transact((tx) => Timeline.getWhole(tx, row.id))
        if (whole === undefined) continue
        const c = whole.data
        const keys = c.applied_transfers
        if (new Set(keys).size !== keys.length) problems.push(`${c.id}: a transfer applied twice`)
        const rows = yield* store.transact((tx) => Effect.forEach(keys, (key) => tx.get("transfer", key)))
        let sum = 0n
        rows.forEach((row, i) => {
          const data = row?.data as { amount: bigint; matched: { id: string } | null } | undefined
          if (data === undefined) problems.push(`${c.id}: applied transfer ${keys[i]} has no identity row`)
          else if (data.matched?.id !== c.id) problems.push(`${c.id}: transfer ${keys[i]} matched elsewhere`)
          else sum += data.amount
        })
        if (sum !== c.actually_paid) problems.push(`${c.id}: actually_paid ${c.actually_paid} != applied ${sum}`)
        const lines = byCause.get(`conversion/${c.id}`) ?? []
        const credited = -lines
          .filter((e) => e.account === "business_balance" && e.currency === "GMD")
          .reduce((s, e) => s + e.amount, 0n)
        const expected = Settlement.credited(c.gmd_amount, c.pay_amount, c.actually_paid)
        if (credited !== expected) problems.push(`${c.id}: credited ${credited}, expected ${expected}`)
        if (credited !== c.credited_gmd) problems.push(`${c.id}: ledger ${credited} != state ${c.credited_gmd}`)
        if (credited > c.gmd_amount) problems.push(`${c.id}: credited ${credited} > gmd_amount ${c.gmd_amount}`)
        const postings = new Set(lines.map((e) => e.transaction_id)).size
        if (options?.oneCreditPerTransfer === true && postings !== keys.length) {
          problems.push(`${c.id}: ${postings} credit postings for ${keys.length} applied transfers`)
        }
        conversions.push({ id: c.id, actually_paid: c.actually_paid, credited, applied: keys.length, keys })
      }
    }
    return { problems, conversions, ledger }
  })
