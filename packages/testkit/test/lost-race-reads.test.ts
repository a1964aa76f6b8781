import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryNotifier, MemoryStore, Sandbox, Store, type Tx, VersionConflict } from "@xaalis/engine"
import { Effect, Layer } from "effect"
import { concurrencySuite, engineModelSuite } from "../src/index.ts"

/**
 * The port lets any `Tx` operation, reads included, fail with `VersionConflict`
 * (a database reporting a deadlock, which passes): the unit is then run
 * again. A store that does so on every seventh read it serves must pass the
 * suites, whose own read-only checks run such units again as the engine does.
 */
const losesSomeReads = (tx: Tx, counter: { reads: number }): Tx => {
  const lose = <A, E>(read: Effect.Effect<A, E>) =>
    ++counter.reads % 7 === 0 ? Effect.fail(new VersionConflict({ kind: "invoice", id: "read" })) : read
  return {
    ...tx,
    get: (kind, id) => lose(tx.get(kind, id)),
    getByKey: (kind, key) => lose(tx.getByKey(kind, key)),
    list: (kind, scope, page) => lose(tx.list(kind, scope, page))
  }
}

const engine = () =>
  Layer.mergeAll(
    Layer.effect(
      Store,
      Effect.map(MemoryStore.makeMemoryStore, (inner) => {
        const counter = { reads: 0 }
        return Store.of({
          transact: (work) => inner.transact((tx) => work(losesSomeReads(tx, counter))),
          ledger: inner.ledger
        })
      })
    ),
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    MemoryNotifier.layer
  )

concurrencySuite("a store that loses some reads", engine)
engineModelSuite("a store that loses some reads", engine, { runs: 100 })
