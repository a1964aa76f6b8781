/**
 * The fetch handler as a `node:http` / `node:https` request listener.
 *
 * - A handler made by `makeHttpApi` is served directly: its core reads the
 *   node request (headers from `rawHeaders`, the body with the API's cap) and
 *   its answer is written with one `writeHead` and `end`, without building a
 *   web `Request` and `Response` for every request. What it sees and answers is
 *   the same as through `fetch` (a test holds both paths to it).
 * - Any other fetch handler goes through @hono/node-server's
 *   `getRequestListener`: it streams the exact body bytes, keeps every header
 *   (repeated ones too, from `rawHeaders`), aborts the request signal when the
 *   client goes away and writes every response header back (`set-cookie` as
 *   separate lines).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import type { Duplex } from "node:stream"
import type { TLSSocket } from "node:tls"
import { getRequestListener, type HttpBindings, RequestError } from "@hono/node-server"
import { type CappedRead, concat, declaredTooLarge, tooLarge, unreadable } from "../body.ts"
import { type ApiHandler, type ApiResponse, apiHandlerOf } from "../HttpApi.ts"
import { contextOf, errorResponse, type Handler, messages, rebuild } from "./internal.ts"

export interface NodeListenerOptions {
  /**
   * The client address given to the handler (rate limiting of requests without a key).
   * Default: the socket's peer address. Behind a reverse proxy, read the header your
   * proxy sets, and only from a proxy you trust.
   */
  readonly remoteAddress?: (incoming: IncomingMessage) => string | undefined
  /**
   * Host used when an HTTP/1.0 request carries no `Host` header (where it is
   * optional). Without it such requests get a 400. An HTTP/1.1 request without
   * `Host` always gets `400 validation_error` (RFC 9112 §3.2): node answers those
   * itself with an empty body unless the server is created with
   * `requireHostHeader: false`, which lets this listener answer the error object.
   */
  readonly hostname?: string
  /** Receives a fault of the handler itself (it should never throw); the client gets a 500 `internal_error`. Default: `console.error`. */
  readonly onError?: (error: unknown) => void
  /**
   * Answers ready in one turn of the event loop are written together at the end
   * of that turn (its check phase) instead of one by one as each is ready.
   * Under load this wakes the clients' processes once per batch rather than once
   * per answer (on the 2-vCPU bench VM: +50% requests per second). A lone request waits for
   * nothing but the rest of its own turn. Default: true; `false` writes each
   * answer at once. Applies to handlers made by `makeHttpApi`.
   */
  readonly coalesceWrites?: boolean
  /**
   * How long an answer may wait for the client to take any of it (the
   * connection's socket timeout while the answer is written) before the
   * connection is closed (node gives a write that moved since the timeout was
   * armed a second period: the cut comes one to two periods after the client
   * stopped); a client that reads, however slowly, is never cut.
   * node watches only the request (`headersTimeout`, `requestTimeout`) and, once
   * an answer is handed to the OS, the keep-alive timeout: without this, a client
   * that asks for large answers (or many pipelined ones) and never reads them
   * keeps its connection, its file descriptor and the answers buffered for it
   * for as long as it likes. Default 30,000; 0 turns it off. Applies to handlers
   * made by `makeHttpApi`; a server with a `timeout` listener of its own decides
   * itself what such a connection gets.
   */
  readonly unreadAnswerMs?: number
}

/** Default of `NodeListenerOptions.unreadAnswerMs`. */
export const unread_answer_ms = 30_000

