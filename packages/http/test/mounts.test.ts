/**
 * Every mount of the fetch handler, each on a real server (127.0.0.1, port 0),
 * called with `fetch`: a stub handler echoes what it received (method, URL,
 * headers, raw body, client address) and answers a chosen status with a few
 * headers, so each property can be checked end to end.
 */
import { createHash } from "node:crypto"
import { once } from "node:events"
import { createServer, request as httpRequest, type RequestListener, type Server } from "node:http"
import { connect as http2Connect } from "node:http2"
import { type AddressInfo, connect } from "node:net"
import { serve } from "@hono/node-server"
import express from "express"
import Fastify from "fastify"
import { Hono } from "hono"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { xaalisFastify } from "../src/fastify.ts"
import { internal_error_message, makeHttpApi } from "../src/HttpApi.ts"
import { bodyConsumedHint, mountHono, toNodeListener, xaalisExpress } from "../src/mounts/index.ts"
import { h2Send } from "./http2.ts"

type Handler = Parameters<typeof toNodeListener>[0]

interface Echo {
  readonly method: string
  readonly url: string
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body_base64: string
  readonly body_length: number
  readonly body_sha256: string
  readonly remoteAddress: string | null
  /** Whether the request's signal was aborted while the client was still waiting. */
  readonly aborted: boolean
}

/** Requests to `.../hang` by `x-hang-id`: answered only once their signal aborts (the client left). */
const hung = new Map<string, "waiting" | "aborted">()
const hang = (request: Request): Promise<Response> => {
  const id = request.headers.get("x-hang-id") ?? "?"
  hung.set(id, "waiting")
  return new Promise((resolve) => {
    request.signal.addEventListener("abort", () => {
      hung.set(id, "aborted")
      resolve(new Response(null, { status: 499 }))
    })
  })
}

/** Bytes a response body carries in the `/v1/bytes` answer: every byte value, twice. */
const allBytes = Uint8Array.from({ length: 512 }, (_, i) => i % 256)

/**
 * The stub: echoes the request as JSON; `x-want-status` picks the status. On
 * `/v1/bytes` it answers raw bytes instead; a path containing `/boom` throws.
 */
const stub: Handler = async (request, context) => {
  const url = new URL(request.url)
  if (url.pathname.includes("/boom")) throw new Error("secret internal detail")
  if (url.pathname.endsWith("/hang")) return hang(request)
  const body = new Uint8Array(await request.arrayBuffer())
  // Give a premature abort (on the end of the request body) the time to show.
  await new Promise((resolve) => setTimeout(resolve, 10))
  const headers = new Headers({
    "retry-after": "7",
    "ratelimit-limit": "200",
    "ratelimit-remaining": "199",
    "ratelimit-reset": "3",
    "request-id": "req_123"
  })
  headers.append("x-multi", "one")
  headers.append("x-multi", "two")
  headers.append("set-cookie", "a=1; Path=/")
  headers.append("set-cookie", "b=2; Path=/")
  const status = Number(request.headers.get("x-want-status") ?? "200")
  if (url.pathname === "/v1/bytes") {
    headers.set("content-type", "application/octet-stream")
    return new Response(allBytes, { status, headers })
  }
  const echo: Echo = {
    method: request.method,
    url: request.url,
    headers: [...request.headers],
    body_base64: body.byteLength <= 4096 ? Buffer.from(body).toString("base64") : "",
    body_length: body.byteLength,
    body_sha256: createHash("sha256").update(body).digest("hex"),
    remoteAddress: context?.remoteAddress ?? null,
    aborted: request.signal.aborted
  }
  headers.set("content-type", "application/json")
  return new Response(JSON.stringify(echo), { status, headers })
}

interface Running {
  /** Origin of the server, e.g. http://127.0.0.1:40123 */
  readonly origin: string
  readonly close: () => Promise<void>
}

const listenNode = async (server: Server): Promise<Running> => {
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()))
        server.closeAllConnections()
      })
  }
}

const onNode = (listener: RequestListener) => listenNode(createServer(listener))

interface Mount {
  readonly name: string
  /** Path prefix the API is mounted under ("" at the root). */
  readonly prefix: string
  /** Whether the mount gives the handler the client address. */
  readonly address: boolean
  readonly start: (handler: Handler) => Promise<Running>
}

