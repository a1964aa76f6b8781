import { createHash } from "node:crypto"
import type { Doc } from "@xaalis/engine"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { type Setup, setup } from "./helpers.ts"

/**
 * Idempotency-Key rows are kept at least 24 hours, and the fingerprint once was
 * SHA-256 of the raw body; it is now the body's JSON value. A client that sent
 * a POST before an upgrade and retries the very same bytes after it (the
 * normal reaction to a timeout or a 5xx during a restart), or whose retry lands
 * on a process of the previous release during a rolling upgrade on a shared
 * store, must get the first answer replayed, not `409 idempotency_conflict`
 * (found with two server processes of different builds on one SQLite file: 18
 * of 20 rounds refused the replay).
 *
 * The row is written here as the previous release wrote it (its fingerprint
 * formula, below), then the same request is retried.
 */

let s: Setup
afterEach(async () => {
  expect(s.faults.map((f) => f.message)).toEqual([])
  await s.api.dispose()
})

/** The fingerprint of the releases before value fingerprints: SHA-256 of method, path and the raw body. */
const previousFingerprint = (method: string, path: string, body: string) =>
  createHash("sha256").update(`${method} ${path}\n`, "utf8").update(body, "utf8").digest("hex")

describe("Idempotency-Key across an upgrade", () => {
  it("a retry of the same bytes under the same key replays the first answer when the key's row predates the upgrade", async () => {
    s = setup()
    const biz = await s.business()
    const key = biz.secret_key_live
    const data = { data: { amount: 250, customer: "cus_1" } }
    const raw = JSON.stringify(data)
    const first = await s.call("POST", "/v1/invoices", {
      key,
      raw,
      headers: { "idempotency-key": "inv-1", "content-type": "application/json" }
    })
    expect(first.status).toBe(201)
    const rowId = `${biz.id}:live:inv-1`
    // a row written now still carries the previous formula where that release reads it
    const written = await Effect.runPromise(s.store.transact((tx) => tx.get("idempotency", rowId)))
    expect((written?.data as { fingerprint: string } | undefined)?.fingerprint).toBe(
      previousFingerprint("POST", "/v1/invoices", raw)
    )

    // the key's row as the previous release stored it (same request, its fingerprint formula)
    await Effect.runPromise(
      s.store.transact((tx) =>
        Effect.gen(function* () {
          const doc = (yield* tx.get("idempotency", rowId)) as
            | Doc<{ fingerprint: string; value_fingerprint?: string }>
            | undefined
          if (doc === undefined) throw new Error("no idempotency row")
          const { value_fingerprint: _, ...previous } = doc.data
          yield* tx.update({
            ...doc,
            version: doc.version + 1,
            data: { ...previous, fingerprint: previousFingerprint("POST", "/v1/invoices", raw) }
          })
        })
      )
    )

    const retry = await s.call("POST", "/v1/invoices", {
      key,
      raw,
      headers: { "idempotency-key": "inv-1", "content-type": "application/json" }
    })
    expect({ status: retry.status, code: retry.body?.error?.code }).toEqual({ status: 201, code: undefined })
    expect(retry.text).toBe(first.text)
    expect((await s.call("GET", "/v1/invoices", { key })).body.meta.total).toBe(1)
  })

  it("on a row of the previous release, another spelling of the same body is still a different request", async () => {
    s = setup()
    const biz = await s.business()
    const key = biz.secret_key_live
    const raw = '{"data":{"amount":250,"customer":"cus_1"}}'
    const headers = { "idempotency-key": "inv-2", "content-type": "application/json" }
    expect((await s.call("POST", "/v1/invoices", { key, raw, headers })).status).toBe(201)
    const rowId = `${biz.id}:live:inv-2`
    await Effect.runPromise(
      s.store.transact((tx) =>
        Effect.gen(function* () {
          const doc = (yield* tx.get("idempotency", rowId)) as Doc<{ value_fingerprint?: string }> | undefined
          if (doc === undefined) throw new Error("no idempotency row")
          const { value_fingerprint: _, ...previous } = doc.data
          yield* tx.update({ ...doc, version: doc.version + 1, data: previous })
        })
      )
    )
    // that row knows only the bytes: the same bytes replay, other bytes conflict
    expect((await s.call("POST", "/v1/invoices", { key, raw, headers })).status).toBe(201)
    const spaced = await s.call("POST", "/v1/invoices", { key, raw: raw.replace(":250", ": 250"), headers })
    expect({ status: spaced.status, code: spaced.body?.error?.code }).toEqual({
      status: 409,
      code: "idempotency_conflict"
    })
    expect((await s.call("GET", "/v1/invoices", { key })).body.meta.total).toBe(1)
  })
})
