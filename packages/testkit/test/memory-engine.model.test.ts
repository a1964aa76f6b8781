import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryNotifier, MemoryStore, Sandbox } from "@xaalis/engine"
import { Layer } from "effect"
import { engineModelSuite, runsFromEnv } from "../src/index.ts"

/** The in-memory engine: memory store, deterministic ids, the sandbox world at 70 GMD/USD, the memory notifier. */
const memoryEngine = () =>
  Layer.mergeAll(
    MemoryStore.layer,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(
      Layer.provideMerge(IdsAdapter.layerDeterministic(7))
    ),
    MemoryNotifier.layer
  )

// 1,000 model-based runs of up to 25 commands in CI (about 5 s); 50,000 with XAALIS_DEEP=1.
engineModelSuite("in-memory engine", memoryEngine, { runs: runsFromEnv(1000), maxCommands: 25 })
