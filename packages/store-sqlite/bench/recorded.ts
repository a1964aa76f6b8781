/**
 * What both benchmarks share: a seeded file (a business and N conversions), the
 * engine on the SQLite file store, and the writes the engine makes for N chain
 * transfers, recorded once (already encoded) so that raw inserts can replay
 * exactly the same rows.
 */

import { copyFileSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync, type SQLInputValue } from "node:sqlite"
import { Decimal } from "@xaalis/core"
import {
  Businesses,
  Codec,
  Conversions,
  type Doc,
  IdsAdapter,
  type LedgerEntry,
  Sandbox,
  Store,
  Transfers
} from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"
import { SqliteStore } from "../src/index.ts"

export const N = Number(process.env.BENCH_TRANSFERS ?? 1000)
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const rate = Decimal.parse("70") as Decimal.Decimal
const amount = 10_000_000n // 10.00 USD, a partial payment of 73.64
export const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-bench-"))
export const transfer = (to_address: string, i: number) => ({
  network: "TRC20" as const,
  coin: "USDT" as const,
  to_address,
  amount,
  tx_hash: `0x${i.toString(16)}`,
  log_index: 0
})

export type Synchronous = "FULL" | "NORMAL"

export const engineLayer = (
  path: string,
  synchronous: Synchronous,
  store?: (s: Store["Service"]) => Store["Service"],
  groups?: Array<number>,
  group_commit_max?: number
) => {
  const hooks =
    groups === undefined ? undefined : { beforeCommit: (_: unknown, units: number) => void groups.push(units) }
  const base = Layer.orDie(SqliteStore.layer({ path, synchronous, hooks, group_commit_max }))
  const storeLayer =
    store === undefined ? base : Layer.effect(Store, Effect.map(Store, store)).pipe(Layer.provide(base))
  return Layer.mergeAll(storeLayer, Sandbox.layer({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer)))
}

/** A file with a business and N fresh conversions (closed: its WAL checkpointed). Their deposit addresses. */
export const seed = async (path: string): Promise<ReadonlyArray<string>> => {
  const runtime = ManagedRuntime.make(engineLayer(path, "NORMAL"))
  const addresses = await runtime.runPromise(
    Effect.gen(function* () {
      const biz = yield* Businesses.createBusiness({ name: "bench", webhook_url: "https://merchant.example/hooks" })
      const live = yield* Businesses.authenticate(biz.secret_key_live)
      return yield* Effect.forEach(Array.from({ length: N }), () =>
        Effect.map(Conversions.createConversion(live, { gmd_amount: 500000n }), (c) => c.pay_address)
      )
    })
  )
  await runtime.dispose()
  return addresses
}

export const copy = (from: string, to: string) => {
  for (const f of [to, `${to}-wal`, `${to}-shm`]) rmSync(f, { force: true })
  copyFileSync(from, to)
}

// ---------------------------------------------------------------------------
// The engine side

/**
 * The engine applies the N transfers, one at a time or `concurrency` at a time
 * (then the store groups the units that queue together into one transaction,
 * unless `group_commit_max` is 1); the number of units of every transaction
 * it commits is appended to `groups`.
 */
export const engineRun = async (
  seedPath: string,
  addresses: ReadonlyArray<string>,
  synchronous: Synchronous,
  options?: {
    readonly concurrency?: number
    readonly groups?: Array<number>
    /** The store's `group_commit_max` (1: group commit off). */
    readonly group_commit_max?: number
  }
) => {
  const path = join(dir, `engine-${synchronous}.sqlite`)
  copy(seedPath, path)
  const runtime = ManagedRuntime.make(
    engineLayer(path, synchronous, undefined, options?.groups, options?.group_commit_max)
  )
  await runtime.runPromise(Effect.void) // open before timing
  options?.groups?.splice(0)
  const start = performance.now()
  await runtime.runPromise(
    Effect.forEach(addresses, (to, i) => Transfers.applyChainTransfer(transfer(to, i)), {
      discard: true,
      concurrency: options?.concurrency ?? 1
    })
  )
  const seconds = (performance.now() - start) / 1000
  await runtime.dispose()
  return N / seconds
}

// ---------------------------------------------------------------------------
// The same writes, recorded once

export type Write =
  | { readonly op: "insert"; readonly args: ReadonlyArray<SQLInputValue>; readonly keys: ReadonlyArray<string> }
  | { readonly op: "update"; readonly args: ReadonlyArray<SQLInputValue> }
  | { readonly op: "post"; readonly rows: ReadonlyArray<ReadonlyArray<SQLInputValue>> }

const insertArgs = (d: Doc): Array<SQLInputValue> => [
  d.kind,
  d.id,
  d.business_id,
  d.mode,
  d.created_at,
  d.due_at,
  JSON.stringify(d.keys),
  Codec.encode(d.data)
]

