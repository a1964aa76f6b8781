import { defineProject } from "vitest/config"

const conditions = ["@xaalis/source", "import", "module", "node", "default"]
/**
 * Server-side (test) resolution leaves out "import" and "module": with them,
 * node-postgres' CommonJS `require("pg-pool")` resolves to pg-pool's ESM
 * wrapper and `class extends` gets a module namespace ("Class extends value
 * [object Module]"). "default" still picks every ESM-only package.
 */
const ssrConditions = ["@xaalis/source", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions: ssrConditions, externalConditions: ["@xaalis/source"] } },
  test: { name: "store-postgres", include: ["test/**/*.test.ts"] }
})
