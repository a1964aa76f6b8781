import { Decimal } from "@xaalis/core"
import { type Ids, IdsAdapter, MemoryNotifier, Sandbox } from "@xaalis/engine"
import { Layer } from "effect"
import type { TestDatabase } from "./pg.ts"

/**
 * A whole engine on the test database: the PostgreSQL store (fresh and empty
 * on every build), the sandbox world at 70 GMD/USD, the memory notifier, and
 * `ids` (crypto by default).
 */
export const pgEngine = (db: TestDatabase, ids: Layer.Layer<Ids> = IdsAdapter.layer) =>
  Layer.mergeAll(
    Layer.orDie(db.store()),
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(ids)),
    MemoryNotifier.layer
  )
