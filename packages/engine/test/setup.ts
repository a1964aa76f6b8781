import { Decimal, DomainError } from "@xaalis/core"
import { Businesses, IdsAdapter, MemoryStore, Payouts, Sandbox } from "@xaalis/engine"
import { Deferred, Effect, Layer } from "effect"

/** In-memory store, deterministic ids and the sandbox world at 70 GMD/USD. */
export const testLayer = (rate = "70") => {
  const ids = IdsAdapter.layerDeterministic(7)
  return Layer.mergeAll(
    MemoryStore.layer,
    Sandbox.layer({ rate: Decimal.parse(rate) as Decimal.Decimal }).pipe(Layer.provideMerge(ids))
  )
}

/** A sandbox business and its live and test callers. */
export const business = (webhook_url?: string) =>
  Effect.gen(function* () {
    const created = yield* Businesses.createBusiness({ name: "Kairaba Coffee", webhook_url })
    const live = yield* Businesses.authenticate(created.secret_key_live)
    const test = yield* Businesses.authenticate(created.secret_key_test)
    return { created, live, test }
  })

/** The catalogue code of a failure (or the tag of a non-domain one, which a test should never see). */
export const codeOf = (e: unknown): string =>
  e instanceof DomainError ? e.code : `not a DomainError: ${(e as { _tag?: string })._tag}`

/** Where a mobile-money conversion pays out: `{ gmd_amount, ...toWallet }`. */
export const toWallet = {
  destination: "mobile_money",
  payout_method: { network: "wave", account_number: "7654321", account_name: "Awa Jallow" }
} as const

/**
 * A payout rail whose sends wait for `gate` (with `firstOnly`, only the first
 * one), and how many sends it has had.
 */
export const gatedRail = (gate: Deferred.Deferred<void>, options?: { readonly firstOnly?: boolean }) => {
  let sends = 0
  const rail = Payouts.of({
    send: () =>
      Effect.gen(function* () {
        sends += 1
        if (options?.firstOnly !== true || sends === 1) yield* Deferred.await(gate) // the rail takes its time
        return { reference: `rail-${sends}` }
      })
  })
  return { rail, sends: () => sends }
}
