import { readFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import type { TLSSocket } from "node:tls"
import { Businesses, type Delivery, IdsAdapter, MemoryStore } from "@xaalis/engine"
import { Effect, Layer, type Scope } from "effect"
import type { AddressGuard } from "../src/notifier/index.ts"

/** One request a receiver got. */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: Buffer
  /** The TLS server name (SNI) the client asked for, for https receivers. */
  readonly servername: string | undefined
}

export type Answer =
  | { readonly status: number; readonly headers?: http.OutgoingHttpHeaders; readonly body?: string }
  | "hang"

export interface Receiver {
  readonly port: number
  /** `http(s)://<host>:<port><path>`, host 127.0.0.1 unless given. */
  readonly url: (path?: string, host?: string) => string
  readonly received: ReadonlyArray<Received>
  /** TCP connections accepted (including ones that never sent a request). */
  readonly connections: () => number
  /** Resolves when `n` requests have arrived. */
  readonly arrived: (n: number) => Promise<void>
  /** Requests whose connection has closed. */
  readonly closed: () => number
}

const fixture = (name: string) => readFileSync(new URL(`./fixtures/notifier-tls/${name}`, import.meta.url), "utf8")

/** The test CA and the `receiver.test` certificate it signed. */
export const tls = {
  ca: fixture("ca.pem"),
  cert: fixture("receiver.pem"),
  key: fixture("receiver-key.pem")
}

/**
 * A real receiver on 127.0.0.1 and an ephemeral port, answering each request with
 * `respond(request, index)`; closed (with every connection) when the scope ends.
 */
export const startReceiver = (
  respond: (request: Received, index: number) => Answer,
  options: { readonly https?: boolean } = {}
): Effect.Effect<Receiver, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const received: Array<Received> = []
      const waiters: Array<{ readonly n: number; readonly resolve: () => void }> = []
      let connections = 0
      let closed = 0
      const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const request: Received = {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            body: Buffer.concat(chunks),
            servername: (req.socket as TLSSocket).servername || undefined
          }
          const index = received.length
          received.push(request)
          req.socket.once("close", () => closed++)
          for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve()
          const answer = respond(request, index)
          if (answer === "hang") return
          res.writeHead(answer.status, answer.headers)
          res.end(answer.body)
        })
      }
      const server = options.https
        ? https.createServer({ cert: tls.cert, key: tls.key }, handler)
        : http.createServer(handler)
      server.on("connection", () => connections++)
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      const port = (server.address() as AddressInfo).port
      const scheme = options.https ? "https" : "http"
      const receiver: Receiver = {
        port,
        url: (path = "/hooks", host = "127.0.0.1") => `${scheme}://${host}:${port}${path}`,
        received,
        connections: () => connections,
        closed: () => closed,
        arrived: (n) =>
          received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))
      }
      return { server, receiver }
    }),
    ({ server }) =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections()
            server.close(() => resolve())
          })
      )
  ).pipe(Effect.map(({ receiver }) => receiver))

/** A port nothing listens on (bound, then released). */
export const closedPort: Effect.Effect<number> = Effect.promise(async () => {
  const server = http.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
})

/** A lookup answering `addresses` for every host name, counting its calls. */
export const fixedLookup = (...addresses: ReadonlyArray<string>) => {
  const calls: Array<string> = []
  const lookup: AddressGuard.Lookup = async (hostname) => {
    calls.push(hostname)
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
  }
  return { lookup, calls }
}

/** The in-memory store with deterministic ids: what the notifier needs to read webhook secrets. */
export const storeLayer = Layer.mergeAll(MemoryStore.layer, IdsAdapter.layerDeterministic(11))

export const createBusiness = Businesses.createBusiness({ name: "Kairaba Coffee" })

export const body = JSON.stringify({
  event: "ramp.paid",
  payload: { id: "conv_1", reference: "RMP-1", actually_paid: 73.64, note: "dalasi é ✓ 💸" }
})

export const delivery = (business_id: string, url: string, overrides: Partial<Delivery> = {}): Delivery => ({
  event_id: "4b0d1c9e-8f7a-4d2b-9a61-3c5e2f1a0b7d",
  url,
  body,
  business_id,
  mode: "live",
  attempt: 1,
  ...overrides
})

/** Waits (real time, at most about 2 s) until `condition` holds; the caller then asserts it. */
export const waitFor = (condition: () => boolean): Effect.Effect<void> =>
  Effect.promise(async () => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  })
