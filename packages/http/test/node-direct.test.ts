/**
 * `toNodeListener(api.fetch)` serves a `makeHttpApi` handler directly (no web
 * Request or Response per request). Every case here is sent both ways to the
 * same API, through `api.fetch` in-process and over node:http, and must get
 * the same answer: status, error body and the headers the API sets.
 */
import { once } from "node:events"
import { createServer, request as httpRequest, type Server } from "node:http"
import { createServer as createHttp2Server, connect as http2Connect } from "node:http2"
import { type AddressInfo, connect, type Socket } from "node:net"
import express from "express"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import type { RequestLog } from "../src/HttpApi.ts"
import { answerClientErrors, toNodeListener, xaalisExpress } from "../src/mounts/index.ts"
import { answerNow, coalesced, targetOf } from "../src/mounts/NodeListener.ts"
import { type Setup, setup } from "./helpers.ts"
import { h2Send } from "./http2.ts"

interface Case {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly headers?: ReadonlyArray<readonly [string, string]>
  readonly body?: string | Uint8Array
}

interface Seen {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

let s: Setup
const requestLog: Array<RequestLog> = []
let server: Server
let origin: string
let live: string
let test: string

beforeAll(async () => {
  s = setup({ bodyLimitBytes: 1024, onRequest: (entry) => requestLog.push(entry) })
  server = createServer(toNodeListener(s.api.fetch))
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const biz = await s.business()
  live = biz.secret_key_live
  test = biz.secret_key_test
})

afterAll(async () => {
  await new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

const viaFetch = async (c: Case): Promise<Seen> => {
  const res = await s.api.fetch(
    new Request(`http://api.test${c.path}`, {
      method: c.method,
      headers: (c.headers ?? []).map(([k, v]) => [k, v]),
      ...(c.body === undefined ? {} : { body: c.body })
    }),
    { remoteAddress: "127.0.0.1" }
  )
  return { status: res.status, headers: res.headers, text: await res.text() }
}

const viaNode = async (c: Case): Promise<Seen> => {
  const res = await fetch(`${origin}${c.path}`, {
    method: c.method,
    headers: (c.headers ?? []).map(([k, v]) => [k, v]),
    ...(c.body === undefined ? {} : { body: c.body })
  })
  return { status: res.status, headers: res.headers, text: await res.text() }
}

const apiHeaders = ["content-type", "cache-control", "allow", "retry-after", "content-security-policy"]

const expectSame = (a: Seen, b: Seen) => {
  expect(b.status).toBe(a.status)
  for (const h of apiHeaders) expect([h, b.headers.get(h)]).toEqual([h, a.headers.get(h)])
  for (const seen of [a, b]) expect(seen.headers.get("request-id")).toMatch(/^[0-9a-f-]{36}$/)
  expect(b.headers.get("request-id")).not.toBe(a.headers.get("request-id"))
  if (a.status >= 400) expect(b.text).toBe(a.text)
}

const json = (key: string, body: unknown, more: ReadonlyArray<readonly [string, string]> = []): Partial<Case> => ({
  headers: [["authorization", `Bearer ${key}`], ["content-type", "application/json"], ...more],
  body: JSON.stringify(body)
})

const cases = (): ReadonlyArray<Case> => [
  { name: "unknown route", method: "GET", path: "/v1/nope" },
  { name: "known path, wrong method", method: "DELETE", path: "/v1/payments" },
  { name: "no key", method: "POST", path: "/v1/payments", body: "{}" },
  {
    name: "unknown key",
    method: "POST",
    path: "/v1/payments",
    headers: [["authorization", "Bearer sk_live_nobodyhasthiskeyatall"]]
  },
  { name: "malformed authorization", method: "GET", path: "/v1/balance", headers: [["authorization", "Basic x"]] },
  { name: "test key on a live-only route", method: "POST", path: "/v1/minting/offramp", ...json(test, {}) },
  {
    name: "a body that is not JSON",
    method: "POST",
    path: "/v1/minting/offramp",
    headers: [
      ["authorization", `Bearer ${live}`],
      ["content-type", "text/plain"]
    ],
    body: "gmd_amount=5000"
  },
  {
    name: "invalid UTF-8",
    method: "POST",
    path: "/v1/minting/offramp",
    headers: [
      ["authorization", `Bearer ${live}`],
      ["content-type", "application/json"]
    ],
    body: Uint8Array.from([0x7b, 0xff, 0xfe, 0x7d])
  },
  {
    name: "a missing body",
    method: "POST",
    path: "/v1/minting/offramp",
    headers: [["authorization", `Bearer ${live}`]]
  },
  {
    name: "malformed JSON",
    method: "POST",
    path: "/v1/minting/offramp",
    headers: [
      ["authorization", `Bearer ${live}`],
      ["content-type", "application/json"]
    ],
    body: '{"gmd_amount":'
  },
  { name: "a field error", method: "POST", path: "/v1/minting/offramp", ...json(live, { gmd_amount: 1.234 }) },
  {
    name: "a body over the limit",
    method: "POST",
    path: "/v1/minting/offramp",
    ...json(live, { gmd_amount: 5000, pad: "x".repeat(2000) })
  },
  {
    name: "an Idempotency-Key that is not visible ASCII",
    method: "POST",
    path: "/v1/minting/offramp",
    ...json(live, { gmd_amount: 5000 }, [["idempotency-key", "has space"]])
  },
  {
    name: "a repeated Idempotency-Key (joined with a comma and a space: refused)",
    method: "POST",
    path: "/v1/minting/offramp",
    ...json(live, { gmd_amount: 5000 }, [
      ["idempotency-key", "a"],
      ["idempotency-key", "b"]
    ])
  },
  {
    name: "a bad X-No-Effect",
    method: "POST",
    path: "/v1/payments",
    ...json(test, { data: { amount: 10, currency: "GMD" } }, [["x-no-effect", "maybe"]])
  },
  {
    name: "a percent-encoded path parameter",
    method: "GET",
    path: "/v1/minting/ramps/%72amp%20x",
    headers: [["authorization", `Bearer ${live}`]]
  },
  {
    name: "a dot segment",
    method: "GET",
    path: "/v1/minting/../balance",
    headers: [["authorization", `Bearer ${live}`]]
  },
  {
    name: "a query out of range",
    method: "GET",
    path: "/v1/minting/ramps?limit=0",
    headers: [["authorization", `Bearer ${live}`]]
  },
  {
    name: "a list with a query",
    method: "GET",
    path: "/v1/minting/ramps?limit=1&offset=0",
    headers: [["authorization", `Bearer ${live}`]]
  },
  { name: "HEAD", method: "HEAD", path: "/v1/balance", headers: [["authorization", `Bearer ${test}`]] },
  { name: "the API description", method: "GET", path: "/v1/openapi.json" },
  { name: "the docs page", method: "GET", path: "/docs" },
  { name: "a create", method: "POST", path: "/v1/minting/offramp", ...json(live, { gmd_amount: 5000 }) }
]

describe("node:http direct path and api.fetch give the same answers", () => {
  it.each(cases().map((c) => [c.name, c] as const))("%s", async (_, c) => {
    // the keys exist only after beforeAll: rebuild the case now
    const now = cases().find((x) => x.name === c.name) as Case
    const a = await viaFetch(now)
    const b = await viaNode(now)
    expectSame(a, b)
    if (now.method === "HEAD") expect([a.text, b.text]).toEqual(["", ""])
    if (now.name.startsWith("the ")) expect(b.text).toBe(a.text)
    if (now.name === "a create") {
      expect([a.status, b.status]).toEqual([201, 201])
      expect(Object.keys(JSON.parse(b.text)).sort()).toEqual(Object.keys(JSON.parse(a.text)).sort())
    }
    if (now.name === "a list with a query") expect(JSON.parse(b.text).meta).toMatchObject({ limit: 1, offset: 0 })
  })

  it("fingerprints a keyed POST the same way: the second face replays the first answer", async () => {
    const c = {
      name: "keyed",
      method: "POST",
      path: "/v1/minting/offramp",
      ...json(live, { gmd_amount: 7000 }, [["idempotency-key", "both-faces-1"]])
    } as Case
    const first = await viaFetch(c)
    const replay = await viaNode(c)
    expect(first.status).toBe(201)
    expect({ status: replay.status, text: replay.text }).toEqual({ status: first.status, text: first.text })
  })
})

/** A raw HTTP/1.1 exchange, for what `fetch` will not send. */
const raw = (
  options: { path: string; method?: string; headers?: Record<string, string> },
  write: (req: ReturnType<typeof httpRequest>) => void
) =>
  new Promise<{ status: number; text: string }>((resolve, reject) => {
    const { port } = new URL(origin)
    const req = httpRequest(
      { host: "127.0.0.1", port, path: options.path, method: options.method ?? "GET", headers: options.headers },
      (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => {
          text += chunk
        })
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }))
      }
    )
    req.on("error", reject)
    write(req)
  })

