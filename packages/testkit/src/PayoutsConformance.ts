/**
 * The Payouts conformance suite: what the engine relies on from a `Payouts`
 * adapter (a mobile-money rail; the contract in the port's doc comment),
 * checked on yours:
 *
 * ```ts
 * import { payoutsConformance } from "@xaalis/testkit"
 * payoutsConformance("wave", () => WavePayouts.layer({ url: process.env.WAVE_SANDBOX_URL! }))
 * ```
 *
 * Checks, on a fresh build of the layer each (the layer may fail to build: the
 * check fails with its error). Every send must end within `deadlineMs` (default
 * 60 s, a fifth of the engine's `payout_claim_ms`) and never die: it resolves
 * with the rail's `reference` or fails with `PayoutFailed`.
 * - a valid payout (either network, a 7-digit wallet, any holder name, any
 *   amount from 1 butut to `amountMax`, with or without `business_id`) is paid:
 *   `send` answers a non-empty reference;
 * - amounts that binary floating point mangles (29, 57, 115, 1005 butut…) are
 *   paid exactly; amounts beyond what the rail takes (above `amountMax`, past
 *   2^53) are refused with `PayoutFailed` or paid exactly, never rounded;
 * - different idempotency keys are different payouts, even to the same wallet
 *   for the same amount: each answers its own reference;
 * - (`idempotent`, the default) the same idempotency key sent again, later or
 *   several times at once (a send that outlived its claim), answers the same
 *   reference and pays once.
 *
 * With a `PayoutsRail` in the layer (the rail's statement; the sandbox's is its
 * `SandboxControl`), each of those is also checked on what the rail paid: one
 * payment per reference, of exactly the amount sent, to the wallet sent; and,
 * with `failNext`: a send that fails with `PayoutFailed` paid nothing, and the
 * same key sent again is paid once; with `hangNext`: a send the rail never
 * answers (it paid, and the answer was lost) still ends within the deadline,
 * with the reference of what the rail paid or `PayoutFailed` when it paid
 * nothing, and the key sent again pays no more.
 *
 * Idempotency keys are random UUIDs, so runs against a rail's persistent test
 * environment never meet earlier runs' keys. `payoutsChecks(options)` gives the
 * same checks as plain functions.
 */

import { Limits } from "@xaalis/core"
import { Conversions, Payouts } from "@xaalis/engine"
import { Context, Effect, type Layer } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import { text, walletNumber } from "./Arbitraries.ts"
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

/** One payment the rail made. */
export interface RailPayment {
  /** The reference `send` answered for it. */
  readonly reference: string
  /** Butut actually paid. */
  readonly amount: bigint
  readonly account_number: string
}

/**
 * The statement of the rail behind a Payouts adapter under test (optional:
 * provide it in the layer next to `Payouts`, sharing the adapter's state; for a
 * real rail, a query of its test environment's transactions).
 */
export class PayoutsRail extends Context.Service<
  PayoutsRail,
  {
    /** Every payment the rail made so far, one entry per payment (other payments may be listed too). */
    readonly paid: Effect.Effect<ReadonlyArray<RailPayment>, unknown>
    /** Optional: the rail refuses the next `count` sends, whatever their key. */
    readonly failNext?: ((count: number) => Effect.Effect<void, unknown>) | undefined
    /**
     * Optional: the rail takes the next `count` sends, whatever their key, and
     * never answers them (a peer that stays silent). Pay them first if your
     * stub can (an answer lost on the way back: the case that matters, since
     * the adapter must then find the payment before it reports); later sends,
     * among them a look-up or a resend of the same key, are answered.
     */
    readonly hangNext?: ((count: number) => Effect.Effect<void, unknown>) | undefined
  }
>()("@xaalis/testkit/PayoutsRail") {}