const startFastify = async (handler: Handler, prefix?: string): Promise<Running> => {
  const app = Fastify()
  await app.register(xaalisFastify, prefix === undefined ? { handler } : { handler, prefix })
  await app.listen({ port: 0, host: "127.0.0.1" })
  const { port } = app.server.address() as AddressInfo
  return { origin: `http://127.0.0.1:${port}`, close: () => app.close() }
}

type FetchCallback = Parameters<typeof serve>[0]["fetch"]

/** @hono/node-server's `serve`, as its users call it (default options). */
const serveFetch = async (fetchCallback: FetchCallback): Promise<Running> => {
  const server = serve({ fetch: fetchCallback, port: 0, hostname: "127.0.0.1" }) as Server
  if (!server.listening) await once(server, "listening")
  return listenNodeInfo(server)
}

const listenNodeInfo = (server: Server): Running => {
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((e) => (e ? reject(e) : resolve()))
        server.closeAllConnections()
      })
  }
}

const startHono = (handler: Handler, prefix?: string) => {
  const app = new Hono()
  app.get("/health", (c) => c.text("ok"))
  mountHono(app, handler, prefix)
  return serveFetch(app.fetch)
}

const mounts: ReadonlyArray<Mount> = [
  { name: "node:http (toNodeListener)", prefix: "", address: true, start: (h) => onNode(toNodeListener(h)) },
  {
    name: "Express at the root",
    prefix: "",
    address: true,
    start: (h) => {
      const app = express()
      app.use(xaalisExpress(h))
      app.use(express.json())
      return onNode(app)
    }
  },
  {
    name: "Express under /api",
    prefix: "/api",
    address: true,
    start: (h) => {
      const app = express()
      app.use("/api", xaalisExpress(h))
      return onNode(app)
    }
  },
  { name: "Fastify at the root", prefix: "", address: true, start: (h) => startFastify(h) },
  { name: "Fastify under /api", prefix: "/api", address: true, start: (h) => startFastify(h, "/api") },
  { name: "Hono + @hono/node-server at the root", prefix: "", address: true, start: (h) => startHono(h) },
  { name: "Hono + @hono/node-server under /api", prefix: "/api", address: true, start: (h) => startHono(h, "/api") },
  // A fetch runtime calls the handler with its own second argument (here node-server's
  // bindings), which carries no `remoteAddress`: the bare form passes no client address.
  // (The cast: TypeScript's weak-type check refuses a context type whose only property is
  // optional against a runtime's own second argument; `object & {...}` in the contract avoids it.)
  {
    name: "bare handler as a fetch-runtime module",
    prefix: "",
    address: false,
    start: (h) => serveFetch(h as FetchCallback)
  },
  {
    name: "bare handler with the one-line address wrapper",
    prefix: "",
    address: true,
    start: (h) =>
      serveFetch((request, env) =>
        h(request, {
          remoteAddress: (env as { incoming: { socket: { remoteAddress: string } } }).incoming.socket.remoteAddress
        })
      )
  }
]

/** Not valid UTF-8 (lone continuation bytes, an overlong form, 0xFF), then every byte value. */
const nonUtf8 = Uint8Array.from([
  0xff,
  0xfe,
  0x00,
  0x80,
  0xc0,
  0xaf,
  0xc3,
  0x28,
  ...Array.from({ length: 256 }, (_, i) => i)
])
/** 1 MiB of a non-repeating-looking pattern. */
const mebibyte = Uint8Array.from({ length: 1024 * 1024 }, (_, i) => (i * 2654435761) >>> 24)
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** One raw request on a fresh connection to 127.0.0.1:`port`: the status, the head and the body (de-chunked). */
const rawRequest = (port: number, text: string) =>
  new Promise<{ status: number; head: string; body: string }>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(text))
    let got = ""
    socket.on("data", (d) => {
      got += d.toString()
    })
    socket.on("close", () => {
      const at = got.indexOf("\r\n\r\n")
      const head = got.slice(0, at)
      let body = got.slice(at + 4)
      if (/transfer-encoding: chunked/i.test(head)) {
        body = body.replace(/^[0-9a-f]+\r\n|\r\n[0-9a-f]+\r\n/gi, "").replace(/\r\n0\r\n\r\n$/, "")
      }
      resolve({ status: Number(head.split(" ")[1]), head, body })
    })
    socket.on("error", reject)
  })

