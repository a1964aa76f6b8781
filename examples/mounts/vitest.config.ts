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
  test: { name: "example-mounts", include: ["test/**/*.test.ts"] }
})
