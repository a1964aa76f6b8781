/**
 * Chain transfers applied per second through the engine on the SQLite file
 * store, side by side in one run with raw inserts of the same rows into the
 * same tables (same schema, WAL, same `synchronous`). Target: the engine at
 * >= 50% of the raw rate with `synchronous=FULL` (the store's default), in
 * every FULL case; `NORMAL` is printed too, for the record. Each round runs
 * the engine then the raw inserts right after it; the ratio is the median of
 * the rounds' ratios (pairs measured under the same conditions, which matters
 * on a shared machine whose fsync latency drifts), next to the best rate of
 * each side.
 *
 *     node --conditions=@xaalis/source packages/store-sqlite/bench/transfers.bench.ts
 *
 * Cases: the engine applies the transfers one at a time (every unit of work
 * alone in its transaction), or BENCH_CONCURRENCY (default 10) at a time, with
 * group commit off and on (then the store runs the units that queue together
 * in one transaction, one COMMIT and one fsync for all). Like with like: the
 * raw side commits exactly the transactions the engine's store committed (the
 * sizes it reported), each unit after the first in its own savepoint as the
 * store does; one transaction per transfer when the engine had one per unit.
 *
 * The raw side replays the writes the engine itself made for the same
 * transfers (recorded in an untimed run from the same starting file): the
 * transfer identity row, the conversion's new version, the ledger lines and
 * the outbox rows, already encoded. It does no reads, no rule and no encoding:
 * it is the most the database allows.
 */

import { cleanup, describeUnit, engineRun, N, prepare, ROUNDS, rawRun } from "./recorded.ts"

// ---------------------------------------------------------------------------

const { seedPath, addresses, units } = await prepare()
const writesPerUnit = describeUnit(units[0])

/** The median of paired ratios: each round's engine run against the raw run right after it. */
const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 10)
const percent = (x: number) => `${(x * 100).toFixed(1)}%`

interface Case {
  readonly name: string
  readonly synchronous: "FULL" | "NORMAL"
  /** Transfers in flight at once on the engine side (1: one after another). */
  readonly concurrency: number
  /** The store's `group_commit_max` (default 32; 1: group commit off). */
  readonly group_commit_max?: number
}

const cases: ReadonlyArray<Case> = [
  { name: "FULL, one at a time", synchronous: "FULL", concurrency: 1 },
  { name: "NORMAL, one at a time", synchronous: "NORMAL", concurrency: 1 },
  { name: `FULL, ${concurrency} at a time, group commit off`, synchronous: "FULL", concurrency, group_commit_max: 1 },
  { name: `FULL, ${concurrency} at a time`, synchronous: "FULL", concurrency }
]

const rows: Array<Record<string, string | number>> = []
const ratios = new Map<string, number>()
for (const c of cases) {
  const engine: Array<number> = []
  const raw: Array<number> = []
  const sizes: Array<number> = []
  for (let r = 0; r < ROUNDS; r++) {
    const groups: Array<number> = []
    const options = { concurrency: c.concurrency, groups, group_commit_max: c.group_commit_max ?? 32 }
    engine.push(await engineRun(seedPath, addresses, c.synchronous, options))
    // like with like: the raw side commits exactly the transactions the engine's store committed
    raw.push(rawRun(seedPath, units, c.synchronous, groups))
    sizes.push(N / groups.length)
  }
  const ratio = median(engine.map((e, r) => e / (raw[r] as number)))
  ratios.set(c.name, ratio)
  rows.push({
    case: c.name,
    "units per COMMIT (mean)": median(sizes).toFixed(1),
    "engine transfers/s (best)": Math.round(Math.max(...engine)),
    "raw, same transactions (best)": Math.round(Math.max(...raw)),
    "engine/raw (median of rounds)": percent(ratio),
    "per round": engine.map((e, r) => `${Math.round((e / (raw[r] as number)) * 100)}%`).join(" ")
  })
}
cleanup()

console.log(
  `@xaalis/store-sqlite chain transfers, ${N} transfers to ${N} conversions, ${ROUNDS} rounds, WAL, Node ${process.version}`
)
console.log(`each transfer's unit of work writes: ${writesPerUnit}`)
console.table(rows)
let missed = false
for (const c of cases.filter((c) => c.synchronous === "FULL")) {
  const ratio = ratios.get(c.name) ?? 0
  if (ratio < 0.5) missed = true
  console.log(`engine/raw, ${c.name}: ${percent(ratio)} (target >= 50%): ${ratio >= 0.5 ? "MET" : "MISSED"}`)
}
if (missed) process.exitCode = 1
