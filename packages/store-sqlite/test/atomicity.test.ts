/**
 * One unit of work = one transaction, checked on disk: a chain transfer run
 * under an idempotency key (state change, transfer identity, ledger lines,
 * outbox rows and the idempotency row, all in one unit) fails at every point
 * of its unit, and the file reopened from disk holds none of it. The same
 * request then succeeds, and the reopened file holds all of it (so the probes
 * do see these rows when they exist).
 */

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Conversion } from "@xaalis/core"
import { Businesses, type Doc, Idempotency, Store, StoreError, Transfers, type Tx } from "@xaalis/engine"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Result } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"
import { business, conversion, engineOn, transfer, transferKey } from "./support.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-atomicity-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const injected = "simulated disk failure"

/**
 * The file store, decorated so that every unit of work that writes fails with
 * a `StoreError` right after its `failAt`-th write (insert, update or post), or
 * after its last one (`"end"`, just before the commit).
 */
const failingStore = (path: string, failAt: number | "end") =>
  Layer.effect(
    Store,
    Effect.map(Store, (inner) =>
      Store.of({
        ledger: inner.ledger,
        transact: (work) =>
          inner.transact((tx) => {
            let writes = 0
            const counted = <A, E>(op: Effect.Effect<A, E>): Effect.Effect<A, E | StoreError> =>
              Effect.flatMap(op, (a) =>
                ++writes === failAt ? Effect.fail(new StoreError({ message: injected })) : Effect.succeed(a)
              )
            const wrapped: Tx = {
              ...tx,
              insert: (doc) => counted(tx.insert(doc)),
              update: (doc) => counted(tx.update(doc)),
              post: (entries) => counted(tx.post(entries))
            }
            const body = work(wrapped)
            return failAt === "end"
              ? Effect.flatMap(body, (a) =>
                  writes > 0 ? Effect.fail(new StoreError({ message: injected })) : Effect.succeed(a)
                )
              : body
          })
      })
    )
  ).pipe(Layer.provide(Layer.orDie(SqliteStore.layer({ path }))))

const withEngine = async <A, E>(
  store: Layer.Layer<Store>,
  body: Effect.Effect<A, E, Layer.Success<ReturnType<typeof engineOn<never>>>>
): Promise<Exit.Exit<A, E>> => {
  const runtime = ManagedRuntime.make(engineOn(store))
  try {
    return await runtime.runPromiseExit(body)
  } finally {
    await runtime.dispose() // closes the database
  }
}

const plain = (path: string) => Layer.orDie(SqliteStore.layer({ path }))

/** What a probe sees of the request's effects, read from a freshly opened file. */
const probe = (path: string, caller: { business_id: string; mode: "live" }, conversionId: string) =>
  withEngine(
    plain(path),
    Effect.gen(function* () {
      const store = yield* Store
      const seen = yield* store.transact((tx) =>
        Effect.gen(function* () {
          const c = (yield* tx.get("conversion", conversionId)) as Doc<Conversion.Conversion> | undefined
          return {
            conversion: c === undefined ? undefined : { version: c.version, paid: c.data.actually_paid },
            transfer: (yield* tx.get("transfer", transferKey("0xfeed"))) !== undefined,
            outbox: (yield* tx.list("outbox", caller, { limit: 100, offset: 0 })).total,
            idempotency: (yield* tx.list("idempotency", caller, { limit: 100, offset: 0 })).docs.map(
              (d) => (d.data as { key: string }).key
            )
          }
        })
      )
      const ledger = (yield* store.ledger).filter((e) => e.cause === `conversion/${conversionId}`).length
      return { ...seen, ledger }
    })
  ).then((exit) => {
    if (Exit.isFailure(exit)) throw new Error(Cause.pretty(exit.cause))
    return exit.value
  })

describe("a unit of work that fails halfway leaves nothing on disk", () => {
  it("at every write of a transfer's unit, and just before its commit; then the same request commits all of it", async () => {
    const path = join(dir, "atomicity.sqlite")
    const setup = await withEngine(
      plain(path),
      Effect.gen(function* () {
        const biz = yield* business
        const c = yield* conversion(biz.live)
        return { key: biz.key, caller: { business_id: biz.id, mode: "live" as const }, c }
      })
    )
    if (Exit.isFailure(setup)) throw new Error(Cause.pretty(setup.cause))
    const { key, caller, c } = setup.value
    const request = Effect.gen(function* () {
      const live = yield* Businesses.authenticate(key)
      return yield* Idempotency.idempotent(
        live,
        "idem-1",
        "POST /transfers",
        Transfers.applyChainTransfer(transfer(c.address, 36_820_000n, "0xfeed")).pipe(
          Effect.catchTag("DuplicateKey", (e) => Effect.die(e))
        )
      )
    })
    const nothing = { conversion: { version: 1, paid: 0n }, transfer: false, outbox: 0, idempotency: [], ledger: 0 }
    expect(await probe(path, caller, c.id)).toStrictEqual(nothing)

    // the unit writes: idempotency row, transfer identity, conversion, ledger, 1 outbox row (webhook URL)
    for (const failAt of [1, 2, 3, 4, 5, "end"] as const) {
      const exit = await withEngine(failingStore(path, failAt), request)
      expect(Exit.isFailure(exit), `failAt ${failAt}`).toBe(true)
      if (Exit.isFailure(exit)) {
        const error = Cause.findError(exit.cause)
        expect(Result.isSuccess(error) && (error.success as { message?: string }).message, `failAt ${failAt}`).toBe(
          injected
        )
      }
      expect(await probe(path, caller, c.id), `after failing at ${failAt}`).toStrictEqual(nothing)
    }

    const ok = await withEngine(plain(path), request)
    if (Exit.isFailure(ok)) throw new Error(Cause.pretty(ok.cause))
    expect(ok.value).toStrictEqual({ tx_hash: "0xfeed", matched: { object: "conversion", id: c.id }, applied: true })
    expect(await probe(path, caller, c.id)).toStrictEqual({
      conversion: { version: 2, paid: 36_820_000n },
      transfer: true,
      outbox: 1,
      idempotency: ["idem-1"],
      ledger: 2 // the GMD credit: conversion_clearing -> business_balance (no markup share)
    })
    // and the recorded outcome is replayed, applying nothing again
    const replay = await withEngine(plain(path), request)
    expect(Exit.isSuccess(replay) && replay.value).toStrictEqual(ok.value)
    expect((await probe(path, caller, c.id)).ledger).toBe(2)
  })
})
