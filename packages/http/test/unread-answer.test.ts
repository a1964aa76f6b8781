/**
 * A client that never reads its answers must not keep its connection (and the
 * server's file descriptor, and the answers buffered for it) for ever. node's
 * `headersTimeout` and `requestTimeout` watch only the request, and the
 * keep-alive timeout starts only once an answer has been handed to the OS: a
 * client that asks for large answers (pipelined, or one larger than the
 * socket buffers on a real network) and never reads them held its connection
 * until it went away (an audit held 250 connections, every descriptor of a
 * server limited to 256, for as long as it liked). The node mount, the
 * Fastify plugin and the Hono mount under @hono/node-server now close a
 * connection whose answer waits `unreadAnswerMs` without the client taking
 * any of it; a client that reads, however slowly, keeps it.
 */
import { once } from "node:events"
import { createServer, type Server } from "node:http"
import { type AddressInfo, connect, type Socket } from "node:net"
import { serve as honoServe } from "@hono/node-server"
import Fastify from "fastify"
import { Hono } from "hono"
import { afterEach, describe, expect, it } from "vitest"
import { xaalisFastify } from "../src/fastify.ts"
import { mountHono, toNodeListener } from "../src/mounts/index.ts"
import { type Setup, setup } from "./helpers.ts"

let s: Setup | undefined
let server: Server | undefined
/** The server's side of each connection, in the order they came. */
let accepted: Array<Socket> = []

afterEach(async () => {
  if (server !== undefined) {
    const closing = new Promise<void>((resolve) => server?.close(() => resolve()))
    server.closeAllConnections()
    await closing
  }
  await s?.api.dispose()
  server = undefined
  s = undefined
  accepted = []
})

type Mount = "node" | "fastify" | "hono"
const mountNames: ReadonlyArray<Mount> = ["node", "fastify", "hono"]

/** The API (rate limits off) served on one of the mounts, with `unreadAnswerMs` (and the node mount's `coalesceWrites`). */
const serve = async (
  mount: Mount,
  options: { readonly unreadAnswerMs: number; readonly coalesceWrites?: boolean },
  wrap?: (fetch: Setup["api"]["fetch"]) => Setup["api"]["fetch"]
) => {
  s = setup({ rateLimit: false })
  const api = wrap === undefined ? s.api : { fetch: wrap(s.api.fetch) }
  if (mount === "node") {
    server = createServer(toNodeListener(api.fetch, options))
    server.listen(0, "127.0.0.1")
  } else if (mount === "fastify") {
    const app = Fastify()
    await app.register(xaalisFastify, { handler: api.fetch, unreadAnswerMs: options.unreadAnswerMs })
    await app.ready()
    server = app.server
    server.listen(0, "127.0.0.1")
  } else {
    const app = new Hono()
    mountHono(app, api.fetch, undefined, { unreadAnswerMs: options.unreadAnswerMs })
    server = honoServe({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }) as Server
  }
  server.on("connection", (socket: Socket) => accepted.push(socket))
  if (!server.listening) await once(server, "listening")
  return (server.address() as AddressInfo).port
}

