/**
 * Request headers as receivers have them: a WHATWG `Headers` (fetch, Hono, Next.js
 * route handlers) or anything with a `get(name)` (Express's `req`: `undefined`
 * for a missing header), or a plain object with names in any case and string,
 * string array or undefined values (Node's `IncomingHttpHeaders`, Express's
 * `req.headers`).
 */
export type WebhookHeaders =
  | { readonly get: (name: string) => string | null | undefined }
  | { readonly [name: string]: string | ReadonlyArray<string> | undefined }

const isHeadersLike = (
  headers: WebhookHeaders
): headers is { readonly get: (name: string) => string | null | undefined } =>
  typeof (headers as { readonly get?: unknown }).get === "function"

/** Every value of header `name` (lowercase), in order; empty when absent. */
export const values = (headers: WebhookHeaders, name: string): ReadonlyArray<string> => {
  if (typeof headers !== "object" || headers === null) throw new TypeError("headers must be a Headers or an object.")
  if (isHeadersLike(headers)) {
    // only a string is a header's value: `null` (Headers), `undefined` (Express's `req.get`) or
    // anything else is a header that is not there
    const value: unknown = headers.get(name)
    return typeof value === "string" ? [value] : []
  }
  const found: Array<string> = []
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== name) continue
    const value = (headers as { readonly [name: string]: unknown })[key]
    if (typeof value === "string") found.push(value)
    else if (Array.isArray(value)) for (const v of value) if (typeof v === "string") found.push(v)
  }
  return found
}

/** Whether header `name` is present at all. */
export const has = (headers: WebhookHeaders, name: string): boolean => values(headers, name).length > 0