export interface PayoutsConformanceOptions extends PortSuiteOptions {
  /**
   * The rail pays at most once per `idempotency_key` (default true). `false`
   * skips the checks of repeated keys: the engine then may pay a payout twice
   * after a crash or a send that outlived its claim.
   */
  readonly idempotent?: boolean | undefined
  /** Longest a send may take, ms (default 60 000: well within `Conversions.payout_claim_ms`, 5 minutes). */
  readonly deadlineMs?: number | undefined
  /** Largest amount the rail must pay, butut (default `Limits.gmd_amount_max`, 1,000,000,000.00 GMD). */
  readonly amountMax?: bigint | undefined
  /** vitest timeout of each check, ms (default 120 s, or more with a longer deadline). */
  readonly timeout?: number | undefined
}

type PayoutsShape = (typeof Payouts)["Service"]
type SendInput = Parameters<PayoutsShape["send"]>[0]
type Rail = PayoutsRail["Service"]

const newKey = (): string => globalThis.crypto.randomUUID()

/** A valid payout without its key: what the engine sends (wallets as the core validates them). */
const payoutArb = (amountMax: bigint): fc.Arbitrary<Omit<SendInput, "idempotency_key">> =>
  fc
    .record({
      network: fc.constantFrom("wave" as const, "afrimoney" as const),
      account_number: walletNumber,
      account_name: text(40, 3),
      amount: fc.bigInt({ min: 1n, max: amountMax }),
      business_id: fc.option(
        fc.stringMatching(/^[0-9a-f]{8}$/).map((s) => `biz_${s}`),
        { nil: undefined }
      )
    })
    .map(({ business_id, ...rest }) => (business_id === undefined ? rest : { ...rest, business_id }))

/** Butut amounts, among them ones a trip through binary floating point (dalasi as a JS number) gets wrong: 29, 57, 115, 1005. */
const floatHostile = [
  1n,
  7n,
  29n,
  57n,
  99n,
  100n,
  101n,
  115n,
  1_005n,
  2_675n,
  123_456_789n,
  9_999_999_999n,
  99_999_999_999n,
  100_000_000_000n
]

const wallet = (account_number: string) =>
  ({ network: "wave", account_number, account_name: "Awa Njie-Sowe", business_id: "biz_conformance" }) as const

/** A 7-digit wallet number of its own for one check, so its payments are told apart on a shared statement. */
const freshWallet = (): string =>
  String(1_000_000 + (globalThis.crypto.getRandomValues(new Uint32Array(1))[0]! % 9_000_000))

/** The payments of `reference` on the statement: exactly one, of `input`'s amount, to `input`'s wallet. */
const expectPaidOnce = (paid: ReadonlyArray<RailPayment>, reference: string, input: SendInput, what: string) => {
  const payments = paid.filter((p) => p.reference === reference)
  expect(payments.length, `${what}: payments on the rail's statement under reference ${reference}`).toBe(1)
  const [payment] = payments as [RailPayment]
  expect(
    payment.amount,
    `${what}: the rail paid ${show(payment.amount)} butut for ${show(input.amount)} sent (exact to the butut)`
  ).toBe(input.amount)
  expect(payment.account_number, `${what}: the wallet paid`).toBe(input.account_number)
}

/** Payments on `after` that `before` did not list. */
const newPayments = (before: ReadonlyArray<RailPayment>, after: ReadonlyArray<RailPayment>) => {
  const seen = new Map<string, number>()
  for (const p of before) seen.set(p.reference, (seen.get(p.reference) ?? 0) + 1)
  return after.filter((p) => {
    const left = seen.get(p.reference) ?? 0
    if (left === 0) return true
    seen.set(p.reference, left - 1)
    return false
  })
}

/** A reader of the payments to `input`'s wallet that the statement lists from now on. */
const paymentsFrom = (rail: Rail, input: SendInput) =>
  Effect.map(
    rail.paid,
    (before) => (all: ReadonlyArray<RailPayment>) =>
      newPayments(before, all).filter((p) => p.account_number === input.account_number)
  )

