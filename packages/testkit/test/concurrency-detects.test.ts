import { Decimal } from "@xaalis/core"
import { type Doc, IdsAdapter, MemoryNotifier, MemoryStore, Sandbox, Store, type Tx } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { concurrencyChecks } from "../src/index.ts"

/**
 * The concurrency suite must catch stores that break under concurrency. Each
 * mutant wraps the memory store so that a unit of work is neither atomic nor
 * isolated: every operation commits on its own and lets other fibers run
 * before it (as a durable store without transactions would), and optionally
 * also drops version checks or unique keys.
 */
interface Breakage {
  /** Updates replace whatever version is stored (last writer wins). */
  readonly ignoreVersions: boolean
  /** Inserts over an existing id or key silently replace it. */
  readonly ignoreClashes: boolean
}

const mutant = (breakage: Breakage) => () => {
  const store = Layer.effect(
    Store,
    Effect.map(MemoryStore.makeMemoryStore, (inner) => {
      const alone = <A, E>(op: (tx: Tx) => Effect.Effect<A, E>) => Effect.andThen(Effect.yieldNow, inner.transact(op))
      const tx: Tx = {
        get: (kind, id) => alone((t) => t.get(kind, id)),
        getByKey: (kind, key) => alone((t) => t.getByKey(kind, key)),
        list: (kind, scope, page) => alone((t) => t.list(kind, scope, page)),
        due: (kind, now, limit) => alone((t) => t.due(kind, now, limit)),
        balances: (scope) => alone((t) => t.balances(scope)),
        post: (entries) => alone((t) => t.post(entries)),
        insert: (doc) =>
          alone((t) =>
            breakage.ignoreClashes
              ? Effect.flatMap(t.get(doc.kind, doc.id), (current) =>
                  current === undefined
                    ? Effect.catch(t.insert({ ...doc, keys: [] }), () => Effect.void)
                    : Effect.catch(
                        t.update({ ...doc, keys: current.keys, version: current.version + 1 }),
                        () => Effect.void
                      )
                )
              : t.insert(doc)
          ),
        update: (doc: Doc) =>
          alone((t) =>
            breakage.ignoreVersions
              ? Effect.flatMap(t.get(doc.kind, doc.id), (current) =>
                  t.update({ ...doc, version: (current?.version ?? 0) + 1 })
                )
              : t.update(doc)
          )
      }
      return Store.of({ transact: (work) => work(tx), ledger: inner.ledger })
    })
  )
  return Layer.mergeAll(
    store,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    MemoryNotifier.layer
  )
}

const checks = concurrencyChecks({ concurrency: 20 })
const check = (start: string) => {
  const found = checks.find((c) => c.title.includes(start))
  if (found === undefined) throw new Error(`no check about ${start}`)
  return found
}

describe("the concurrency suite catches broken stores", () => {
  it("units that are not atomic: a transfer whose unit is retried after its identity committed is never credited", async () => {
    const broken = mutant({ ignoreVersions: false, ignoreClashes: false })
    await expect(check("different partial transfers").run(broken)).rejects.toThrow(/each different transfer is applied/)
  })

  it("units that are not isolated let concurrent key rolls leave several working keys", async () => {
    const broken = mutant({ ignoreVersions: true, ignoreClashes: false })
    await expect(check("rolls of one business's key").run(broken)).rejects.toThrow(/exactly one live key works/)
  })

  it("updates that ignore versions lose reminders and invoice numbers", async () => {
    const broken = mutant({ ignoreVersions: true, ignoreClashes: false })
    await expect(check("updates of one invoice").run(broken)).rejects.toThrow(/each reminder saw the one before it/)
  })

  it("inserts that ignore unique keys break the one-application of a transfer and the one effect per key", async () => {
    const broken = mutant({ ignoreVersions: true, ignoreClashes: true })
    await expect(check("same chain transfer").run(broken)).rejects.toThrow(/length of 1/)
    await expect(check("Idempotency-Key").run(broken)).rejects.toThrow(/one conversion answered|one effect/)
  })

  it("the memory store itself passes every check", async () => {
    const sound = () =>
      Layer.mergeAll(
        MemoryStore.layer,
        Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
        MemoryNotifier.layer
      )
    for (const c of checks) await c.run(sound)
  })
})
