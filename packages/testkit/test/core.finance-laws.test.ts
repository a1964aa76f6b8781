import { financeLawSuite, runsFromEnv } from "../src/index.ts"

financeLawSuite("@xaalis/core", { runs: runsFromEnv(200) })
