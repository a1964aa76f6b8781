import { type Delivery, DeliveryFailed, Notifier } from "@xaalis/engine"
import { Context, Duration, Effect, Layer } from "effect"
import { describe, it } from "vitest"
import { type Arrival, NotifierHarness, notifierChecks, type ReceiverAnswer } from "../src/index.ts"
import { checkAbout, expectAllPass, expectCheckFails } from "./port-detects.ts"

/**
 * The Notifier suite must catch broken adapters. The fake below is an
 * in-process transport (receivers that record what arrives and answer with a
 * status, or never) and a sound notifier over it, with a 100 ms deadline per
 * attempt; each mutant breaks one promise of the port's contract.
 */

interface Transport {
  /** One attempt reaching `url`: the receiver records `arrival` and answers its status (never, for a hang). */
  readonly post: (url: string, arrival: Arrival) => Effect.Effect<number, DeliveryFailed>
}

type Deliver = (delivery: Delivery) => Effect.Effect<void, DeliveryFailed>
type Mutation = (transport: Transport, sound: Deliver) => Deliver

const utf8 = new TextEncoder()
const failed = (message: string) => new DeliveryFailed({ message })
const arrivalOf = (d: Delivery): Arrival => ({ event_id: d.event_id, body: utf8.encode(d.body) })
const judge = (status: number) => (status >= 200 && status < 300 ? Effect.void : Effect.fail(failed(`HTTP ${status}`)))

const fake =
  (mutate: Mutation = (_, sound) => sound) =>
  () =>
    Layer.effectContext(
      Effect.sync(() => {
        const receivers = new Map<string, { answer: ReceiverAnswer; readonly arrivals: Array<Arrival> }>()
        let n = 0
        const transport: Transport = {
          post: (url, arrival) =>
            Effect.suspend(() => {
              const receiver = receivers.get(url)
              if (receiver === undefined) return Effect.fail(failed("connection refused"))
              receiver.arrivals.push(arrival)
              const { answer } = receiver
              return answer._tag === "Hang" ? Effect.never : Effect.succeed(answer.status)
            })
        }
        const sound: Deliver = (d) =>
          Effect.flatMap(transport.post(d.url, arrivalOf(d)), judge).pipe(
            Effect.timeoutOrElse({ duration: Duration.millis(100), orElse: () => Effect.fail(failed("timed out")) })
          )
        const harness = NotifierHarness.of({
          business: Effect.succeed("biz_detects"),
          canHang: true,
          unreachable: Effect.succeed("https://nobody.example/hooks"),
          receiver: Effect.sync(() => {
            const url = `https://receiver-${++n}.example/hooks`
            const receiver = {
              answer: { _tag: "Accept", status: 200 } as ReceiverAnswer,
              arrivals: [] as Array<Arrival>
            }
            receivers.set(url, receiver)
            return {
              url,
              answer: (answer) =>
                Effect.sync(() => {
                  receiver.answer = answer
                }),
              arrivals: Effect.sync(() => [...receiver.arrivals])
            }
          })
        })
        return Context.make(Notifier, Notifier.of({ deliver: mutate(transport, sound) })).pipe(
          Context.add(NotifierHarness, harness)
        )
      })
    )

const checks = notifierChecks({ seed: 3, deadlineMs: 2_000 })
const accepted = checkAbout(checks, "an accepted delivery succeeds")
const tricky = checkAbout(checks, "re-serialisation")
const successes = checkAbout(checks, "every 2xx")
const refusals = checkAbout(checks, "a refusal")
const retries = checkAbout(checks, "the attempts of one event")
const atOnce = checkAbout(checks, "deliveries at once")
const hang = checkAbout(checks, "never answers")
const unreachable = checkAbout(checks, "unreachable")

/** Posts `d` with its arrival changed by `f`, judged as the sound notifier does. */
const posting =
  (f: (d: Delivery) => Arrival): Mutation =>
  (transport) =>
  (d) =>
    Effect.flatMap(transport.post(d.url, f(d)), judge)