describe("node:http direct path specifics", () => {
  it("answers an unusable Host header with a 400 error object", async () => {
    const answer = await raw({ path: "/v1/balance", headers: { host: "exa mple.com" } }, (req) => req.end())
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.text)).toEqual({
      error: { message: "The request could not be read.", code: "validation_error" }
    })
  })

  it("caps a streamed body without Content-Length, and keeps serving", async () => {
    let written = 0
    const answer = await raw(
      {
        path: "/v1/minting/offramp",
        method: "POST",
        headers: { authorization: `Bearer ${live}`, "content-type": "application/json", "transfer-encoding": "chunked" }
      },
      (req) => {
        const pump = () => {
          while (written < 64 * 1024) {
            written += 512
            if (!req.write(" ".repeat(512))) return void req.once("drain", pump)
          }
          req.end()
        }
        pump()
      }
    )
    expect(answer.status).toBe(400)
    expect(JSON.parse(answer.text).error.message).toBe("The request body must not exceed 1024 bytes.")
    expect((await viaNode({ name: "after", method: "GET", path: "/v1/openapi.json" })).status).toBe(200)
  })

  it("survives a client that goes away in the middle of its body", async () => {
    const { port } = new URL(origin)
    const req = httpRequest({
      host: "127.0.0.1",
      port,
      agent: false,
      path: "/v1/minting/offramp",
      method: "POST",
      headers: { authorization: `Bearer ${live}`, "content-type": "application/json", "content-length": "1000" }
    })
    const failed = new Promise<boolean>((resolve) => {
      req.on("error", () => resolve(true))
      req.on("response", () => resolve(false))
    })
    const logged = requestLog.length
    req.write('{"gmd_amount":')
    await new Promise((resolve) => setTimeout(resolve, 50))
    req.destroy()
    expect(await failed).toBe(true)
    // the server saw the body end early and answered (to nobody) that it could not be read
    await vi.waitFor(
      () =>
        expect(requestLog.slice(logged)).toContainEqual(
          expect.objectContaining({ method: "POST", path: "/v1/minting/offramp", status: 400 })
        ),
      { timeout: 10_000 }
    )
    const after = await viaNode({
      name: "after",
      method: "POST",
      path: "/v1/minting/offramp",
      ...json(live, { gmd_amount: 5000 })
    })
    expect(after.status).toBe(201)
  })
})

