import { Decimal } from "@xaalis/core"
import { type RateQuote, Rates, RateUnavailable } from "@xaalis/engine"
import { Clock, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import { describe, it } from "vitest"
import { RatesFeed, ratesChecks } from "../src/index.ts"
import { checkAbout, expectAllPass, expectCheckFails } from "./port-detects.ts"

/**
 * The Rates suite must catch broken adapters. The sound fake below is a source
 * (driven through its RatesFeed, with outages and hangs) and an adapter that
 * asks it, with a time-out, and reports its last observation; each mutant
 * breaks one promise of the port's contract.
 */

interface Source {
  quote: RateQuote
  down: boolean
  hanging: boolean
  /** The source's answer to one request: never, while it hangs. */
  readonly ask: Effect.Effect<RateQuote, RateUnavailable>
}

type Mutation = (
  source: Source,
  sound: Effect.Effect<RateQuote, RateUnavailable>
) => Effect.Effect<RateQuote, RateUnavailable>

/** How long the sound adapter waits for its source (the checks' deadline below is 1 s). */
const ASK_TIMEOUT = Duration.millis(50)

const unreachable = () => new RateUnavailable({ message: "source unreachable" })

/** `ask` cut off after `ASK_TIMEOUT`: what the sound adapter does. */
const timedOut = (ask: Effect.Effect<RateQuote, RateUnavailable>) =>
  Effect.flatMap(Effect.timeoutOption(ask, ASK_TIMEOUT), (answer) =>
    Option.isSome(answer) ? Effect.succeed(answer.value) : Effect.fail(new RateUnavailable({ message: "timed out" }))
  )

const fake =
  (mutate: Mutation = (_, sound) => sound) =>
  () =>
    Layer.effectContext(
      Effect.map(Clock.currentTimeMillis, (now) => {
        const source: Source = {
          quote: { rate: Decimal.parse("70.1") as Decimal.Decimal, as_of: now },
          down: false,
          hanging: false,
          ask: Effect.suspend(() =>
            source.hanging ? Effect.never : source.down ? Effect.fail(unreachable()) : Effect.succeed(source.quote)
          )
        }
        const rates = Rates.of({ current: mutate(source, timedOut(source.ask)) })
        const feed = RatesFeed.of({
          publish: (rate, as_of) =>
            Effect.sync(() => {
              source.quote = { rate, as_of }
              source.down = false
              source.hanging = false
            }),
          outage: Effect.sync(() => {
            source.down = true
          }),
          hang: Effect.sync(() => {
            source.hanging = true
          })
        })
        return Context.make(Rates, rates).pipe(Context.add(RatesFeed, feed))
      })
    )

const checks = ratesChecks({ seed: 42, deadlineMs: 1_000 })
const sampling = checkAbout(checks, "answers a quote")
const exact = checkAbout(checks, "exact positive Decimal")
const asOf = checkAbout(checks, "as_of is the epoch milliseconds")
const published = checkAbout(checks, "last published")
const outage = checkAbout(checks, "source is down")
const hang = checkAbout(checks, "never answers")

const withRate =
  (f: (rate: Decimal.Decimal) => unknown): Mutation =>
  (_, sound) =>
    Effect.map(sound, (q) => ({ ...q, rate: f(q.rate) as Decimal.Decimal }))
const withAsOf =
  (f: (as_of: number) => number): Mutation =>
  (_, sound) =>
    Effect.map(sound, (q) => ({ ...q, as_of: f(q.as_of) }))

describe("the Rates suite catches broken adapters", () => {
  it("the sound fake passes every check", () => expectAllPass(checks, fake()))

  it("a rate computed in binary floating point (units × 10^-scale)", async () => {
    const float = withRate((r) => Decimal.fromNumber(Number(r.units) * 10 ** -r.scale))
    await expectCheckFails(exact, fake(float), /at most 8 places/)
    await expectCheckFails(published, fake(float), /at most 8 places|published/)
  })

  it("a rate inverted through a float (the source quotes USD per GMD)", () =>
    expectCheckFails(
      exact,
      fake(withRate((r) => Decimal.fromNumber(1 / (1 / Number(Decimal.format(r)) + 1e-12)))),
      /at most 8 places/
    ))

  it("a rate rounded to 2 places on the way (exact, but not the source's)", () =>
    expectCheckFails(published, fake(withRate((r) => Decimal.parse(Decimal.format(r, 2)))), /published|positive/))

  it("a negative rate, a zero rate", async () => {
    await expectCheckFails(exact, fake(withRate((r) => Decimal.make(-r.units, r.scale))), /positive/)
    await expectCheckFails(exact, fake(withRate(() => Decimal.zero)), /positive/)
  })

  it("a rate with number units (not bigint), or a fractional scale", async () => {
    await expectCheckFails(exact, fake(withRate(() => ({ units: 701, scale: 1 }))), /bigint/)
    await expectCheckFails(exact, fake(withRate(() => ({ units: 701n, scale: 1.5 }))), /whole number/)
  })

  it("a rate beyond the API's limit", () =>
    expectCheckFails(exact, fake(withRate(() => Decimal.parse("1000000.01"))), /at most 1000000/))

  it("as_of in the far future (the sandbox's default), in seconds, NaN, or stale", async () => {
    await expectCheckFails(asOf, fake(withAsOf(() => Number.MAX_SAFE_INTEGER)), /not in the future/)
    await expectCheckFails(asOf, fake(withAsOf((t) => t + 60_000)), /not in the future/)
    await expectCheckFails(asOf, fake(withAsOf((t) => Math.floor(t / 1000))), /epoch milliseconds/)
    await expectCheckFails(asOf, fake(withAsOf(() => Number.NaN)), /whole number of milliseconds/)
    await expectCheckFails(asOf, fake(withAsOf((t) => t - 10 * 60_000)), /at most 300000 ms old/)
  })

  it("an adapter that stamps its own fetch time instead of the observation's", () =>
    expectCheckFails(
      published,
      fake((_, sound) =>
        Effect.flatMap(sound, (q) => Effect.map(Clock.currentTimeMillis, (now) => ({ ...q, as_of: now })))
      ),
      /as_of the source published/
    ))

  it("an adapter that dies now and then (a defect instead of RateUnavailable)", () => {
    let calls = 0
    return expectCheckFails(
      sampling,
      fake((_, sound) => Effect.suspend(() => (++calls % 5 === 0 ? Effect.die(new Error("socket hang up")) : sound))),
      /died/
    )
  })

  it("an adapter that caches its first answer forever", () =>
    expectCheckFails(
      published,
      fake((source) => {
        const first = source.quote
        return Effect.succeed(first)
      }),
      /published/
    ))

  it("during an outage: a cached rate re-stamped as fresh, a defect, or the wrong failure", async () => {
    let last: RateQuote | undefined
    const restamp: Mutation = (source, sound) =>
      Effect.suspend(() =>
        source.down && last !== undefined
          ? Effect.map(Clock.currentTimeMillis, (now) => ({ rate: (last as RateQuote).rate, as_of: now }))
          : Effect.tap(sound, (q) =>
              Effect.sync(() => {
                last = q
              })
            )
      )
    await expectCheckFails(outage, fake(restamp), /earlier observation/)
    await expectCheckFails(
      outage,
      fake((source, sound) => Effect.suspend(() => (source.down ? Effect.die(new Error("ECONNREFUSED")) : sound))),
      /died/
    )
    await expectCheckFails(
      outage,
      fake((_, sound) => Effect.mapError(sound, () => ({ _tag: "Timeout", message: "no answer" }) as never)),
      /_tag/
    )
  })

  it("while the source never answers: no time-out, a cached rate re-stamped as fresh, or a call stuck behind a hung request", async () => {
    await expectCheckFails(
      hang,
      fake((source) => source.ask),
      /must end within 1000 ms/
    )
    let last: RateQuote | undefined
    const restamp: Mutation = (source, sound) =>
      Effect.catch(
        Effect.tap(sound, (q) =>
          Effect.sync(() => {
            last = q
          })
        ),
        (e) =>
          source.hanging && last !== undefined
            ? Effect.map(Clock.currentTimeMillis, (now) => ({ rate: (last as RateQuote).rate, as_of: now }))
            : Effect.fail(e)
      )
    await expectCheckFails(hang, fake(restamp), /earlier observation/)
    // one refresh at a time, and callers wait on it (with their own time-out): a refresh that never ends
    // blocks every later call, even once the source answers again
    const singleFlight: Mutation = (source) => {
      let inFlight: Deferred.Deferred<RateQuote, RateUnavailable> | undefined
      return Effect.gen(function* () {
        if (inFlight === undefined) {
          const started = yield* Deferred.make<RateQuote, RateUnavailable>()
          inFlight = started
          yield* Effect.forkDetach(
            Effect.flatMap(Effect.exit(source.ask), (exit) =>
              Effect.flatMap(Deferred.done(started, exit), () =>
                Effect.sync(() => {
                  inFlight = undefined
                })
              )
            )
          )
        }
        return yield* timedOut(Deferred.await(inFlight))
      })
    }
    await expectCheckFails(hang, fake(singleFlight), /once the source answers again/)
  })
})
