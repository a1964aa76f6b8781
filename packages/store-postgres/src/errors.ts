/**
 * What a failure of node-postgres becomes at the Store port. Messages are ours
 * and fixed: they name the operation and the SQLSTATE or system error code,
 * never the server's text, the host, the user or the password. The `cause`
 * keeps the original error's name, code and message with every credential of
 * the connection string blanked, for the operator's logs.
 */

import type { Kind } from "@xaalis/engine"
import { StoreError, VersionConflict } from "@xaalis/engine"

/** SQLSTATEs after which the unit of work may simply run again. */
const retryable = new Set(["40001" /* serialization_failure */, "40P01" /* deadlock_detected */])

/** System error codes of a connection that could not be made or was lost. */
const connectionCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE"
])

const codeOf = (e: unknown): string | undefined => {
  const code = (e as { readonly code?: unknown } | null)?.code
  return typeof code === "string" ? code : undefined
}

/**
 * A text to keep out of error messages: a string is blanked wherever it
 * appears (a password); `{ word }` only where it stands alone, not inside a
 * longer word (a user name: a short one such as `u` blanked everywhere turned
 * "due to connection timeout" into "d***e to connection timeo***t").
 */
export type Secret = string | { readonly word: string }

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Replaces the given secrets (and their URL-encoded forms) in `text` with `***`. */
export const blank = (text: string, secrets: ReadonlyArray<Secret>): string => {
  let out = text
  for (const secret of secrets) {
    const s = typeof secret === "string" ? secret : secret.word
    if (s.length === 0) continue
    for (const form of new Set([s, encodeURIComponent(s)])) {
      out =
        typeof secret === "string"
          ? out.split(form).join("***")
          : out.replace(new RegExp(`(?<![\\p{L}\\p{N}_])${escaped(form)}(?![\\p{L}\\p{N}_])`, "gu"), "***")
    }
  }
  return out
}

/** The password (blanked anywhere) and user name (blanked as a word) of a connection string, to keep them out of errors. */
export const secretsOf = (connectionString: string): ReadonlyArray<Secret> => {
  try {
    const url = new URL(connectionString)
    const password = [decodeURIComponent(url.password), url.password]
    const user = [decodeURIComponent(url.username), url.username].map((word) => ({ word }))
    return [...password, ...user].filter((s) => (typeof s === "string" ? s : s.word).length > 0)
  } catch {
    // not a URL (a socket path, or garbage): blank the whole string wherever it appears
    return [connectionString]
  }
}

/** A copy of `e` safe to log: name, code and message with the secrets blanked. No stack, no extra fields. */
const sanitise = (e: unknown, secrets: ReadonlyArray<Secret>): Error => {
  const original = e instanceof Error ? e : new Error(String(e))
  const copy = new Error(blank(original.message, secrets))
  copy.name = original.name
  const code = codeOf(e)
  if (code !== undefined) (copy as Error & { code?: string }).code = code
  return copy
}

/** Whether the connection that raised `e` must not go back to the pool. */
export const isConnectionError = (e: unknown): boolean => {
  const code = codeOf(e)
  if (code !== undefined && (connectionCodes.has(code) || code.startsWith("08") || code.startsWith("57P"))) return true
  const message = e instanceof Error ? e.message : ""
  // "Query read timeout": node-postgres gave up waiting (`query_timeout`); the connection's answers are now
  // out of step with its statements, so it must be dropped
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable|Query read timeout/i.test(
    message
  )
}

/** `e` from a statement of a unit of work about `target`: VersionConflict when PostgreSQL says "run it again". */
export const fromQuery = (
  e: unknown,
  what: string,
  target: { readonly kind: Kind; readonly id: string },
  secrets: ReadonlyArray<Secret>
): StoreError | VersionConflict => {
  const code = codeOf(e)
  if (code !== undefined && retryable.has(code)) return new VersionConflict({ kind: target.kind, id: target.id })
  return toStoreError(e, what, secrets)
}

/** `e` as a StoreError whose message names `what` failed and why, in our words. */
export const toStoreError = (e: unknown, what: string, secrets: ReadonlyArray<Secret>): StoreError => {
  if (e instanceof StoreError) return e
  const code = codeOf(e)
  const why = isConnectionError(e)
    ? `PostgreSQL is unreachable or the connection was lost${code === undefined ? "" : ` (${code})`}`
    : code !== undefined && /^[0-9A-Z]{5}$/.test(code)
      ? `PostgreSQL refused it (SQLSTATE ${code})`
      : "PostgreSQL client error"
  return new StoreError({ message: `${what} failed: ${why}`, cause: sanitise(e, secrets) })
}
