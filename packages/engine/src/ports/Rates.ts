import type { Decimal } from "@xaalis/core"
import { Context, Data, type Effect } from "effect"

/** A USD->GMD rate observation. */
export interface RateQuote {
  /** Dalasi per US dollar. */
  readonly rate: Decimal.Decimal
  /** When the source observed it (epoch ms). */
  readonly as_of: number
}

export class RateUnavailable extends Data.TaggedError("RateUnavailable")<{ readonly message: string }> {}

/**
 * Current USD->GMD rate. The engine refuses quotes on a rate older than its
 * staleness bound (`EngineConfig.rate_age_max_ms`) with `rate_unavailable`.
 */
export class Rates extends Context.Service<Rates, { readonly current: Effect.Effect<RateQuote, RateUnavailable> }>()(
  "@xaalis/engine/ports/Rates"
) {}
