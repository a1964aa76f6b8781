import { runsFromEnv, storeConformance } from "@xaalis/testkit"
import { withPostgres } from "./pg.ts"

withPostgres("PostgresStore", (db) => {
  storeConformance("postgres", () => db.store(), { runs: Math.min(runsFromEnv(50), 1_000) })
})
