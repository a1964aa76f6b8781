/**
 * The fetch handler as a `node:http` / `node:https` request listener, through
 * @hono/node-server's `getRequestListener`: it streams the exact body bytes,
 * keeps every header (repeated ones too, from `rawHeaders`), aborts the request
 * signal when the client goes away and writes every response header back
 * (`set-cookie` as separate lines).
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { getRequestListener, type HttpBindings, RequestError } from "@hono/node-server"
import { contextOf, errorResponse, type Handler, messages, rebuild } from "./internal.ts"

export interface NodeListenerOptions {
  /**
   * The client address given to the handler (rate limiting of requests without a key).
   * Default: the socket's peer address. Behind a reverse proxy, read the header your
   * proxy sets, and only from a proxy you trust.
   */
  readonly remoteAddress?: (incoming: IncomingMessage) => string | undefined
  /** Host used when a request carries no `Host` header (HTTP/1.0). Without it such requests get a 400. */
  readonly hostname?: string
  /** Receives a fault of the handler itself (it should never throw); the client gets a 500 `internal_error`. Default: `console.error`. */
  readonly onError?: (error: unknown) => void
}

/** @internal The node bridge the Express mount shares: the body can be swapped for bytes read earlier. */
export const nodeBridge = (
  handler: Handler,
  options: NodeListenerOptions & { readonly bodyOf?: (incoming: IncomingMessage) => Uint8Array | undefined } = {}
): ((incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void>) => {
  const remoteAddress = options.remoteAddress ?? ((incoming: IncomingMessage) => incoming.socket.remoteAddress)
  const onError = safe(options.onError ?? ((error: unknown) => console.error(error)))
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
