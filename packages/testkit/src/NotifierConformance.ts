/**
 * The Notifier conformance suite: what the engine's outbox dispatcher relies on
 * from a `Notifier` adapter (the contract in the port's doc comment), checked
 * on yours. The suite must see what arrives and decide how the receiver
 * answers, so the layer provides a `NotifierHarness` next to the `Notifier`:
 *
 * ```ts
 * import { notifierConformance } from "@xaalis/testkit"
 * notifierConformance("my notifier", () => myHarness.pipe(Layer.provideMerge(MyNotifier.layer())), { deadlineMs: 5_000 })
 * ```
 *
 * Checks, on a fresh build of the layer each (the layer may fail to build: the
 * check fails with its error). Every `deliver` must end within `deadlineMs`
 * (default 60 s, well under `Dispatcher.claim_ms`, 5 minutes) and never die (a
 * defect would fail the dispatcher's whole batch): it succeeds, or fails with
 * `DeliveryFailed`.
 * - a delivery the receiver accepts succeeds and arrives once, with the body
 *   byte for byte (its UTF-8) and the `event_id` (and, when the harness
 *   `signs`, signatures that verify over those bytes): for random event ids, modes,
 *   attempt numbers and JSON bodies (any Unicode), and for bodies a
 *   re-serialisation would change (numbers beyond a double, `73.640`, escapes,
 *   U+2028, indentation, 100 KB);
 * - every 2xx answer (200, 201, 202, 204) is a success;
 * - a refusal (3xx: redirects are not followed; 4xx; 5xx) fails with
 *   `DeliveryFailed` after exactly one attempt: a notifier never retries by
 *   itself (the dispatcher does, on its schedule);
 * - the attempts of one event (refused, refused, accepted) all carry the same
 *   `event_id` and the same bytes;
 * - deliveries at once (`Dispatcher.concurrency_max`, 8) to an accepting and a
 *   refusing receiver each get their own outcome, id and body;
 * - a receiver that never answers (when the harness `canHang`) and an
 *   unreachable one (when it gives `unreachable`) fail with `DeliveryFailed`
 *   within the deadline.
 *
 * `notifierChecks(options)` gives the same checks as plain functions.
 */

