import * as net from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Businesses, DeliveryFailed, Dispatcher, type Notifier, type Outbox } from "@xaalis/engine"
import { verify, type WebhookEventName } from "@xaalis/webhooks"
import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { Webhook } from "standardwebhooks"
import { HttpNotifier } from "../src/notifier/index.ts"
import {
  type Answer,
  body,
  closedPort,
  createBusiness,
  delivery,
  fixedLookup,
  type Received,
  startReceiver,
  storeLayer,
  tls,
  waitFor
} from "./notifier-helpers.ts"

// The engine's event names and the receivers' library agree, both ways.
const _engineToLibrary: WebhookEventName = "ramp.paid" as Outbox.EventName
const _libraryToEngine: Outbox.EventName = "ramp.paid" as WebhookEventName
void [_engineToLibrary, _libraryToEngine]

const ok: Answer = { status: 200 }

/** A business, and the HTTP notifier built with `options`. */
const setup = (options: HttpNotifier.HttpNotifierOptions = {}) =>
  Effect.gen(function* () {
    const business = yield* createBusiness
    const notifier = yield* HttpNotifier.make(options)
    return { business, notifier }
  })

/** The DeliveryFailed message of an attempt that must fail. */
const failure = (notifier: Notifier["Service"], d: Parameters<Notifier["Service"]["deliver"]>[0]) =>
  Effect.gen(function* () {
    const error = yield* Effect.flip(notifier.deliver(d))
    assert.instanceOf(error, DeliveryFailed)
    return error.message
  })

const plainHeaders = (r: Received): Record<string, string> =>
  Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]))

describe("HttpNotifier: a delivery", () => {
  it.effect("arrives with the exact body and headers, and verifies with both schemes", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      const before = Math.floor(Date.now() / 1000)
      yield* notifier.deliver(delivery(business.id, receiver.url("/hooks?src=xaalis")))
      const after = Math.floor(Date.now() / 1000)

      assert.strictEqual(receiver.received.length, 1)
      const r = receiver.received[0]!
      assert.strictEqual(r.method, "POST")
      assert.strictEqual(r.path, "/hooks?src=xaalis")
      assert.isTrue(r.body.equals(Buffer.from(body, "utf8")), "body byte for byte")
      assert.strictEqual(r.headers["content-type"], "application/json")
      assert.strictEqual(r.headers["content-length"], String(Buffer.byteLength(body)))
      assert.strictEqual(r.headers["user-agent"], "xaalis-webhooks/0.1")
      assert.strictEqual(r.headers["webhook-id"], "4b0d1c9e-8f7a-4d2b-9a61-3c5e2f1a0b7d")
      // the real wall-clock time, although the effect Clock of this test (TestClock) is at 0
      const timestamp = Number(r.headers["webhook-timestamp"])
      assert.isTrue(timestamp >= before && timestamp <= after, `webhook-timestamp ${timestamp}`)

      const secret = business.webhook_secret
      const expected = { event: "ramp.paid", payload: JSON.parse(body).payload }
      assert.deepStrictEqual(verify(r.body, r.headers, secret, { scheme: "standard" }), expected)
      assert.deepStrictEqual(verify(r.body, r.headers, secret, { scheme: "service" }), expected)
      assert.deepStrictEqual(new Webhook(secret).verify(r.body.toString("utf8"), plainHeaders(r)), JSON.parse(body))
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect(
    "after a secret roll: both secrets sign during the grace period (on the engine clock), then the new one alone",
    () =>
      Effect.gen(function* () {
        const receiver = yield* startReceiver(() => ok)
        const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
        const old = business.webhook_secret
        const rolled = yield* Businesses.rollWebhookSecret({ business_id: business.id, expires_in_seconds: 3600 })
        const fresh = rolled.webhook_secret
        assert.notStrictEqual(fresh, old)
        const expected = { event: "ramp.paid", payload: JSON.parse(body).payload }

        yield* notifier.deliver(delivery(business.id, receiver.url("/hooks")))
        const during = receiver.received[0]!
        assert.strictEqual(String(during.headers["webhook-signature"]).split(" ").length, 2)
        // a receiver that knows only the old secret verifies both schemes; one that has the new one, the standard one
        assert.deepStrictEqual(verify(during.body, during.headers, old, { scheme: "standard" }), expected)
        assert.deepStrictEqual(verify(during.body, during.headers, old, { scheme: "service" }), expected)
        assert.deepStrictEqual(verify(during.body, during.headers, fresh, { scheme: "standard" }), expected)
        assert.deepStrictEqual(
          new Webhook(fresh).verify(during.body.toString("utf8"), plainHeaders(during)),
          JSON.parse(body)
        )
        assert.deepStrictEqual(
          new Webhook(old).verify(during.body.toString("utf8"), plainHeaders(during)),
          JSON.parse(body)
        )

        yield* TestClock.adjust("3600 seconds")
        yield* notifier.deliver(delivery(business.id, receiver.url("/hooks")))
        const after = receiver.received[1]!
        assert.strictEqual(String(after.headers["webhook-signature"]).split(" ").length, 1)
        assert.deepStrictEqual(verify(after.body, after.headers, fresh, { scheme: "standard" }), expected)
        assert.deepStrictEqual(verify(after.body, after.headers, fresh, { scheme: "service" }), expected)
        for (const scheme of ["standard", "service"] as const) {
          assert.throws(() => verify(after.body, after.headers, old, { scheme }), /signature/i)
        }
      }).pipe(Effect.provide(storeLayer))
  )

  it.effect("after an immediate secret roll (a leaked secret): the old secret signs nothing more", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      const rolled = yield* Businesses.rollWebhookSecret({ business_id: business.id })
      yield* notifier.deliver(delivery(business.id, receiver.url("/hooks")))
      const r = receiver.received[0]!
      assert.strictEqual(String(r.headers["webhook-signature"]).split(" ").length, 1)
      assert.strictEqual(verify(r.body, r.headers, rolled.webhook_secret, { scheme: "service" }).event, "ramp.paid")
      for (const scheme of ["standard", "service"] as const) {
        assert.throws(() => verify(r.body, r.headers, business.webhook_secret, { scheme }), /signature/i)
      }
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("accepts any 2xx", () =>
    Effect.gen(function* () {
      const statuses = [200, 201, 202, 204, 299]
      const receiver = yield* startReceiver((_, i) => ({ status: statuses[i]! }))
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      for (const _ of statuses) yield* notifier.deliver(delivery(business.id, receiver.url()))
      assert.strictEqual(receiver.received.length, statuses.length)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("ignores a large response body", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ status: 200, body: "x".repeat(1024 * 1024) }))
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      yield* notifier.deliver(delivery(business.id, receiver.url()))
      assert.strictEqual(receiver.received.length, 1)
    }).pipe(Effect.provide(storeLayer))
  )
})

