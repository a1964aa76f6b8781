import { defineProject } from "vitest/config"

const conditions = ["@xaalis/source", "import", "module", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["@xaalis/source"] } },
  test: { name: "webhooks", include: ["test/**/*.test.ts"] }
})