const header = (echo: Echo, name: string) => echo.headers.find(([k]) => k === name)?.[1]

const checkResponseHeaders = (response: Response) => {
  expect(response.headers.get("retry-after")).toBe("7")
  expect(response.headers.get("ratelimit-limit")).toBe("200")
  expect(response.headers.get("ratelimit-remaining")).toBe("199")
  expect(response.headers.get("ratelimit-reset")).toBe("3")
  expect(response.headers.get("request-id")).toBe("req_123")
  expect(response.headers.get("x-multi")).toBe("one, two")
  expect(response.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"])
}

/** One request carrying everything a mount must preserve, and the checks of each property. */
const roundTrip = async (origin: string, mount: Mount) => {
  const path = "/v1/payments/pi_1/cancel?expand=a&expand=b&q=%C3%A9%20x&empty="
  const response = await fetch(`${origin}${mount.prefix}${path}`, {
    method: "POST",
    headers: [
      ["content-type", "application/json; charset=windows-1252"],
      ["authorization", "Bearer sk_test_abc"],
      ["idempotency-key", "key-1"],
      ["x-no-effect", "true"],
      ["x-dup", "first"],
      ["x-dup", "second"],
      ["x-want-status", "201"]
    ],
    body: nonUtf8
  })
  expect(response.status).toBe(201)
  checkResponseHeaders(response)
  expect(response.headers.get("content-type")).toBe("application/json")
  const echo = (await response.json()) as Echo
  expect(echo.method).toBe("POST")
  // The handler sees the URL without the mount prefix.
  expect(echo.url).toBe(`${origin}${path}`)
  expect(header(echo, "content-type")).toBe("application/json; charset=windows-1252")
  expect(header(echo, "authorization")).toBe("Bearer sk_test_abc")
  expect(header(echo, "idempotency-key")).toBe("key-1")
  expect(header(echo, "x-no-effect")).toBe("true")
  expect(header(echo, "x-dup")).toBe("first, second")
  expect(header(echo, "host")).toBe(new URL(origin).host)
  expect(Buffer.from(echo.body_base64, "base64")).toEqual(Buffer.from(nonUtf8))
  expect(echo.remoteAddress).toBe(mount.address ? "127.0.0.1" : null)
  expect(echo.aborted).toBe(false)
}

const nativeRequest = globalThis.Request
const nativeResponse = globalThis.Response

describe("before anything else runs", () => {
  it("the mounts never replace the global Request and Response themselves", () => {
    toNodeListener(stub)
    xaalisExpress(stub)
    mountHono(new Hono(), stub)
    expect(globalThis.Request).toBe(nativeRequest)
    expect(globalThis.Response).toBe(nativeResponse)
  })
})

describe.each(mounts)("$name", (mount) => {
  let server: Running
  let calls = 0
  const counting: Handler = (request, context) => {
    calls++
    return stub(request, context)
  }
  beforeAll(async () => {
    server = await mount.start(counting)
  })
  afterAll(() => server.close())
  const at = (path: string) => `${server.origin}${mount.prefix}${path}`
  /** What the handler must see as its URL: the same, without the mount prefix. */
  const seen = (path: string) => `${server.origin}${path}`

  it("passes method, full URL with query, every header and the exact body; returns status, headers and body", () =>
    roundTrip(server.origin, mount))

  it("passes a 1 MiB body byte for byte", async () => {
    const response = await fetch(at("/v1/invoices"), {
      method: "PUT",
      headers: { "content-type": "application/octet-stream" },
      body: mebibyte
    })
    expect(response.status).toBe(200)
    const echo = (await response.json()) as Echo
    expect(echo.method).toBe("PUT")
    expect(echo.body_length).toBe(mebibyte.byteLength)
    expect(echo.body_sha256).toBe(sha256(mebibyte))
  })

  it("forwards GET, DELETE, PATCH and OPTIONS, and the other status codes", async () => {
    for (const [method, status] of [
      ["GET", 200],
      ["DELETE", 404],
      ["PATCH", 409],
      ["OPTIONS", 405]
    ] as const) {
      const response = await fetch(at("/v1/minting/ramps?limit=5"), {
        method,
        headers: { "x-want-status": String(status) },
        ...(method === "PATCH"
          ? { body: "{}", headers: { "x-want-status": String(status), "content-type": "application/json" } }
          : {})
      })
      expect(response.status).toBe(status)
      const echo = (await response.json()) as Echo
      expect(echo.method).toBe(method)
      expect(echo.url).toBe(seen("/v1/minting/ramps?limit=5"))
      expect(echo.body_length).toBe(method === "PATCH" ? 2 : 0)
      checkResponseHeaders(response)
    }
  })

  it("answers 429 with its headers, and HEAD without a body", async () => {
    const limited = await fetch(at("/v1/balance"), { headers: { "x-want-status": "429" } })
    expect(limited.status).toBe(429)
    checkResponseHeaders(limited)
    await limited.arrayBuffer()
    const head = await fetch(at("/v1/balance"), { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("request-id")).toBe("req_123")
    expect((await head.arrayBuffer()).byteLength).toBe(0)
  })

  it("returns the response body bytes exactly", async () => {
    const response = await fetch(at("/v1/bytes"))
    expect(response.headers.get("content-type")).toBe("application/octet-stream")
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(allBytes)
  })

  it("aborts the request's signal when the client goes away", async () => {
    const id = `${mount.name}-${Math.random()}`
    const client = new AbortController()
    const pending = fetch(at("/v1/hang"), {
      method: "POST",
      body: "{}",
      headers: { "x-hang-id": id },
      signal: client.signal
    })
    await vi.waitFor(() => expect(hung.get(id)).toBe("waiting"), { timeout: 10_000 })
    client.abort()
    await expect(pending).rejects.toThrow()
    await vi.waitFor(() => expect(hung.get(id)).toBe("aborted"), { timeout: 10_000 })
  })

  it("forwards /docs, the /v1 root and the hosted pages under /pay", async () => {
    for (const path of ["/docs", "/v1", "/v1/", "/pay/links/abc", "/pay/abc"]) {
      const echo = (await (await fetch(at(path))).json()) as Echo
      expect(echo.url).toBe(seen(path))
    }
  })

  it("answers a handler fault with the error object, without its message", async () => {
    const before = calls
    const response = await fetch(at("/v1/boom"), { method: "POST", body: "{}" })
    expect(calls).toBe(before + 1)
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(text).not.toContain("secret internal detail")
    // Framework mounts and node-server answer with their own 500 shape when
    // the handler itself throws; the xaalis handler never throws (it answers 500 itself).
    if (mount.name.startsWith("node:http") || mount.name.startsWith("Express") || mount.name.startsWith("Fastify")) {
      expect(JSON.parse(text)).toEqual({ error: { message: internal_error_message, code: "internal_error" } })
    }
  })
})

describe("Express specifics", () => {
  const start = async (setup: (app: express.Express, log: string[]) => void) => {
    const app = express()
    const log: string[] = []
    setup(app, log)
    return { server: await onNode(app), log }
  }

  it("with express.json() before it: a clear 500 error object, and one hint for the developer", async () => {
    const { server, log } = await start((app, log) => {
      app.use(express.json())
      app.use(xaalisExpress(stub, { log: (m) => log.push(m) }))
    })
    try {
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${server.origin}/v1/payments`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: '{"data":{"amount":10.10}}'
        })
        expect(response.status).toBe(500)
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
        const body = (await response.json()) as { error: { message: string; code: string } }
        expect(body.error.code).toBe("internal_error")
        expect(body.error.message).toMatch(/body was read by another middleware/)
        expect(Object.keys(body)).toEqual(["error"])
      }
      expect(log).toEqual([bodyConsumedHint])
      expect(bodyConsumedHint).toMatch(/before any body parser/)
      // What the parser did not read still goes through: a GET, a body of another type,
      // and a declared-empty JSON body (exactly zero bytes, whoever read it).
      const get = (await (await fetch(`${server.origin}/v1/balance?x=1`)).json()) as Echo
      expect(get.url).toBe(`${server.origin}/v1/balance?x=1`)
      const text = await fetch(`${server.origin}/v1/payments`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: nonUtf8
      })
      expect(((await text.json()) as Echo).body_sha256).toBe(sha256(nonUtf8))
      const empty = await fetch(`${server.origin}/v1/payments/pi_1/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "0" }
      })
      expect(empty.status).toBe(200)
      expect(((await empty.json()) as Echo).body_length).toBe(0)
    } finally {
      await server.close()
    }
  })

  it("claims every target the API resolves to its paths (absolute-form, dot segments, percent-encoding), naming no framework", async () => {
    const { server } = await start((app) => {
      app.use(xaalisExpress(stub))
      app.get("/health", (_req, res) => {
        res.send("ok")
      })
    })
    const port = Number(new URL(server.origin).port)
    const raw = async (target: string) => {
      const r = await rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
      return { ...r, poweredBy: /x-powered-by/i.test(r.head) }
    }
    try {
      for (const target of [
        `http://127.0.0.1:${port}/v1/balance`,
        "/%76%31/balance",
        "/x/../v1/balance",
        "/x/%2e%2e/v1/balance",
        "/v1/balance"
      ]) {
        const r = await raw(target)
        expect([r.status, r.poweredBy], target).toEqual([200, false])
        // the URL as the node:http mount gives it (percent-encoding kept: the API's router decodes it)
        expect(decodeURIComponent(new URL((JSON.parse(r.body) as Echo).url).pathname), target).toBe("/v1/balance")
      }
      // the app's own paths stay the app's
      const health = await raw("/health")
      expect([health.status, health.body]).toEqual([200, "ok"])
    } finally {
      await server.close()
    }
  })

  it("with express.json() after it: the API gets the raw body and the app's own routes still parse JSON", async () => {
    const { server, log } = await start((app, log) => {
      app.use(xaalisExpress(stub, { log: (m) => log.push(m) }))
      app.use(express.json())
      app.post("/own", (req, res) => {
        res.json({ parsed: req.body })
      })
    })
    try {
      const exact = '{"data":{"amount":10.10,"big":12345678901234567890}}'
      const api = await fetch(`${server.origin}/v1/payments`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: exact
      })
      expect(api.status).toBe(200)
      expect(Buffer.from(((await api.json()) as Echo).body_base64, "base64").toString("utf8")).toBe(exact)
      const own = await fetch(`${server.origin}/own`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}'
      })
      expect(await own.json()).toEqual({ parsed: { a: 1 } })
      expect(log).toEqual([])
    } finally {
      await server.close()
    }
  })

  it("uses the exact bytes kept by express.raw() or a verify hook", async () => {
    const { server } = await start((app) => {
      app.use("/raw", express.raw({ type: "*/*" }), xaalisExpress(stub))
      app.use(
        "/verify",
        express.json({
          verify: (req, _res, buf) => {
            ;(req as { rawBody?: Buffer }).rawBody = buf
          }
        }),
        xaalisExpress(stub)
      )
    })
    try {
      const raw = await fetch(`${server.origin}/raw/v1/x`, { method: "POST", body: nonUtf8 })
      expect(((await raw.json()) as Echo).body_sha256).toBe(sha256(nonUtf8))
      const exact = '{"amount": 10.10}'
      const verified = await fetch(`${server.origin}/verify/v1/x`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: exact
      })
      expect(verified.status).toBe(200)
      expect(Buffer.from(((await verified.json()) as Echo).body_base64, "base64").toString("utf8")).toBe(exact)
    } finally {
      await server.close()
    }
  })

  it("leaves other paths to the app and follows `trust proxy` for the client address", async () => {
    const { server } = await start((app) => {
      app.set("trust proxy", "loopback")
      app.use(xaalisExpress(stub))
      app.get("/health", (_req, res) => {
        res.send("ok")
      })
    })
    try {
      expect(await (await fetch(`${server.origin}/health`)).text()).toBe("ok")
      expect((await fetch(`${server.origin}/v2/nope`)).status).toBe(404)
      const echo = (await (
        await fetch(`${server.origin}/v1/balance`, { headers: { "x-forwarded-for": "203.0.113.9" } })
      ).json()) as Echo
      expect(echo.remoteAddress).toBe("203.0.113.9")
    } finally {
      await server.close()
    }
  })
})

