import { createHmac, randomBytes } from "node:crypto"
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { sign, verify, webhookEventNames } from "../src/index.ts"

const secret = `whsec_${randomBytes(32).toString("base64")}`
const body = JSON.stringify({ event: "ramp.paid", payload: { id: "conv_1", actually_paid: 73.64, note: "é ✓ 💸" } })

describe("sign", () => {
  it("produces a Standard Webhooks signature the standardwebhooks library accepts", () => {
    const headers = sign(body, secret, { id: "evt_1", timestamp: new Date() })
    const parsed = new Webhook(secret).verify(body, { ...headers })
    expect(parsed).toEqual(JSON.parse(body))
    // and the library rejects it under another secret
    const other = `whsec_${randomBytes(32).toString("base64")}`
    expect(() => new Webhook(other).verify(body, { ...headers })).toThrow(/signature/i)
  })

  it("produces x-service-signature = lowercase hex HMAC-SHA512 of the body bytes keyed with the whole secret", () => {
    const headers = sign(body, secret, { id: "evt_1", timestamp: 1_700_000_000 })
    const expected = createHmac("sha512", Buffer.from(secret, "utf8")).update(Buffer.from(body, "utf8")).digest("hex")
    expect(headers["x-service-signature"]).toBe(expected)
    expect(headers["x-service-signature"]).toMatch(/^[0-9a-f]{128}$/)
  })

  it("signs id, timestamp and body as the Standard Webhooks spec says", () => {
    const headers = sign(body, secret, { id: "evt_1", timestamp: 1_700_000_000 })
    const key = Buffer.from(secret.slice("whsec_".length), "base64")
    const expected = createHmac("sha256", key).update(`evt_1.1700000000.${body}`, "utf8").digest("base64")
    expect(headers).toEqual({
      "x-service-signature": headers["x-service-signature"],
      "webhook-id": "evt_1",
      "webhook-timestamp": "1700000000",
      "webhook-signature": `v1,${expected}`
    })
  })

  it("signs the same bytes whether the body is a string or its UTF-8 bytes", () => {
    const options = { id: "evt_1", timestamp: 1_700_000_000 }
    expect(sign(Buffer.from(body, "utf8"), secret, options)).toEqual(sign(body, secret, options))
    expect(sign(new Uint8Array(Buffer.from(body, "utf8")), secret, options)).toEqual(sign(body, secret, options))
  })

  it("truncates a Date to the second", () => {
    const headers = sign(body, secret, { id: "evt_1", timestamp: new Date(1_700_000_000_999) })
    expect(headers["webhook-timestamp"]).toBe("1700000000")
  })

  it("verifies what the standardwebhooks library signs", () => {
    const at = new Date()
    const signature = new Webhook(secret).sign("msg_1", at, body)
    const envelope = verify(
      body,
      {
        "webhook-id": "msg_1",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": signature
      },
      secret
    )
    expect(envelope.event).toBe("ramp.paid")
  })

  it("refuses a malformed secret, id or timestamp with a TypeError", () => {
    expect(() => sign(body, "whsec_not base64!", { id: "e", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, "whsec_", { id: "e", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, secret, { id: "", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, secret, { id: "a b", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, secret, { id: "e\n", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, secret, { id: "e", timestamp: 1.5 })).toThrow(TypeError)
    expect(() => sign(body, secret, { id: "e", timestamp: -1 })).toThrow(TypeError)
    expect(() => sign({ event: "ramp.paid" } as unknown as string, secret, { id: "e", timestamp: 1 })).toThrow(
      /raw request body/
    )
  })

  it("during a rotation: one v1 signature per secret; x-service-signature with the last (oldest) secret", () => {
    const newer = `whsec_${randomBytes(32).toString("base64")}`
    const headers = sign(body, [newer, secret], { id: "evt_1", timestamp: new Date() })
    const signatures = headers["webhook-signature"].split(" ")
    expect(signatures).toHaveLength(2)
    expect(signatures[0]).toBe(
      sign(body, newer, { id: "evt_1", timestamp: Number(headers["webhook-timestamp"]) })["webhook-signature"]
    )
    // the standardwebhooks library accepts it under either secret, and not under a third
    expect(new Webhook(newer).verify(body, { ...headers })).toEqual(JSON.parse(body))
    expect(new Webhook(secret).verify(body, { ...headers })).toEqual(JSON.parse(body))
    const other = `whsec_${randomBytes(32).toString("base64")}`
    expect(() => new Webhook(other).verify(body, { ...headers })).toThrow(/signature/i)
    // x-service-signature: the old secret's, so a receiver that knows only it keeps verifying that scheme
    const expected = createHmac("sha512", Buffer.from(secret, "utf8")).update(Buffer.from(body, "utf8")).digest("hex")
    expect(headers["x-service-signature"]).toBe(expected)
    expect(verify(body, headers, secret).event).toBe("ramp.paid")
    expect(verify(body, headers, newer).event).toBe("ramp.paid")
    expect(verify(body, { "x-service-signature": headers["x-service-signature"] }, secret).event).toBe("ramp.paid")
    expect(() => verify(body, { "x-service-signature": headers["x-service-signature"] }, newer)).toThrow(/signature/i)
    // one byte changed: no secret verifies
    const changed = body.replace("73.64", "73.65")
    expect(() => verify(changed, headers, [newer, secret])).toThrow(/signature/i)
  })

  it("refuses an empty list of secrets, or a malformed one among them", () => {
    expect(() => sign(body, [], { id: "e", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, [secret, "whsec_not base64!"], { id: "e", timestamp: 1 })).toThrow(TypeError)
    expect(() => sign(body, ["whsec_", secret], { id: "e", timestamp: 1 })).toThrow(TypeError)
  })

  it("lists the specification's ten event names", () => {
    expect(webhookEventNames).toHaveLength(10)
    expect(new Set(webhookEventNames).size).toBe(10)
  })
})
