/**
 * The fetch handler as Express middleware. It reuses the node bridge of
 * `toNodeListener`, reading the body stream itself so the handler gets the exact
 * bytes the client sent.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { claims, defaultPaths, errorResponse, type Handler, messages, pathnameOf } from "./internal.ts"
import { type NodeListenerOptions, nodeBridge } from "./NodeListener.ts"

/** What the middleware reads of Express's request (structural, so this module does not import Express). */
interface ExpressRequestFields {
  /** Express's client address: honours the app's `trust proxy` setting. */
  readonly ip?: string | undefined
  /** Set by body parsers; a Buffer (from `express.raw()`) still holds the exact bytes. */
  readonly body?: unknown
  /** The exact bytes, when a body parser's `verify` hook kept them (`req.rawBody = buf`). */
  readonly rawBody?: unknown
  /** body-parser's "I read this stream" flag. */
  readonly _body?: unknown
}

export interface XaalisExpressOptions extends Omit<NodeListenerOptions, "remoteAddress"> {
  /** Path trees forwarded to the handler, relative to the mount point; others go to `next()`. Default `["/v1", "/docs", "/pay"]`. */
  readonly paths?: ReadonlyArray<string>
  /** The client address given to the handler. Default: Express's `req.ip` (which follows `trust proxy`). */
  readonly remoteAddress?: (req: IncomingMessage) => string | undefined
  /** Where the one-time developer hint goes when a body parser ran first. Default: `console.error`. */
  readonly log?: (message: string) => void
}

/** Express-compatible middleware: `(req, res, next) => void`. */
export type XaalisExpressMiddleware = (
  req: IncomingMessage,
  res: ServerResponse,
  next: (error?: unknown) => void
) => void

export const bodyConsumedHint =
  "xaalisExpress: a body parser (e.g. express.json()) read the request body before xaalisExpress could, so its exact " +
  "bytes are lost and the request was answered with a 500. Mount xaalisExpress before any body parser " +
  "(app.use(xaalisExpress(api.fetch)); app.use(express.json())), or attach body parsers to your own routes only."

const fields = (req: IncomingMessage): ExpressRequestFields => req as IncomingMessage & ExpressRequestFields

/** Some earlier middleware read the stream (body-parser sets `_body`; Node tracks reads). */
const consumed = (req: IncomingMessage): boolean =>
  req.readableDidRead || req.readableEnded || fields(req)._body === true

/** The exact bytes of a consumed body when they are still known, else undefined. */
const knownBytes = (req: IncomingMessage): Uint8Array | undefined => {
  const { body, rawBody } = fields(req)
  if (Buffer.isBuffer(rawBody)) return rawBody
  if (Buffer.isBuffer(body)) return body
  // A declared empty body is exactly zero bytes, whoever read it.
  if (req.headers["content-length"] === "0" && req.headers["transfer-encoding"] === undefined) return new Uint8Array(0)
  return undefined
}

/**
 * Mounts the xaalis fetch handler in an Express app, at the root or under a prefix:
 *
 * @example
 * app.use(xaalisExpress(api.fetch))            // /v1/... and /docs
 * app.use("/payments", xaalisExpress(api.fetch)) // /payments/v1/...: the handler sees /v1/...
 *
 * Only `/v1`, `/docs` and `/pay` (relative to the mount point) are forwarded; every
 * other path goes on to the next middleware.
 *
 * Gotcha: the handler needs the raw body bytes (exact amounts, idempotency
 * fingerprints). Mount it before `express.json()` and friends: when a body parser
 * has already read a request, the middleware answers 500 `internal_error` and
 * logs a hint once (a re-serialised body would not be what the client sent).
 * Bytes kept by `express.raw()` or a `verify` hook setting `req.rawBody` are used.
 */
export const xaalisExpress = (handler: Handler, options: XaalisExpressOptions = {}): XaalisExpressMiddleware => {
  const paths = options.paths ?? defaultPaths
  const log = options.log ?? ((message: string) => console.error(message))
  let hinted = false
  const bridge = nodeBridge(handler, {
    ...options,
    remoteAddress: options.remoteAddress ?? ((req) => fields(req).ip ?? req.socket.remoteAddress),
    bodyOf: (req) => (consumed(req) ? knownBytes(req) : undefined)
  })
  return (req, res, next) => {
    // Under app.use("/prefix", ...), Express has already stripped the prefix from req.url.
    if (!claims(paths, resolvedPath(req.url ?? "/"))) return next()
    // the API's answers name no framework (Express sets X-Powered-By unless the app disables it)
    res.removeHeader("x-powered-by")
    if (consumed(req) && knownBytes(req) === undefined) {
      if (!hinted) {
        hinted = true
        log(bodyConsumedHint)
      }
      void writeResponse(res, errorResponse("internal_error", messages.bodyConsumed)).catch(next)
      return
    }
    bridge(req, res).catch(next)
  }
}

/**
 * The path a request target goes to, as the node:http mount resolves it: the
 * path of an absolute-form target (`http://host/v1/...`), dot segments
 * resolved (`/x/../v1`), percent-encoded characters decoded (`/%76%31`), so
 * that every target the API would answer reaches it rather than the app's 404.
 */
const resolvedPath = (target: string): string => {
  let pathname: string
  try {
    pathname = new URL(target, "http://mount.invalid").pathname
  } catch {
    return pathnameOf(target)
  }
  try {
    return decodeURIComponent(pathname)
  } catch {
    return pathname
  }
}

const writeResponse = async (res: ServerResponse, response: Response): Promise<void> => {
  const body = Buffer.from(await response.arrayBuffer())
  res.writeHead(response.status, { ...Object.fromEntries(response.headers), "content-length": body.length })
  res.end(body)
}
