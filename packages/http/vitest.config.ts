import { defineProject } from "vitest/config"

const conditions = ["@xaalis/source", "import", "module", "node", "default"]
// Vitest also hands ssr.resolve.conditions to its workers as `node --conditions`, where
// they steer require() too: "import" or "module" there make CommonJS packages (Express's
// router requiring is-promise) load the ESM build of a dependency and break. Vite adds
// "import" by itself for ESM imports, so the server list leaves both out.
const serverConditions = ["@xaalis/source", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions: serverConditions, externalConditions: ["@xaalis/source"] } },
  // real sockets, processes and a browser on a loaded 2-vCPU CI machine: room beyond the 5 s default
  test: { name: "http", include: ["test/**/*.test.ts"], testTimeout: 20_000 }
})
