import { runsFromEnv, storeConformance } from "@xaalis/testkit"
import { Layer } from "effect"
import { withPostgres } from "./pg.ts"

withPostgres("PostgresStore", (db) => {
  storeConformance("postgres", () => Layer.orDie(db.store()), { runs: Math.min(runsFromEnv(50), 1_000) })
})
