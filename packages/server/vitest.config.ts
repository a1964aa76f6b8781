import { defineProject } from "vitest/config"

const conditions = ["@xaalis/source", "import", "module", "node", "default"]
/**
 * Server-side (test) resolution leaves out "import" and "module", as in
 * @xaalis/store-postgres: with them, node-postgres' CommonJS
 * `require("pg-pool")` (the shared rate-limit test's own pool) resolves to
 * pg-pool's ESM wrapper ("Class extends value [object Module]").
 */
const ssrConditions = ["@xaalis/source", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions: ssrConditions, externalConditions: ["@xaalis/source"] } },
  // real sockets, processes and a browser on a loaded 2-vCPU CI machine: room beyond the 5 s default
  test: { name: "server", include: ["test/**/*.test.ts"], testTimeout: 20_000 }
})