describe("answers written together per turn of the event loop (coalesceWrites)", () => {
  const fakeOutgoing = (events: Array<string>, name: string, failWith?: Error) => {
    const out = {
      headersSent: false,
      destroyed: false,
      writeHead: (status: number) => {
        if (failWith !== undefined) throw failWith
        events.push(`${name}:head:${status}`)
      },
      end: (body?: string) => events.push(`${name}:end:${body ?? ""}`),
      once: () => out,
      destroy: () => {
        out.destroyed = true
        events.push(`${name}:destroy`)
      }
    }
    return out
  }
  const complete = { complete: true }
  const answer = (text: string) => ({ status: 201, headers: { "content-type": "application/json" }, body: text })
  // biome-ignore lint/suspicious/noExplicitAny: minimal stand-ins for node's request and response
  const cast = (x: unknown) => x as any

  it("holds the answers of a turn and writes them, in order, in that turn's check phase", async () => {
    const events: Array<string> = []
    const write = coalesced((e) => events.push(`error:${String(e)}`))
    write(cast(complete), cast(fakeOutgoing(events, "a")), cast(answer("1")))
    write(cast(complete), cast(fakeOutgoing(events, "b")), cast(answer("2")))
    await Promise.resolve()
    expect(events).toEqual([]) // not before the check phase, not in a microtask
    await new Promise((resolve) => setImmediate(resolve))
    expect(events).toEqual(["a:head:201", "a:end:1", "b:head:201", "b:end:2"])
    // the next turn's answers form a batch of their own
    write(cast(complete), cast(fakeOutgoing(events, "c")), cast(answer("3")))
    await new Promise((resolve) => setImmediate(resolve))
    expect(events.slice(4)).toEqual(["c:head:201", "c:end:3"])
  })

  it("a write that throws is reported, drops that connection only, and the batch goes on", async () => {
    const events: Array<string> = []
    const errors: Array<unknown> = []
    const write = coalesced((e) => errors.push(e))
    const boom = new Error("invalid header")
    write(cast(complete), cast(fakeOutgoing(events, "a", boom)), cast(answer("1")))
    write(cast(complete), cast(fakeOutgoing(events, "b")), cast(answer("2")))
    await new Promise((resolve) => setImmediate(resolve))
    expect(errors).toEqual([boom])
    expect(events).toEqual(["a:destroy", "b:head:201", "b:end:2"])
  })

  it("answerNow (coalesceWrites: false) writes at once; a connection already gone gets nothing", () => {
    const events: Array<string> = []
    const write = answerNow(() => events.push("error"))
    write(cast(complete), cast(fakeOutgoing(events, "a")), cast(answer("1")))
    expect(events).toEqual(["a:head:201", "a:end:1"])
    const gone = fakeOutgoing(events, "b")
    gone.destroyed = true
    write(cast(complete), cast(gone), cast(answer("2")))
    expect(events).toEqual(["a:head:201", "a:end:1"])
  })

  it.each([true, false])(
    "over node:http (coalesceWrites %s), 40 concurrent creates each get their own answer",
    async (coalesceWrites) => {
      const own = createServer(toNodeListener(s.api.fetch, { coalesceWrites }))
      own.listen(0, "127.0.0.1")
      await once(own, "listening")
      const base = `http://127.0.0.1:${(own.address() as AddressInfo).port}`
      try {
        const amounts = Array.from({ length: 40 }, (_, i) => 5000 + i * 7)
        const answers = await Promise.all(
          amounts.map(async (gmd_amount) => {
            const res = await fetch(`${base}/v1/minting/offramp`, {
              method: "POST",
              headers: { authorization: `Bearer ${live}`, "content-type": "application/json" },
              body: JSON.stringify({ gmd_amount })
            })
            return { status: res.status, body: (await res.json()) as { gmd_amount: number; id: string } }
          })
        )
        expect(answers.map((a) => a.status)).toEqual(amounts.map(() => 201))
        expect(answers.map((a) => a.body.gmd_amount)).toEqual(amounts)
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(amounts.length)
      } finally {
        await new Promise<void>((resolve) => {
          own.close(() => resolve())
          own.closeAllConnections()
        })
      }
    }
  )
})