/** @internal The node bridge the Express mount shares: the body can be swapped for bytes read earlier. */
export const nodeBridge = (
  handler: Handler,
  options: NodeListenerOptions & { readonly bodyOf?: (incoming: IncomingMessage) => Uint8Array | undefined } = {}
): ((incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>) => {
  const remoteAddress = options.remoteAddress ?? ((incoming: IncomingMessage) => incoming.socket.remoteAddress)
  const onError = safe(options.onError ?? ((error: unknown) => console.error(error)))
  const inner = bridgeOf(handler, remoteAddress, onError, options)
  const refuse = answerNow(onError, unreadAnswerMsOf(options))
  return (incoming, outgoing) =>
    incoming.headers.host === undefined && incoming.httpVersionMajor === 1 && incoming.httpVersionMinor >= 1
      ? Promise.resolve(refuse(incoming, outgoing, badRequest(messages.noHost)))
      : inner(incoming, outgoing)
}

const bridgeOf = (
  handler: Handler,
  remoteAddress: (incoming: IncomingMessage) => string | undefined,
  onError: (error: unknown) => void,
  options: NodeListenerOptions & { readonly bodyOf?: (incoming: IncomingMessage) => Uint8Array | undefined }
): ((incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>) => {
  const core = apiHandlerOf(handler)
  if (core !== undefined) return direct(core, remoteAddress, onError, options)
  const listener = getRequestListener(
    (request, env) => {
      const incoming = (env as HttpBindings).incoming
      const body = options.bodyOf?.(incoming)
      return handler(body === undefined ? request : rebuild(request, { body }), contextOf(remoteAddress(incoming)))
    },
    {
      // A library must not replace the process's global Request and Response.
      overrideGlobalObjects: false,
      ...(options.hostname === undefined ? {} : { hostname: options.hostname }),
      errorHandler: (error) => {
        // Thrown before the handler ran: an unusable Host header or request target.
        if (error instanceof RequestError) return errorResponse("validation_error", messages.badRequest)
        onError(error)
        return errorResponse("internal_error", messages.internal)
      }
    }
  )
  return (incoming, outgoing) => listener(incoming, outgoing).catch(onError)
}

// ------------------------------------------------------------------ the direct path

/** What @hono/node-server accepts as a request target and Host (same rules, so both paths refuse the same requests). */
const validRequestTarget = /^\/[!#$&-;=?-[\]_a-z~]*$/
const dotSegment = /\/\.\.?(?:[/?#]|$)/
const simpleHost = /^[a-z0-9._-]+(?::(?:[1-5]\d{3,4}|[6-9]\d{3}))?$/
/** A backslash before the query. */
const backslashInPath = (target: string) => {
  const backslash = target.indexOf("\\")
  if (backslash === -1) return false
  const query = target.indexOf("?")
  return query === -1 || backslash < query
}

/** Where a request goes: the URL as text, its path, and the parsed URL on demand. */
export interface Target {
  readonly href: string
  readonly pathname: string
  readonly url: () => URL
}

const parsed = (url: URL): Target => ({ href: url.href, pathname: url.pathname, url: () => url })

/**
 * The request's URL from its target and `Host` (the rules of @hono/node-server,
 * which the generic path uses), or undefined when they are unusable (a 400). A
 * plain origin-form target on a plain host, the usual case, is taken as is: the
 * URL parser would not change it, so it only runs if the query is needed.
 */
export const targetOf = (incoming: IncomingMessage, defaultHostname: string | undefined): Target | undefined => {
  const target = incoming.url ?? ""
  try {
    if (target[0] !== "/" && (target.startsWith("http://") || target.startsWith("https://"))) {
      return backslashInPath(target) ? undefined : parsed(new URL(target))
    }
    // HTTP/2 (node's compatibility API) names the host `:authority`, and a `Host` beside it must agree
    // (RFC 9113 §8.3.1); HTTP/1 cannot send a field named so
    const authority = incoming.headers[":authority"] as string | undefined
    if (authority !== undefined && incoming.headers.host !== undefined && incoming.headers.host !== authority) {
      return undefined
    }
    const host = authority || incoming.headers.host || defaultHostname
    if (!host) return undefined
    const scheme = (incoming.socket as Partial<TLSSocket>).encrypted === true ? "https" : "http"
    if (!simpleHost.test(host)) {
      if (backslashInPath(target)) return undefined
      const url = new URL(`${scheme}://${host}${target}`)
      const bare = (host.includes(":") ? host.replace(/:\d+$/, "") : host).toLowerCase()
      return url.hostname.length !== host.length && url.hostname !== bare ? undefined : parsed(url)
    }
    if (target.length === 0) return parsed(new URL(`${scheme}://${host}/`))
    if (target.charCodeAt(0) !== 47) return undefined
    if (!validRequestTarget.test(target) || dotSegment.test(target)) {
      return backslashInPath(target) ? undefined : parsed(new URL(`${scheme}://${host}${target}`))
    }
    // only characters the URL parser keeps as they are, no dot segments: the path is the text up to ? or #
    const href = `${scheme}://${host}${target}`
    const end = target.search(/[?#]/)
    let url: URL | undefined
    return { href, pathname: end === -1 ? target : target.slice(0, end), url: () => (url ??= new URL(href)) }
  } catch {
    return undefined
  }
}

/** `Headers.get` over the raw header lines: case-insensitive, repeated fields joined with ", ". */
const headerOf =
  (raw: ReadonlyArray<string>) =>
  (name: string): string | null => {
    let value: string | null = null
    for (let i = 0; i < raw.length; i += 2) {
      const key = raw[i] as string
      if (key.length === name.length && key.toLowerCase() === name) {
        const v = raw[i + 1] as string
        value = value === null ? v : `${value}, ${v}`
      }
    }
    return value
  }

/** Reads at most `limit` bytes of the request body; past that, or when the client goes away, the answer says why. */
const readIncoming = (incoming: IncomingMessage, limit: number): Promise<CappedRead> => {
  if (declaredTooLarge(incoming.headers["content-length"], limit)) {
    return Promise.resolve({ ok: false, error: tooLarge(limit) })
  }
  if (incoming.readableEnded) return Promise.resolve({ ok: true, bytes: new Uint8Array(0) })
  if (incoming.destroyed || incoming.readableDidRead) return Promise.resolve({ ok: false, error: unreadable() })
  return new Promise((resolve) => {
    const chunks: Array<Uint8Array> = []
    let size = 0
    const settle = (read: CappedRead) => {
      incoming.off("data", onData)
      incoming.off("end", onEnd)
      incoming.off("error", onFailure)
      incoming.off("close", onFailure)
      resolve(read)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength
      if (size > limit) {
        incoming.pause()
        settle({ ok: false, error: tooLarge(limit) })
      } else chunks.push(chunk)
    }
    const onEnd = () => settle({ ok: true, bytes: concat(chunks, size) })
    const onFailure = () => settle({ ok: false, error: unreadable() })
    incoming.on("data", onData)
    incoming.once("end", onEnd)
    incoming.once("error", onFailure)
    incoming.once("close", onFailure)
  })
}

/** Bounds on discarding a body left unread once the answer went out (as @hono/node-server's). */
const drain_bytes_max = 64 * 1024 * 1024
const drain_ms_max = 500

/**
 * After the answer: a body the API did not read (an early error, a body over
 * the cap) is read and dropped so the connection can serve the next request,
 * but at most `drain_bytes_max` bytes for at most `drain_ms_max`; past either,
 * the connection is closed. @internal (the Fastify plugin shares it)
 */
export const discardRest = (incoming: IncomingMessage) => {
  // complete: the parser has the whole body already; node drops what is left unread
  if (incoming.complete || incoming.readableEnded || incoming.destroyed) return
  let bytes = 0
  const cleanup = () => {
    clearTimeout(timer)
    incoming.off("data", onData)
    incoming.off("end", cleanup)
    incoming.off("error", cleanup)
  }
  const close = () => {
    cleanup()
    incoming.socket?.destroySoon?.()
  }
  const onData = (chunk: Buffer) => {
    bytes += chunk.byteLength
    if (bytes > drain_bytes_max) close()
  }
  const timer = setTimeout(close, drain_ms_max)
  timer.unref()
  incoming.on("data", onData)
  incoming.once("end", cleanup)
  incoming.once("error", cleanup)
  incoming.resume()
}

/** Writes the answer; false when there was nothing to write to (the connection is gone, or was answered). */
const writeAnswer = (outgoing: ServerResponse, answer: ApiResponse): boolean => {
  if (outgoing.headersSent || outgoing.destroyed) return false
  const headers: Record<string, string | number> = answer.headers
  if (answer.body === null) {
    outgoing.writeHead(answer.status, headers)
    outgoing.end()
    return true
  }
  headers["content-length"] = Buffer.byteLength(answer.body)
  outgoing.writeHead(answer.status, headers)
  outgoing.end(answer.body)
  return true
}

const badRequest = (message: string = messages.badRequest): ApiResponse => ({
  status: 400,
  headers: {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff"
  },
  body: JSON.stringify({ error: { message, code: "validation_error" } })
})

const internal = (): ApiResponse => ({
  status: 500,
  headers: {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff"
  },
  body: JSON.stringify({ error: { message: messages.internal, code: "internal_error" } })
})

/** The node bridge for a handler made by `makeHttpApi`: its core, fed from the node request. */
const direct = (
  core: ApiHandler,
  remoteAddress: (incoming: IncomingMessage) => string | undefined,
  onError: (error: unknown) => void,
  options: NodeListenerOptions & { readonly bodyOf?: (incoming: IncomingMessage) => Uint8Array | undefined }
) => {
  const unreadMs = unreadAnswerMsOf(options)
  const answerWith = options.coalesceWrites === false ? answerNow(onError, unreadMs) : coalesced(onError, unreadMs)
  return async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const target = targetOf(incoming, options.hostname)
    if (target === undefined) return answerWith(incoming, outgoing, badRequest())
    const given = options.bodyOf?.(incoming)
    let answer: ApiResponse
    try {
      answer = await core({
        method: incoming.method ?? "GET",
        href: target.href,
        pathname: target.pathname,
        url: target.url,
        header: headerOf(incoming.rawHeaders),
        read: (limit) =>
          given === undefined
            ? readIncoming(incoming, limit)
            : Promise.resolve(
                given.byteLength > limit ? { ok: false, error: tooLarge(limit) } : { ok: true, bytes: given }
              ),
        remoteAddress: contextOf(remoteAddress(incoming)).remoteAddress
      })
    } catch (error) {
      // the core answers every fault itself; this is a last resort
      onError(error)
      answer = internal()
    }
    answerWith(incoming, outgoing, answer)
  }
}

type AnswerWith = (incoming: IncomingMessage, outgoing: ServerResponse, answer: ApiResponse) => void

/** @internal `unreadAnswerMs` of a mount's options, checked. */
export const unreadAnswerMsOf = (options: { readonly unreadAnswerMs?: number | undefined }): number => {
  const ms = options.unreadAnswerMs ?? unread_answer_ms
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError("unreadAnswerMs must be a whole number >= 0")
  return ms
}

/**
 * Arms the socket timeout of a connection whose answer the OS did not take at once (the client is not
 * reading, or its buffers are full): node destroys a socket that stays `ms` without progress, and does
 * not count a write still moving as idle. An answer queued behind an earlier one of the connection
 * (pipelining) gets it when the connection becomes its own. The usual answer, taken at once, costs one
 * property read; once an answer is written, node sets the keep-alive timeout in place of this one.
 */
const watchUnread = (outgoing: ServerResponse, ms: number) => {
  if (ms === 0) return
  // undefined: a response object that is not node's own (a framework's stand-in); nothing to watch
  const socket: Duplex | null | undefined = outgoing.socket
  // not on HTTP/2 (node's compatibility API): the socket is the session's, shared by its streams
  if (socket === null || (socket !== undefined && socket.writableLength > 0 && !("stream" in outgoing))) {
    armTimeout(outgoing, socket, ms)
  }
}

/** Sets the socket timeout of `outgoing`'s connection; an answer queued behind an earlier one gets it with its connection. */
const armTimeout = (outgoing: ServerResponse, socket: Duplex | null, ms: number) => {
  if (socket === null) outgoing.once("socket", (s) => s.setTimeout(ms))
  else (socket as Socket).setTimeout(ms)
}

/**
 * @internal For an answer a framework writes (and may stream), whose writes cannot be watched one by
 * one: if the answer is not all written `unread_check_ms` (at most `ms`) after it was handed over,
 * the connection's socket timeout is armed then, as `watchUnread` does. The usual answer, written at
 * once, never arms it, so the timeouts node keeps (keep-alive, or none) are left alone, and a request
 * pipelined behind it may take as long as it needs.
 */
export const watchUnreadFromNow = (outgoing: ServerResponse, ms: number): void => {
  // HTTP/2 (a framework's `http2: true`): the socket is the session's, shared by its streams, with a timeout of its own
  if (ms === 0 || "stream" in outgoing) return
  const late = setTimeout(
    () => {
      const socket: Duplex | null | undefined = outgoing.socket
      if (!outgoing.writableFinished && !outgoing.destroyed && socket !== undefined) armTimeout(outgoing, socket, ms)
    },
    Math.min(ms, unread_check_ms)
  )
  late.unref()
  outgoing.once("close", () => clearTimeout(late))
}

/** How long after it was handed over an answer written by a framework is looked at (see `watchUnreadFromNow`). */
const unread_check_ms = 1_000

/**
 * @internal Writes one answer; a body the API left unread is discarded after it. A write
 * that throws (it should not: the API builds its own headers) is reported and
 * the connection dropped, so the client is not left waiting.
 */
export const answerNow =
  (onError: (error: unknown) => void, unreadMs: number = unread_answer_ms): AnswerWith =>
  (incoming, outgoing, answer) => {
    try {
      if (writeAnswer(outgoing, answer)) watchUnread(outgoing, unreadMs)
      if (!incoming.complete) outgoing.once("finish", () => discardRest(incoming))
    } catch (error) {
      onError(error)
      outgoing.destroy()
    }
  }

/** @internal `answerNow`, deferred to the check phase of the current turn, with every other answer of that turn. */
export const coalesced = (onError: (error: unknown) => void, unreadMs: number = unread_answer_ms): AnswerWith => {
  const write = answerNow(onError, unreadMs)
  let pending: Array<readonly [IncomingMessage, ServerResponse, ApiResponse]> = []
  const flush = () => {
    const batch = pending
    pending = []
    for (const [incoming, outgoing, answer] of batch) write(incoming, outgoing, answer)
  }
  return (incoming, outgoing, answer) => {
    if (pending.length === 0) setImmediate(flush)
    pending.push([incoming, outgoing, answer])
  }
}

/** A logging callback that throws must not take the server down. */
const safe =
  (log: (error: unknown) => void) =>
  (error: unknown): void => {
    try {
      log(error)
    } catch {
      // nothing left to tell
    }
  }

/**
 * The xaalis fetch handler as a `node:http` (or `node:https`) request listener.
 * The handler sees the full URL with its query, every request header, the exact
 * body bytes and the client address; everything it answers is written back as is.
 *
 * Gotcha: the listener owns every path; to share a server with other routes,
 * use a framework mount (Express, Fastify, Hono) instead.
 *
 * @example
 * const api = makeHttpApi({ sandbox: true })
 * createServer(toNodeListener(api.fetch)).listen(3000)
 */
export const toNodeListener = (
  handler: Handler,
  options: NodeListenerOptions = {}
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const listener = nodeBridge(handler, options)
  return (req, res) => {
    void listener(req, res)
  }
}

/**
 * Answers requests node:http cannot parse (a malformed request line, headers
 * over node's size limit, a request that took longer than `headersTimeout` or
 * `requestTimeout`, …) and requests with an `Expect` other than `100-continue`
 * with the API's error object, `400 validation_error`, instead of node's bare
 * status line with an empty body, and `CONNECT` requests with `404 not_found`
 * (node would close the connection without a word). A connection answered this
 * way is closed once the client closes, or 2 seconds after the answer.
 * Call it once on the server that serves `toNodeListener`.
 *
 * `onAnswer` hears of each such answer (for a request log: these requests never
 * reach the handler, so its `onRequest` does not see them). A framework that
 * answers node's `clientError` itself (Fastify) takes `answerClientError` as
 * its handler instead: pass `clientError: false` here.
 *
 * @example
 * const server = createServer(toNodeListener(api.fetch))
 * answerClientErrors(server)
 * // Fastify
 * const app = Fastify({ clientErrorHandler: answerClientError })
 * answerClientErrors(app.server, { clientError: false })
 */
export const answerClientErrors = (
  server: Pick<Server, "on">,
  options: {
    readonly onAnswer?: (answer: { readonly status: 400 | 404; readonly message: string }) => void
    /** Answer node's `clientError` too (default true). */
    readonly clientError?: boolean
  } = {}
): void => {
  // `Expect` other than 100-continue: node would answer a bare 417 with an empty body
  server.on("checkExpectation", (_req: IncomingMessage, res: ServerResponse) => {
    const message = "The Expect header supports only 100-continue."
    options.onAnswer?.({ status: 400, message })
    const body = JSON.stringify({ error: { message, code: "validation_error" } })
    res.shouldKeepAlive = false // the body the client may still send is never read
    res.writeHead(400, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "content-length": Buffer.byteLength(body)
    })
    res.end(body)
  })
  if (options.clientError !== false) {
    server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) =>
      answerClientError(error, socket, options.onAnswer)
    )
  }
  // CONNECT (a proxy tunnel): without a listener node closes the connection with no answer at all
  server.on("connect", (req: IncomingMessage, socket: Duplex) => {
    const target = req.url ?? ""
    const message = `No route CONNECT ${target.length <= 200 ? target : `${target.slice(0, 200)}…`}.`
    options.onAnswer?.({ status: 404, message })
    answerAndClose(socket, "404 Not Found", message, "not_found")
  })
}

/**
 * Answers one request node:http could not parse (its `clientError`) with the
 * API's error object, `400 validation_error`, and closes the connection (see
 * `answerClientErrors`). Fastify's `clientErrorHandler` takes it as is.
 */
export const answerClientError = (
  error: NodeJS.ErrnoException,
  socket: Duplex,
  onAnswer?: (answer: { readonly status: 400; readonly message: string }) => void
): void => {
  if (error.code === "ECONNRESET" || !socket.writable) {
    socket.destroy()
    return
  }
  const message =
    error.code === "HPE_HEADER_OVERFLOW"
      ? "The request's headers are too large."
      : error.code === "ERR_HTTP_REQUEST_TIMEOUT"
        ? "The request took too long to arrive."
        : "The request is not valid HTTP."
  onAnswer?.({ status: 400, message })
  answerAndClose(socket, "400 Bad Request", message, "validation_error")
}

/** How long a connection answered by `answerAndClose` may stay open for the client to read the answer and close. */
const linger_ms = 2_000

/**
 * Writes an error answer on a connection node:http has given up on, then
 * closes it. `end` alone only half-closes: a client that never closes its side
 * (a slowloris client cut off by `headersTimeout`) kept the connection and its
 * file descriptor forever, as node's timeouts no longer watch it. Bytes still
 * arriving are read and dropped (closing with unread bytes would send a reset,
 * which can destroy the answer before the client reads it); the connection is
 * destroyed when the client closes, or `linger_ms` after the answer.
 */
const answerAndClose = (socket: Duplex, status: string, message: string, code: string): void => {
  const body = JSON.stringify({ error: { message, code } })
  const timer = setTimeout(() => socket.destroy(), linger_ms)
  timer.unref()
  socket.once("close", () => clearTimeout(timer))
  socket.on("error", () => socket.destroy())
  socket.on("data", () => {})
  socket.resume()
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: application/json; charset=utf-8\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  )
}
