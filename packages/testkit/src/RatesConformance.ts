/**
 * The Rates conformance suite: what the engine relies on from a `Rates` adapter
 * (the contract in the port's doc comment), checked on yours:
 *
 * ```ts
 * import { ratesConformance } from "@xaalis/testkit"
 * ratesConformance("my rates", () => MyRates.layer({ url: process.env.RATES_SANDBOX_URL! }))
 * ```
 *
 * Checks, on a fresh build of the layer each (the layer may fail to build: the
 * check fails with its error):
 * - `current` answers a quote, call after call and from many fibers at once
 *   (the source under test is up), each call within `deadlineMs` (default
 *   10 s); it never dies;
 * - the rate is an exact `Decimal` (bigint units, a whole non-negative scale),
 *   positive, at most `Limits.rate_max` (1,000,000) with at most
 *   `Limits.rate_places_max` (8) places: within 15 significant digits, so the
 *   API shows it exactly as a JSON number. A rate computed in binary floating
 *   point (`1 / 0.0142`, `units * 1e-8`) fails here;
 * - `as_of` is the epoch milliseconds of the observation: a safe integer (a
 *   `NaN` would look fresh to the engine forever), milliseconds rather than
 *   seconds, never in the future (a future `as_of` makes a stale rate look
 *   fresh), and recent: within `maxAgeMs` (default the engine's
 *   `rate_age_max_ms`, 5 minutes), else the engine refuses every quote.
 *
 * With a `RatesFeed` in the layer (the source behind the adapter, driven by the
 * suite; the sandbox's is its `SandboxControl.setRate`):
 * - `current` reports exactly the rate and the `as_of` the source last
 *   published, for random rates within the limits and for rates binary floating
 *   point cannot hold (`0.1`, `65.43210987`, `999999.99999999`), again on every
 *   call until the next publication;
 * - with `outage`: while the source is down, `current` fails with
 *   `RateUnavailable`, or answers an earlier observation under its own, older
 *   `as_of` (never a fresher one); it never dies, and it reports the next
 *   publication once the source is back;
 * - with `hang`: while the source takes requests and never answers them,
 *   `current` still ends within `deadlineMs` (default 10 s), with
 *   `RateUnavailable` or an earlier observation under its own `as_of`, and it
 *   reports the next publication once the source answers again (no call stays
 *   stuck behind a request that never ends).
 *
 * `ratesChecks(options)` gives the same checks as plain functions.
 */

import { Decimal, Limits } from "@xaalis/core"
import { EngineConfig, type RateQuote, Rates } from "@xaalis/engine"
import { Clock, Context, Effect, type Layer } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import {
  type CheckResult,
  expectSuccess,
  expectTypedFailure,
  type Outcome,
  optional,
  outcomeOf,
  type PortCheck,
  type PortSuiteOptions,
  passed,
  propertyParameters,
  registerChecks,
  runCheck,
  show,
  skipped,
  withoutOmitted
} from "./PortChecks.ts"

/**
 * The source behind a Rates adapter under test, driven by the suite (optional:
 * provide it in the layer next to `Rates`, sharing the adapter's state). For a
 * real adapter this is the stub of the upstream API your tests already run.
 */
export class RatesFeed extends Context.Service<
  RatesFeed,
  {
    /**
     * The source observes `rate` at `as_of` (epoch ms, never in the future);
     * the adapter's next `current` must see it (force a refresh if it caches).
     */
    readonly publish: (rate: Decimal.Decimal, as_of: number) => Effect.Effect<void, unknown>
    /** Optional: the source becomes unreachable until the next `publish`. */
    readonly outage?: Effect.Effect<void, unknown> | undefined
    /**
     * Optional: the source takes requests and never answers them (a peer that
     * accepts the connection and stays silent) until the next `publish`;
     * requests made before that publication stay unanswered.
     */
    readonly hang?: Effect.Effect<void, unknown> | undefined
  }
>()("@xaalis/testkit/RatesFeed") {}

export interface RatesConformanceOptions extends PortSuiteOptions {
  /** How far ahead of this machine's clock `as_of` may be (a source with a skewed clock), ms. Default 0. */
  readonly clockSkewMs?: number | undefined
  /** Oldest `as_of` the freshness check accepts, ms before now. Default the engine's `rate_age_max_ms` (5 minutes). */
  readonly maxAgeMs?: number | undefined
  /**
   * Longest a `current` may take, ms (default 10 000). Each quote of the API
   * reads it while its request waits, so a source that hangs must be cut off
   * well before a client gives up.
   */
  readonly deadlineMs?: number | undefined
  /** vitest timeout of each check, ms (default 60 s). */
  readonly timeout?: number | undefined
}

