import { IdsAdapter } from "@xaalis/engine"
import { engineModelSuite, runsFromEnv } from "@xaalis/testkit"
import { pgEngine } from "./engine.ts"
import { withPostgres } from "./pg.ts"

// Fewer runs than in memory (1,000): every step is a round trip to PostgreSQL and each run builds a fresh
// store (about 0.25 s a run here). XAALIS_DEEP=1 asks 50x; capped at 2,000 runs (under 10 minutes).
const runs = Math.min(runsFromEnv(100), 2_000)

withPostgres("PostgresStore under the engine", (db) => {
  engineModelSuite("postgres engine", () => pgEngine(db, IdsAdapter.layerDeterministic(7)), {
    runs,
    maxCommands: 25,
    timeout: 60_000 + runs * 500
  })
})