describe("Express, through the same direct path", () => {
  it("serves the API under a prefix, and from bytes a raw body parser kept (with the cap)", async () => {
    const app = express()
    app.use("/api", xaalisExpress(s.api.fetch))
    app.use("/raw", express.raw({ type: "*/*", limit: "1mb" }), xaalisExpress(s.api.fetch))
    const ex = createServer(app)
    ex.listen(0, "127.0.0.1")
    await once(ex, "listening")
    const at = `http://127.0.0.1:${(ex.address() as AddressInfo).port}`
    try {
      const headers = { authorization: `Bearer ${live}`, "content-type": "application/json" }
      const created = await fetch(`${at}/api/v1/minting/offramp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ gmd_amount: 5000 })
      })
      expect(created.status).toBe(201)
      const list = await fetch(`${at}/api/v1/minting/ramps?limit=1`, { headers })
      expect(((await list.json()) as { meta: { limit: number } }).meta.limit).toBe(1)
      const kept = await fetch(`${at}/raw/v1/minting/offramp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ gmd_amount: 6000 })
      })
      expect(kept.status).toBe(201)
      const tooBig = await fetch(`${at}/raw/v1/minting/offramp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ gmd_amount: 6000, pad: "x".repeat(2000) })
      })
      expect(tooBig.status).toBe(400)
      expect(((await tooBig.json()) as { error: { message: string } }).error.message).toBe(
        "The request body must not exceed 1024 bytes."
      )
    } finally {
      await new Promise<void>((resolve) => {
        ex.close(() => resolve())
        ex.closeAllConnections()
      })
    }
  })
})

describe("targetOf", () => {
  const alphabet = "!#$&'()*+,-./0123456789:;=?@ABCZ[]_abcz~%\\ "
  const incoming = (url: string, host = "127.0.0.1:3000") =>
    ({ url, headers: { host }, socket: {} }) as unknown as Parameters<typeof targetOf>[0]

  it("gives the path URL would give, whether or not it parsed the target", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 40 }).map((rest) => `/${rest}`),
        (target) => {
          const t = targetOf(incoming(target), undefined)
          if (t === undefined) return
          const url = new URL(t.href)
          expect(t.pathname).toBe(url.pathname)
          expect(t.url().href).toBe(url.href)
        }
      )
    )
  })

  it("refuses what @hono/node-server refuses: no Host, a Host with a path, a backslash in the path", () => {
    expect(targetOf(incoming("/v1/balance", ""), undefined)).toBeUndefined()
    expect(targetOf(incoming("/v1/balance", ""), "fallback.test")?.href).toBe("http://fallback.test/v1/balance")
    expect(targetOf(incoming("/v1/balance", "a.test/evil"), undefined)).toBeUndefined()
    expect(targetOf(incoming("/v1\\balance"), undefined)).toBeUndefined()
    expect(targetOf(incoming("v1/balance"), undefined)).toBeUndefined()
    expect(targetOf(incoming("/v1/balance?q=\\"), undefined)?.pathname).toBe("/v1/balance")
  })
})

/** Sends `raw` bytes on a fresh connection and resolves with everything the server wrote back. */
const rawExchange = (port: number, raw: string) =>
  new Promise<string>((resolve, reject) => {
    const socket = connect(port, "127.0.0.1", () => socket.write(raw))
    let got = ""
    socket.on("data", (d) => {
      got += d.toString()
    })
    socket.on("end", () => resolve(got))
    socket.on("close", () => resolve(got))
    socket.on("error", reject)
  })

/** A node:http server of `s`'s API with `answerClientErrors`, listening on a free port. */
const answeringServer = async (s: Setup, options: Parameters<typeof createServer>[0] = {}) => {
  const server = createServer(options, toNodeListener(s.api.fetch))
  answerClientErrors(server)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  return { server, port: (server.address() as AddressInfo).port }
}

describe("answerClientErrors", () => {
  it("answers what node:http cannot parse with the error object, not an empty body", async () => {
    const s = setup()
    const { server, port } = await answeringServer(s)
    try {
      const cases = [
        ["FOO BAR\r\n\r\n", "not valid HTTP"],
        [`GET /v1/payments HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, "headers are too large"],
        // an expectation node cannot meet: it would answer a bare 417 with an empty body
        ["GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", "supports only 100-continue"]
      ] as const
      for (const [raw, message] of cases) {
        const answer = await rawExchange(port, raw)
        expect(answer.startsWith("HTTP/1.1 400 "), answer.slice(0, 40)).toBe(true)
        expect(answer).toContain("content-type: application/json")
        const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))
        expect(body.error.code).toBe("validation_error")
        expect(body.error.message).toContain(message)
      }
      // a well-formed request on the same server is served as usual
      const ok = await fetch(`http://127.0.0.1:${port}/v1/openapi.json`)
      expect(ok.status).toBe(200)
      // Expect: 100-continue is met as usual
      const continued = await rawExchange(
        port,
        "GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"
      )
      expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 /)
    } finally {
      server.close()
      await s.api.dispose()
    }
  })
})

