import type { Resources } from "@xaalis/core"
import { MemoryNotifier, MemoryStore, Notifier, Store, StorePurge } from "@xaalis/engine"
import { type HttpApiOptions, type HttpFault, makeHttpApi } from "@xaalis/http"
import { Context, Effect, Layer, Schema } from "effect"
import { expect } from "vitest"

/** An answer, read once: status, headers and the parsed JSON body. */
export interface Answer {
  readonly status: number
  readonly headers: Headers
  // biome-ignore lint/suspicious/noExplicitAny: test answers are inspected field by field
  readonly body: any
  readonly text: string
}

export interface CallOptions {
  readonly key?: string
  /** A JSON value (serialised) or raw text (sent as is). */
  readonly body?: unknown
  readonly raw?: string | Uint8Array
  readonly headers?: Record<string, string>
  readonly remoteAddress?: string
}

/**
 * An API over a store and a notifier the test can look into, with every
 * internal fault collected (a test fails if one shows up unexpectedly).
 */
export const setup = (options: HttpApiOptions = {}) => {
  const { store, purge } = Effect.runSync(MemoryStore.makeWithPurge)
  const notifier = Effect.runSync(MemoryNotifier.make)
  const faults: Array<HttpFault> = []
  const api = makeHttpApi({
    store: Layer.succeedContext(Context.make(Store, store).pipe(Context.add(StorePurge, purge))),
    notifier: Layer.succeed(Notifier, notifier.notifier),
    onError: (f) => faults.push(f),
    ...options
  })
  const call = async (method: string, path: string, o: CallOptions = {}): Promise<Answer> => {
    const headers: Record<string, string> = { ...o.headers }
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`
    let body: string | Uint8Array | undefined
    if (o.raw !== undefined) body = o.raw
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body)
      headers["content-type"] ??= "application/json"
    }
    const res = await api.fetch(
      new Request(`http://api.test${path}`, { method, headers, ...(body === undefined ? {} : { body }) }),
      o.remoteAddress === undefined ? undefined : { remoteAddress: o.remoteAddress }
    )
    const text = await res.text()
    let parsed: unknown
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }
  /** A sandbox business and its two keys. */
  const business = async (input: { name?: string; webhook_url?: string } = {}) => {
    const res = await call("POST", "/v1/test_helpers/businesses", { body: { name: "Kairaba Coffee", ...input } })
    expect(res.status).toBe(201)
    return res.body as typeof Resources.SandboxBusiness.Type
  }
  const outbox = (business_id: string, mode: "test" | "live") =>
    Effect.runPromise(store.transact((tx) => tx.list("outbox", { business_id, mode }, { limit: 100, offset: 0 }))).then(
      (r) => r.docs
    )
  const ledger = () => Effect.runPromise(store.ledger)
  const deliveries = () => Effect.runPromise(notifier.control.deliveries)
  return { api, call, business, store, notifier: notifier.control, faults, outbox, ledger, deliveries }
}

export type Setup = ReturnType<typeof setup>

/** `schema` accepts `value` (its type side: the wire JSON the API answers). */
export const conforms = (schema: Schema.Top, value: unknown): boolean =>
  Schema.is(Schema.toType(schema) as Schema.Codec<unknown>)(value)

/** Asserts an error answer: the status, the code, and exactly `{error: {message, code}}`. */
export const expectError = (res: Answer, status: number, code: string) => {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code })
  expect(Object.keys(res.body)).toEqual(["error"])
  expect(Object.keys(res.body.error).sort()).toEqual(["code", "message"])
  expect(typeof res.body.error.message).toBe("string")
}