type RatesShape = (typeof Rates)["Service"]

/** Calls made in a row, then at once, by the sampling checks. */
const SEQUENTIAL = 8
const CONCURRENT = 16

const RATE_MAX = Decimal.make(BigInt(Limits.rate_max), 0)

/** Rates of at most 8 places in (0, 1e6], not normalised (`70.10` stays `7010 / 10^2`). */
const rateArb: fc.Arbitrary<Decimal.Decimal> = fc
  .integer({ min: 0, max: Limits.rate_places_max })
  .chain((scale) =>
    fc
      .bigInt({ min: 1n, max: BigInt(Limits.rate_max) * 10n ** BigInt(scale) })
      .map((units) => Decimal.make(units, scale))
  )

/** Rates binary floating point cannot hold, or holds only through a correctly rounded parse. */
const trickyRates = [
  "70",
  "70.1",
  "0.1",
  "0.3",
  "0.00000001",
  "65.43210987",
  "999999.99999999",
  "1000000",
  "1",
  "70.10",
  "123456.789"
].map((text) => Decimal.parse(text) as Decimal.Decimal)

/** A rate for messages (a broken one may have a scale too large to write out). */
const fmt = (d: Decimal.Decimal): string => (d.scale <= 64 ? Decimal.format(d) : `${d.units}e-${d.scale}`)

/** What the contract says of one rate. */
const expectExactRate = (rate: unknown, what: string): void => {
  expect(typeof rate === "object" && rate !== null, `${what}: the rate is a Decimal object, got ${show(rate)}`).toBe(
    true
  )
  const { units, scale } = rate as { readonly units: unknown; readonly scale: unknown }
  expect(typeof units, `${what}: rate.units is a bigint (exact), got ${show(units)}`).toBe("bigint")
  expect(
    typeof scale === "number" && Number.isSafeInteger(scale) && scale >= 0,
    `${what}: rate.scale is a whole number >= 0, got ${show(scale)}`
  ).toBe(true)
  const d = rate as Decimal.Decimal
  expect(d.units > 0n, `${what}: the rate is positive, got ${fmt(d)}`).toBe(true)
  expect(
    Decimal.places(d),
    `${what}: the rate ${fmt(d)} has at most ${Limits.rate_places_max} places (more is binary-float noise, and the API could not show it exactly)`
  ).toBeLessThanOrEqual(Limits.rate_places_max)
  expect(Decimal.compare(d, RATE_MAX), `${what}: the rate ${fmt(d)} is at most ${Limits.rate_max}`).toBeLessThanOrEqual(
    0
  )
  const shown = Decimal.fromNumber(Number(fmt(d)))
  expect(
    shown !== undefined && Decimal.compare(shown, d) === 0,
    `${what}: the rate ${fmt(d)} is exact as the JSON number the API shows`
  ).toBe(true)
}

/** An epoch-ms time for messages (any number: a broken `as_of` may be out of Date's range). */
const iso = (t: number): string => {
  const d = new Date(t)
  return Number.isNaN(d.getTime()) ? `${t} ms` : d.toISOString()
}

/** What the contract says of one `as_of`, answered at `now`. */
const expectObservationTime = (
  as_of: unknown,
  now: number,
  bounds: { readonly skew: number; readonly maxAge: number },
  what: string
): void => {
  expect(
    typeof as_of === "number" && Number.isSafeInteger(as_of),
    `${what}: as_of is a whole number of milliseconds, got ${show(as_of)}`
  ).toBe(true)
  const t = as_of as number
  expect(t, `${what}: as_of ${t} is epoch milliseconds (not seconds)`).toBeGreaterThanOrEqual(1_000_000_000_000)
  expect(t, `${what}: as_of ${iso(t)} is not in the future (answered at ${iso(now)})`).toBeLessThanOrEqual(
    now + bounds.skew
  )
  expect(
    now - t,
    `${what}: as_of ${iso(t)} is at most ${bounds.maxAge} ms old (answered at ${iso(now)}): the engine refuses older rates`
  ).toBeLessThanOrEqual(bounds.maxAge)
}

/** How one `current` ended, within `deadlineMs`. */
const outcomeFor = (rates: RatesShape, deadlineMs: number) => outcomeOf(() => rates.current, deadlineMs)

