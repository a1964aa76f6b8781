/**
 * The testkit's concurrency suite (50 requests at once on the same objects:
 * one chain transfer reported 50 times, 50 partial transfers to one
 * conversion, one Idempotency-Key, one invoice and the invoice counter) on the
 * SQLite store, in memory and on a file. In one process the units of work are
 * serialised on the store's one connection; two processes on one file are in
 * multiprocess.test.ts.
 */

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { concurrencySuite } from "@xaalis/testkit"
import { Layer } from "effect"
import { afterAll } from "vitest"
import { SqliteStore } from "../src/index.ts"
import { engineOn } from "./support.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-concurrency-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0

concurrencySuite("sqlite store (in memory)", () => engineOn(SqliteStore.layerMemory()))
concurrencySuite("sqlite store (file)", () =>
  engineOn(Layer.orDie(SqliteStore.layer({ path: join(dir, `c-${files++}.sqlite`) })))
)
