import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Decimal } from "@xaalis/core"
import { IdsAdapter, MemoryNotifier, Sandbox, type Store } from "@xaalis/engine"
import { engineModelSuite, runsFromEnv } from "@xaalis/testkit"
import { Layer } from "effect"
import { afterAll } from "vitest"
import { SqliteStore } from "../src/index.ts"

/** The engine of the model suite (sandbox world at 70 GMD/USD, deterministic ids, memory notifier) on `store`. */
const engineOn = (store: Layer.Layer<Store>) =>
  Layer.mergeAll(
    store,
    Sandbox.layer({ rate: Decimal.parse("70") as Decimal.Decimal }).pipe(
      Layer.provideMerge(IdsAdapter.layerDeterministic(7))
    ),
    MemoryNotifier.layer
  )

// 500 runs of up to 25 commands on an in-memory database (a few seconds); 25,000 with XAALIS_DEEP=1.
engineModelSuite("sqlite store (in memory)", () => engineOn(SqliteStore.layerMemory()), {
  runs: runsFromEnv(500),
  maxCommands: 25
})

// fewer on files (each build is a new file; every commit is fsynced): 50, 2,500 with XAALIS_DEEP=1
const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-model-"))
let files = 0
afterAll(() => rmSync(dir, { recursive: true, force: true }))
engineModelSuite(
  "sqlite store (file)",
  () => engineOn(Layer.orDie(SqliteStore.layer({ path: join(dir, `engine-${files++}.sqlite`) }))),
  { runs: runsFromEnv(50), maxCommands: 25 }
)