/** `n` requests for the OpenAPI document (about 130 KB each) in one write: more than the socket buffers hold. */
const pipelined = async (port: number, n: number): Promise<{ client: Socket; served: Socket }> => {
  const client = connect(port, "127.0.0.1")
  client.on("error", () => undefined)
  await once(server as Server, "connection")
  client.write("GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(n))
  return { client, served: accepted.at(-1) as Socket }
}

/**
 * Resolves with how long the server's side of a connection stayed open, or undefined if it was still
 * open after `ms` (a client that does not read cannot see the close itself).
 */
const closedWithin = (socket: Socket, ms: number): Promise<number | undefined> =>
  new Promise((resolve) => {
    const t0 = performance.now()
    const timer = setTimeout(() => resolve(undefined), ms)
    socket.once("close", () => {
      clearTimeout(timer)
      resolve(performance.now() - t0)
    })
  })

describe.each(mountNames)("a client that does not read its answers (%s mount)", (mount) => {
  for (const coalesceWrites of mount === "node" ? [true, false] : [undefined]) {
    it(`loses its connection after unreadAnswerMs${coalesceWrites === undefined ? "" : ` (coalesceWrites: ${coalesceWrites})`}`, {
      timeout: 20_000
    }, async () => {
      const port = await serve(mount, {
        unreadAnswerMs: 300,
        ...(coalesceWrites === undefined ? {} : { coalesceWrites })
      })
      const { client, served } = await pipelined(port, 60)
      client.pause() // never reads
      const held = await closedWithin(served, 8_000)
      client.destroy()
      expect(held).toBeDefined()
    })
  }

  it("a client that took its answer keeps its idle keep-alive connection past unreadAnswerMs", {
    timeout: 20_000
  }, async () => {
    const port = await serve(mount, { unreadAnswerMs: 300 })
    const { client, served } = await pipelined(port, 1)
    let text = ""
    client.setEncoding("latin1")
    client.on("data", (chunk: string) => {
      text += chunk
    })
    // the connection outlives unreadAnswerMs several times over once its answer is taken
    expect(await closedWithin(served, 1_500)).toBeUndefined()
    expect(text.startsWith("HTTP/1.1 200 OK")).toBe(true)
    client.destroy()
  })

  it("a request pipelined behind a taken answer may take longer than unreadAnswerMs", { timeout: 20_000 }, async () => {
    // the second request's handler works 1.2 s, four times unreadAnswerMs, while the client reads everything
    const slow =
      (fetch: Setup["api"]["fetch"]): Setup["api"]["fetch"] =>
      (request, context) =>
        new URL(request.url).pathname === "/v1/slow"
          ? new Promise((resolve) => setTimeout(() => resolve(Response.json({ slow: true })), 1_200))
          : fetch(request, context)
    const port = await serve(mount, { unreadAnswerMs: 300 }, slow)
    const client = connect(port, "127.0.0.1")
    client.on("error", () => undefined)
    let text = ""
    client.setEncoding("latin1")
    client.on("data", (chunk: string) => {
      text += chunk
    })
    await once(client, "connect")
    client.write("GET /v1/openapi.json HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/slow HTTP/1.1\r\nHost: x\r\n\r\n")
    for (let waited = 0; waited < 5_000 && !text.includes('{"slow":true}') && !client.destroyed; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(text.split("HTTP/1.1 200 OK").length - 1).toBe(2)
    expect(text).toContain('{"slow":true}')
    client.destroy()
  })

  it("a client reading slowly but steadily keeps its connection and gets every answer", {
    timeout: 20_000
  }, async () => {
    const port = await serve(mount, { unreadAnswerMs: 300 })
    const n = 12
    const { client: socket } = await pipelined(port, n)
    let text = ""
    socket.setEncoding("latin1")
    socket.pause()
    // 64 KB every 100 ms: well under the document's size per step, never 300 ms without taking a byte
    const reader = setInterval(() => {
      for (let chunk = socket.read(); chunk !== null; chunk = socket.read()) {
        text += chunk
        if (text.length % 65_536 < (chunk as string).length) break
      }
    }, 100)
    const statuses = async () => {
      for (;;) {
        const count = text.split("HTTP/1.1 200 OK").length - 1
        // the last answer complete: its body's end, or (Fastify streams the body) the last chunk's
        if (count === n && (text.endsWith("}") || text.endsWith("}\r\n0\r\n\r\n"))) return count
        if (socket.destroyed) return count
        await new Promise((r) => setTimeout(r, 50))
      }
    }
    const got = await statuses()
    clearInterval(reader)
    expect(socket.destroyed).toBe(false)
    expect(got).toBe(n)
    socket.destroy()
  })

  it("unreadAnswerMs: 0 leaves such a connection open (node's own behaviour)", { timeout: 20_000 }, async () => {
    const port = await serve(mount, { unreadAnswerMs: 0 })
    const { client, served } = await pipelined(port, 60)
    client.pause()
    expect(await closedWithin(served, 2_000)).toBeUndefined()
    client.destroy()
  })
})
