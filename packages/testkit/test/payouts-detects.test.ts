import { PayoutFailed, Payouts } from "@xaalis/engine"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { describe, it } from "vitest"
import { PayoutsRail, payoutsChecks, type RailPayment } from "../src/index.ts"
import { checkAbout, expectAllPass, expectCheckFails } from "./port-detects.ts"

/**
 * The Payouts suite must catch broken adapters. The sound fake below is a rail
 * keyed on the idempotency key, with a statement, a failure switch and a hang
 * switch, behind an adapter that times its calls out and settles a call that
 * timed out by sending the key again; each mutant breaks one promise of the
 * port's contract.
 */

type SendInput = Parameters<(typeof Payouts)["Service"]["send"]>[0]

interface Rail {
  readonly statement: Array<RailPayment>
  readonly byKey: Map<string, string>
  failNext: number
  hangNext: number
  /** Pays `input` (`amount` butut) under a new reference. */
  readonly pay: (input: SendInput, amount?: bigint) => string
  /** The rail's answer to one call: never, for a call it hangs (after paying it). */
  readonly send: Send
}

type Send = (input: SendInput) => Effect.Effect<{ readonly reference: string }, PayoutFailed>
type Mutation = (rail: Rail, sound: Send) => Send

/** How long the sound adapter waits for the rail (the checks' deadline below is 2 s). */
const RAIL_TIMEOUT = Duration.millis(50)

/** The call to the rail, cut off after `RAIL_TIMEOUT` (`None`: its outcome is unknown). */
const timed = (rail: Rail, input: SendInput) => Effect.timeoutOption(rail.send(input), RAIL_TIMEOUT)

const refused = (input: SendInput) =>
  Effect.fail(new PayoutFailed({ message: `rail refused the payout to ${input.account_number}` }))

const fake =
  (mutate: Mutation = (_, sound) => sound) =>
  () =>
    Layer.effectContext(
      Effect.sync(() => {
        let n = 0
        const rail: Rail = {
          statement: [],
          byKey: new Map(),
          failNext: 0,
          hangNext: 0,
          pay: (input, amount = input.amount) => {
            const reference = `TX-${++n}`
            rail.statement.push({ reference, amount, account_number: input.account_number })
            return reference
          },
          send: (input) =>
            Effect.suspend(() => {
              if (rail.failNext > 0) {
                rail.failNext--
                return refused(input)
              }
              const known = rail.byKey.get(input.idempotency_key)
              if (known !== undefined) return Effect.succeed({ reference: known })
              const reference = rail.pay(input)
              rail.byKey.set(input.idempotency_key, reference)
              if (rail.hangNext > 0) {
                rail.hangNext--
                return Effect.never // paid, and the answer lost on the way back
              }
              return Effect.succeed({ reference })
            })
        }
        // a call that timed out is settled by sending its key again: the rail answers what it paid
        const sound: Send = (input) =>
          Effect.flatMap(timed(rail, input), (answer) =>
            Option.isSome(answer) ? Effect.succeed(answer.value) : rail.send(input)
          )
        const payouts = Payouts.of({ send: mutate(rail, sound) })
        const statement = PayoutsRail.of({
          paid: Effect.sync(() => [...rail.statement]),
          failNext: (count) =>
            Effect.sync(() => {
              rail.failNext = count
            }),
          hangNext: (count) =>
            Effect.sync(() => {
              rail.hangNext = count
            })
        })
        return Context.make(Payouts, payouts).pipe(Context.add(PayoutsRail, statement))
      })
    )

const checks = payoutsChecks({ seed: 7, deadlineMs: 2_000 })
const valid = checkAbout(checks, "a valid payout is paid")
const hostile = checkAbout(checks, "binary floating point mangles")
const beyond = checkAbout(checks, "beyond what the rail takes")
const distinct = checkAbout(checks, "different idempotency keys")
const again = checkAbout(checks, "sent again (after a crash)")
const atOnce = checkAbout(checks, "5 times at once")
const failed = checkAbout(checks, "fails with PayoutFailed paid nothing")
const hang = checkAbout(checks, "never answers")

