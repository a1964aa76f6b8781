/**
 * The fetch handler as a Fastify plugin. Inside the plugin's own encapsulated
 * context no content type is parsed: the body stream goes to the handler
 * unread (it reads the exact bytes with its own cap, after its route and key
 * checks, as on node:http), and the handler's Response goes back through
 * `reply.send`, so Fastify's hooks and logging still see the reply.
 */
import { METHODS } from "node:http"
import { Readable } from "node:stream"
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify"
import { tooLarge } from "../body.ts"
import { contextOf, defaultPaths, errorResponse, type Handler, messages } from "./internal.ts"
import { discardRest, targetOf, unreadAnswerMsOf, watchUnreadFromNow } from "./NodeListener.ts"

export interface XaalisFastifyOptions {
  /** The xaalis fetch handler (`api.fetch`). */
  readonly handler: Handler
  /** Path trees forwarded to the handler, under the plugin's prefix. Default `["/v1", "/docs", "/pay"]`. */
  readonly paths?: ReadonlyArray<string>
  /**
   * Largest body let through to the handler, in bytes: a body stream that goes
   * past it fails, and the plugin answers `400 validation_error`. Default: the
   * server's `bodyLimit` (1 MiB unless changed). A handler made by
   * `makeHttpApi` caps bodies itself (256 KiB by default) and answers first.
   */
  readonly bodyLimit?: number
  /** The client address given to the handler. Default: `request.ip` (which follows `trustProxy`). */
  readonly remoteAddress?: (request: FastifyRequest) => string | undefined
  /** Host used when an HTTP/1.0 request carries no `Host` header. Without it such requests get a 400. */
  readonly hostname?: string
  /**
   * How long an answer of the API may wait for the client to take any of it
   * before the connection is closed, as on the node mount (see
   * `NodeListenerOptions.unreadAnswerMs`): a client that reads, however slowly,
   * is never cut. Default 30,000; 0 turns it off. Only the API's answers are
   * watched; the app's other routes keep Fastify's own timeouts.
   */
  readonly unreadAnswerMs?: number
}

/**
 * Registers the xaalis fetch handler in a Fastify app:
 *
 * @example
 * await app.register(xaalisFastify, { handler: api.fetch })                      // /v1/..., /docs
 * await app.register(xaalisFastify, { handler: api.fetch, prefix: "/payments" }) // the handler sees /v1/...
 *
 * Every method of `/v1`, `/docs`, `/pay` and the paths under them is forwarded with its full
 * query, every header and the exact body bytes. The plugin is not wrapped with
 * fastify-plugin on purpose: its catch-all body parser and error mapping stay in
 * its own context and never change how the rest of the app parses bodies.
 *
 * Gotchas:
 * - Fastify routes only the methods it knows. The plugin adds to the app the
 *   ones node:http parses and Fastify lacks (WebDAV's `PROPFIND`, `MKCOL`, …),
 *   so that they get the API's `404 not_found` with `Allow` as on node:http;
 *   the app's own `all()` routes then see them too.
 * - A request with a `Content-Type` Fastify cannot read (`;;`, empty), or a
 *   `QUERY` without one, goes to the handler all the same, which answers it in
 *   its own order (an unknown route 404, a missing key 401, then the body).
 * - `TRACE` and `TRACK` cannot be a fetch `Request`: they are answered
 *   `404 not_found`, as no route of the API serves them.
 */
export const xaalisFastify: FastifyPluginAsync<XaalisFastifyOptions> = async (fastify, options) => {
  const paths = options.paths ?? defaultPaths
  const prefix = fastify.prefix
  const remoteAddress = options.remoteAddress ?? ((request: FastifyRequest) => request.ip)

  const bodyLimit = options.bodyLimit ?? fastify.initialConfig.bodyLimit ?? 1_048_576
  const unreadMs = unreadAnswerMsOf(options)

  // Methods node:http parses that Fastify does not route: added so that they reach the handler
  // (CONNECT never does: node answers it through the server's "connect" event)
  for (const method of METHODS) {
    if (method !== "CONNECT" && !fastify.supportedMethods.includes(method)) fastify.addHttpMethod(method)
  }

  // No parsing: the stream goes to the handler unread
  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser("*", (_request, payload, done) => done(null, payload))

  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    // Fastify refuses a Content-Type it cannot read, and a QUERY without one, before any parser
    // runs: the body is still unread, so the handler answers, in its own order
    if (error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || error.code === "FST_ERR_ROUTE_MISSING_CONTENT_TYPE") {
      return forward(request, reply)
    }
    // Any other refusal of a body by Fastify: the error object
    if (typeof error.code === "string" && error.code.startsWith("FST_ERR_CTP_")) {
      return reply.send(errorResponse("validation_error", error.message))
    }
    // Anything else (a hook of the host app, ...) goes to the parent context's error handler.
    throw error
  })

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const method = request.raw.method ?? request.method
    if (method === "TRACE" || method === "TRACK") {
      return reply.send(errorResponse("not_found", `No route ${method} ${request.url}.`))
    }
    const body = method === "GET" || method === "HEAD" ? undefined : capped(request, bodyLimit)
    let web: Request
    try {
      web = toRequest(request, body?.stream, abortedWith(reply), prefix, options.hostname)
    } catch {
      return reply.send(errorResponse("validation_error", messages.badRequest))
    }
    let response: Response
    try {
      response = await options.handler(web, contextOf(remoteAddress(request)))
    } catch (error) {
      if (body?.overLimit() === true) {
        response = errorResponse("validation_error", tooLarge(bodyLimit).message)
      } else {
        // The xaalis handler answers its own faults; this is a fault of the handler itself.
        request.log.error(error)
        response = errorResponse("internal_error", messages.internal)
      }
    }
    // a body the handler left unread (an early answer, a body over its cap) is discarded after the answer
    body?.release()
    if (!request.raw.complete) reply.raw.once("finish", () => discardRest(request.raw))
    watchUnreadFromNow(reply.raw, unreadMs)
    return reply.send(response)
  }
  for (const path of paths) {
    fastify.all(path, forward)
    fastify.all(`${path}/*`, forward)
  }
}

