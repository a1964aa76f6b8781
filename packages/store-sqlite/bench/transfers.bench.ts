/**
 * Chain transfers applied per second through the engine on the SQLite file
 * store, side by side in one run with raw inserts of the same rows into the
 * same tables (same schema, WAL, same `synchronous`, one `BEGIN IMMEDIATE …
 * COMMIT` per transfer like the engine). Target: the engine at >= 50% of the
 * raw rate with `synchronous=FULL` (the store's default); `NORMAL` is printed
 * too, for the record. Each round runs the engine then the raw inserts right
 * after it; the ratio is the median of the rounds' ratios (pairs measured
 * under the same conditions, which matters on a shared machine whose fsync
 * latency drifts), next to the best rate of each side.
 *
 *     node --conditions=@xaalis/source packages/store-sqlite/bench/transfers.bench.ts
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

const rows: Array<Record<string, string | number>> = []
let fullRatio = 0
for (const synchronous of ["FULL", "NORMAL"] as const) {
  const engine: Array<number> = []
  const raw: Array<number> = []
  for (let r = 0; r < ROUNDS; r++) {
    engine.push(await engineRun(seedPath, addresses, synchronous))
    raw.push(rawRun(seedPath, units, synchronous))
  }
  const ratio = median(engine.map((e, r) => e / (raw[r] as number)))
  if (synchronous === "FULL") fullRatio = ratio
  rows.push({
    synchronous,
    "engine transfers/s (best)": Math.round(Math.max(...engine)),
    "raw inserts transfers/s (best)": Math.round(Math.max(...raw)),
    "engine/raw (median of rounds)": `${(ratio * 100).toFixed(1)}%`,
    "per round": engine.map((e, r) => `${Math.round((e / (raw[r] as number)) * 100)}%`).join(" ")
  })
}
cleanup()

console.log(
  `@xaalis/store-sqlite chain transfers, ${N} transfers to ${N} conversions, ${ROUNDS} rounds, WAL, Node ${process.version}`
)
console.log(`each transfer's unit of work writes: ${writesPerUnit}`)
console.table(rows)
console.log(
  `engine/raw with synchronous=FULL: ${(fullRatio * 100).toFixed(1)}% (target >= 50%): ${fullRatio >= 0.5 ? "MET" : "MISSED"}`
)
if (fullRatio < 0.5) process.exitCode = 1
