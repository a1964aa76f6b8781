import { defineProject } from "vitest/config"

const conditions = ["@xaalis/source", "import", "module", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["@xaalis/source"] } },
  // real sockets, processes and a browser on a loaded 2-vCPU CI machine: room beyond the 5 s default
  test: { name: "server", include: ["test/**/*.test.ts"], testTimeout: 20_000 }
})
