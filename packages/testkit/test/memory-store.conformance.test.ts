import { MemoryStore } from "@xaalis/engine"
import { runsFromEnv, storeConformance } from "../src/index.ts"

storeConformance("memory", () => MemoryStore.layer, { runs: runsFromEnv(50) })
