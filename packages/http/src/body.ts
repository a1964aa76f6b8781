import { DomainError, Errors } from "@xaalis/core"

/**
 * Reading request bodies at the edge: at most `limit` bytes are ever buffered
 * (the stream is read with a cap and cancelled past it; `Content-Length` only
 * lets an obviously oversized body be refused without reading it), the media
 * type must be JSON, and the bytes must be UTF-8.
 */

export type BodyRead =
  | { readonly ok: true; readonly text: string }
  | { readonly ok: false; readonly error: DomainError }

/** At most `limit` bytes of a body, or why they could not be had. */
export type CappedRead =
  | { readonly ok: true; readonly bytes: Uint8Array }
  | { readonly ok: false; readonly error: DomainError }

export const tooLarge = (limit: number) => Errors.validation(`The request body must not exceed ${limit} bytes.`)

/** The client went away or the stream failed before the body was complete. */
export const unreadable = () => Errors.validation("The request body could not be read.")

/** A `Content-Length` that already says the body is over `limit` (absent or malformed: undecided). */
export const declaredTooLarge = (contentLength: string | null | undefined, limit: number): boolean =>
  contentLength !== null &&
  contentLength !== undefined &&
  // a length of fewer digits than the limit's is under it (the usual case, told without a regex)
  contentLength.length >= String(limit).length &&
  /^\d+$/.test(contentLength) &&
  Number(contentLength) > limit

/** `application/json`, with or without parameters (`; charset=utf-8`), in any letter case. */
export const isJsonMediaType = (contentType: string | null): boolean =>
  contentType === "application/json" ||
  (contentType !== null && contentType.split(";")[0]?.trim().toLowerCase() === "application/json")

/** Reads at most `limit` bytes of the body; more is a `validation_error` and the rest is never read. */
export const readCapped = async (request: Request, limit: number): Promise<CappedRead> => {
  if (declaredTooLarge(request.headers.get("content-length"), limit)) {
    await request.body?.cancel().catch(() => undefined)
    return { ok: false, error: tooLarge(limit) }
  }
  if (request.body === null) return { ok: true, bytes: new Uint8Array(0) }
  const reader = request.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => undefined)
        return { ok: false, error: tooLarge(limit) }
      }
      chunks.push(value)
    }
  } catch {
    return { ok: false, error: unreadable() }
  }
  return { ok: true, bytes: concat(chunks, size) }
}

/** The chunks as one array (the chunk itself when there is only one). */
export const concat = (chunks: ReadonlyArray<Uint8Array>, size: number): Uint8Array => {
  if (chunks.length === 1) return chunks[0] as Uint8Array
  const bytes = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    bytes.set(c, at)
    at += c.byteLength
  }
  return bytes
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** No `Content-Encoding`, or `identity`: the body's bytes are the content itself. */
export const isIdentityEncoding = (contentEncoding: string | null | undefined): boolean =>
  contentEncoding === null ||
  contentEncoding === undefined ||
  contentEncoding === "" ||
  contentEncoding.trim().toLowerCase() === "identity"

/**
 * A capped body of a POST or PUT as JSON text: JSON media type whenever it is
 * not empty, no content coding, valid UTF-8. An empty body is `""` (the
 * caller decides whether one is required). A body sent with a
 * `Content-Encoding` (gzip, …) is refused rather than read as it is: the API
 * decodes none, and a proxy that decodes by the header would see other
 * content than the API does.
 */
export const jsonText = (
  read: CappedRead,
  contentType: string | null,
  contentEncoding: string | null = null
): BodyRead => {
  if (!read.ok) return read
  if (read.bytes.byteLength === 0) return { ok: true, text: "" }
  if (!isIdentityEncoding(contentEncoding)) {
    return {
      ok: false,
      error: Errors.validation(
        "The request body must not be compressed: no Content-Encoding is supported; send plain JSON."
      )
    }
  }
  if (!isJsonMediaType(contentType)) {
    return {
      ok: false,
      error: Errors.validation("The request body must be JSON: send it with Content-Type: application/json.")
    }
  }
  try {
    return { ok: true, text: utf8.decode(read.bytes) }
  } catch {
    return { ok: false, error: Errors.validation("The request body must be UTF-8 encoded JSON.") }
  }
}

/** The body of a `Request` as JSON text (see `readCapped` and `jsonText`). */
export const readJsonText = async (request: Request, limit: number): Promise<BodyRead> =>
  jsonText(
    await readCapped(request, limit),
    request.headers.get("content-type"),
    request.headers.get("content-encoding")
  )

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError
