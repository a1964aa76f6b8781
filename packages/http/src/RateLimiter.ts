import { Context, Effect, Layer, type Scope } from "effect"

/** The answer of the limiter for one request. */
export interface RateDecision {
  readonly allowed: boolean
  /** Requests a full bucket holds (the burst): `RateLimit-Limit`. */
  readonly limit: number
  /** Whole requests left after this one: `RateLimit-Remaining`. */
  readonly remaining: number
  /** Seconds (rounded up) until the bucket is full again: `RateLimit-Reset`. */
  readonly reset_seconds: number
  /** When refused: seconds (rounded up) until one request is allowed again: `Retry-After`. 0 when allowed. */
  readonly retry_after_seconds: number
}

/**
 * The rate limiting port: `take` spends one request for `key` (an API key, or
 * a client address for requests without a valid key) and says whether it is
 * allowed. A shared limiter (Redis, the database) for several server processes
 * plugs in here as a Layer; the in-memory token bucket below serves one process.
 */
export class RateLimiter extends Context.Service<
  RateLimiter,
  { readonly take: (key: string) => Effect.Effect<RateDecision> }
>()("@xaalis/http/RateLimiter") {}

export interface TokenBucketOptions {
  /** Sustained requests per second (refill rate), > 0. */
  readonly rps: number
  /** Bucket size: requests allowed at once after a quiet period, >= 1. */
  readonly burst: number
  /**
   * Monotonic time source in milliseconds (default `performance.now`): real
   * elapsed time, never the sandbox clock, so advancing sandbox time does not
   * refill buckets. Injectable for tests.
   */
  readonly now?: () => number
  /**
   * Buckets kept before full (idle) buckets are swept; default 10,000. A sweep
   * that leaves `n` buckets (all of them busy) puts the next one off until the
   * table holds `2n`, so a crowd of new keys costs amortised O(1) each instead
   * of a whole-table sweep per request.
   */
  readonly buckets_max?: number
}

interface Bucket {
  tokens: number
  at: number
}

/** The answer for a bucket left with `tokens` after a request that was `allowed` (and took one) or not. */
export const decisionOf = (tokens: number, allowed: boolean, rps: number, burst: number): RateDecision => ({
  allowed,
  limit: Math.floor(burst),
  remaining: Math.floor(tokens),
  reset_seconds: Math.ceil((burst - tokens) / rps),
  retry_after_seconds: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / rps))
})

const checkOptions = ({ rps, burst }: TokenBucketOptions) => {
  if (!(rps > 0) || !Number.isFinite(rps)) throw new RangeError("rateLimit.rps must be a positive number")
  if (!(burst >= 1) || !Number.isFinite(burst)) throw new RangeError("rateLimit.burst must be at least 1")
}

/**
 * A token bucket per key: `burst` tokens, refilled at `rps` per second, one
 * token per request. A key absent from the table has a full bucket, so full
 * buckets are dropped when the table grows past `buckets_max`: memory stays
 * bounded by the keys active in the last `burst / rps` seconds (at most twice
 * as many buckets, or `buckets_max`). `size()` tells how many are kept.
 */
export const makeTokenBucket = (
  options: TokenBucketOptions
): RateLimiter["Service"] & { readonly size: () => number } => {
  checkOptions(options)
  const { rps, burst } = options
  const now = options.now ?? (() => performance.now())
  const buckets_max = options.buckets_max ?? 10_000
  const buckets = new Map<string, Bucket>()
  /** The table size at which the next sweep runs. */
  let sweep_at = buckets_max
  const refill = (b: Bucket, t: number) => {
    if (t > b.at) {
      b.tokens = Math.min(burst, b.tokens + ((t - b.at) / 1000) * rps)
      b.at = t
    }
  }
  const sweep = (t: number) => {
    for (const [key, b] of buckets) {
      refill(b, t)
      if (b.tokens >= burst) buckets.delete(key)
    }
    sweep_at = Math.max(buckets_max, 2 * buckets.size)
  }
  return Object.assign(
    RateLimiter.of({
      take: (key) =>
        Effect.sync(() => {
          const t = now()
          let b = buckets.get(key)
          if (b === undefined) {
            if (buckets.size >= sweep_at) sweep(t)
            b = { tokens: burst, at: t }
            buckets.set(key, b)
          } else refill(b, t)
          const allowed = b.tokens >= 1
          if (allowed) b.tokens -= 1
          return decisionOf(b.tokens, allowed, rps, burst)
        })
    }),
    { size: () => buckets.size }
  )
}