export const record = async (seedPath: string, addresses: ReadonlyArray<string>) => {
  const path = join(dir, "record.sqlite")
  copy(seedPath, path)
  const units: Array<Array<Write>> = []
  const recording = (inner: Store["Service"]): Store["Service"] =>
    Store.of({
      ledger: inner.ledger,
      transact: (work) =>
        inner.transact((tx) => {
          const writes: Array<Write> = []
          units.push(writes)
          const then = <A, E>(op: Effect.Effect<A, E>, write: () => Write) =>
            Effect.map(op, (a) => {
              writes.push(write())
              return a
            })
          return work({
            ...tx,
            insert: (d) => then(tx.insert(d), () => ({ op: "insert", args: insertArgs(d), keys: d.keys })),
            update: (d) =>
              then(tx.update(d), () => ({
                op: "update",
                args: [
                  d.business_id,
                  d.mode,
                  d.created_at,
                  d.version,
                  d.due_at,
                  Codec.encode(d.data),
                  d.kind,
                  d.id,
                  d.version - 1
                ]
              })),
            post: (entries: ReadonlyArray<LedgerEntry>) =>
              then(tx.post(entries), () => ({
                op: "post",
                rows: entries.map((e) => [
                  e.id,
                  e.transaction_id,
                  e.business_id,
                  e.mode,
                  e.account,
                  e.currency,
                  e.amount,
                  e.created_at,
                  e.cause
                ])
              }))
          })
        })
    })
  const runtime = ManagedRuntime.make(engineLayer(path, "NORMAL", recording))
  await runtime.runPromise(
    Effect.forEach(addresses, (to, i) => Transfers.applyChainTransfer(transfer(to, i)), { discard: true })
  )
  await runtime.dispose()
  return units.filter((writes) => writes.length > 0)
}

// ---------------------------------------------------------------------------

/**
 * The raw side: the recorded writes, one transaction per transfer; or, given
 * `groups` (the sizes of the engine's transactions), grouped exactly as the
 * engine's store grouped them: one transaction per group, each unit after the
 * first inside its own savepoint.
 */
export const rawRun = (
  seedPath: string,
  units: ReadonlyArray<ReadonlyArray<Write>>,
  synchronous: Synchronous | "OFF",
  groups?: ReadonlyArray<number>
) => {
  const path = join(dir, `raw-${synchronous}.sqlite`)
  copy(seedPath, path)
  const db = new DatabaseSync(path)
  db.exec(`PRAGMA journal_mode = WAL; PRAGMA synchronous = ${synchronous}; PRAGMA foreign_keys = ON`)
  const begin = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const insert = db.prepare(
    "INSERT INTO docs (kind, id, business_id, mode, created_at, version, due_at, keys, data) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?)"
  )
  const insertKey = db.prepare("INSERT INTO doc_keys (kind, key, id) VALUES (?, ?, ?)")
  const update = db.prepare(
    "UPDATE docs SET business_id = ?, mode = ?, created_at = ?, version = ?, due_at = ?, data = ? WHERE kind = ? AND id = ? AND version = ?"
  )
  const post = db.prepare(
    "INSERT INTO ledger (id, transaction_id, business_id, mode, account, currency, amount, created_at, cause) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
  )
  const savepoint = db.prepare("SAVEPOINT unit")
  const release = db.prepare("RELEASE unit")
  const sizes = groups ?? units.map(() => 1)
  if (sizes.reduce((a, b) => a + b, 0) !== units.length) throw new Error("the groups do not add up to the units")
  const start = performance.now()
  let next = 0
  for (const size of sizes) {
    begin.run()
    for (let u = 0; u < size; u++) {
      if (u > 0) savepoint.run()
      for (const w of units[next++] ?? []) {
        if (w.op === "insert") {
          insert.run(...w.args)
          for (const key of w.keys) insertKey.run(w.args[0] as string, key, w.args[1] as string)
        } else if (w.op === "update") update.run(...w.args)
        else for (const row of w.rows) post.run(...row)
      }
      if (u > 0) release.run()
    }
    commit.run()
  }
  const seconds = (performance.now() - start) / 1000
  db.close()
  return units.length / seconds
}

/** A seeded file and the engine's writes for N transfers from it. */
export const prepare = async () => {
  const seedPath = join(dir, "seed.sqlite")
  const addresses = await seed(seedPath)
  const units = await record(seedPath, addresses)
  if (units.length !== N) throw new Error(`recorded ${units.length} units of work for ${N} transfers`)
  return { seedPath, addresses, units }
}

/** The writes of one unit, for the printout: `insert, update, post×2, insert`. */
export const describeUnit = (writes: ReadonlyArray<Write> | undefined): string =>
  (writes ?? []).map((w) => (w.op === "post" ? `post×${w.rows.length}` : w.op)).join(", ")

export const cleanup = () => rmSync(dir, { recursive: true, force: true })
process.once("exit", cleanup) // also when a run fails
