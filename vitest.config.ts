import { defineConfig } from "vitest/config"
import { projects } from "./vitest.workspace.ts"

export default defineConfig({
  test: {
    projects,
    // In CI, also write a JSON report so .ci/run can print one summary line.
    reporters: process.env.CI ? ["default", ["json", { outputFile: ".ci/vitest-report.json" }]] : ["default"]
  }
})