/** The in-memory token-bucket limiter as a Layer. */
export const layerMemory = (options: TokenBucketOptions): Layer.Layer<RateLimiter> =>
  Layer.sync(RateLimiter, () => makeTokenBucket(options))

/**
 * Token buckets kept where every process of a deployment sees them (a table
 * of the shared database, a Redis hash): `spend` refills `key`'s bucket for
 * the time since it was last spent (`rps` per second, at most `burst`), takes
 * one token when there is one, atomically for all processes, and answers the
 * tokens left and whether one was taken. A missing bucket is full.
 * `@xaalis/store-postgres` has one (`RateBuckets`).
 */
export interface SharedBuckets {
  readonly spend: (
    key: string,
    rps: number,
    burst: number
  ) => Promise<{ readonly tokens: number; readonly allowed: boolean }>
}

export interface SharedLimiterOptions extends TokenBucketOptions {
  /**
   * Told when the shared buckets fail (a database that is down or slow); that
   * request is then counted by this process's own in-memory bucket, so a
   * failing limiter neither refuses every request nor lets every one through.
   */
  readonly onUnavailable?: (error: unknown) => void
}

/**
 * The limiter over `SharedBuckets`: one limit for the whole deployment, where
 * `layerMemory` gives each process its own (N processes would allow N times
 * the rate). Falls back to an in-memory bucket per request while the shared
 * one fails.
 */
export const layerShared = <E, R>(
  options: SharedLimiterOptions,
  buckets: Effect.Effect<SharedBuckets, E, R>
): Layer.Layer<RateLimiter, E, Exclude<R, Scope.Scope>> => {
  checkOptions(options)
  const { rps, burst } = options
  const now = options.now ?? (() => performance.now())
  const refused_max = options.buckets_max ?? 10_000
  return Layer.effect(
    RateLimiter,
    Effect.map(buckets, (shared) => {
      const local = makeTokenBucket(options)
      /**
       * Keys the shared buckets refused, until the time they said a token comes back: refused here without
       * asking again. No token of that bucket exists anywhere before then, so nothing is refused that
       * would be allowed, and a client hammering past its limit costs the database one statement per
       * refusal period instead of one per request (a flood on one key would otherwise hold the pool that
       * every other key waits for).
       */
      const refused = new Map<string, number>()
      const remember = (key: string, tokens: number, t: number) => {
        if (refused.size >= refused_max) for (const [k, until] of refused) if (until <= t) refused.delete(k)
        // when the bucket holds one token again (exactly, not Retry-After's whole seconds)
        if (refused.size < refused_max) refused.set(key, t + ((1 - tokens) / rps) * 1000)
      }
      return RateLimiter.of({
        take: (key) => {
          const t = now()
          const until = refused.get(key)
          if (until !== undefined) {
            if (t < until) {
              const wait = (until - t) / 1000
              return Effect.succeed(decisionOf(Math.max(0, 1 - wait * rps), false, rps, burst))
            }
            refused.delete(key)
          }
          return Effect.tryPromise(() => shared.spend(key, rps, burst)).pipe(
            Effect.map(({ tokens, allowed }) => {
              if (!allowed) remember(key, tokens, t)
              return decisionOf(tokens, allowed, rps, burst)
            }),
            Effect.catch((e) => {
              options.onUnavailable?.(e.cause)
              return local.take(key)
            })
          )
        }
      })
    })
  )
}
