import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryNotifier, MemoryStore, Sandbox } from "@xaalis/engine"
import { Layer } from "effect"
import { concurrencySuite } from "../src/index.ts"

/** The in-memory engine with crypto ids (as a server runs it). */
const memoryEngine = () =>
  Layer.mergeAll(
    MemoryStore.layer,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(Layer.provideMerge(IdsAdapter.layer)),
    MemoryNotifier.layer
  )

concurrencySuite("in-memory engine", memoryEngine)
