import type { Decimal } from "@xaalis/core"
import { Context, Data, type Effect } from "effect"

/** A USD->GMD rate observation. */
export interface RateQuote {
  /**
   * Dalasi per US dollar: an exact decimal (bigint `units`, a whole `scale` >= 0),
   * positive, at most `Limits.rate_max` with at most `Limits.rate_places_max`
   * places (the API shows the locked rate as a JSON number, exact within 15
   * significant digits). Never computed in binary floating point.
   */
  readonly rate: Decimal.Decimal
  /**
   * When the source observed it: epoch milliseconds, a safe integer, never in
   * the future (a future `as_of` would make a stale rate look fresh). An answer
   * from a cache keeps its observation's time, not the time the cache was read.
   */
  readonly as_of: number
}

export class RateUnavailable extends Data.TaggedError("RateUnavailable")<{ readonly message: string }> {}

/**
 * Current USD->GMD rate. The engine refuses quotes on a rate older than its
 * staleness bound (`EngineConfig.rate_age_max_ms`) with `rate_unavailable`.
 *
 * `current` is read once per quote, by many requests at once. It succeeds with
 * the latest observation (see `RateQuote`), or fails with `RateUnavailable`
 * when it has none to give (the source is down and nothing earlier is kept);
 * it never dies (a defect is an internal error, not the retryable
 * `rate_unavailable`). The contract is checked by `ratesConformance` in
 * `@xaalis/testkit`.
 */
export class Rates extends Context.Service<Rates, { readonly current: Effect.Effect<RateQuote, RateUnavailable> }>()(
  "@xaalis/engine/ports/Rates"
) {}
