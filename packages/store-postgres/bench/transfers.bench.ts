/**
 * Chain transfers per second through the engine on PostgreSQL, side by side in
 * one run with raw inserts of the same rows under the same durability settings.
 *
 *     node --conditions=@xaalis/source packages/store-postgres/bench/transfers.bench.ts
 *
 * Engine side: N conversions are created (untimed), then N transfers, one to
 * each, go through `Transfers.applyChainTransfer` with the PostgreSQL store:
 * one unit of work, one transaction, per transfer (reads of the transfer
 * identity, the conversion by address and the business; inserts; the versioned
 * update; the ledger lines; the outbox row).
 *
 * Raw side: the rows an engine round wrote (read back from the database after
 * it) are written again by hand into an identical, freshly reset table set
 * holding the same conversions: per transfer one transaction with the
 * transfer row, the conversion's new version (versioned UPDATE), its ledger
 * lines and its outbox row, each one prepared statement; nothing is read,
 * nothing is computed while timed.
 *
 * Same database, same connection settings, `synchronous_commit = on` on both
 * (checked), one transaction per transfer on both. `BENCH_CONCURRENCY` (default
 * 1) transfers are in flight at once on each side. Within a round the two
 * sides take turns every `BENCH_CHUNK` (25) transfers, the side that goes first
 * alternating, so load from other processes reaches both alike; the verdict is
 * on the median per-round ratio. Target: the engine at >= 50% of the raw rate.
 * Skipped, with the reason, when PostgreSQL is not reachable (`DATABASE_URL`,
 * default postgres://127.0.0.1:5432/test).
 */

import { randomBytes } from "node:crypto"
import { userInfo } from "node:os"
import { Decimal } from "@xaalis/core"
import { Businesses, Conversions, IdsAdapter, Sandbox, Transfers } from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"
import { Pool, type PoolClient } from "pg"
import { PostgresStore } from "../src/index.ts"

const N = Number(process.env.BENCH_TRANSFERS ?? 500)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1)
const CHUNK = Number(process.env.BENCH_CHUNK ?? 25)
const TARGET = 0.5
const url = process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/test"
if (!process.env.PGUSER && !process.env.USER) process.env.PGUSER = userInfo().username

const shown = (() => {
  try {
    const u = new URL(url)
    if (u.password !== "") u.password = "***"
    return u.toString()
  } catch {
    return "(DATABASE_URL is not a URL)"
  }
})()

const poolOf = (schema: string, max: number) => {
  const pool = new Pool({ connectionString: url, max, options: `-c search_path=${schema}` })
  pool.on("error", () => undefined)
  return pool
}

// ---------------------------------------------------------------------------

const probe = poolOf("public", 1)
try {
  await probe.query("SELECT 1")
} catch (e) {
  const code = (e as { code?: unknown }).code
  console.log(
    `PostgreSQL not reachable at ${shown}${typeof code === "string" ? ` (${code})` : ""}: benchmark skipped; set DATABASE_URL`
  )
  await probe.end()
  process.exit(0)
}
await probe.end()

const engineSchema = `xaalis_bench_${randomBytes(4).toString("hex")}`
const rawSchema = `${engineSchema}_raw`
const admin = poolOf(engineSchema, 2)
const rawPool = poolOf(rawSchema, Math.max(1, CONCURRENCY))
const rate = Decimal.parse("70") as Decimal.Decimal

/** How every connection of the run commits (the same for both sides: one server, default settings). */
const durability = async (pool: Pool) =>
  (
    await pool.query<{ s: string; f: string }>(
      "SELECT current_setting('synchronous_commit') AS s, current_setting('fsync') AS f"
    )
  ).rows[0]

interface Harvest {
  readonly conversionsBefore: ReadonlyArray<Record<string, unknown>>
  /** Per transfer, in the order applied: the rows its unit of work wrote. */
  readonly perTransfer: ReadonlyArray<{
    readonly transfer: Record<string, unknown>
    readonly conversion: Record<string, unknown>
    readonly ledger: ReadonlyArray<Record<string, unknown>>
    readonly outbox: ReadonlyArray<Record<string, unknown>>
  }>
}

const DOC_COLS = "kind, id, business_id, mode, created_at, version, due_at, keys, data"

