/**
 * Each example, started on port 0 with the real API: a sandbox business and a
 * payment link are created through it, then it is closed.
 */
import { connect } from "node:net"
import { describe, expect, it } from "vitest"

type Start = (port: number) => Promise<{ url: string; close: () => Promise<void> }>

const examples: ReadonlyArray<readonly [string, () => Promise<{ start: Start }>]> = [
  ["node:http", () => import("../node-http.ts")],
  ["Express", () => import("../express.ts")],
  ["Fastify", () => import("../fastify.ts")],
  ["Hono", () => import("../hono.ts")],
  ["fetch module (Node runner)", () => import("../fetch.ts")]
]

const post = (url: string, body: unknown, key?: string) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body)
  })

/** Raw bytes to the server on a fresh connection; what came back before it closed. */
const rawExchange = (url: string, text: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1", () => socket.write(text))
    let got = ""
    socket.setTimeout(5_000, () => socket.destroy())
    socket.on("data", (d) => {
      got += d.toString("latin1")
    })
    socket.on("close", () => resolve(got))
    socket.on("error", reject)
  })

it("the fetch module's default export answers in-process, with no server at all", async () => {
  const module = await import("../fetch.ts")
  const response = await module.default.fetch(
    new Request("http://localhost/v1/test_helpers/businesses", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Serrekunda Market" })
    })
  )
  expect(response.status).toBe(201)
  expect(((await response.json()) as { name: string }).name).toBe("Serrekunda Market")
})

describe.each(examples)("example %s", (_name, load) => {
  it("serves the API: a sandbox business, then a payment link with its key", async () => {
    const { start } = await load()
    const { url, close } = await start(0)
    try {
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const created = await post(`${url}/v1/test_helpers/businesses`, { name: "Kairaba Coffee" })
      expect(created.status).toBe(201)
      const business = (await created.json()) as { id: string; secret_key_test: string; secret_key_live: string }
      expect(business.secret_key_test).toMatch(/^sk_test_/)

      const link = await post(
        `${url}/v1/payment-links`,
        { data: { title: "Attaya for two", amount: 250.5, currency: "GMD" } },
        business.secret_key_test
      )
      expect(link.status).toBe(201)
      const body = (await link.json()) as { id: string; url: string; amount: number; currency: string }
      expect(body).toMatchObject({ amount: 250.5, currency: "GMD" })
      expect(typeof body.id).toBe("string")
      // the link points at this server, port 0 or not, and its page is served there
      expect(body.url).toBe(`${url}/pay/links/${body.id}`)
      expect((await fetch(body.url)).status).toBe(200)
      // the OpenAPI document names this server too
      const openapi = (await (await fetch(`${url}/v1/openapi.json`)).json()) as { servers?: Array<{ url: string }> }
      expect(openapi.servers?.[0]?.url).toBe(url)

      const read = await fetch(`${url}/v1/payment-links/${body.id}`, {
        headers: { authorization: `Bearer ${business.secret_key_test}` }
      })
      expect(read.status).toBe(200)
      expect(((await read.json()) as { id: string }).id).toBe(body.id)

      const unauthenticated = await post(`${url}/v1/payment-links`, { data: { amount: 1 } })
      expect(unauthenticated.status).toBe(401)
      expect(((await unauthenticated.json()) as { error: { code: string } }).error.code).toBe("authentication_error")

      // a method the API does not serve there, even one the framework does not know: the API's 404
      const propfind = await rawExchange(url, "PROPFIND /v1/balance HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      expect(propfind).toMatch(/^HTTP\/1\.1 404 /)
      expect(propfind).toMatch(/\r\nallow: GET\r\n/i)
      expect(propfind).toContain('"code":"not_found"')
      // bytes that are not HTTP: the API's error object, not the framework's or node's empty answer
      const garbage = await rawExchange(url, "NOT HTTP AT ALL\r\n\r\n")
      expect(garbage).toMatch(/^HTTP\/1\.1 400 /)
      expect(garbage).toContain('{"error":{"message":"The request is not valid HTTP.","code":"validation_error"}}')
    } finally {
      await close()
    }
  })
})
