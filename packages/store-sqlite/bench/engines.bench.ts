/**
 * Which embedded engine: node:sqlite or PGlite (PostgreSQL compiled to WASM),
 * measured on the same work. Both replay the rows the xaalis engine writes for
 * N chain transfers (transfer identity, conversion update, ledger lines, outbox
 * row), one transaction per transfer, from the same starting rows, into the
 * same table shapes (PostgreSQL types for PGlite), on files in the same
 * directory. Each engine's durability settings are printed with its rate; the
 * engine itself on the SQLite store is printed too, for scale.
 *
 *     node --conditions=@xaalis/source packages/store-sqlite/bench/engines.bench.ts
 *
 * (PGlite is a devDependency of this package for this measurement only.)
 */

import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { PGlite } from "@electric-sql/pglite"
import { cleanup, describeUnit, dir, engineRun, N, prepare, ROUNDS, rawRun, type Write } from "./recorded.ts"

const pgSchema = `
CREATE TABLE docs (
  kind text NOT NULL, id text NOT NULL, business_id text, mode text, created_at bigint NOT NULL,
  version integer NOT NULL, due_at bigint, keys text NOT NULL, data text, PRIMARY KEY (kind, id)
);
CREATE INDEX docs_list ON docs (kind, business_id, mode, created_at DESC, id DESC);
CREATE INDEX docs_due ON docs (kind, due_at, id) WHERE due_at IS NOT NULL;
CREATE TABLE doc_keys (kind text NOT NULL, key text NOT NULL, id text NOT NULL, PRIMARY KEY (kind, key),
  FOREIGN KEY (kind, id) REFERENCES docs (kind, id));
CREATE TABLE ledger (
  seq bigserial PRIMARY KEY, id text NOT NULL UNIQUE, transaction_id text NOT NULL, business_id text NOT NULL,
  mode text NOT NULL, account text NOT NULL, currency text NOT NULL, amount bigint NOT NULL,
  created_at bigint NOT NULL, cause text NOT NULL
);
CREATE INDEX ledger_balances ON ledger (business_id, mode, account, currency, amount);
CREATE INDEX ledger_transaction ON ledger (transaction_id);
`

/** PGlite's durability settings, as PostgreSQL reports them. */
const pgSettings = async (pg: PGlite): Promise<string> => {
  const names = ["fsync", "synchronous_commit", "wal_sync_method", "full_page_writes"]
  const values = await Promise.all(
    names.map(async (n) => `${n}=${(await pg.query<Record<string, string>>(`SHOW ${n}`)).rows[0]?.[n]}`)
  )
  return values.join(" ")
}

let pgDurability = ""

/** The recorded writes replayed into PGlite on a file directory, one transaction per transfer. */
const pgliteRun = async (seedPath: string, units: ReadonlyArray<ReadonlyArray<Write>>, round: number) => {
  const pg = new PGlite(join(dir, `pglite-${round}`))
  await pg.exec(pgSchema)
  pgDurability = await pgSettings(pg)
  // the same starting rows as the SQLite side
  const seed = new DatabaseSync(seedPath, { readOnly: true })
  const docs = seed
    .prepare("SELECT kind, id, business_id, mode, created_at, version, due_at, keys, data FROM docs")
    .all()
  const keys = seed.prepare("SELECT kind, key, id FROM doc_keys").all()
  seed.close()
  await pg.transaction(async (tx) => {
    for (const d of docs) {
      await tx.query("INSERT INTO docs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)", Object.values(d))
    }
    for (const k of keys) await tx.query("INSERT INTO doc_keys VALUES ($1, $2, $3)", Object.values(k))
  })
  const text = (v: unknown) => (typeof v === "bigint" ? v.toString() : v)
  const start = performance.now()
  for (const writes of units) {
    await pg.transaction(async (tx) => {
      for (const w of writes) {
        if (w.op === "insert") {
          await tx.query(
            "INSERT INTO docs (kind, id, business_id, mode, created_at, version, due_at, keys, data) VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8)",
            w.args.map(text)
          )
          for (const key of w.keys) {
            await tx.query("INSERT INTO doc_keys (kind, key, id) VALUES ($1, $2, $3)", [w.args[0], key, w.args[1]])
          }
        } else if (w.op === "update") {
          await tx.query(
            "UPDATE docs SET business_id = $1, mode = $2, created_at = $3, version = $4, due_at = $5, data = $6 WHERE kind = $7 AND id = $8 AND version = $9",
            w.args.map(text)
          )
        } else {
          for (const row of w.rows) {
            await tx.query(
              "INSERT INTO ledger (id, transaction_id, business_id, mode, account, currency, amount, created_at, cause) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
              row.map(text)
            )
          }
        }
      }
    })
  }
  const seconds = (performance.now() - start) / 1000
  await pg.close()
  return units.length / seconds
}

const { seedPath, addresses, units } = await prepare()
const best = { full: 0, normal: 0, off: 0, pglite: 0, engineFull: 0, engineNormal: 0 }
for (let r = 0; r < ROUNDS; r++) {
  best.full = Math.max(best.full, rawRun(seedPath, units, "FULL"))
  best.normal = Math.max(best.normal, rawRun(seedPath, units, "NORMAL"))
  best.off = Math.max(best.off, rawRun(seedPath, units, "OFF"))
  best.pglite = Math.max(best.pglite, await pgliteRun(seedPath, units, r))
  best.engineFull = Math.max(best.engineFull, await engineRun(seedPath, addresses, "FULL"))
  best.engineNormal = Math.max(best.engineNormal, await engineRun(seedPath, addresses, "NORMAL"))
}
cleanup()

console.log(
  `embedded engines, ${N} chain transfers (${describeUnit(units[0])} each), best of ${ROUNDS}, Node ${process.version}`
)
console.table([
  { side: "node:sqlite raw, WAL synchronous=FULL (fsync per commit)", "transfers/s": Math.round(best.full) },
  { side: "node:sqlite raw, WAL synchronous=NORMAL (fsync at checkpoints)", "transfers/s": Math.round(best.normal) },
  { side: "node:sqlite raw, WAL synchronous=OFF (no fsync)", "transfers/s": Math.round(best.off) },
  { side: `PGlite raw (${pgDurability})`, "transfers/s": Math.round(best.pglite) },
  { side: "xaalis engine on SqliteStore, FULL", "transfers/s": Math.round(best.engineFull) },
  { side: "xaalis engine on SqliteStore, NORMAL", "transfers/s": Math.round(best.engineNormal) }
])
console.log(
  `PGlite / node:sqlite OFF (neither fsyncs): ${((best.pglite / best.off) * 100).toFixed(1)}%; PGlite / node:sqlite FULL: ${((best.pglite / best.full) * 100).toFixed(1)}%`
)