/** The engine side of a round, set up (untimed): a fresh table set, N conversions, the runtime. */
const prepareEngine = async () => {
  await admin.query("TRUNCATE docs, doc_keys, ledger")
  const layer = Layer.mergeAll(
    PostgresStore.layer({ connectionString: url, schema: engineSchema, poolMax: Math.max(2, CONCURRENCY) }),
    Sandbox.layer({ rate }).pipe(Layer.provideMerge(IdsAdapter.layer))
  )
  const runtime = ManagedRuntime.make(layer)
  const conversions = await runtime.runPromise(
    Effect.gen(function* () {
      const biz = yield* Businesses.createBusiness({ name: "bench", webhook_url: "https://merchant.example/hooks" })
      const live = yield* Businesses.authenticate(biz.secret_key_live)
      return yield* Effect.forEach(Array.from({ length: N }), () =>
        Conversions.createConversion(live, { gmd_amount: 500000n })
      )
    })
  )
  const conversionsBefore = (await admin.query(`SELECT ${DOC_COLS} FROM docs WHERE kind = 'conversion'`)).rows
  const seqBefore = Number(
    (await admin.query<{ s: string }>("SELECT coalesce(max(seq), 0) AS s FROM ledger")).rows[0]?.s ?? 0
  )
  /** Transfers [a, b), one to each conversion, `CONCURRENCY` at a time. */
  const run = (a: number, b: number) =>
    runtime.runPromise(
      Effect.forEach(
        conversions.slice(a, b),
        (c, i) =>
          Transfers.applyChainTransfer({
            network: "TRC20",
            coin: "USDT",
            to_address: c.pay_address,
            amount: 10_000_000n,
            tx_hash: `0x${(a + i).toString(16)}`,
            log_index: 0
          }),
        { concurrency: CONCURRENCY, discard: true }
      )
    )
  /** The rows the transfers wrote, grouped per transfer; releases the runtime. */
  const harvest = async (): Promise<Harvest> => {
    await runtime.dispose()
    const transfers = (
      await admin.query(`SELECT ${DOC_COLS} FROM docs WHERE kind = 'transfer' ORDER BY created_at, id`)
    ).rows
    const after = new Map(
      (await admin.query(`SELECT ${DOC_COLS} FROM docs WHERE kind = 'conversion'`)).rows.map((r) => [r.id as string, r])
    )
    const ledger = (
      await admin.query(
        "SELECT id, transaction_id, business_id, mode, account, currency, amount::text AS amount, created_at, cause FROM ledger WHERE seq > $1",
        [seqBefore]
      )
    ).rows
    const outbox = (await admin.query(`SELECT ${DOC_COLS} FROM docs WHERE kind = 'outbox'`)).rows
    const perTransfer = transfers.map((t) => {
      const matched = (JSON.parse(t.data as string) as { matched: { id: string } }).matched.id
      const conversion = after.get(matched)
      if (conversion === undefined) throw new Error("a transfer without its conversion")
      return {
        transfer: t,
        conversion,
        ledger: ledger.filter((l) => l.cause === `conversion/${matched}`),
        outbox: outbox.filter((o) => (o.data as string).includes(matched))
      }
    })
    if (perTransfer.length !== N || perTransfer.some((p) => p.ledger.length === 0 || p.outbox.length === 0)) {
      throw new Error("the engine round did not write the expected rows")
    }
    return { conversionsBefore, perTransfer }
  }
  return { run, harvest }
}