describe("the Payouts suite catches broken adapters", () => {
  it("the sound fake passes every check", () => expectAllPass(checks, fake()))

  it("a rail that pays twice: every send of a key pays again, under a new reference", async () => {
    const forgetful: Mutation = (rail) => (input) => Effect.sync(() => ({ reference: rail.pay(input) }))
    await expectCheckFails(again, fake(forgetful), /same key answers the first send's reference/)
    await expectCheckFails(atOnce, fake(forgetful), /one reference for one key/)
  })

  it("a rail that pays twice under the same reference (the statement shows it)", () =>
    expectCheckFails(
      again,
      fake(
        (rail, sound) => (input) =>
          Effect.tap(sound(input), ({ reference }) =>
            Effect.sync(
              () => void rail.statement.push({ reference, amount: input.amount, account_number: input.account_number })
            )
          )
      ),
      /payments on the rail's statement under reference/
    ))

  it("a rail that checks the key, then pays after a pause: concurrent sends of one key all pay", () =>
    expectCheckFails(
      atOnce,
      fake(
        (rail) => (input) =>
          Effect.gen(function* () {
            const known = rail.byKey.get(input.idempotency_key)
            if (known !== undefined) return { reference: known }
            yield* Effect.yieldNow // a network round trip between the check and the payment
            const reference = rail.pay(input)
            rail.byKey.set(input.idempotency_key, reference)
            return { reference }
          })
      ),
      /one reference for one key/
    ))

  it("an adapter that reports PayoutFailed after the rail paid (it ignores the rail's reference)", async () => {
    const blind: Mutation = (rail) => (input) =>
      Effect.suspend(() => {
        rail.pay(input)
        return Effect.fail(new PayoutFailed({ message: "rail answered no reference" }))
      })
    await expectCheckFails(valid, fake(blind), /the rail paid .* but send did not answer its reference/)
    await expectCheckFails(hostile, fake(blind), /keeps the dalasi in the balance and sends the payout again/)
  })

  it("an adapter that sends dalasi as a float and truncates to butut (29 butut become 28)", async () => {
    const float: Mutation = (rail) => (input) =>
      Effect.sync(() => ({ reference: rail.pay(input, BigInt(Math.floor((Number(input.amount) / 100) * 100))) }))
    await expectCheckFails(hostile, fake(float), /exact to the butut/)
    await expectCheckFails(valid, fake(float), /exact to the butut/)
  })

  it("an adapter that rounds amounts past 2^53 instead of refusing them", () =>
    expectCheckFails(
      beyond,
      fake((rail) => (input) => Effect.sync(() => ({ reference: rail.pay(input, BigInt(Number(input.amount))) }))),
      /exact to the butut/
    ))

  it("an adapter that throws on amounts it cannot take (a defect, not PayoutFailed)", () =>
    expectCheckFails(
      beyond,
      fake(
        (_, sound) => (input) =>
          input.amount > 2n ** 53n
            ? Effect.sync(() => {
                throw new RangeError("amount out of range")
              })
            : sound(input)
      ),
      /died/
    ))

  it("a rail that dedupes on wallet and amount instead of the key", () =>
    expectCheckFails(
      distinct,
      fake((_, sound) => (input) => sound({ ...input, idempotency_key: `${input.account_number}/${input.amount}` })),
      /three payouts, three references/
    ))

  it("an adapter that answers an empty reference", () =>
    expectCheckFails(
      valid,
      fake((_, sound) => (input) => Effect.as(sound(input), { reference: "" })),
      /non-empty string/
    ))

  it("a rail that pays, then reports PayoutFailed (a timeout after the money left)", () =>
    expectCheckFails(
      failed,
      fake(
        (rail, sound) => (input) =>
          Effect.suspend(() => {
            if (rail.failNext > 0) {
              rail.failNext--
              rail.pay(input)
              return refused(input)
            }
            return sound(input)
          })
      ),
      /paid nothing/
    ))

  it("an adapter that dies when the rail refuses (instead of PayoutFailed)", () =>
    expectCheckFails(
      failed,
      fake((_, sound) => (input) => Effect.catch(sound(input), (e) => Effect.die(e))),
      /died/
    ))

  it("a send that never ends (no deadline on the rail call)", () =>
    expectCheckFails(
      distinct,
      fake((_, sound) => {
        let calls = 0
        return (input) => (++calls === 2 ? Effect.never : sound(input))
      }),
      /had not ended after 2000 ms/
    ))

  it("when the rail never answers: no time-out, PayoutFailed without asking the rail, or a resend under a new key", async () => {
    await expectCheckFails(
      hang,
      fake((rail) => rail.send),
      /must end within 2000 ms/
    )
    const blind: Mutation = (rail) => (input) =>
      Effect.flatMap(timed(rail, input), (answer) =>
        Option.isSome(answer) ? Effect.succeed(answer.value) : Effect.fail(new PayoutFailed({ message: "timed out" }))
      )
    await expectCheckFails(hang, fake(blind), /but send failed with PayoutFailed after its time-out/)
    const newKey: Mutation = (rail) => (input) =>
      Effect.flatMap(timed(rail, input), (answer) =>
        Option.isSome(answer)
          ? Effect.succeed(answer.value)
          : rail.send({ ...input, idempotency_key: `${input.idempotency_key}/retry` })
      )
    await expectCheckFails(hang, fake(newKey), /payments on the rail's statement|reference of what the rail paid/)
  })
})