/** One `current`, which must succeed within `deadlineMs`, and the live clock when it answered. */
const currentAt = (rates: RatesShape, deadlineMs: number, what: string) =>
  Effect.gen(function* () {
    const quote = expectSuccess(yield* outcomeFor(rates, deadlineMs), what)
    return { quote, now: yield* Clock.currentTimeMillis }
  })

/** Several answers of `current`: one after the other, then many at once. */
const sample = (rates: RatesShape, deadlineMs: number) =>
  Effect.gen(function* () {
    const inRow: Array<{ readonly quote: RateQuote; readonly now: number }> = []
    for (let i = 0; i < SEQUENTIAL; i++) inRow.push(yield* currentAt(rates, deadlineMs, `current, call ${i + 1}`))
    const atOnce = yield* Effect.forEach(
      Array.from({ length: CONCURRENT }, (_, i) => i),
      (i) => currentAt(rates, deadlineMs, `current, concurrent call ${i + 1} of ${CONCURRENT}`),
      { concurrency: "unbounded" }
    )
    return [...inRow, ...atOnce]
  })

/**
 * `current` while the source cannot give a fresh observation, after it last
 * published at `as_of`: `RateUnavailable`, or an earlier observation under its
 * own `as_of`; never a defect, never late.
 */
const expectUnavailableOrEarlier = (outcome: Outcome<RateQuote>, as_of: number, what: string): void => {
  if (outcome._tag === "Success") {
    expectExactRate(outcome.value.rate, what)
    expect(
      outcome.value.as_of,
      `${what}: an answer while the source cannot answer is an earlier observation, under its own as_of`
    ).toBeLessThanOrEqual(as_of)
  } else {
    expectTypedFailure(outcome, "RateUnavailable", what)
  }
}

