/**
 * A second engine process on the same SQLite file (multiprocess.test.ts).
 * Opens the file store, says `ready`, and on `go` applies the given chain
 * transfers (8 at a time) and the given idempotent conversion creations, then
 * reports what it applied and what each idempotent request answered.
 *
 *     node --conditions=@xaalis/source transfers-worker.ts <db path>
 */

import { DomainError } from "@xaalis/core"
import { Businesses, Conversions, Idempotency } from "@xaalis/engine"
import { Cause, Effect, ManagedRuntime } from "effect"
import { SqliteStore } from "../../src/index.ts"
import { applyTransfer, engineOn } from "../support.ts"

export interface Go {
  readonly type: "go"
  readonly key: string
  readonly transfers: ReadonlyArray<{ readonly address: string; readonly amount: string; readonly tx_hash: string }>
  readonly idempotency_keys: ReadonlyArray<string>
}

export interface Done {
  readonly type: "done"
  /** Hashes this process applied (`applied: true`). */
  readonly applied: ReadonlyArray<string>
  /** Per idempotency key: the conversion id returned, or the error code. */
  readonly idempotent: ReadonlyArray<{ readonly key: string; readonly id: string | null; readonly code: string | null }>
}

const tagOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "_tag" in e ? String((e as { _tag: unknown })._tag) : String(e)

const path = process.argv[2]
if (path === undefined) throw new Error("usage: transfers-worker.ts <db path>")
const runtime = ManagedRuntime.make(engineOn(SqliteStore.layer({ path })))
await runtime.runPromise(Effect.void) // opens (and migrates) the database
process.send?.({ type: "ready" })

process.once("message", (go: Go) => {
  const work = Effect.gen(function* () {
    const live = yield* Businesses.authenticate(go.key)
    const transfers = Effect.forEach(
      go.transfers,
      (t) => Effect.map(applyTransfer(t.address, BigInt(t.amount), t.tx_hash), (o) => (o.applied ? [t.tx_hash] : [])),
      { concurrency: 8 }
    )
    const idempotent = Effect.forEach(
      go.idempotency_keys,
      (key) =>
        Idempotency.idempotent(
          live,
          key,
          "POST /v1/minting/ramps {gmd_amount: 5000}",
          Conversions.createConversion(live, { gmd_amount: 500_000n })
        ).pipe(
          Effect.map((c) => ({ key, id: c.id, code: null })),
          Effect.catchCause((cause) => {
            const e = Cause.squash(cause)
            const code = e instanceof DomainError ? e.code : `${Cause.hasDies(cause) ? "defect" : "error"}: ${tagOf(e)}`
            return Effect.succeed({ key, id: null, code })
          })
        ),
      { concurrency: 4 }
    )
    const [applied, answers] = yield* Effect.all([transfers, idempotent], { concurrency: 2 })
    const done: Done = { type: "done", applied: applied.flat(), idempotent: answers }
    return done
  })
  runtime
    .runPromise(work)
    .then(async (done) => {
      await runtime.dispose()
      process.send?.(done, () => process.disconnect())
    })
    .catch((e: unknown) => {
      process.stderr.write(`${String(e)} ${JSON.stringify(e)}\n`)
      process.exit(1)
    })
})
