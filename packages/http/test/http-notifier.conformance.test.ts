import * as net from "node:net"
import { Businesses, DeliveryFailed, type Ids, Notifier, type Store } from "@xaalis/engine"
import { NotifierHarness, notifierChecks, notifierConformance, type ReceiverAnswer, runsFromEnv } from "@xaalis/testkit"
import { sign, verify, WebhookVerificationError, type WebhookVerificationReason } from "@xaalis/webhooks"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { HttpNotifier } from "../src/notifier/index.ts"
import { type Answer, startReceiver, storeLayer } from "./notifier-helpers.ts"

/**
 * The HTTP notifier against the Notifier conformance suite: real receivers on
 * 127.0.0.1 and ephemeral ports (the sandbox's loopback relaxation), whose
 * answers the suite sets; the event id is read from `webhook-id`. A receiver
 * that never answers is cut by the notifier's 1 s time-out; the unreachable one
 * accepts each connection and drops it at once.
 */

const timeoutMs = 1_000

const toAnswer = (answer: ReceiverAnswer): Answer => (answer._tag === "Hang" ? "hang" : { status: answer.status })

/** A TCP server on 127.0.0.1 that drops every connection it accepts (closed with the scope). */
const dropping = Effect.acquireRelease(
  Effect.promise(async () => {
    const server = net.createServer((socket) => socket.destroy())
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    return server
  }),
  (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
)

/** What `verify` refuses only once the signatures checked out. */
const afterSignature: ReadonlyArray<WebhookVerificationReason> = ["invalid_body", "invalid_envelope", "unknown_event"]

/** The webhook secrets of the businesses the harness made: a receiver verifies what arrives with them. */
const secrets: Array<string> = []

const harness = Layer.effect(
  NotifierHarness,
  Effect.gen(function* () {
    // the notifier reads the business's webhook secret from the store: businesses are created there
    const context = yield* Effect.context<Store | Ids>()
    /**
     * Both signatures verify, as a receiver checks them, over the bytes that
     * arrived (the suite's bodies need not be events a receiver knows: a
     * refusal of the body after the signatures checked out still counts).
     */
    const verifies = (body: Uint8Array, headers: Record<string, string | ReadonlyArray<string> | undefined>) =>
      (["standard", "service"] as const).every((scheme) => {
        try {
          verify(body, headers, secrets, { scheme })
          return true
        } catch (e) {
          return e instanceof WebhookVerificationError && afterSignature.includes(e.reason)
        }
      })
    return NotifierHarness.of({
      business: Effect.map(Businesses.createBusiness({ name: "Conformance Corner" }), (b) => {
        secrets.push(b.webhook_secret)
        return b.id
      }).pipe(Effect.provide(context)),
      canHang: true,
      signs: true,
      receiver: Effect.gen(function* () {
        let answer: Answer = { status: 200 }
        const receiver = yield* startReceiver(() => answer)
        return {
          url: receiver.url("/hooks"),
          answer: (next: ReceiverAnswer) =>
            Effect.sync(() => {
              answer = toAnswer(next)
            }),
          arrivals: Effect.sync(() =>
            receiver.received.map((r) => {
              const id = r.headers["webhook-id"]
              const body = new Uint8Array(r.body)
              return {
                event_id: typeof id === "string" ? id : undefined,
                body,
                signature_valid: verifies(body, r.headers)
              }
            })
          )
        }
      }),
      unreachable: Effect.map(
        dropping,
        (server) => `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`
      )
    })
  })
)

const layer = () =>
  Layer.mergeAll(HttpNotifier.layer({ allowLoopbackHttp: true, timeoutMs }), harness).pipe(
    Layer.provideMerge(storeLayer)
  )

notifierConformance("HttpNotifier", layer, { deadlineMs: 5 * timeoutMs, runs: runsFromEnv(25) })

/** The HTTP notifier with each delivery changed by `change` before it goes out. */
const altered = (change: (d: Parameters<Notifier["Service"]["deliver"]>[0]) => typeof d) => () =>
  Layer.effect(
    Notifier,
    Effect.map(HttpNotifier.make({ allowLoopbackHttp: true, timeoutMs }), (inner) =>
      Notifier.of({ deliver: (d) => inner.deliver(change(d)) })
    )
  ).pipe(Layer.merge(harness), Layer.provideMerge(storeLayer))

describe("the suite sees over HTTP what the notifier sends", () => {
  const checks = notifierChecks({ deadlineMs: 5 * timeoutMs, seed: 1 })
  const about = (part: string) => checks.find((c) => c.title.includes(part))!
  const rejection = (run: Promise<unknown>) =>
    run.then(
      () => expect.fail("the check passed a broken notifier"),
      (e: unknown) => String((e as Error).message)
    )

  it("a notifier that makes a new event id per attempt fails (webhook-id is read)", async () => {
    const check = about("the attempts of one event")
    const message = await rejection(check.run(altered((d) => ({ ...d, event_id: globalThis.crypto.randomUUID() }))))
    expect(message).toMatch(/the event id arrived unchanged/)
  })

  it("a notifier that signs other bytes than it sends fails (the harness verifies as a receiver does)", async () => {
    const check = about("arrives once, with the exact body bytes")
    // sends the body's bytes as they are, signed over its re-serialisation: every receiver's check refuses it
    const signingOther = () =>
      Layer.succeed(
        Notifier,
        Notifier.of({
          deliver: (d) =>
            Effect.tryPromise({
              try: async () => {
                const signed = sign(JSON.stringify(JSON.parse(d.body)), secrets.at(-1) as string, {
                  id: d.event_id,
                  timestamp: new Date()
                })
                const res = await fetch(d.url, {
                  method: "POST",
                  body: d.body,
                  headers: { ...signed, "content-type": "application/json" }
                })
                if (!res.ok) throw new Error(`status ${res.status}`)
              },
              catch: (e) => new DeliveryFailed({ message: String(e) })
            })
        })
      ).pipe(Layer.merge(harness), Layer.provideMerge(storeLayer))
    // a property of the check fails: its counterexample's assertion is the error's cause
    const failure = await check.run(signingOther).then(
      () => expect.fail("the check passed a broken notifier"),
      (e: unknown) => e as Error
    )
    expect(String((failure.cause as Error | undefined)?.message)).toMatch(
      /the signature verifies over the body as it arrived/
    )
  })

  it("a notifier that re-serialises the body fails (the bytes are compared)", async () => {
    const check = about("re-serialisation")
    const message = await rejection(check.run(altered((d) => ({ ...d, body: JSON.stringify(JSON.parse(d.body)) }))))
    expect(message).toMatch(/the body arrived changed/)
  })
})