describe("Fastify specifics", () => {
  it("caps bodies at bodyLimit with the error object, passes bodies Fastify cannot type; the parser stays in the plugin", async () => {
    const app = Fastify({ bodyLimit: 1024 })
    await app.register(xaalisFastify, { handler: stub, bodyLimit: 64 })
    app.post("/own", async (request) => ({ parsed: request.body }))
    app.get("/health", async () => "ok")
    await app.listen({ port: 0, host: "127.0.0.1" })
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    try {
      const tooLarge = await fetch(`${origin}/v1/payments`, { method: "POST", body: new Uint8Array(65) })
      expect(tooLarge.status).toBe(400)
      expect(await tooLarge.json()).toEqual({
        error: { message: "The request body must not exceed 64 bytes.", code: "validation_error" }
      })
      const fits = await fetch(`${origin}/v1/payments`, { method: "POST", body: new Uint8Array(64) })
      expect(((await fits.json()) as Echo).body_length).toBe(64)
      // a Content-Type Fastify refuses to read reaches the handler with its bytes (the API answers it in its order)
      for (const type of ["no type at all", ";;", ""]) {
        const badType = await fetch(`${origin}/v1/payments`, {
          method: "POST",
          headers: { "content-type": type },
          body: "{}"
        })
        expect(badType.status, type).toBe(200)
        const echo = (await badType.json()) as Echo
        expect([echo.body_length, header(echo, "content-type")], type).toEqual([2, type])
      }
      // Outside the plugin, the app's own JSON parser and routes are untouched.
      const own = await fetch(`${origin}/own`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: '{"a":1}'
      })
      expect(await own.json()).toEqual({ parsed: { a: 1 } })
      expect(await (await fetch(`${origin}/health`)).text()).toBe("ok")
      expect((await fetch(`${origin}/v2/nope`)).status).toBe(404)
    } finally {
      await app.close()
    }
  })

  it("serves HTTP/2 (`http2: true`): the URL's host from `:authority`, the session's own idle timeout kept", async () => {
    const app = Fastify({ http2: true })
    await app.register(xaalisFastify, { handler: stub, prefix: "/pay-api", unreadAnswerMs: 300 })
    await app.listen({ port: 0, host: "127.0.0.1" })
    const port = (app.server.address() as AddressInfo).port
    const session = http2Connect(`http://127.0.0.1:${port}`)
    session.on("error", () => undefined)
    const get = (path: string, extra: Record<string, string> = {}) =>
      h2Send(session, { ":path": path, "x-probe": "h2", ...extra })
    try {
      const first = await get("/pay-api/v1/payments?a=1")
      expect(first.status).toBe(200)
      const echo = JSON.parse(first.body) as Echo
      expect(echo.url).toBe(`http://127.0.0.1:${port}/v1/payments?a=1`)
      expect(echo.headers).toContainEqual(["x-probe", "h2"])
      expect(echo.headers.some(([name]) => name.startsWith(":"))).toBe(false)
      // a Host beside :authority must name the same host (RFC 9113 §8.3.1): it can never pick another
      const twoHosts = await get("/pay-api/v1/payments", { ":authority": `127.0.0.1:${port}`, host: "evil.example" })
      expect(twoHosts.status).toBe(400)
      expect(JSON.parse(twoHosts.body)).toEqual({
        error: { message: "The request could not be read.", code: "validation_error" }
      })
      expect((await get("/pay-api/v1/payments", { host: `127.0.0.1:${port}` })).status).toBe(200)
      // unreadAnswerMs watches HTTP/1 connections only: an HTTP/2 session is shared by its streams
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expect(session.closed || session.destroyed).toBe(false)
      expect((await get("/pay-api/v1/payments")).status).toBe(200)
    } finally {
      session.destroy()
      await app.close()
    }
  })

  it("reads the URL by the node:http mount's rules: Host cannot change the path, absolute-form works", async () => {
    const app = Fastify()
    await app.register(xaalisFastify, { handler: stub, hostname: "api.test", prefix: "/pay-api" })
    await app.listen({ port: 0, host: "127.0.0.1" })
    const port = (app.server.address() as AddressInfo).port
    const raw = (text: string) => rawRequest(port, text)
    try {
      for (const host of ["h/v1/other?", "a/b", "exa mple"]) {
        const r = await raw(`GET /pay-api/v1/payments HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`)
        expect(r.status, host).toBe(400)
        expect(JSON.parse(r.body), host).toEqual({
          error: { message: "The request could not be read.", code: "validation_error" }
        })
      }
      const absolute = await raw(
        `GET http://127.0.0.1:${port}/pay-api/v1/payments?a=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`
      )
      expect(absolute.status).toBe(200)
      expect((JSON.parse(absolute.body) as Echo).url).toBe(`http://127.0.0.1:${port}/v1/payments?a=1`)
      const old = await raw("GET /pay-api/v1/payments HTTP/1.0\r\n\r\n")
      expect(old.status).toBe(200)
      expect((JSON.parse(old.body) as Echo).url).toBe("http://api.test/v1/payments")
    } finally {
      await app.close()
    }
  })

  it("forwards the methods node parses and Fastify lacks, QUERY without a Content-Type, and answers TRACE with not_found", async () => {
    const app = Fastify()
    await app.register(xaalisFastify, { handler: stub })
    await app.listen({ port: 0, host: "127.0.0.1" })
    const port = (app.server.address() as AddressInfo).port
    /** One request with node's client, which sends any method token. */
    const send = (method: string, headers: Record<string, string> = {}, body?: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port, method, path: "/v1/balance?x=1", headers }, (res) => {
          let text = ""
          res.on("data", (d) => {
            text += d
          })
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }))
        })
        req.on("error", reject)
        req.end(body)
      })
    try {
      for (const method of ["PROPFIND", "MKCOL", "PURGE", "REPORT", "SEARCH"]) {
        const r = await send(method)
        expect(r.status, method).toBe(200)
        expect((JSON.parse(r.body) as Echo).method, method).toBe(method)
      }
      const query = await send("QUERY", { "content-length": "2" }, "{}")
      expect(query.status).toBe(200)
      expect((JSON.parse(query.body) as Echo).body_length).toBe(2)
      const trace = await send("TRACE")
      expect(trace.status).toBe(404)
      expect(JSON.parse(trace.body)).toEqual({
        error: { message: "No route TRACE /v1/balance?x=1.", code: "not_found" }
      })
    } finally {
      await app.close()
    }
  })

  it("with the API: a body over its cap, or Fastify's, is answered in the API's order and the connection serves on", async () => {
    const api = makeHttpApi({ sandbox: true })
    const app = Fastify()
    await app.register(xaalisFastify, { handler: api.fetch })
    await app.listen({ port: 0, host: "127.0.0.1" })
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const big = new Uint8Array(2 * 1024 * 1024).fill(0x20)
    try {
      const unknown = await fetch(`${origin}/v1/nope`, { method: "POST", body: big })
      expect([unknown.status, ((await unknown.json()) as { error: { code: string } }).error.code]).toEqual([
        404,
        "not_found"
      ])
      const noKey = await fetch(`${origin}/v1/payments`, {
        method: "POST",
        headers: { "content-type": ";;" },
        body: big
      })
      expect([noKey.status, ((await noKey.json()) as { error: { code: string } }).error.code]).toEqual([
        401,
        "authentication_error"
      ])
      const created = await fetch(`${origin}/v1/test_helpers/businesses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}"
      })
      const key = ((await created.json()) as { secret_key_test: string }).secret_key_test
      // chunked, so the cap is met while reading
      const chunked = new ReadableStream<Uint8Array>({
        start: (controller) => {
          for (let i = 0; i < 8; i++) controller.enqueue(big.subarray(0, 64 * 1024))
          controller.close()
        }
      })
      const over = await fetch(`${origin}/v1/payments`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: chunked,
        duplex: "half"
      } as RequestInit)
      expect(over.status).toBe(400)
      expect(((await over.json()) as { error: { message: string } }).error.message).toBe(
        "The request body must not exceed 262144 bytes."
      )
      const after = await fetch(`${origin}/v1/balance`, { headers: { authorization: `Bearer ${key}` } })
      expect(after.status).toBe(200)
    } finally {
      await app.close()
      await api.dispose()
    }
  })

  it("lets the host app's own errors reach the host app's error handler", async () => {
    const app = Fastify()
    app.setErrorHandler((_error, _request, reply) => reply.code(401).send({ host: "handled" }))
    app.addHook("onRequest", async (request) => {
      if (request.headers["x-deny"] === "1") throw new Error("denied by the host app")
    })
    await app.register(xaalisFastify, { handler: stub })
    await app.listen({ port: 0, host: "127.0.0.1" })
    const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    try {
      const denied = await fetch(`${origin}/v1/balance`, { headers: { "x-deny": "1" } })
      expect(denied.status).toBe(401)
      expect(await denied.json()).toEqual({ host: "handled" })
    } finally {
      await app.close()
    }
  })
})

describe("Hono specifics", () => {
  it("leaves other routes to the app and honours the app's basePath", async () => {
    const app = new Hono().basePath("/base")
    mountHono(app, stub, "/api")
    app.get("/api/health", (c) => c.text("ok"))
    const server = await serveFetch(app.fetch)
    try {
      const echo = (await (await fetch(`${server.origin}/base/api/v1/x?y=1`)).json()) as Echo
      expect(echo.url).toBe(`${server.origin}/v1/x?y=1`)
      expect(echo.remoteAddress).toBe("127.0.0.1")
      expect(await (await fetch(`${server.origin}/base/api/health`)).text()).toBe("ok")
      expect((await fetch(`${server.origin}/base/api/v2`)).status).toBe(404)
    } finally {
      await server.close()
    }
  })

  it("takes the client address from a runtime's getConnInfo when given", async () => {
    const app = new Hono()
    mountHono(app, stub, "", { remoteAddress: (c) => c.req.header("x-real-ip") })
    const response = await app.request("/v1/x", { headers: { "x-real-ip": "198.51.100.7" } })
    expect(((await response.json()) as Echo).remoteAddress).toBe("198.51.100.7")
    // Outside @hono/node-server and without the option: no address, no failure.
    const bare = new Hono()
    mountHono(bare, stub)
    expect(((await (await bare.request("/v1/x")).json()) as Echo).remoteAddress).toBeNull()
  })
})

describe("node:http specifics", () => {
  it("answers an unusable Host header with a 400 error object, without calling the handler", async () => {
    let called = false
    const server = await onNode(
      toNodeListener(async (request, context) => {
        called = true
        return stub(request, context)
      })
    )
    try {
      const { port } = new URL(server.origin)
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(
          { host: "127.0.0.1", port, path: "/v1/balance", headers: { host: "exa mple.com" } },
          (res) => {
            let body = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => {
              body += chunk
            })
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
          }
        )
        req.on("error", reject)
        req.end()
      })
      expect(answer.status).toBe(400)
      expect(JSON.parse(answer.body)).toEqual({
        error: { message: "The request could not be read.", code: "validation_error" }
      })
      expect(called).toBe(false)
    } finally {
      await server.close()
    }
  })

  it("reports a handler fault to onError and lets a custom address function answer", async () => {
    const faults: unknown[] = []
    const server = await onNode(
      toNodeListener(stub, { onError: (e) => faults.push(e), remoteAddress: () => "192.0.2.1" })
    )
    try {
      expect((await fetch(`${server.origin}/v1/boom`)).status).toBe(500)
      expect(faults).toHaveLength(1)
      expect(String(faults[0])).toContain("secret internal detail")
      expect(((await (await fetch(`${server.origin}/v1/x`)).json()) as Echo).remoteAddress).toBe("192.0.2.1")
    } finally {
      await server.close()
    }
  })
})

describe("after @hono/node-server's serve() replaced the global Request and Response (its default)", () => {
  it.each(mounts.filter((m) => !m.name.startsWith("Hono") && !m.name.startsWith("bare")))("$name", async (mount) => {
    expect(globalThis.Request).not.toBe(nativeRequest)
    const server = await mount.start(stub)
    try {
      await roundTrip(server.origin, mount)
    } finally {
      await server.close()
    }
  })
})
