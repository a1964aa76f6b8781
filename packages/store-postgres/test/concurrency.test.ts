import { concurrencySuite } from "@xaalis/testkit"
import { pgEngine } from "./engine.ts"
import { withPostgres } from "./pg.ts"

withPostgres("PostgresStore under concurrent requests", (db) => {
  concurrencySuite("postgres engine", () => pgEngine(db))
})
