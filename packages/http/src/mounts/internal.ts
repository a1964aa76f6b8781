/**
 * What the mounts share: the handler contract they adapt, the paths they claim,
 * the wire error object for the few answers a mount gives itself, and request
 * rebuilding without copying or re-encoding the body.
 */
import { DomainError, Errors } from "@xaalis/core"
import { type FetchHandler, internal_error_message } from "../HttpApi.ts"

/** The web-standard handler every mount adapts (the `fetch` of `makeHttpApi`). */
export type Handler = FetchHandler

/** The second argument of the handler, without an `undefined` address. */
export const contextOf = (remoteAddress: string | undefined): { readonly remoteAddress?: string } =>
  remoteAddress === undefined || remoteAddress === "" ? {} : { remoteAddress }

/**
 * The path trees the handler answers (`/v1/...`, the docs page and the hosted
 * pages under `/pay/`). Framework
 * mounts forward only these, so the host application keeps every other path.
 */
export const defaultPaths: ReadonlyArray<string> = ["/v1", "/docs", "/pay"]

/** `"/v1"` claims `/v1` itself and everything under `/v1/`. */
export const claims = (paths: ReadonlyArray<string>, pathname: string): boolean =>
  paths.some((p) => pathname === p || pathname.startsWith(`${p}/`))

/** The path of a request target (`/a/b?c` -> `/a/b`), as sent. */
export const pathnameOf = (target: string): string => {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

/** `"api/"`, `"/api"`, `"/api/"` -> `"/api"`; `""` and `"/"` -> `""`. */
export const normalizePrefix = (prefix: string | undefined): string => {
  const trimmed = (prefix ?? "").replace(/\/+$/, "")
  return trimmed === "" ? "" : trimmed.startsWith("/") ? trimmed : `/${trimmed}`
}

/** Fixed client messages: nothing internal is ever sent. */
export const messages = {
  internal: internal_error_message,
  badRequest: "The request could not be read.",
  noHost: "An HTTP/1.1 request must carry a Host header.",
  bodyConsumed:
    "The server is misconfigured: the request body was read by another middleware before it reached the API, so its exact bytes are lost."
} as const

/** The error object of the specification, `{error: {message, code}}`, with the catalogue's status. */
export const errorResponse = (code: "validation_error" | "not_found" | "internal_error", message: string): Response =>
  new Response(JSON.stringify(new DomainError({ code, message }).toJSON()), {
    status: Errors.catalogue[code].status,
    // The handler's own JSON headers, so a mount's answer looks like the API's.
    headers: {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-store",
      "x-content-type-options": "nosniff"
    }
  })

type RequestBody = NonNullable<RequestInit["body"]>

const bodyless = (method: string): boolean => method === "GET" || method === "HEAD"

/**
 * A copy of `request` with another URL and/or body. The body is passed as is
 * (exact bytes, no re-encoding); when none is given the original stream moves over.
 */
export const rebuild = (request: Request, change: { readonly url?: string; readonly body?: Uint8Array }): Request => {
  // typed as the body of a RequestInit, so that the DOM lib (whose BodyInit takes only a
  // Uint8Array<ArrayBuffer>) compiles this too
  const body = (bodyless(request.method) ? null : (change.body ?? request.body)) as RequestBody | null
  return new Request(change.url ?? request.url, {
    method: request.method,
    headers: request.headers,
    body,
    signal: request.signal,
    ...(body instanceof ReadableStream ? { duplex: "half" } : {})
  })
}
