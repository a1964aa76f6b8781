/**
 * The fetch handler as a Fastify plugin. Inside the plugin's own encapsulated
 * context every content type is parsed to a Buffer (the exact bytes), and the
 * handler's Response goes back through `reply.send`, so Fastify's hooks and
 * logging still see the reply.
 */
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify"
import { contextOf, defaultPaths, errorResponse, type Handler, messages } from "./internal.ts"
import { targetOf } from "./NodeListener.ts"

export interface XaalisFastifyOptions {
  /** The xaalis fetch handler (`api.fetch`). */
  readonly handler: Handler
  /** Path trees forwarded to the handler, under the plugin's prefix. Default `["/v1", "/docs", "/pay"]`. */
  readonly paths?: ReadonlyArray<string>
  /** Largest body read, in bytes. Default: the server's `bodyLimit` (1 MiB unless changed). */
  readonly bodyLimit?: number
  /** The client address given to the handler. Default: `request.ip` (which follows `trustProxy`). */
  readonly remoteAddress?: (request: FastifyRequest) => string | undefined
  /** Host used when an HTTP/1.0 request carries no `Host` header. Without it such requests get a 400. */
  readonly hostname?: string
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
 * Gotcha: a body over `bodyLimit` or an unparseable `Content-Type` is refused by
 * Fastify before the handler runs; the plugin answers those as the handler would,
 * 400 `validation_error`.
 */
export const xaalisFastify: FastifyPluginAsync<XaalisFastifyOptions> = async (fastify, options) => {
  const paths = options.paths ?? defaultPaths
  const prefix = fastify.prefix
  const remoteAddress = options.remoteAddress ?? ((request: FastifyRequest) => request.ip)

  fastify.removeAllContentTypeParsers()
  fastify.addContentTypeParser(
    "*",
    { parseAs: "buffer", ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }) },
    (_request, body, done) => done(null, body)
  )

  fastify.setErrorHandler((error: FastifyError, _request, reply) => {
    // Fastify's own refusals of the body (too large, bad Content-Type or Content-Length):
    // the handler answers those with validation_error, and so do we.
    if (typeof error.code === "string" && error.code.startsWith("FST_ERR_CTP_")) {
      return reply.send(errorResponse("validation_error", error.message))
    }
    // Anything else (a hook of the host app, ...) goes to the parent context's error handler.
    throw error
  })

  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    let web: Request
    try {
      web = toRequest(request, abortedWith(reply), prefix, options.hostname)
    } catch {
      return reply.send(errorResponse("validation_error", messages.badRequest))
    }
    let response: Response
    try {
      response = await options.handler(web, contextOf(remoteAddress(request)))
    } catch (error) {
      // The xaalis handler answers its own faults; this is a fault of the handler itself.
      request.log.error(error)
      response = errorResponse("internal_error", messages.internal)
    }
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
const toRequest = (request: FastifyRequest, signal: AbortSignal, prefix: string, hostname?: string): Request => {
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
  const body = method === "GET" || method === "HEAD" ? null : Buffer.isBuffer(request.body) ? request.body : null
  return new Request(url, { method, headers, body, signal })
}