/**
 * A signal aborted when the client goes away before the answer is complete. Not
 * `request.signal`: Fastify aborts that one on the request stream's `close`, which
 * Node emits as soon as the body has been read, while the handler is still working.
 */
const abortedWith = (reply: FastifyReply): AbortSignal => {
  const controller = new AbortController()
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) controller.abort()
  })
  return controller.signal
}

/**
 * The web Request of a Fastify request: URL without the plugin prefix, raw
 * headers, exact body. The URL is read from the request target and `Host` by
 * the rules of the node:http mount (an absolute-form target is taken as is; a
 * `Host` that is not a host, such as `h/v1/x?`, is refused), so `Host` can never
 * change the path the handler routes on. Throws when they are unusable (a 400).
 */
const toRequest = (
  request: FastifyRequest,
  body: ReadableStream<Uint8Array> | undefined,
  signal: AbortSignal,
  prefix: string,
  hostname?: string
): Request => {
  const target = targetOf(request.raw, hostname)
  if (target === undefined) throw new Error("unusable request target or Host")
  const parsed = target.url()
  const scheme = request.protocol === "https" ? "https:" : parsed.protocol
  const path =
    prefix !== "" && (parsed.pathname === prefix || parsed.pathname.startsWith(`${prefix}/`))
      ? parsed.pathname.slice(prefix.length) || "/"
      : parsed.pathname
  const url = `${scheme}//${parsed.host}${path}${parsed.search}`
  const headers = new Headers()
  const raw = request.raw.rawHeaders
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!
    // HTTP/2 pseudo-headers (:method, :path, ...) are not headers of the request.
    if (!name.startsWith(":")) headers.append(name, raw[i + 1]!)
  }
  const method = request.raw.method ?? request.method
  return body === undefined
    ? new Request(url, { method, headers, signal })
    : new Request(url, { method, headers, body, signal, duplex: "half" } as RequestInit)
}

/**
 * The request's body as a web stream, unread: what the content-type parser
 * passed on (the payload after the app's `preParsing` hooks), else the node
 * request itself (a request Fastify did not parse: no body declared, a method
 * without one, a `Content-Type` it refused). It fails once more than `limit`
 * bytes have come (`overLimit` tells that this is why). Cancelling it (the
 * handler refusing a body over its own cap) stops reading and leaves the node
 * stream open, so that the answer can still go out; `release` (once the
 * handler answered) lets go of the node stream, and what is left unread is
 * discarded after the answer, as on node:http.
 */
const capped = (
  request: FastifyRequest,
  limit: number
): {
  readonly stream: ReadableStream<Uint8Array>
  readonly overLimit: () => boolean
  readonly release: () => void
} => {
  const source = request.body instanceof Readable ? request.body : request.raw
  let seen = 0
  let over = false
  let detach = () => {}
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => {
      const onData = (chunk: Buffer) => {
        seen += chunk.byteLength
        if (seen > limit) {
          over = true
          detach()
          controller.error(tooLarge(limit))
          return
        }
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength))
        if ((controller.desiredSize ?? 0) <= 0) source.pause()
      }
      const onEnd = () => {
        detach()
        controller.close()
      }
      const onError = (error: unknown) => {
        detach()
        controller.error(error)
      }
      detach = () => {
        source.pause()
        source.off("data", onData)
        source.off("end", onEnd)
        source.off("error", onError)
        source.off("close", onClose)
      }
      const onClose = () => onError(new Error("the client went away"))
      source.on("data", onData)
      source.once("end", onEnd)
      source.once("error", onError)
      source.once("close", onClose)
      source.pause()
    },
    pull: () => {
      source.resume()
    },
    cancel: () => detach()
  })
  return { stream, overLimit: () => over, release: () => detach() }
}