describe("the Notifier suite catches broken notifiers", () => {
  it("the sound fake passes every check", () => expectAllPass(checks, fake()))

  it("a notifier that drops the event id", async () => {
    const drops = posting((d) => ({ ...arrivalOf(d), event_id: undefined }))
    await expectCheckFails(accepted, fake(drops), /the event id arrived unchanged/)
    await expectCheckFails(retries, fake(drops), /the event id arrived unchanged/)
  })

  it("a notifier that makes a new event id per attempt", () =>
    expectCheckFails(
      retries,
      fake(posting((d) => ({ ...arrivalOf(d), event_id: globalThis.crypto.randomUUID() }))),
      /the event id arrived unchanged/
    ))

  it("a notifier that re-serialises the body (JSON.parse, then JSON.stringify)", () =>
    expectCheckFails(
      tricky,
      fake(posting((d) => ({ ...arrivalOf(d), body: utf8.encode(JSON.stringify(JSON.parse(d.body))) }))),
      /the body arrived changed/
    ))

  it("a notifier that encodes the body as Latin-1", async () => {
    const latin1 = posting((d) => ({ ...arrivalOf(d), body: Uint8Array.from(d.body, (c) => c.charCodeAt(0) & 0xff) }))
    await expectCheckFails(accepted, fake(latin1), /the body arrived changed/)
    await expectCheckFails(tricky, fake(latin1), /the body arrived changed/)
  })

  it("a notifier that retries by itself", () =>
    expectCheckFails(
      refusals,
      fake((_, sound) => (d) => Effect.retry(sound(d), { times: 2 })),
      /attempts that reached the receiver for one deliver call/
    ))

  it("a notifier that reports success whatever the receiver answered (fire and forget)", () =>
    expectCheckFails(
      refusals,
      fake((_, sound) => (d) => Effect.catch(sound(d), () => Effect.void)),
      /expected a DeliveryFailed, but the call succeeded/
    ))

  it("a notifier that takes 3xx for success (a redirect is not acceptance)", () =>
    expectCheckFails(
      refusals,
      fake(
        (transport) => (d) =>
          Effect.flatMap(transport.post(d.url, arrivalOf(d)), (s) => (s < 400 ? Effect.void : judge(s)))
      ),
      /answering 301: expected a DeliveryFailed/
    ))

  it("a notifier that takes only 200 for success", () =>
    expectCheckFails(
      successes,
      fake(
        (transport) => (d) => Effect.flatMap(transport.post(d.url, arrivalOf(d)), (s) => judge(s === 200 ? 200 : 500))
      ),
      /answered 201: expected a success/
    ))

  it("a notifier that dies on a refusal, or on an unreachable receiver", async () => {
    await expectCheckFails(
      refusals,
      fake(
        (transport) => (d) =>
          Effect.flatMap(transport.post(d.url, arrivalOf(d)), (s) =>
            s < 300
              ? Effect.void
              : Effect.sync(() => {
                  throw new Error(`unexpected status ${s}`)
                })
          )
      ),
      /died/
    )
    await expectCheckFails(
      unreachable,
      fake((_, sound) => (d) => Effect.orDie(sound(d))),
      /died/
    )
  })

  it("a notifier without a deadline on the attempt", () =>
    expectCheckFails(
      hang,
      fake((transport) => (d) => Effect.flatMap(transport.post(d.url, arrivalOf(d)), judge)),
      /had not ended after 2000 ms/
    ))

  it("a notifier that mixes up concurrent deliveries (one shared buffer)", () =>
    expectCheckFails(
      atOnce,
      fake((transport) => {
        let current: Delivery | undefined
        return (d) =>
          Effect.gen(function* () {
            current = d
            yield* Effect.yieldNow
            const sending = current as Delivery
            yield* Effect.flatMap(transport.post(d.url, arrivalOf(sending)), judge)
          })
      }),
      /with its event id arrived|the event id arrived unchanged|body arrived changed/
    ))
})