/** The checks of the suite, to run outside `payoutsConformance` (e.g. to show that a broken adapter fails them). */
export const payoutsChecks = (options?: PayoutsConformanceOptions): ReadonlyArray<PortCheck<Payouts>> => {
  const deadlineMs = options?.deadlineMs ?? Conversions.payout_claim_ms / 5
  if (!(deadlineMs > 0 && deadlineMs < Conversions.payout_claim_ms)) {
    throw new RangeError(`deadlineMs must be positive and below payout_claim_ms (${Conversions.payout_claim_ms} ms)`)
  }
  const timeout = options?.timeout ?? Math.max(120_000, deadlineMs * 4)
  const amountMax = options?.amountMax ?? Limits.gmd_amount_max
  const idempotent = options?.idempotent ?? true
  /** A fixed amount of a check, within what the rail takes. */
  const capped = (amount: bigint): bigint => (amount <= amountMax ? amount : amountMax)

  /** One send, ended (or not) within the deadline. */
  const send = (payouts: PayoutsShape, input: SendInput) => outcomeOf(() => payouts.send(input), deadlineMs)

  /** The reference of a send that must be paid. */
  const referenceOf = (o: Outcome<{ readonly reference: string }>, what: string): string => {
    const { reference } = expectSuccess(o, what) as { readonly reference: unknown }
    expect(
      typeof reference === "string" && reference.trim().length > 0,
      `${what}: the reference is a non-empty string, got ${show(reference)}`
    ).toBe(true)
    return reference as string
  }

  /**
   * Sends a valid payout, which must be paid once under its reference. A send
   * that fails while the rail's statement shows the payment is named for what
   * it is: the engine would keep the dalasi in the balance and send it again.
   */
  const expectPaid = (payouts: PayoutsShape, rail: Rail | undefined, input: SendInput, what: string) =>
    Effect.gen(function* () {
      const before = rail === undefined ? [] : yield* rail.paid
      const outcome = yield* send(payouts, input)
      if (outcome._tag !== "Success" && rail !== undefined) {
        const paid = newPayments(before, yield* rail.paid).filter((p) => p.account_number === input.account_number)
        if (paid.length > 0) {
          expect.fail(
            `${what}: the rail paid ${show(paid)}, but send did not answer its reference (${show(outcome)}): the engine takes a failed send as "nothing paid", keeps the dalasi in the balance and sends the payout again under the same key; answer the reference whenever the rail paid (read it from the rail's answer or look the key up)`
          )
        }
      }
      const reference = referenceOf(outcome, what)
      if (rail !== undefined) expectPaidOnce(yield* rail.paid, reference, input, what)
    })

  const check = (
    title: string,
    body: (payouts: PayoutsShape, rail: Rail | undefined) => Effect.Effect<CheckResult, unknown, Payouts>
  ): PortCheck<Payouts> => ({
    title,
    timeout,
    run: (makeLayer) =>
      runCheck(
        makeLayer,
        Effect.gen(function* () {
          const payouts = yield* Payouts
          const rail = optional(yield* Effect.serviceOption(PayoutsRail))
          return yield* body(payouts, rail)
        })
      )
  })
  const notIdempotent = skipped(
    "options.idempotent is false: the rail may pay one payout twice (after a crash, or a send that outlived its claim)"
  )

  return [
    check(
      "a valid payout is paid: send answers a non-empty reference (and the rail pays that amount to that wallet)",
      (payouts, rail) =>
        Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(payoutArb(amountMax), (payout) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const input: SendInput = { idempotency_key: newKey(), ...payout }
                  yield* expectPaid(payouts, rail, input, `send ${show(input)}`)
                })
              )
            ),
            propertyParameters(options, 50)
          )
        ).pipe(Effect.as("passed" as const))
    ),
    check(
      `amounts binary floating point mangles are paid to the butut (${floatHostile.length} amounts up to ${amountMax})`,
      (payouts, rail) =>
        Effect.gen(function* () {
          for (const amount of floatHostile.filter((a) => a <= amountMax)) {
            const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount }
            yield* expectPaid(payouts, rail, input, `send of ${amount} butut`)
          }
          return yield* passed
        })
    ),
    check(
      "amounts beyond what the rail takes are refused with PayoutFailed or paid exactly, never rounded, never dying",
      (payouts, rail) =>
        Effect.gen(function* () {
          for (const amount of [amountMax + 1n, 2n ** 53n + 1n, 2n ** 64n + 1n, 10n ** 30n + 7n]) {
            const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount }
            const what = `send of ${amount} butut`
            const before = rail === undefined ? [] : yield* rail.paid
            const outcome = yield* send(payouts, input)
            if (outcome._tag === "Success") {
              const reference = referenceOf(outcome, what)
              if (rail !== undefined) expectPaidOnce(yield* rail.paid, reference, input, what)
            } else {
              expectTypedFailure(outcome, "PayoutFailed", what)
              if (rail !== undefined) {
                const paid = newPayments(before, yield* rail.paid).filter(
                  (p) => p.account_number === input.account_number
                )
                expect(paid, `${what}: refused with PayoutFailed, so nothing was paid`).toStrictEqual([])
              }
            }
          }
          return yield* passed
        })
    ),
    check(
      "different idempotency keys are different payouts, even to the same wallet for the same amount",
      (payouts, rail) =>
        Effect.gen(function* () {
          const account = freshWallet()
          const inputs: Array<SendInput> = [1, 2, 3].map(() => ({
            idempotency_key: newKey(),
            ...wallet(account),
            amount: capped(12_345n)
          }))
          const references: Array<string> = []
          for (const [i, input] of inputs.entries()) {
            references.push(referenceOf(yield* send(payouts, input), `send ${i + 1} of 3 (its own key)`))
          }
          expect(new Set(references).size, `three payouts, three references: ${show(references)}`).toBe(3)
          if (rail !== undefined) {
            const paid = yield* rail.paid
            for (const [i, input] of inputs.entries()) {
              expectPaidOnce(paid, references[i]!, input, `payout ${i + 1} of 3`)
            }
          }
          return yield* passed
        })
    ),
    check(
      "the same idempotency key sent again (after a crash) answers the same reference and pays once",
      (payouts, rail) =>
        Effect.gen(function* () {
          if (!idempotent) return yield* notIdempotent
          const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount: capped(250_075n) }
          const first = referenceOf(yield* send(payouts, input), "the first send")
          // another payout in between: the rail must key on idempotency_key, not remember the last send
          const other: SendInput = { ...input, idempotency_key: newKey(), amount: capped(1_000n) }
          referenceOf(yield* send(payouts, other), "another payout in between")
          for (const n of [2, 3]) {
            const again = referenceOf(yield* send(payouts, input), `send ${n} of the same key`)
            expect(again, `send ${n} of the same key answers the first send's reference`).toBe(first)
          }
          if (rail !== undefined) expectPaidOnce(yield* rail.paid, first, input, "three sends of one key")
          return yield* passed
        })
    ),
    check(
      "the same idempotency key sent 5 times at once (a send that outlived its claim) pays once, under one reference",
      (payouts, rail) =>
        Effect.gen(function* () {
          if (!idempotent) return yield* notIdempotent
          const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount: capped(99_999n) }
          const outcomes = yield* Effect.forEach([1, 2, 3, 4, 5], () => send(payouts, input), {
            concurrency: "unbounded"
          })
          // a PayoutFailed here would be booked as failed (the dalasi kept) while another send paid: not allowed
          const references = outcomes.map((o, i) => referenceOf(o, `concurrent send ${i + 1} of 5`))
          expect(new Set(references).size, `one reference for one key: ${show(references)}`).toBe(1)
          if (rail !== undefined) expectPaidOnce(yield* rail.paid, references[0]!, input, "5 sends of one key at once")
          return yield* passed
        })
    ),
    check(
      "a send that fails with PayoutFailed paid nothing, and the same key sent again pays at most once",
      (payouts, rail) =>
        Effect.gen(function* () {
          const failNext = rail?.failNext
          if (rail === undefined || failNext === undefined) {
            return yield* skipped("the layer provides no PayoutsRail with failNext")
          }
          const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount: capped(4_200n) }
          const toWallet = yield* paymentsFrom(rail, input)
          yield* failNext(1)
          expectTypedFailure(yield* send(payouts, input), "PayoutFailed", "the send the rail refuses")
          expect(
            toWallet(yield* rail.paid),
            "a send that failed with PayoutFailed paid nothing (the engine keeps the dalasi in the balance)"
          ).toStrictEqual([])
          // the engine sends a payout again under its key after a crash between the send and its booking
          const again = yield* send(payouts, input)
          if (again._tag === "Success") {
            expectPaidOnce(yield* rail.paid, referenceOf(again, "the same key sent again"), input, "the key sent again")
            expect(toWallet(yield* rail.paid), "one payment for the key in all").toHaveLength(1)
          } else {
            // a rail may answer a key's first outcome again; then still nothing is paid
            expectTypedFailure(again, "PayoutFailed", "the same key sent again")
            expect(toWallet(yield* rail.paid), "failed twice: nothing paid").toStrictEqual([])
          }
          return yield* passed
        })
    ),
    check(
      `a send the rail never answers ends within ${deadlineMs} ms: with the reference of what the rail paid, or PayoutFailed when it paid nothing`,
      (payouts, rail) =>
        Effect.gen(function* () {
          const hangNext = rail?.hangNext
          if (rail === undefined || hangNext === undefined) {
            return yield* skipped("the layer provides no PayoutsRail with hangNext")
          }
          const input: SendInput = { idempotency_key: newKey(), ...wallet(freshWallet()), amount: capped(31_415n) }
          const toWallet = yield* paymentsFrom(rail, input)
          yield* hangNext(1)
          const outcome = yield* send(payouts, input)
          const what = "the send the rail never answers"
          if (outcome._tag === "Late") {
            expect.fail(
              `${what}: send must end within ${deadlineMs} ms (the engine's payout run waits on it, and its claim lapses): time the call to the rail out, then settle the payout with the rail (look the key up or send it again) before reporting`
            )
          }
          let reference: string | undefined
          if (outcome._tag === "Success") {
            reference = referenceOf(outcome, what)
            expectPaidOnce(yield* rail.paid, reference, input, what)
          } else {
            expectTypedFailure(outcome, "PayoutFailed", what)
            const paid = toWallet(yield* rail.paid)
            if (paid.length > 0) {
              expect.fail(
                `${what}: the rail paid ${show(paid)}, but send failed with PayoutFailed after its time-out: the engine takes that as "nothing paid" and keeps the dalasi in the balance (money invented); a send whose outcome is unknown must settle it with the rail (look the key up or send it again) before it reports`
              )
            }
          }
          // the engine sends the payout again under its key after a crash (the rail answering now):
          // still one payment in all
          if (!idempotent) return yield* passed
          const again = referenceOf(yield* send(payouts, input), "the same key sent again, the rail answering")
          if (reference !== undefined) {
            expect(again, "the same key sent again answers the reference of what the rail paid").toBe(reference)
          }
          expectPaidOnce(yield* rail.paid, again, input, "the key sent again")
          expect(toWallet(yield* rail.paid), "one payment for the key in all").toHaveLength(1)
          return yield* passed
        })
    )
  ]
}

/** Registers the Payouts conformance suite as a vitest `describe` block. `makeLayer` builds the adapter afresh. */
export const payoutsConformance = (
  name: string,
  makeLayer: () => Layer.Layer<Payouts, unknown>,
  options?: PayoutsConformanceOptions
): void =>
  registerChecks(`Payouts conformance: ${name}`, withoutOmitted(payoutsChecks(options), options?.omit), makeLayer)
