import { resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { legacyDataHint } from "../src/legacy.ts"

const legacy = "/repo/packages/server/.data/xaalis.sqlite"
const store = { kind: "embedded", dataDir: "/repo/.data" } as const
const files =
  (...present: Array<string>) =>
  (path: string) =>
    present.includes(resolve(path))

describe("the hint about data kept by an earlier npm start", () => {
  it("points at the old database when the default directory has none yet", () => {
    const hint = legacyDataHint({ dataDirDefaulted: true, store, legacy, exists: files(legacy) })
    expect(hint).toContain("/repo/packages/server/.data")
    expect(hint).toContain("/repo/.data")
  })

  it("says nothing otherwise", () => {
    const cases = [
      { dataDirDefaulted: false, store, legacy, exists: files(legacy) }, // DATA_DIR chosen by the operator
      { dataDirDefaulted: true, store, legacy, exists: files(legacy, "/repo/.data/xaalis.sqlite") }, // already in use
      { dataDirDefaulted: true, store, legacy, exists: files() }, // nothing old
      { dataDirDefaulted: true, store: { kind: "memory" } as const, legacy, exists: files(legacy) },
      // started inside packages/server: the old place is the current one
      {
        dataDirDefaulted: true,
        store: { kind: "embedded", dataDir: "/repo/packages/server/.data" } as const,
        legacy,
        exists: files(legacy)
      }
    ]
    for (const c of cases) expect(legacyDataHint(c), JSON.stringify(c)).toBeUndefined()
  })
})
