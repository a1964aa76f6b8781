/**
 * The fetch handler mounted in a Hono app with Hono's own `mount()`, plus the
 * client address when the app runs under @hono/node-server.
 */

import type { ServerResponse } from "node:http"
import { getConnInfo } from "@hono/node-server/conninfo"
import type { Context, Env, Hono, MiddlewareHandler } from "hono"
import { mount } from "hono/mount"
import { routePath } from "hono/route"
import type { Schema } from "hono/types"
import { contextOf, defaultPaths, type Handler, normalizePrefix } from "./internal.ts"
import { unreadAnswerMsOf, watchUnreadFromNow } from "./NodeListener.ts"

export interface MountHonoOptions {
  /** Path trees forwarded to the handler, under the prefix. Default `["/v1", "/docs", "/pay"]`. */
  readonly paths?: ReadonlyArray<string>
  /**
   * The client address given to the handler. Default: the socket's peer address under
   * @hono/node-server, none elsewhere (pass your runtime's `getConnInfo` here, e.g. from
   * `hono/bun`, `hono/deno` or `hono/cloudflare-workers`).
   */
  readonly remoteAddress?: (c: Context) => string | undefined
  /**
   * Under @hono/node-server: how long an answer of the API may wait for the
   * client to take any of it before the connection is closed, as on the node
   * mount (see `NodeListenerOptions.unreadAnswerMs`): a client that reads,
   * however slowly, is never cut. Default 30,000; 0 turns it off. Only the
   * API's answers are watched. Other runtimes have their own rules.
   */
  readonly unreadAnswerMs?: number
}

/** The peer address under @hono/node-server (its `env` carries the node request); undefined elsewhere. */
const nodeAddress = (c: Context): string | undefined => {
  try {
    return getConnInfo(c).remote.address
  } catch {
    return undefined
  }
}

/** The node response under @hono/node-server (its `env` carries it); undefined elsewhere. */
const nodeResponse = (c: Context): ServerResponse | undefined => {
  const outgoing = (c.env as { readonly outgoing?: unknown } | undefined)?.outgoing
  return typeof outgoing === "object" && outgoing !== null && "writeHead" in outgoing && "once" in outgoing
    ? (outgoing as ServerResponse)
    : undefined
}

/** `request` with `mountedAt` taken off the front of its path (query kept). */
const strip = (request: Request, mountedAt: string): Request => {
  const url = new URL(request.url)
  if (!url.pathname.startsWith(mountedAt)) return request
  url.pathname = url.pathname.slice(mountedAt.length)
  return new Request(url, request)
}

/**
 * Mounts the xaalis fetch handler in a Hono app, at `prefix` (default: the root).
 * `/v1`, `/docs`, `/pay` and the paths under them, under the prefix, are forwarded with Hono's
 * `mount()`, the prefix (and the app's basePath) taken off the path; every other
 * path stays the app's.
 *
 * @example
 * const app = new Hono()
 * mountHono(app, api.fetch)               // /v1/..., /docs
 * mountHono(app, api.fetch, "/payments")  // /payments/v1/...: the handler sees /v1/...
 * serve({ fetch: app.fetch, port: 3000 }) // @hono/node-server: the client address is passed on
 */
export const mountHono = <E extends Env, S extends Schema, B extends string>(
  app: Hono<E, S, B>,
  handler: Handler,
  prefix?: string,
  options: MountHonoOptions = {}
): Hono<E, S, B> => {
  const base = normalizePrefix(prefix)
  const address = options.remoteAddress ?? nodeAddress
  const optionHandler = (c: Context) => contextOf(address(c))
  const unreadMs = unreadAnswerMsOf(options)
  // The route path seen at run time includes the app's basePath; what precedes
  // the registered tail is the mount point to take off the request's path.
  const forwardUnder =
    (tail: string): MiddlewareHandler =>
    (c, next) => {
      const route = routePath(c)
      const mountedAt = route.slice(0, route.length - tail.length)
      const outgoing = unreadMs === 0 ? undefined : nodeResponse(c)
      const answer: Handler =
        outgoing === undefined
          ? handler
          : async (request, context) => {
              const response = await handler(request, context)
              watchUnreadFromNow(outgoing, unreadMs) // the answer is ready: @hono/node-server writes it next
              return response
            }
      return mount(answer, {
        optionHandler,
        replaceRequest: mountedAt === "" ? false : (request) => strip(request, mountedAt)
      })(c, next)
    }
  for (const path of options.paths ?? defaultPaths) {
    app.all(`${base}${path}`, forwardUnder(path))
    app.all(`${base}${path}/*`, forwardUnder(`${path}/*`))
  }
  return app
}
