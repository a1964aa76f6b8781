import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Decimal } from "@xaalis/core"
import { Businesses, Layers } from "@xaalis/engine"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"

/**
 * `Layers.sandbox` with `store`: the Effect face of the engine on the
 * embedded store. An audit composed `Layers.sandbox` with a SQLite layer
 * beside it and found every row in the in-memory store, the file empty.
 */
const dirs: Array<string> = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

describe("Layers.sandbox on the SQLite store", () => {
  it("writes to the store it is given: a business made in one run authenticates in the next", async () => {
    const dir = mkdtempSync(join(tmpdir(), "xaalis-layers-"))
    dirs.push(dir)
    const layer = () =>
      Layers.sandbox({ rate: Decimal.parse("70") as Decimal.Decimal, store: SqliteStore.layerFromDataDir(dir) })
    const created = await Effect.runPromise(
      Businesses.createBusiness({ name: "Kairaba Coffee" }).pipe(Effect.provide(layer()))
    )
    // a new layer over the same directory: what the first one wrote is on disk
    const caller = await Effect.runPromise(
      Businesses.authenticate(created.secret_key_live).pipe(Effect.provide(layer()))
    )
    expect(caller).toMatchObject({ business_id: created.id, mode: "live" })
  })
})
