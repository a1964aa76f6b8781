/**
 * Crash safety: a child process applies thousands of chain transfers on a file
 * store and is killed with SIGKILL at a random moment, several rounds on the
 * same file (each round restarts on what the previous kill left). After each
 * kill the file is reopened and:
 * - the ledger is balanced;
 * - no transfer was applied twice, and every transfer identity row came with
 *   its effects (and the reverse): `audit` plus a probe of every hash the child
 *   could have sent;
 * - every transfer the child acknowledged (printed after its commit) is there;
 * - every conversion was credited exactly `credited(actually_paid)` ≤ gmd_amount;
 * - the outbox then delivers every pending event (in-memory notifier), until
 *   no row is pending.
 *
 * Seeded: set XAALIS_CRASH_SEED to replay a run (the seed is printed).
 */

import type { ChildProcess } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Dispatcher, MemoryNotifier, Store } from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"
import { hashOf, MAX_TRANSFERS } from "./children/crash-plan.ts"
import { collectStderr, exited, prng, spawnChild } from "./processes.ts"
import { audit, transferKey } from "./support.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-crash-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const ROUNDS = 6
const seed = Number(process.env.XAALIS_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31))

interface Round {
  readonly business: string
  readonly acks: ReadonlyArray<string>
  readonly signal: string | number | null
}

/** Runs one child on `path` and kills it `delayMs` after it is ready; what it printed. */
const killedRound = (path: string, round: number, childSeed: number, delayMs: number): Promise<Round> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = spawnChild("crash-child.ts", [path, String(round), String(childSeed)])
    const stderr = collectStderr(child)
    let business = ""
    const acks: Array<string> = []
    let pending = ""
    let timer: NodeJS.Timeout | undefined
    child.stdout?.setEncoding("utf8")
    child.stdout?.on("data", (chunk: string) => {
      pending += chunk
      const lines = pending.split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (line.startsWith("ack ")) acks.push(line.slice(4))
        else if (line.startsWith("business ")) business = line.slice(9)
        else if (line === "ready") timer = setTimeout(() => child.kill("SIGKILL"), delayMs)
      }
    })
    exited(child).then((signal) => {
      clearTimeout(timer)
      if (signal !== "SIGKILL") reject(new Error(`round ${round}: child ended with ${signal}:\n${stderr()}`))
      // a line cut by the kill is not an acknowledgement
      else resolve({ business, acks, signal })
    }, reject)
  })

describe("crash safety (SIGKILL during transfers)", () => {
  it(`${ROUNDS} rounds of kill -9 at a random moment, then reopen: nothing lost, nothing doubled, ledger balanced, outbox drained`, async () => {
    console.log(`crash test seed ${seed} (replay with XAALIS_CRASH_SEED=${seed})`)
    const random = prng(seed)
    const path = join(dir, "crash.sqlite")
    const businesses: Array<string> = []
    let acknowledged = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const delay = 300 + Math.floor(random() * 1_200)
      const result = await killedRound(path, round, Math.floor(random() * 2 ** 31), delay)
      expect(result.business, `round ${round}: the child never got ready`).not.toBe("")
      businesses.push(result.business)
      acknowledged += result.acks.length

      const runtime = ManagedRuntime.make(
        Layer.mergeAll(Layer.orDie(SqliteStore.layer({ path })), MemoryNotifier.layer)
      )
      try {
        const report = await runtime.runPromise(
          Effect.gen(function* () {
            const store = yield* Store
            const { problems, conversions } = yield* audit(businesses, { oneCreditPerTransfer: true })
            // every hash the child could have sent this round: its identity row exists iff it was applied
            const applied = new Set(conversions.flatMap((c) => c.keys))
            const keys = Array.from({ length: MAX_TRANSFERS }, (_, i) => transferKey(hashOf(String(round), i)))
            const rows = yield* store.transact((tx) =>
              Effect.forEach(keys, (key) => Effect.map(tx.get("transfer", key), (row) => row !== undefined))
            )
            const present = new Set(keys.filter((_, i) => rows[i]))
            const missingAcks = result.acks.filter((hash) => !present.has(transferKey(hash)))
            // the outbox: deliver until nothing is due, then every row of every business is delivered
            let rounds = 0
            for (;;) {
              const s = yield* Dispatcher.dispatchDue({ limit: 500 })
              if (s.delivered + s.retried + s.failed + s.skipped === 0) break
              if (++rounds > 1_000) return yield* Effect.die("the outbox never drained")
            }
            const outbox = yield* store.transact((tx) =>
              Effect.forEach(businesses, (business_id) =>
                Effect.map(
                  tx.list("outbox", { business_id, mode: "live" }, { limit: 1_000_000, offset: 0 }),
                  ({ docs }) => docs.map((d) => (d.data as { status: string }).status)
                )
              )
            )
            const stillDue = yield* store.transact((tx) => tx.due("outbox", Number.MAX_SAFE_INTEGER, 10))
            return { problems, conversions, present, applied, missingAcks, outbox: outbox.flat(), stillDue }
          })
        )
        expect(report.problems, `round ${round} (seed ${seed})`).toStrictEqual([])
        expect(report.missingAcks, `round ${round}: acknowledged but lost (seed ${seed})`).toStrictEqual([])
        // identity rows and effects committed together: a row without its credit, or a credit without its row, is lost
        const thisRound = [...report.applied].filter((k) => k.startsWith(transferKey(`0x${round}f`).slice(0, -2)))
        expect(new Set(thisRound), `round ${round} (seed ${seed})`).toStrictEqual(report.present)
        expect(report.present.size).toBeGreaterThanOrEqual(result.acks.length)
        expect(report.stillDue).toStrictEqual([])
        expect(report.outbox.length).toBeGreaterThan(0)
        expect(report.outbox.filter((status) => status !== "delivered")).toStrictEqual([])
      } finally {
        await runtime.dispose()
      }
    }
    console.log(`crash test: ${ROUNDS} rounds, ${acknowledged} acknowledged transfers, all present`)
    expect(acknowledged, "no transfer was acknowledged in any round").toBeGreaterThan(0)
  }, 90_000)
})
