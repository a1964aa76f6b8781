import { randomBytes } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type SignedHeaders,
  sign,
  type VerifyOptions,
  verify,
  type WebhookEventName,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerificationReason,
  webhookEventNames
} from "../src/index.ts"

const runs = (base: number): number => (process.env.XAALIS_DEEP === "1" ? base * 50 : base)

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`
const secret = newSecret()
const now = 1_700_000_000
const nowMs = now * 1000
const at = { now: nowMs }
const body = JSON.stringify({ event: "charge.succeeded", payload: { id: "pr_1", amount: 12.5, metadata: {} } })
const signed = (b: string | Uint8Array = body, s = secret, timestamp = now, id = "evt_1"): SignedHeaders =>
  sign(b, s, { id, timestamp })

/** The reason `verify` refuses with; fails the test if it accepts or throws something else. */
const reasonOf = (
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  s: string | ReadonlyArray<string> = secret,
  options: VerifyOptions = at
): WebhookVerificationReason => {
  try {
    verify(rawBody, headers, s, options)
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.reason
    throw e
  }
  throw new Error("verify accepted the webhook")
}

const only = <K extends keyof SignedHeaders>(headers: SignedHeaders, ...names: ReadonlyArray<K>) =>
  Object.fromEntries(names.map((n) => [n, headers[n]]))

const standardOnly = (h: SignedHeaders) => only(h, "webhook-id", "webhook-timestamp", "webhook-signature")

describe("verify: both schemes", () => {
  it("returns the typed envelope under each scheme", () => {
    const h = signed()
    const expected = { event: "charge.succeeded", payload: { id: "pr_1", amount: 12.5, metadata: {} } }
    expect(verify(body, h, secret, { ...at, scheme: "standard" })).toEqual(expected)
    expect(verify(body, h, secret, { ...at, scheme: "service" })).toEqual(expected)
    expect(verify(body, h, secret, at)).toEqual(expected)
    expect(verify(body, only(h, "x-service-signature"), secret)).toEqual(expected)
    const event: WebhookEventName = verify(body, h, secret, at).event
    expect(event).toBe("charge.succeeded")
  })

  it("auto picks Standard Webhooks when any of its headers is present, and does not fall back", () => {
    const h = signed()
    const badStandard = { ...h, "webhook-signature": signed(body, newSecret())["webhook-signature"] }
    expect(reasonOf(body, badStandard)).toBe("invalid_signature")
    expect(verify(body, badStandard, secret, { ...at, scheme: "service" }).event).toBe("charge.succeeded")
    // a captured delivery replayed a day later with one or two of its standard headers removed: refused,
    // never verified by x-service-signature (which carries no timestamp)
    const dayLater = { now: at.now + 86_400_000 }
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
      const { [name]: _, ...twoOfThree } = h
      expect(reasonOf(body, twoOfThree, secret, dayLater)).toBe("missing_header")
      expect(reasonOf(body, only(h, "x-service-signature", name), secret, dayLater)).toBe("missing_header")
    }
    expect(reasonOf(body, h, secret, dayLater)).toBe("timestamp_too_old")
    // stripped of all three, auto verifies x-service-signature: only scheme "standard" refuses the replay
    expect(verify(body, only(h, "x-service-signature"), secret, dayLater).event).toBe("charge.succeeded")
    expect(reasonOf(body, only(h, "x-service-signature"), secret, { ...dayLater, scheme: "standard" })).toBe(
      "missing_header"
    )
  })

  it("throws TypeError on options that would switch the replay window off, and on headers that are not headers", () => {
    const h = signed()
    for (const options of [{ now: new Date("x") }, { now: Number.NaN }, { now: "1" as unknown as number }])
      expect(() => verify(body, h, secret, options)).toThrow(TypeError)
    for (const options of [{ toleranceSeconds: -1 }, { toleranceSeconds: Number.NaN }])
      expect(() => verify(body, only(h, "x-service-signature"), secret, options)).toThrow(TypeError)
    for (const headers of [null, undefined, "x"]) {
      expect(() => verify(body, headers as unknown as Headers, secret)).toThrow(TypeError)
    }
    expect(verify(body, h, secret, { now: new Date(at.now) }).event).toBe("charge.succeeded")
  })

  it("accepts a secret without the whsec_ prefix for Standard Webhooks, but x-service-signature keys with the whole string", () => {
    const h = signed()
    const bare = secret.slice("whsec_".length)
    expect(verify(body, standardOnly(h), bare, at).event).toBe("charge.succeeded")
    expect(reasonOf(body, only(h, "x-service-signature"), bare)).toBe("invalid_signature")
  })
})

describe("verify: tampering (property)", () => {
  const envelope = fc.record({
    event: fc.constantFrom(...webhookEventNames),
    payload: fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 5 })
  })
  const flip = (bytes: Uint8Array, index: number, delta: number): Uint8Array => {
    const copy = new Uint8Array(bytes)
    const i = index % copy.length
    copy[i] = ((copy[i] as number) + delta) % 256
    return copy
  }
  const printable = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c))
  const replaceChar = (text: string, index: number, char: string): string => {
    const i = index % text.length
    return text.slice(0, i) + char + text.slice(i + 1)
  }

  it("round-trips every envelope under both schemes", () => {
    fc.assert(
      fc.property(envelope, fc.string({ minLength: 1, maxLength: 40, unit: printable }), (env, id) => {
        const text = JSON.stringify(env)
        const raw = Buffer.from(text, "utf8")
        const h = signed(raw, secret, now, id)
        // what JSON carries (-0 becomes 0)
        const expected = JSON.parse(text)
        expect(verify(raw, standardOnly(h), secret, { ...at, scheme: "standard" })).toEqual(expected)
        expect(verify(raw, only(h, "x-service-signature"), secret, { scheme: "service" })).toEqual(expected)
      }),
      { numRuns: runs(100) }
    )
  })

  it("changing any one byte of the body makes both schemes fail", () => {
    fc.assert(
      fc.property(envelope, fc.nat(), fc.integer({ min: 1, max: 255 }), (env, index, delta) => {
        const raw = Buffer.from(JSON.stringify(env), "utf8")
        const h = signed(raw)
        const changed = flip(raw, index, delta)
        expect(reasonOf(changed, standardOnly(h))).toBe("invalid_signature")
        expect(reasonOf(changed, only(h, "x-service-signature"))).toBe("invalid_signature")
      }),
      { numRuns: runs(200) }
    )
  })

  it("changing any one character of a signature, the id or the timestamp makes verification fail", () => {
    const names = ["x-service-signature", "webhook-signature", "webhook-id", "webhook-timestamp"] as const
    fc.assert(
      fc.property(fc.constantFrom(...names), fc.nat(), printable, (name, index, char) => {
        const h = signed()
        const original = h[name]
        const changed = replaceChar(original, index, char)
        fc.pre(changed !== original)
        const tampered = { ...h, [name]: changed }
        const headers = name === "x-service-signature" ? only(tampered, name) : standardOnly(tampered)
        expect(() => verify(body, headers, secret, at)).toThrow(WebhookVerificationError)
      }),
      { numRuns: runs(400) }
    )
  })
})

describe("verify: replay window", () => {
  const standard = (timestamp: number) => standardOnly(signed(body, secret, timestamp))

  it("accepts exactly the default 5 minutes in both directions", () => {
    expect(verify(body, standard(now - 300), secret, at).event).toBe("charge.succeeded")
    expect(verify(body, standard(now + 300), secret, at).event).toBe("charge.succeeded")
    expect(reasonOf(body, standard(now - 301))).toBe("timestamp_too_old")
    expect(reasonOf(body, standard(now + 301))).toBe("timestamp_too_new")
  })

  it("compares whole seconds of now (a Date or epoch ms)", () => {
    const late = { now: new Date(nowMs + 300_999) }
    expect(verify(body, standard(now), secret, late).event).toBe("charge.succeeded")
    expect(reasonOf(body, standard(now), secret, { now: nowMs + 301_000 })).toBe("timestamp_too_old")
  })

  it("honours a custom tolerance, including zero", () => {
    expect(verify(body, standard(now - 30), secret, { ...at, toleranceSeconds: 30 }).event).toBe("charge.succeeded")
    expect(reasonOf(body, standard(now - 31), secret, { ...at, toleranceSeconds: 30 })).toBe("timestamp_too_old")
    expect(verify(body, standard(now), secret, { ...at, toleranceSeconds: 0 }).event).toBe("charge.succeeded")
    expect(reasonOf(body, standard(now + 1), secret, { ...at, toleranceSeconds: 0 })).toBe("timestamp_too_new")
    expect(() => verify(body, standard(now), secret, { ...at, toleranceSeconds: -1 })).toThrow(TypeError)
  })

  it("uses the system clock by default", () => {
    const fresh = standardOnly(signed(body, secret, Math.floor(Date.now() / 1000)))
    expect(verify(body, fresh, secret).event).toBe("charge.succeeded")
    expect(reasonOf(body, standard(now), secret, {})).toBe("timestamp_too_old")
  })

  it("reports a stale timestamp only for an authentic message", () => {
    const forged = { ...standard(now - 3600), "webhook-signature": signed(body, newSecret())["webhook-signature"] }
    expect(reasonOf(body, forged)).toBe("invalid_signature")
  })
})

describe("verify: secret rotation", () => {
  const previous = newSecret()
  const next = newSecret()

  it("accepts a message signed with any one of the secrets", () => {
    for (const s of [previous, next]) {
      const h = signed(body, s)
      expect(verify(body, standardOnly(h), [previous, next], at).event).toBe("charge.succeeded")
      expect(verify(body, only(h, "x-service-signature"), [next, previous], at).event).toBe("charge.succeeded")
    }
    const h = signed(body, next)
    expect(reasonOf(body, standardOnly(h), [previous])).toBe("invalid_signature")
    expect(reasonOf(body, only(h, "x-service-signature"), [previous])).toBe("invalid_signature")
  })

  it("accepts a signature list where one entry matches, ignoring other versions", () => {
    const h = signed(body, next)
    const other = signed(body, previous)["webhook-signature"]
    const list = `v2,${"A".repeat(44)} ${other} ${h["webhook-signature"]}`
    expect(verify(body, { ...standardOnly(h), "webhook-signature": list }, next, at).event).toBe("charge.succeeded")
    expect(reasonOf(body, { ...standardOnly(h), "webhook-signature": `v2,${h["webhook-signature"].slice(3)}` })).toBe(
      "invalid_signature"
    )
  })

  it("refuses an empty list or an unusable secret", () => {
    const h = signed()
    expect(reasonOf(body, h, [])).toBe("invalid_secret")
    expect(reasonOf(body, standardOnly(h), "whsec_%%%")).toBe("invalid_secret")
    expect(reasonOf(body, standardOnly(h), [secret, "whsec_"])).toBe("invalid_secret")
    expect(reasonOf(body, only(h, "x-service-signature"), "")).toBe("invalid_secret")
  })
})

describe("verify: headers", () => {
  it("reads a WHATWG Headers, a lowercase object, a mixed-case object and Node's string[] values alike", () => {
    const h = signed()
    const forms: ReadonlyArray<WebhookHeaders> = [
      new Headers({ ...h }),
      { ...h },
      {
        "Webhook-Id": h["webhook-id"],
        "WEBHOOK-TIMESTAMP": h["webhook-timestamp"],
        "Webhook-Signature": h["webhook-signature"],
        "X-Service-Signature": h["x-service-signature"],
        "content-type": "application/json",
        "x-absent": undefined
      },
      {
        "webhook-id": [h["webhook-id"]],
        "webhook-timestamp": h["webhook-timestamp"],
        "webhook-signature": [signed(body, newSecret())["webhook-signature"], h["webhook-signature"]],
        "set-cookie": ["a=b"]
      }
    ]
    for (const headers of forms) {
      expect(verify(body, headers, secret, at).event).toBe("charge.succeeded")
      expect(verify(body, headers, secret, { ...at, scheme: "standard" }).event).toBe("charge.succeeded")
    }
    expect(verify(body, new Headers(only(h, "x-service-signature")), secret).event).toBe("charge.succeeded")
  })

  it("reads anything with a get(name), such as Express's req: undefined or a non-string is a missing header", () => {
    const h = signed()
    const expressLike = (present: Record<string, string>) => ({
      get: (name: string): string | undefined => present[name.toLowerCase()]
    })
    // only x-service-signature present: auto picks that scheme (before, undefined read as a present header)
    expect(verify(body, expressLike(only(h, "x-service-signature")), secret, at).event).toBe("charge.succeeded")
    expect(verify(body, expressLike({ ...h }), secret, { ...at, scheme: "standard" }).event).toBe("charge.succeeded")
    expect(reasonOf(body, expressLike({}))).toBe("missing_header")
    expect(reasonOf(body, expressLike({}), secret, { ...at, scheme: "standard" })).toBe("missing_header")
    // a get() that answers something other than a string: no such header, never a TypeError
    const odd = { get: (() => 5) as unknown as (name: string) => string | null }
    expect(reasonOf(body, odd)).toBe("missing_header")
    expect(reasonOf(body, { get: (() => ({})) as unknown as (name: string) => string | null })).toBe("missing_header")
  })

  it("accepts Node's IncomingHttpHeaders type", () => {
    const incoming: import("node:http").IncomingHttpHeaders = { ...signed() }
    expect(verify(body, incoming, secret, at).event).toBe("charge.succeeded")
  })

  it("tolerates a signature list joined with a comma by a proxy", () => {
    const h = signed()
    const joined = `${signed(body, newSecret())["webhook-signature"]}, ${h["webhook-signature"]}`
    expect(verify(body, new Headers({ ...h, "webhook-signature": joined }), secret, at).event).toBe("charge.succeeded")
  })

  it("refuses missing headers", () => {
    const h = signed()
    expect(reasonOf(body, {})).toBe("missing_header")
    expect(reasonOf(body, new Headers())).toBe("missing_header")
    expect(reasonOf(body, { "x-service-signature": undefined })).toBe("missing_header")
    for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
      const { [name]: _, ...rest } = standardOnly(h)
      expect(reasonOf(body, rest, secret, { ...at, scheme: "standard" })).toBe("missing_header")
    }
    expect(reasonOf(body, standardOnly(h), secret, { ...at, scheme: "service" })).toBe("missing_header")
  })

  it("refuses malformed or repeated headers", () => {
    const h = standardOnly(signed())
    expect(reasonOf(body, { ...h, "webhook-timestamp": "17e8" })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "webhook-timestamp": "-1700000000" })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "webhook-timestamp": " 1700000000" })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "webhook-timestamp": "" })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "webhook-id": "" })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "webhook-id": ["evt_1", "evt_2"] })).toBe("invalid_header")
    expect(reasonOf(body, { ...h, "Webhook-Id": "evt_1" })).toBe("invalid_header")
    const service = signed()["x-service-signature"]
    expect(reasonOf(body, { "x-service-signature": [service, service] })).toBe("invalid_header")
  })

  it("refuses any spelling of a signature other than the one sent", () => {
    const h = signed()
    const service = h["x-service-signature"]
    expect(reasonOf(body, { "x-service-signature": service.toUpperCase() })).toBe("invalid_signature")
    expect(reasonOf(body, { "x-service-signature": `sha512=${service}` })).toBe("invalid_signature")
    expect(reasonOf(body, { "x-service-signature": service.slice(2) })).toBe("invalid_signature")
    const standard = h["webhook-signature"]
    expect(reasonOf(body, { ...standardOnly(h), "webhook-signature": standard.slice(0, -1) })).toBe("invalid_signature")
    expect(reasonOf(body, { ...standardOnly(h), "webhook-signature": "v1," })).toBe("invalid_signature")
    expect(reasonOf(body, { ...standardOnly(h), "webhook-signature": "garbage" })).toBe("invalid_signature")
  })

  it("never puts the secret or the expected signature in the error", () => {
    const h = signed(body, newSecret())
    for (const headers of [standardOnly(h), only(h, "x-service-signature")]) {
      try {
        verify(body, headers, secret, at)
        expect.unreachable()
      } catch (e) {
        const text = `${(e as Error).message} ${(e as Error).stack}`
        expect(text).not.toContain(secret)
        expect(text).not.toContain(secret.slice(6))
        expect(text).not.toContain(signed()["x-service-signature"])
        expect(text).not.toContain(signed()["webhook-signature"].slice(3))
        expect((e as Error).name).toBe("WebhookVerificationError")
      }
    }
  })
})

describe("verify: body", () => {
  it("fails cleanly on an authentic body that is not valid UTF-8", () => {
    const raw = new Uint8Array([
      ...Buffer.from('{"event":"ramp.paid","payload":{"x":"', "utf8"),
      0xff,
      0xfe,
      0x22,
      0x7d,
      0x7d
    ])
    const h = signed(raw)
    expect(reasonOf(raw, standardOnly(h))).toBe("invalid_body")
    expect(reasonOf(raw, only(h, "x-service-signature"))).toBe("invalid_body")
    // the signature is checked before the body is read
    expect(reasonOf(raw, only(signed(raw, newSecret()), "x-service-signature"))).toBe("invalid_signature")
  })

  it("refuses authentic bodies that are not an envelope of a known event", () => {
    const cases: ReadonlyArray<readonly [string, WebhookVerificationReason]> = [
      ["", "invalid_body"],
      ["{", "invalid_body"],
      ["null", "invalid_envelope"],
      ["[]", "invalid_envelope"],
      ['"ramp.paid"', "invalid_envelope"],
      ['{"event":"ramp.paid"}', "invalid_envelope"],
      ['{"event":"ramp.paid","payload":null}', "invalid_envelope"],
      ['{"event":"ramp.paid","payload":[1]}', "invalid_envelope"],
      ['{"event":"ramp.paid","payload":"x"}', "invalid_envelope"],
      ['{"event":7,"payload":{}}', "invalid_envelope"],
      ['{"event":"ramp.refunded","payload":{}}', "unknown_event"]
    ]
    for (const [raw, reason] of cases) {
      expect(reasonOf(raw, signed(raw))).toBe(reason)
      expect(reasonOf(raw, only(signed(raw), "x-service-signature"))).toBe(reason)
    }
  })

  it("keeps only event and payload, and reads a Buffer like a string", () => {
    const raw = '{"event":"invoice.overdue","payload":{"status":"overdue"},"extra":1}'
    expect(verify(Buffer.from(raw), signed(raw), secret, at)).toEqual({
      event: "invoice.overdue",
      payload: { status: "overdue" }
    })
  })

  it("refuses a parsed body with a TypeError (a programming error, not a forged webhook)", () => {
    expect(() => verify(JSON.parse(body), signed(), secret, at)).toThrow(TypeError)
  })
})
