import { Decimal, DomainError } from "@xaalis/core"
import { Businesses, IdsAdapter, MemoryStore, Sandbox } from "@xaalis/engine"
import { Effect, Layer } from "effect"

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