const rawSql = {
  insertDoc: `INSERT INTO docs (${DOC_COLS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
  updateDoc:
    "UPDATE docs SET business_id = $3, mode = $4, created_at = $5, version = $6, due_at = $7, data = $8 WHERE kind = $1 AND id = $2 AND version = $9",
  ledger: `INSERT INTO ledger (id, transaction_id, business_id, mode, account, currency, amount, created_at, cause)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::bigint[], $9::text[])`
}

const docValues = (r: Record<string, unknown>) => [
  r.kind,
  r.id,
  r.business_id,
  r.mode,
  r.created_at,
  r.version,
  r.due_at,
  r.keys,
  r.data
]

const ledgerCols = [
  "id",
  "transaction_id",
  "business_id",
  "mode",
  "account",
  "currency",
  "amount",
  "created_at",
  "cause"
]

/** The raw side of a round, set up (untimed): a fresh table set holding the same conversions, connections open. */
const prepareRaw = async (rows: Harvest) => {
  await rawPool.query("TRUNCATE docs, doc_keys, ledger")
  for (const c of rows.conversionsBefore) await rawPool.query(rawSql.insertDoc, docValues(c))
  const clients = await Promise.all(Array.from({ length: Math.max(1, CONCURRENCY) }, () => rawPool.connect()))
  const one = async (client: PoolClient, p: Harvest["perTransfer"][number]) => {
    await client.query("BEGIN")
    await client.query({ name: "raw_insert", text: rawSql.insertDoc, values: docValues(p.transfer) })
    const c = p.conversion
    const r = await client.query({
      name: "raw_update",
      text: rawSql.updateDoc,
      values: [c.kind, c.id, c.business_id, c.mode, c.created_at, c.version, c.due_at, c.data, Number(c.version) - 1]
    })
    if (r.rowCount !== 1) throw new Error("raw update missed its row")
    await client.query({
      name: "raw_ledger",
      text: rawSql.ledger,
      values: ledgerCols.map((k) => p.ledger.map((l) => l[k]))
    })
    for (const o of p.outbox) await client.query({ name: "raw_insert", text: rawSql.insertDoc, values: docValues(o) })
    await client.query("COMMIT")
  }
  /** The rows of transfers [a, b), `CONCURRENCY` at a time. */
  const run = async (a: number, b: number) => {
    let next = a
    await Promise.all(
      clients.map(async (client) => {
        while (next < b) {
          const p = rows.perTransfer[next++]
          if (p !== undefined) await one(client, p)
        }
      })
    )
  }
  const release = () => {
    for (const c of clients) c.release()
  }
  return { run, release }
}

/**
 * One round: both sides set up (untimed), then the N transfers in chunks of
 * `CHUNK`, the two sides taking turns chunk by chunk (the side that goes first
 * alternating), so both run under the same machine load; each side's time is
 * the sum of its chunks. The raw side writes `rows` (an earlier engine round's:
 * rows of any round are alike); the round's own rows are returned for the next.
 */
const round = async (rows: Harvest, rawFirst: boolean) => {
  const engine = await prepareEngine()
  const raw = await prepareRaw(rows)
  let engineMs = 0
  let rawMs = 0
  for (let a = 0, k = 0; a < N; a += CHUNK, k++) {
    const b = Math.min(N, a + CHUNK)
    const rawNow = (k % 2 === 0) === rawFirst
    for (const side of rawNow ? ["raw", "engine"] : ["engine", "raw"]) {
      const t0 = performance.now()
      if (side === "raw") await raw.run(a, b)
      else await engine.run(a, b)
      const dt = performance.now() - t0
      if (side === "raw") rawMs += dt
      else engineMs += dt
    }
  }
  raw.release()
  const next = await engine.harvest()
  return { engine: N / (engineMs / 1000), raw: N / (rawMs / 1000), rows: next }
}

/** An untimed engine round, for the first rows the raw side writes. */
const firstRows = async (): Promise<Harvest> => {
  const engine = await prepareEngine()
  await engine.run(0, N)
  return engine.harvest()
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2
}

try {
  // both table sets come from the store's own migrations: same tables, same indexes
  await Effect.runPromise(
    Effect.scoped(Effect.asVoid(PostgresStore.make({ connectionString: url, schema: engineSchema })))
  )
  await Effect.runPromise(
    Effect.scoped(Effect.asVoid(PostgresStore.make({ connectionString: url, schema: rawSchema })))
  )
  const settings = [await durability(admin), await durability(rawPool)]
  if (settings.some((s) => s?.s !== "on")) throw new Error("synchronous_commit is not on for both sides")

  let rows = await firstRows()
  for (let w = 0; w < WARMUP; w++) rows = (await round(rows, w % 2 === 1)).rows
  const rounds: Array<{ engine: number; raw: number; ratio: number }> = []
  for (let r = 0; r < ROUNDS; r++) {
    const result = await round(rows, r % 2 === 1)
    rows = result.rows
    rounds.push({ engine: result.engine, raw: result.raw, ratio: result.engine / result.raw })
  }
  const ratios = rounds.map((r) => r.ratio)
  const ratio = median(ratios)
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`
  console.log(
    `@xaalis/store-postgres chain transfers: ${N} transfers to ${N} conversions per round, ${CONCURRENCY} in flight, ${WARMUP} warm-up + ${ROUNDS} timed rounds, the sides taking turns every ${CHUNK} transfers; synchronous_commit=${settings[0]?.s}, fsync=${settings[0]?.f}; Node ${process.version}`
  )
  console.table([
    {
      side: "engine (PostgresStore: one unit of work per transfer)",
      "median transfers/s": Math.round(median(rounds.map((r) => r.engine))),
      "min transfers/s": Math.round(Math.min(...rounds.map((r) => r.engine))),
      "max transfers/s": Math.round(Math.max(...rounds.map((r) => r.engine)))
    },
    {
      side: "raw inserts of the same rows (one transaction per transfer)",
      "median transfers/s": Math.round(median(rounds.map((r) => r.raw))),
      "min transfers/s": Math.round(Math.min(...rounds.map((r) => r.raw))),
      "max transfers/s": Math.round(Math.max(...rounds.map((r) => r.raw)))
    }
  ])
  console.log(`per-round engine/raw: ${ratios.map(pct).join(" ")}`)
  console.log(
    `engine/raw: median ${pct(ratio)}, worst round ${pct(Math.min(...ratios))} (target: median >= ${pct(TARGET)}): ${ratio >= TARGET ? "MET" : "MISSED"}`
  )
  if (ratio < TARGET) process.exitCode = 1
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${engineSchema} CASCADE`)
  await admin.query(`DROP SCHEMA IF EXISTS ${rawSchema} CASCADE`)
  await admin.end()
  await rawPool.end()
}