/** The checks of the suite, to run outside `ratesConformance` (e.g. to show that a broken adapter fails them). */
export const ratesChecks = (options?: RatesConformanceOptions): ReadonlyArray<PortCheck<Rates>> => {
  const deadlineMs = options?.deadlineMs ?? 10_000
  if (!(deadlineMs > 0)) throw new RangeError("deadlineMs must be positive")
  const timeout = options?.timeout ?? Math.max(60_000, deadlineMs * 8)
  const bounds = {
    skew: Math.max(0, options?.clockSkewMs ?? 0),
    maxAge: options?.maxAgeMs ?? EngineConfig.defaultEngineConfig.rate_age_max_ms
  }
  const check = (
    title: string,
    body: (rates: RatesShape) => Effect.Effect<CheckResult, unknown, Rates>
  ): PortCheck<Rates> => ({
    title,
    timeout,
    run: (makeLayer) => runCheck(makeLayer, Rates.use(body))
  })
  const withFeed = (
    title: string,
    body: (rates: RatesShape, feed: RatesFeed["Service"]) => Effect.Effect<CheckResult, unknown, Rates>
  ) =>
    check(title, (rates) =>
      Effect.flatMap(Effect.serviceOption(RatesFeed), (option) => {
        const feed = optional(option)
        return feed === undefined ? skipped("the layer provides no RatesFeed") : body(rates, feed)
      })
    )

  /** The source publishes a rate observed a second ago, which `current` answers; the observation's `as_of`. */
  const publishBefore = (rates: RatesShape, feed: RatesFeed["Service"], what: string) =>
    Effect.gen(function* () {
      const as_of = (yield* Clock.currentTimeMillis) - 1_000
      yield* feed.publish(Decimal.parse("70.25") as Decimal.Decimal, as_of)
      expectSuccess(yield* outcomeFor(rates, deadlineMs), what)
      return as_of
    })

  /** The source publishes again: `current` reports that publication. */
  const expectRecovers = (rates: RatesShape, feed: RatesFeed["Service"], what: string) =>
    Effect.gen(function* () {
      const after = Decimal.parse("71.5") as Decimal.Decimal
      const recovered = (yield* Clock.currentTimeMillis) - 10
      yield* feed.publish(after, recovered)
      const { quote } = yield* currentAt(rates, deadlineMs, what)
      expect(Decimal.compare(quote.rate, after), `${what}: the rate published`).toBe(0)
      expect(quote.as_of, `${what}: the as_of published`).toBe(recovered)
    })

  return [
    check(
      `current answers a quote ${SEQUENTIAL} times in a row and ${CONCURRENT} times at once, never dying`,
      (rates) => Effect.as(sample(rates, deadlineMs), "passed" as const)
    ),
    check(
      `the rate is an exact positive Decimal of at most ${Limits.rate_places_max} places, at most ${Limits.rate_max}`,
      (rates) =>
        Effect.gen(function* () {
          for (const [i, { quote }] of (yield* sample(rates, deadlineMs)).entries())
            expectExactRate(quote.rate, `answer ${i + 1}`)
          return "passed" as const
        })
    ),
    check(
      `as_of is the epoch milliseconds of the observation: not in the future, at most ${bounds.maxAge} ms old`,
      (rates) =>
        Effect.gen(function* () {
          for (const [i, { quote, now }] of (yield* sample(rates, deadlineMs)).entries()) {
            expectObservationTime(quote.as_of, now, bounds, `answer ${i + 1}`)
          }
          return "passed" as const
        })
    ),
    withFeed("current reports exactly the rate and as_of its source last published, on every call", (rates, feed) =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(rateArb, fc.integer({ min: 0, max: Math.max(0, Math.floor(bounds.maxAge / 2)) }), (r, age) =>
            Effect.runPromise(
              Effect.gen(function* () {
                const as_of = (yield* Clock.currentTimeMillis) - age
                yield* feed.publish(r, as_of)
                for (let call = 1; call <= 3; call++) {
                  const { quote } = yield* currentAt(rates, deadlineMs, `current after publishing ${Decimal.format(r)}`)
                  expectExactRate(quote.rate, `call ${call} after publishing ${Decimal.format(r)}`)
                  expect(
                    Decimal.compare(quote.rate, r),
                    `call ${call}: published ${Decimal.format(r)}, current answered ${Decimal.format(quote.rate)}`
                  ).toBe(0)
                  expect(quote.as_of, `call ${call}: the as_of the source published`).toBe(as_of)
                }
              })
            )
          ),
          {
            ...propertyParameters(options, 50),
            examples: trickyRates.map((r): [Decimal.Decimal, number] => [r, 0])
          }
        )
      ).pipe(Effect.as("passed" as const))
    ),
    withFeed(
      "while its source is down, current fails with RateUnavailable or answers an older observation; it never dies, and recovers",
      (rates, feed) =>
        Effect.gen(function* () {
          const outage = feed.outage
          if (outage === undefined) return yield* skipped("the RatesFeed has no outage")
          const as_of = yield* publishBefore(rates, feed, "current before the outage")
          yield* outage
          for (let call = 1; call <= 3; call++) {
            expectUnavailableOrEarlier(
              yield* outcomeFor(rates, deadlineMs),
              as_of,
              `current during the outage, call ${call}`
            )
          }
          yield* expectRecovers(rates, feed, "current once the source is back")
          return yield* passed
        })
    ),
    withFeed(
      `while its source never answers, current ends within ${deadlineMs} ms with RateUnavailable or an older observation, and recovers`,
      (rates, feed) =>
        Effect.gen(function* () {
          const hang = feed.hang
          if (hang === undefined) return yield* skipped("the RatesFeed has no hang")
          const as_of = yield* publishBefore(rates, feed, "current before the source hangs")
          yield* hang
          const late = (what: string) =>
            `${what}: current must end within ${deadlineMs} ms while its source never answers (a quote waits on it): put a timeout on the request to the source`
          for (let call = 1; call <= 2; call++) {
            const outcome = yield* outcomeFor(rates, deadlineMs)
            const what = `current while the source hangs, call ${call}`
            if (outcome._tag === "Late") expect.fail(late(what))
            expectUnavailableOrEarlier(outcome, as_of, what)
          }
          const atOnce = yield* Effect.forEach([1, 2, 3, 4], () => outcomeFor(rates, deadlineMs), {
            concurrency: "unbounded"
          })
          for (const [i, outcome] of atOnce.entries()) {
            const what = `current while the source hangs, concurrent call ${i + 1} of 4`
            if (outcome._tag === "Late") expect.fail(late(what))
            expectUnavailableOrEarlier(outcome, as_of, what)
          }
          // the requests made during the hang stay unanswered: current must not wait on them
          yield* expectRecovers(rates, feed, "current once the source answers again (its hung requests still open)")
          return yield* passed
        })
    )
  ]
}

/** Registers the Rates conformance suite as a vitest `describe` block. `makeLayer` builds the adapter afresh. */
export const ratesConformance = (
  name: string,
  makeLayer: () => Layer.Layer<Rates, unknown>,
  options?: RatesConformanceOptions
): void => registerChecks(`Rates conformance: ${name}`, withoutOmitted(ratesChecks(options), options?.omit), makeLayer)