import { type Delivery, Dispatcher, type Mode, Notifier } from "@xaalis/engine"
import { Context, Effect, type Layer, type Scope } from "effect"
import fc from "fast-check"
import { expect } from "vitest"
import {
  type CheckResult,
  expectSuccess,
  expectTypedFailure,
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
 * How a receiver answers the attempts that reach it. `status` is the HTTP
 * status for an HTTP transport (a transport without statuses ignores it).
 */
export type ReceiverAnswer =
  | { readonly _tag: "Accept"; readonly status: number }
  | { readonly _tag: "Reject"; readonly status: number }
  /** Never answers (only asked of a harness that `canHang`). */
  | { readonly _tag: "Hang" }

/** One attempt as the receiver got it. */
export interface Arrival {
  /** The event id the receiver read (HTTP: the `webhook-id` header); `undefined` when none came. */
  readonly event_id: string | undefined
  /** The body as it arrived: bytes, or the text of an in-process transport. */
  readonly body: Uint8Array | string
  /**
   * Whether the attempt's signatures verify, as a receiver checks them: over
   * the body as it arrived, with the business's webhook secret (HTTP: both
   * schemes of `verify` from `@xaalis/webhooks`, on the raw body and the
   * headers). Required when the harness `signs`; leave it out for a transport
   * that does not sign.
   */
  readonly signature_valid?: boolean | undefined
}

/** A receiver the suite delivers to. */
export interface NotifierReceiver {
  /** The URL of deliveries that reach this receiver. */
  readonly url: string
  /** How the receiver answers from now on (a new receiver accepts with 200). */
  readonly answer: (answer: ReceiverAnswer) => Effect.Effect<void, unknown>
  /** Every attempt that reached this receiver so far, in order, whatever it answered. */
  readonly arrivals: Effect.Effect<ReadonlyArray<Arrival>, unknown>
}

/** What the suite needs next to the Notifier under test (sharing its state: its store, its transport). */
export class NotifierHarness extends Context.Service<
  NotifierHarness,
  {
    /** A business the notifier delivers for (created where it reads it, e.g. the HTTP notifier's webhook secret). */
    readonly business: Effect.Effect<string, unknown>
    /** A new receiver, closed when the scope closes; it accepts with 200 until told otherwise. */
    readonly receiver: Effect.Effect<NotifierReceiver, unknown, Scope.Scope>
    /** Whether receivers can `Hang` (never answer). */
    readonly canHang: boolean
    /**
     * The notifier signs what it sends (an HTTP notifier does): every arrival
     * must then report `signature_valid`, and it must be true. A notifier that
     * signs other bytes than it sends (a re-serialised body) fails every
     * receiver's check; only a harness that verifies lets the suite see it.
     */
    readonly signs?: boolean | undefined
    /** Optional: a URL nothing answers at (HTTP: a closed port), valid for as long as the scope. */
    readonly unreachable?: Effect.Effect<string, unknown, Scope.Scope> | undefined
  }
>()("@xaalis/testkit/NotifierHarness") {}

export interface NotifierConformanceOptions extends PortSuiteOptions {
  /** Longest one `deliver` may take, ms (default 60 000: well under `Dispatcher.claim_ms`, 5 minutes). */
  readonly deadlineMs?: number | undefined
  /** vitest timeout of each check, ms (default 60 s plus twice the deadline). */
  readonly timeout?: number | undefined
}

type NotifierShape = (typeof Notifier)["Service"]
type Harness = NotifierHarness["Service"]

const EVENTS = ["ramp.paid", "ramp.underpaid", "charge.succeeded", "transfer.succeeded", "payment_intent.created"]

const accept = (status = 200): ReceiverAnswer => ({ _tag: "Accept", status })
const reject = (status: number): ReceiverAnswer => ({ _tag: "Reject", status })

/** Statuses that are not acceptance: redirects (never followed), client and server errors. */
const REFUSALS = [301, 302, 307, 400, 401, 403, 404, 409, 410, 413, 422, 429, 500, 502, 503, 504]
const SUCCESSES = [200, 201, 202, 204]

/** Bodies a re-serialisation or a re-encoding would change. */
const trickyBodies: ReadonlyArray<readonly [label: string, body: string]> = [
  [
    "numbers a double cannot hold, trailing zeros, exponents",
    '{"event":"ramp.paid","payload":{"actually_paid":12345678901234567890.123456789,"rate":73.640,"fee":1E-7,"n":-0}}'
  ],
  [
    "escapes a parser would decode",
    '{"event":"ramp.paid","payload":{"note":"caf\\u00e9 \\ud83d\\udcb8 \\/ \\u2028","empty":""}}'
  ],
  [
    "raw Unicode: accents, astral, combining marks, U+2028 and U+2029",
    `{"event":"ramp.paid","payload":{"note":"dalasi é ✓ 💸 Ŋ e\u0301 \u2028 \u2029 中文"}}`
  ],
  [
    "indentation with tabs and CRLF, duplicate keys",
    '{\r\n\t"event" : "ramp.paid",\r\n\t"payload" : { "id" : "a", "id" : "b" }\r\n}\r\n'
  ],
  ["100 KB", JSON.stringify({ event: "ramp.paid", payload: { blob: "xaalis ✓ 💸 ".repeat(8_000) } })]
]

const utf8 = new TextEncoder()

const bytesOf = (body: Uint8Array | string): Uint8Array => (typeof body === "string" ? utf8.encode(body) : body)

/** Where two byte strings first differ, or -1. */
const firstDifference = (a: Uint8Array, b: Uint8Array): number => {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i
  return a.length === b.length ? -1 : n
}

/** One arrival is the delivery's event id and exact body, signed over those bytes when the notifier `signs`. */
const expectArrivalOf = (arrival: Arrival | undefined, delivery: Delivery, what: string, signs: boolean): void => {
  expect(arrival, `${what}: an attempt reached the receiver`).toBeDefined()
  const got = arrival as Arrival
  expect(got.event_id, `${what}: the event id arrived unchanged`).toBe(delivery.event_id)
  if (signs) {
    expect(
      got.signature_valid,
      `${what}: the signature verifies over the body as it arrived, with the business's webhook secret (the harness signs: it must report signature_valid)`
    ).toBe(true)
  } else if (got.signature_valid !== undefined) {
    expect(got.signature_valid, `${what}: the signature verifies over the body as it arrived`).toBe(true)
  }
  const want = utf8.encode(delivery.body)
  const have = bytesOf(got.body)
  const at = firstDifference(want, have)
  if (at !== -1) {
    const around = (b: Uint8Array) => show(new TextDecoder().decode(b.subarray(Math.max(0, at - 20), at + 20)))
    expect.fail(
      `${what}: the body arrived changed (${have.length} bytes for ${want.length}; first difference at byte ${at}: ${around(have)} for ${around(want)})`
    )
  }
}

/** The checks of the suite, to run outside `notifierConformance` (e.g. to show that a broken adapter fails them). */
export const notifierChecks = (
  options?: NotifierConformanceOptions
): ReadonlyArray<PortCheck<Notifier | NotifierHarness>> => {
  const deadlineMs = options?.deadlineMs ?? 60_000
  if (!(deadlineMs > 0 && deadlineMs < Dispatcher.claim_ms)) {
    throw new RangeError(`deadlineMs must be positive and below Dispatcher.claim_ms (${Dispatcher.claim_ms} ms)`)
  }
  const timeout = options?.timeout ?? 60_000 + 2 * deadlineMs

  const deliver = (notifier: NotifierShape, delivery: Delivery) =>
    outcomeOf(() => notifier.deliver(delivery), deadlineMs)

  const check = (
    title: string,
    body: (
      notifier: NotifierShape,
      harness: Harness,
      business_id: string
    ) => Effect.Effect<CheckResult, unknown, Scope.Scope>
  ): PortCheck<Notifier | NotifierHarness> => ({
    title,
    timeout,
    run: (makeLayer) =>
      runCheck(
        makeLayer,
        Effect.gen(function* () {
          const notifier = yield* Notifier
          const harness = yield* NotifierHarness
          return yield* body(notifier, harness, yield* harness.business)
        })
      )
  })

  let serial = 0
  const delivery = (business_id: string, url: string, over: Partial<Delivery> = {}): Delivery => ({
    event_id: globalThis.crypto.randomUUID(),
    url,
    body: JSON.stringify({ event: "ramp.paid", payload: { id: `conv_${++serial}`, amount: 73.64 } }),
    business_id,
    mode: "live",
    attempt: 1,
    ...over
  })

  /** Delivers `d` to `receiver`, which must get exactly one attempt with `d`'s id and body; returns the outcome. */
  const attemptOnce = (
    notifier: NotifierShape,
    receiver: { readonly arrivals: NotifierReceiver["arrivals"] },
    signs: boolean
  ) =>
    Effect.fnUntraced(function* (d: Delivery, what: string) {
      const before = (yield* receiver.arrivals).length
      const outcome = yield* deliver(notifier, d)
      const arrivals = yield* receiver.arrivals
      expect(arrivals.length - before, `${what}: attempts that reached the receiver for one deliver call`).toBe(1)
      expectArrivalOf(arrivals[arrivals.length - 1], d, what, signs)
      return outcome
    })

  const bodyArb = fc
    .record({
      event: fc.constantFrom(...EVENTS),
      payload: fc.jsonValue({ stringUnit: "binary", maxDepth: 3 }),
      indent: fc.constantFrom(0, 2)
    })
    .map(({ event, payload, indent }) => JSON.stringify({ event, payload }, null, indent))

  return [
    check(
      "an accepted delivery succeeds and arrives once, with the exact body bytes and the event id",
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          const receiver = yield* harness.receiver
          const once = attemptOnce(notifier, receiver, harness.signs === true)
          yield* Effect.promise(() =>
            fc.assert(
              fc.asyncProperty(
                fc.uuid({ version: 4 }),
                bodyArb,
                fc.constantFrom<Mode>("live", "test"),
                fc.integer({ min: 1, max: 22 }),
                (event_id, body, mode, attempt) =>
                  Effect.runPromise(
                    Effect.gen(function* () {
                      const d = delivery(business_id, receiver.url, { event_id, body, mode, attempt })
                      const what = `delivery of ${show({ event_id, mode, attempt })}`
                      expectSuccess(yield* once(d, what), what)
                    })
                  )
              ),
              propertyParameters(options, 25)
            )
          )
          return yield* passed
        })
    ),
    check(
      `bodies a re-serialisation would change arrive byte for byte (${trickyBodies.length} bodies)`,
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          const receiver = yield* harness.receiver
          const once = attemptOnce(notifier, receiver, harness.signs === true)
          for (const [label, body] of trickyBodies) {
            expectSuccess(yield* once(delivery(business_id, receiver.url, { body }), label), label)
          }
          return yield* passed
        })
    ),
    check(`every 2xx answer (${SUCCESSES.join(", ")}) is a success`, (notifier, harness, business_id) =>
      Effect.gen(function* () {
        const receiver = yield* harness.receiver
        const once = attemptOnce(notifier, receiver, harness.signs === true)
        for (const status of SUCCESSES) {
          yield* receiver.answer(accept(status))
          expectSuccess(yield* once(delivery(business_id, receiver.url), `HTTP ${status}`), `answered ${status}`)
        }
        return yield* passed
      })
    ),
    check(
      `a refusal (${REFUSALS.join(", ")}) fails with DeliveryFailed after exactly one attempt, never dying`,
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          const receiver = yield* harness.receiver
          const once = attemptOnce(notifier, receiver, harness.signs === true)
          for (const status of REFUSALS) {
            yield* receiver.answer(reject(status))
            const what = `a receiver answering ${status}`
            expectTypedFailure(yield* once(delivery(business_id, receiver.url), what), "DeliveryFailed", what)
          }
          return yield* passed
        })
    ),
    check(
      "the attempts of one event (refused, refused, accepted) carry the same event id and the same bytes",
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          const receiver = yield* harness.receiver
          const once = attemptOnce(notifier, receiver, harness.signs === true)
          const first = delivery(business_id, receiver.url, { body: trickyBodies[2]![1] })
          const plan: ReadonlyArray<ReceiverAnswer> = [reject(503), reject(500), accept(200)]
          for (const [i, answer] of plan.entries()) {
            yield* receiver.answer(answer)
            const what = `attempt ${i + 1} (receiver: ${show(answer)})`
            const outcome = yield* once({ ...first, attempt: i + 1 }, what)
            if (answer._tag === "Accept") expectSuccess(outcome, what)
            else expectTypedFailure(outcome, "DeliveryFailed", what)
          }
          const ids = (yield* receiver.arrivals).map((a) => a.event_id)
          expect(ids, "every attempt carried the event id").toStrictEqual([
            first.event_id,
            first.event_id,
            first.event_id
          ])
          return yield* passed
        })
    ),
    check(
      `${Dispatcher.concurrency_max} deliveries at once to an accepting and a refusing receiver each get their own outcome, id and body`,
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          const accepting = yield* harness.receiver
          const refusing = yield* harness.receiver
          yield* refusing.answer(reject(500))
          const deliveries = Array.from({ length: Dispatcher.concurrency_max }, (_, i) =>
            delivery(business_id, i % 2 === 0 ? accepting.url : refusing.url, {
              body: JSON.stringify({ event: "ramp.paid", payload: { n: i, pad: "✓".repeat(i * 500) } }),
              mode: i % 4 < 2 ? "live" : "test"
            })
          )
          const outcomes = yield* Effect.forEach(deliveries, (d) => deliver(notifier, d), {
            concurrency: "unbounded"
          })
          for (const [i, outcome] of outcomes.entries()) {
            const what = `delivery ${i + 1} of ${deliveries.length} (to the ${i % 2 === 0 ? "accepting" : "refusing"} receiver)`
            if (i % 2 === 0) expectSuccess(outcome, what)
            else expectTypedFailure(outcome, "DeliveryFailed", what)
          }
          for (const [receiver, parity, label] of [
            [accepting, 0, "accepting"],
            [refusing, 1, "refusing"]
          ] as const) {
            const want = deliveries.filter((_, i) => i % 2 === parity)
            const arrivals = yield* receiver.arrivals
            expect(arrivals.length, `attempts that reached the ${label} receiver`).toBe(want.length)
            for (const d of want) {
              const what = `delivery ${d.event_id} at the ${label} receiver`
              const arrival = arrivals.find((a) => a.event_id === d.event_id)
              expect(arrival, `${what}: an attempt with its event id arrived`).toBeDefined()
              expectArrivalOf(arrival, d, what, harness.signs === true)
            }
          }
          return yield* passed
        })
    ),
    check(
      `a receiver that never answers fails the attempt with DeliveryFailed within ${deadlineMs} ms`,
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          if (!harness.canHang) return yield* skipped("the harness cannot make a receiver hang")
          const receiver = yield* harness.receiver
          yield* receiver.answer({ _tag: "Hang" })
          const what = "a receiver that never answers"
          expectTypedFailure(yield* deliver(notifier, delivery(business_id, receiver.url)), "DeliveryFailed", what)
          expect((yield* receiver.arrivals).length, `${what}: attempts that reached it`).toBeLessThanOrEqual(1)
          return yield* passed
        })
    ),
    check(
      `an unreachable receiver fails the attempt with DeliveryFailed within ${deadlineMs} ms`,
      (notifier, harness, business_id) =>
        Effect.gen(function* () {
          if (harness.unreachable === undefined) return yield* skipped("the harness gives no unreachable URL")
          const url = yield* harness.unreachable
          const what = "an unreachable receiver"
          expectTypedFailure(yield* deliver(notifier, delivery(business_id, url)), "DeliveryFailed", what)
          return yield* passed
        })
    )
  ]
}

/**
 * Registers the Notifier conformance suite as a vitest `describe` block.
 * `makeLayer` builds the notifier and its harness afresh.
 */
export const notifierConformance = (
  name: string,
  makeLayer: () => Layer.Layer<Notifier | NotifierHarness, unknown>,
  options?: NotifierConformanceOptions
): void =>
  registerChecks(`Notifier conformance: ${name}`, withoutOmitted(notifierChecks(options), options?.omit), makeLayer)
