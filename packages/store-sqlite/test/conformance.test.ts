import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runsFromEnv, storeConformance } from "@xaalis/testkit"
import { afterAll } from "vitest"
import { SqliteStore } from "../src/index.ts"

storeConformance("sqlite (in memory)", () => SqliteStore.layerMemory(), { runs: runsFromEnv(50) })

// the same suite on files: a fresh file per build (synchronous=FULL, WAL)
const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-conformance-"))
let files = 0
afterAll(() => rmSync(dir, { recursive: true, force: true }))
storeConformance("sqlite (file)", () => SqliteStore.layer({ path: join(dir, `store-${files++}.sqlite`) }), {
  runs: runsFromEnv(20)
})