describe("answerClientErrors closes what it answers", () => {
  const connections = (server: ReturnType<typeof createServer>) =>
    new Promise<number>((resolve, reject) => server.getConnections((e, n) => (e ? reject(e) : resolve(n))))

  it("a client cut off by headersTimeout that never closes its side is closed by the server", async () => {
    const s = setup()
    const { server, port } = await answeringServer(s, {
      headersTimeout: 200,
      requestTimeout: 200,
      connectionsCheckingInterval: 50
    })
    const clients: Array<Socket> = []
    try {
      // half a request line, then silence: the slowloris pattern; these clients never close
      for (let i = 0; i < 5; i++) {
        const c = connect({ port, host: "127.0.0.1", allowHalfOpen: true })
        c.on("error", () => {})
        await once(c, "connect")
        c.write("GET /v1/balance HTTP/1.1\r\n")
        clients.push(c)
      }
      expect(await connections(server)).toBe(5)
      const answers = await Promise.all(
        clients.map(
          (c) =>
            new Promise<string>((resolve) => {
              let got = ""
              c.on("data", (d) => {
                got += d.toString()
              })
              c.on("end", () => resolve(got))
            })
        )
      )
      for (const answer of answers) {
        expect(answer.startsWith("HTTP/1.1 400 ")).toBe(true)
        expect(answer).toContain('"The request took too long to arrive."')
      }
      // before, each stayed open (half-closed, its descriptor held) for as long as the client kept it
      const deadline = Date.now() + 5_000
      while ((await connections(server)) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      expect(await connections(server)).toBe(0)
    } finally {
      for (const c of clients) c.destroy()
      server.close()
      await s.api.dispose()
    }
  })

  it("CONNECT gets the error object (404 not_found) instead of a closed connection", async () => {
    const s = setup()
    const { server, port } = await answeringServer(s)
    try {
      const answer = await rawExchange(port, "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n")
      expect(answer.startsWith("HTTP/1.1 404 "), answer.slice(0, 40)).toBe(true)
      expect(answer).toContain("content-type: application/json")
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toStrictEqual({
        error: { message: "No route CONNECT 127.0.0.1:22.", code: "not_found" }
      })
    } finally {
      server.close()
      await s.api.dispose()
    }
  })
})

describe("requests without a Host header", () => {
  const exchange = async (port: number, raw: string) => {
    const got = await rawExchange(port, raw)
    const at = got.indexOf("\r\n\r\n")
    return { head: got.slice(0, at), body: got.slice(at + 4) }
  }

  it("HTTP/1.1 gets 400 with the error object (server made with requireHostHeader: false); HTTP/1.0 is served on the given hostname", async () => {
    const s = setup()
    const { secret_key_test: key } = await s.business()
    const server = createServer({ requireHostHeader: false }, toNodeListener(s.api.fetch, { hostname: "api.test" }))
    server.listen(0, "127.0.0.1")
    await once(server, "listening")
    const port = (server.address() as AddressInfo).port
    try {
      const missing = await exchange(
        port,
        `GET /v1/balance HTTP/1.1\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`
      )
      expect(missing.head).toMatch(/^HTTP\/1\.1 400 /)
      expect(missing.head.toLowerCase()).toContain("content-type: application/json")
      expect(JSON.parse(missing.body)).toStrictEqual({
        error: { message: "An HTTP/1.1 request must carry a Host header.", code: "validation_error" }
      })
      const old = await exchange(port, `GET /v1/balance HTTP/1.0\r\nAuthorization: Bearer ${key}\r\n\r\n`)
      expect(old.head).toMatch(/^HTTP\/1\.1 200 /)
      expect(Object.keys(JSON.parse(old.body))).toContain("available")
      // with a Host, HTTP/1.1 is served as usual
      const normal = await exchange(
        port,
        `GET /v1/balance HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`
      )
      expect(normal.head).toMatch(/^HTTP\/1\.1 200 /)
    } finally {
      server.close()
      await s.api.dispose()
    }
  })
})

describe("over HTTP/2 (node's compatibility API)", () => {
  it("serves the API: the host from `:authority`, bodies read, the session's own idle timeout kept", async () => {
    const h2 = createHttp2Server(toNodeListener(s.api.fetch, { unreadAnswerMs: 300 }) as never)
    h2.listen(0, "127.0.0.1")
    await once(h2, "listening")
    const port = (h2.address() as AddressInfo).port
    const session = http2Connect(`http://127.0.0.1:${port}`)
    session.on("error", () => undefined)
    const send = (headers: Record<string, string>, body?: string) => h2Send(session, headers, body)
    try {
      const created = await send(
        {
          ":method": "POST",
          ":path": "/v1/payment-links",
          authorization: `Bearer ${test}`,
          "content-type": "application/json"
        },
        JSON.stringify({ data: { title: "Over h2", amount: 150, currency: "GMD" } })
      )
      expect(created.status).toBe(201)
      const link = JSON.parse(created.body) as { id: string; amount: number }
      expect(link.amount).toBe(150)
      const read = await send({ ":path": `/v1/payment-links/${link.id}`, authorization: `Bearer ${test}` })
      expect(read.status).toBe(200)
      expect(JSON.parse(read.body)).toMatchObject({ id: link.id, amount: 150 })
      expect((await send({ ":path": "/v1/payment-links" })).status).toBe(401)
      expect((await send({ ":path": "/v1/openapi.json" })).status).toBe(200) // larger than a window
      // unreadAnswerMs watches HTTP/1 connections only: an HTTP/2 session is shared by its streams
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expect(session.closed || session.destroyed).toBe(false)
    } finally {
      session.destroy()
      await new Promise<void>((resolve) => h2.close(() => resolve()))
    }
  })
})