describe("HttpNotifier: failed attempts", () => {
  it.effect("a non-2xx answer is DeliveryFailed with its status", () =>
    Effect.gen(function* () {
      const statuses = [500, 503, 404, 400, 418]
      const receiver = yield* startReceiver((_, i) => ({ status: statuses[i]!, body: "internal details" }))
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      for (const status of statuses) {
        assert.strictEqual(yield* failure(notifier, delivery(business.id, receiver.url())), `HTTP ${status}`)
      }
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("a receiver that does not answer in time is DeliveryFailed", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => "hang")
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true, timeoutMs: 300 })
      assert.strictEqual(yield* failure(notifier, delivery(business.id, receiver.url())), "timed out after 300 ms")
      assert.strictEqual(receiver.received.length, 1)
      // the connection is cut, not left open
      yield* waitFor(() => receiver.closed() === 1)
      assert.strictEqual(receiver.closed(), 1)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("a refused connection is DeliveryFailed", () =>
    Effect.gen(function* () {
      const port = yield* closedPort
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      const message = yield* failure(notifier, delivery(business.id, `http://127.0.0.1:${port}/hooks`))
      assert.strictEqual(message, "connection refused")
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("a redirect is not followed: the target sees nothing", () =>
    Effect.gen(function* () {
      const target = yield* startReceiver(() => ok)
      const statuses = [302, 301, 303, 307, 308]
      const receiver = yield* startReceiver((_, i) => ({
        status: statuses[i]!,
        headers: { location: target.url("/elsewhere") }
      }))
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      for (const status of statuses) {
        const message = yield* failure(notifier, delivery(business.id, receiver.url()))
        assert.strictEqual(message, `HTTP ${status} (redirects are not followed)`)
      }
      assert.strictEqual(receiver.received.length, statuses.length)
      assert.strictEqual(target.received.length, 0)
      assert.strictEqual(target.connections(), 0)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("an unknown business or an invalid URL is DeliveryFailed, without calling anyone", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      assert.strictEqual(yield* failure(notifier, delivery("no-such-business", receiver.url())), "business not found")
      assert.strictEqual(yield* failure(notifier, delivery(business.id, "not a url")), "refused: invalid URL")
      assert.strictEqual(
        yield* failure(notifier, delivery(business.id, "ftp://127.0.0.1/x")),
        "refused: unsupported URL scheme"
      )
      assert.strictEqual(receiver.connections(), 0)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("failure messages never carry the secret, the URL or the resolved address", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ({ status: 500 }))
      const port = yield* closedPort
      const guard = fixedLookup("10.1.2.3")
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true, lookup: guard.lookup })
      const messages = [
        yield* failure(notifier, delivery(business.id, receiver.url("/secret-path"))),
        yield* failure(notifier, delivery(business.id, `http://127.0.0.1:${port}/secret-path`)),
        yield* failure(notifier, delivery(business.id, "https://internal.example/secret-path"))
      ]
      assert.deepStrictEqual(messages, ["HTTP 500", "connection refused", "refused: resolves to a private address"])
      for (const m of messages) {
        assert.notInclude(m, business.webhook_secret.slice(6))
        assert.notInclude(m, "secret-path")
        assert.notInclude(m, "10.1.2.3")
        assert.notInclude(m, String(port))
      }
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect(
    "a receiver answering 101 Switching Protocols, or closing without an answer, fails the attempt at once",
    () =>
      Effect.gen(function* () {
        const answers = [
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
          "HTTP/1.1 101 Switching Protocols\r\n\r\n",
          undefined // the connection ends with no answer
        ]
        let served = 0
        const server = yield* Effect.acquireRelease(
          Effect.callback<net.Server>((resume) => {
            const s = net.createServer((socket) => {
              const answer = answers[served++]
              socket.once("data", () => (answer === undefined ? socket.end() : socket.write(answer)))
              socket.on("error", () => {})
            })
            s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
          }),
          (s) =>
            Effect.callback<void>((resume) => {
              s.close(() => resume(Effect.void))
            })
        )
        const url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/hooks`
        // the default 10 s deadline: the test's own 5 s limit fails it if an attempt waits for the deadline
        const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
        const messages = [
          yield* failure(notifier, delivery(business.id, url)),
          yield* failure(notifier, delivery(business.id, url)),
          yield* failure(notifier, delivery(business.id, url))
        ]
        assert.deepStrictEqual(messages, [
          "HTTP 101 (protocol switches are refused)",
          "HTTP 101", // without Upgrade, node reads it as an answer like any other non-2xx
          "connection reset"
        ])
      }).pipe(Effect.provide(storeLayer), Effect.scoped)
  )

  it.effect("an interrupted attempt closes its connection", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => "hang")
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      const fiber = yield* Effect.forkChild(notifier.deliver(delivery(business.id, receiver.url())))
      yield* Effect.promise(() => receiver.arrived(1))
      assert.strictEqual(receiver.closed(), 0)
      yield* Fiber.interrupt(fiber)
      yield* waitFor(() => receiver.closed() === 1)
      assert.strictEqual(receiver.closed(), 1)
    }).pipe(Effect.provide(storeLayer))
  )
})

describe("HttpNotifier: SSRF guard", () => {
  it.effect("refuses plain http in live mode, and in test mode outside the sandbox", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      const { business, notifier } = yield* setup()
      assert.strictEqual(
        yield* failure(notifier, delivery(business.id, receiver.url())),
        "refused: live deliveries must use https"
      )
      assert.strictEqual(
        yield* failure(notifier, delivery(business.id, "http://hooks.example/x", { mode: "test" })),
        "refused: test deliveries must use https"
      )
      assert.strictEqual(receiver.connections(), 0)
    }).pipe(Effect.provide(storeLayer))
  )

  const refused: ReadonlyArray<readonly [string, string]> = [
    ["10.0.0.1", "a private address"],
    ["192.168.1.1", "a private address"],
    ["172.16.0.1", "a private address"],
    ["127.0.0.1", "a loopback address"],
    ["::1", "a loopback address"],
    ["fe80::1", "a link-local address"],
    ["169.254.169.254", "a cloud metadata address"],
    ["fd00:ec2::254", "a cloud metadata address"],
    ["::ffff:10.0.0.1", "a private address"],
    ["::ffff:169.254.169.254", "a cloud metadata address"],
    ["100.64.0.1", "a shared (CGNAT) address"],
    ["0.0.0.0", "an unspecified address"],
    ["224.0.0.251", "a multicast address"],
    ["fc00::1", "a private address"]
  ]

  it.effect("refuses https hosts resolving to private and special addresses, before connecting", () =>
    Effect.gen(function* () {
      // A receiver on loopback: had the guard let the connection through, it would count it.
      const receiver = yield* startReceiver(() => ok, { https: true })
      for (const mode of ["live", "test"] as const) {
        for (const [address, category] of refused) {
          const guard = fixedLookup(address)
          const { business, notifier } = yield* setup({ lookup: guard.lookup, ca: tls.ca })
          const url = receiver.url("/hooks", "receiver.test")
          const message = yield* failure(notifier, delivery(business.id, url, { mode }))
          assert.strictEqual(message, `refused: resolves to ${category}`, `${mode} ${address}`)
          assert.deepStrictEqual(guard.calls, ["receiver.test"])
        }
      }
      assert.strictEqual(receiver.connections(), 0)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("refuses IP literals without a lookup, including IPv4-mapped and alternative spellings", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok, { https: true })
      const guard = fixedLookup("93.184.215.14")
      const { business, notifier } = yield* setup({ lookup: guard.lookup })
      const urls: ReadonlyArray<readonly [string, string]> = [
        [`https://127.0.0.1:${receiver.port}/`, "a loopback address"],
        [`https://[::1]:${receiver.port}/`, "a loopback address"],
        [`https://[::ffff:127.0.0.1]:${receiver.port}/`, "a loopback address"],
        [`https://2130706433:${receiver.port}/`, "a loopback address"],
        [`https://0x7f.1:${receiver.port}/`, "a loopback address"],
        ["https://10.0.0.1/", "a private address"],
        ["https://[::ffff:a00:1]/", "a private address"],
        ["https://169.254.169.254/latest/meta-data/", "a cloud metadata address"],
        ["https://[fe80::1]/", "a link-local address"],
        ["https://[64:ff9b::a00:1]/", "a private address"]
      ]
      for (const [url, category] of urls) {
        assert.strictEqual(
          yield* failure(notifier, delivery(business.id, url)),
          `refused: resolves to ${category}`,
          url
        )
      }
      assert.deepStrictEqual(guard.calls, [])
      assert.strictEqual(receiver.connections(), 0)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("refuses a host when any of its addresses is refused", () =>
    Effect.gen(function* () {
      const guard = fixedLookup("93.184.215.14", "10.0.0.1")
      const { business, notifier } = yield* setup({ lookup: guard.lookup })
      const message = yield* failure(notifier, delivery(business.id, "https://mixed.example/hooks"))
      assert.strictEqual(message, "refused: resolves to a private address")
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("reports a failed lookup", () =>
    Effect.gen(function* () {
      const lookup = async () => {
        throw Object.assign(new Error("getaddrinfo ENOTFOUND nowhere.example"), { code: "ENOTFOUND" })
      }
      const { business, notifier } = yield* setup({ lookup })
      assert.strictEqual(
        yield* failure(notifier, delivery(business.id, "https://nowhere.example/")),
        "DNS lookup failed"
      )
      const empty = yield* HttpNotifier.make({ lookup: async () => [] })
      assert.strictEqual(yield* failure(empty, delivery(business.id, "https://nowhere.example/")), "DNS lookup failed")
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("allowLoopbackHttp: plain http to a host resolving to loopback is delivered, in both modes", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      for (const address of ["127.0.0.1", "::ffff:127.0.0.1"]) {
        const guard = fixedLookup(address)
        const { business, notifier } = yield* setup({ allowLoopbackHttp: true, lookup: guard.lookup })
        // receiver.test is in no DNS: the connection goes to the address the guard vetted
        yield* notifier.deliver(delivery(business.id, receiver.url("/hooks", "receiver.test"), { mode: "live" }))
        yield* notifier.deliver(delivery(business.id, receiver.url("/hooks", "receiver.test"), { mode: "test" }))
        assert.deepStrictEqual(guard.calls, ["receiver.test", "receiver.test"])
      }
      assert.strictEqual(receiver.received.length, 4)
      assert.strictEqual(receiver.received[0]!.headers.host, `receiver.test:${receiver.port}`)
      // and to the loopback IP literals themselves
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true })
      yield* notifier.deliver(delivery(business.id, receiver.url()))
      assert.strictEqual(receiver.received.length, 5)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("allowLoopbackHttp keeps every other range refused, and plain http only to loopback", () =>
    Effect.gen(function* () {
      for (const [address, expected] of [
        ["10.0.0.1", "refused: resolves to a private address"],
        ["169.254.169.254", "refused: resolves to a cloud metadata address"],
        ["fe80::1", "refused: resolves to a link-local address"],
        ["93.184.215.14", "refused: plain http is allowed only to loopback"],
        ["2606:2800:21f:cb07:6820:80da:af6b:8b2c", "refused: plain http is allowed only to loopback"]
      ] as const) {
        const guard = fixedLookup(address)
        const { business, notifier } = yield* setup({ allowLoopbackHttp: true, lookup: guard.lookup })
        assert.strictEqual(yield* failure(notifier, delivery(business.id, "http://hooks.example/")), expected, address)
        if (!expected.includes("plain http")) {
          const https = yield* failure(notifier, delivery(business.id, "https://hooks.example/"))
          assert.strictEqual(https, expected, `https ${address}`)
        }
      }
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("pins the vetted address: a second answer of the resolver (DNS rebinding) is never used", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok)
      const answers = ["127.0.0.1", "10.0.0.1"]
      let calls = 0
      const lookup = async () => [{ address: answers[Math.min(calls++, 1)]!, family: 4 as const }]
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true, lookup })
      yield* notifier.deliver(delivery(business.id, receiver.url("/hooks", "rebind.example")))
      assert.strictEqual(calls, 1)
      assert.strictEqual(receiver.received.length, 1)
      // the next attempt resolves afresh, and is refused
      const message = yield* failure(notifier, delivery(business.id, receiver.url("/hooks", "rebind.example")))
      assert.strictEqual(message, "refused: resolves to a private address")
      assert.strictEqual(receiver.received.length, 1)
    }).pipe(Effect.provide(storeLayer))
  )

  it.effect("https to a pinned address still verifies the certificate against the host name", () =>
    Effect.gen(function* () {
      const receiver = yield* startReceiver(() => ok, { https: true })
      const guard = fixedLookup("127.0.0.1")
      const { business, notifier } = yield* setup({ allowLoopbackHttp: true, lookup: guard.lookup, ca: tls.ca })
      yield* notifier.deliver(delivery(business.id, receiver.url("/hooks", "receiver.test")))
      assert.strictEqual(receiver.received.length, 1)
      assert.strictEqual(receiver.received[0]!.servername, "receiver.test")
      assert.deepStrictEqual(
        verify(receiver.received[0]!.body, receiver.received[0]!.headers, business.webhook_secret).event,
        "ramp.paid"
      )

      const wrongName = yield* failure(notifier, delivery(business.id, receiver.url("/hooks", "other.test")))
      assert.strictEqual(wrongName, "TLS error (ERR_TLS_CERT_ALTNAME_INVALID)")
      const untrusted = yield* HttpNotifier.make({ allowLoopbackHttp: true, lookup: guard.lookup })
      const message = yield* failure(untrusted, delivery(business.id, receiver.url("/hooks", "receiver.test")))
      assert.match(message, /^TLS error \([A-Z_]+\)$/)
      assert.strictEqual(receiver.received.length, 1)
    }).pipe(Effect.provide(storeLayer))
  )
})

describe("HttpNotifier: options", () => {
  it.effect("refuses a time-out that is not positive, or not below the dispatcher's claim, when built", () =>
    Effect.gen(function* () {
      for (const timeoutMs of [0, -1, 1.5, Dispatcher.claim_ms]) {
        const exit = yield* Effect.exit(HttpNotifier.make({ timeoutMs }))
        assert.isTrue(exit._tag === "Failure", String(timeoutMs))
      }
      const exit = yield* Effect.exit(HttpNotifier.make({ timeoutMs: Dispatcher.claim_ms - 1 }))
      assert.isTrue(exit._tag === "Success")
    }).pipe(Effect.provide(storeLayer))
  )
})
