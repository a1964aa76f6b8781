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

const tooLarge = (limit: number) => Errors.validation(`The request body must not exceed ${limit} bytes.`)

/** `application/json`, with or without parameters (`; charset=utf-8`), in any letter case. */
export const isJsonMediaType = (contentType: string | null): boolean =>
  contentType !== null && contentType.split(";")[0]?.trim().toLowerCase() === "application/json"

/** Reads at most `limit` bytes of the body; more is a `validation_error` and the rest is never read. */
export const readCapped = async (
  request: Request,
  limit: number
): Promise<{ readonly ok: true; readonly bytes: Uint8Array } | { readonly ok: false; readonly error: DomainError }> => {
  const declared = request.headers.get("content-length")
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) {
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
    return { ok: false, error: Errors.validation("The request body could not be read.") }
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] as Uint8Array }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    bytes.set(c, at)
    at += c.byteLength
  }
  return { ok: true, bytes }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

/**
 * The body of a POST or PUT as text: capped, JSON media type whenever it is
 * not empty, valid UTF-8. An empty body is `""` (the caller decides whether
 * one is required).
 */
export const readJsonText = async (request: Request, limit: number): Promise<BodyRead> => {
  const read = await readCapped(request, limit)
  if (!read.ok) return read
  if (read.bytes.byteLength === 0) return { ok: true, text: "" }
  if (!isJsonMediaType(request.headers.get("content-type"))) {
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

export const isDomainError = (e: unknown): e is DomainError => e instanceof DomainError
