/**
 * Two engine processes on one SQLite file under concurrent load (each also
 * running 8 units at a time): every transfer is reported by both, in different
 * orders, while both create conversions under the same idempotency keys.
 * Afterwards: the ledger is balanced, every transfer was applied exactly once
 * (by one process or the other), no update was lost, every conversion was
 * credited exactly `credited(total)`, and each idempotency key had one effect.
 */

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Settlement } from "@xaalis/core"
import { Store } from "@xaalis/engine"
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"
import type { Done, Go } from "./children/transfers-worker.ts"
import { collectStderr, exited, nextMessage, prng, shuffled, spawnChild } from "./processes.ts"
import { audit, business, conversion, engineOn } from "./support.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-multiprocess-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const CONVERSIONS = 10
const TRANSFERS_EACH = 40
const AMOUNT = 500_000n // 0.50 USD: 40 of them stay below the 73.64 USD due
const KEYS = Array.from({ length: 10 }, (_, i) => `idem-${i}`)

const openFile = (path: string) => ManagedRuntime.make(engineOn(Layer.orDie(SqliteStore.layer({ path }))))

describe("two OS processes on one SQLite file", () => {
  it("apply the same transfers concurrently: each credited once, invariants hold, one effect per idempotency key", async () => {
    const path = join(dir, "shared.sqlite")
    const setup = openFile(path)
    const { biz, conversions } = await setup.runPromise(
      Effect.gen(function* () {
        const biz = yield* business
        const conversions = yield* Effect.forEach(Array.from({ length: CONVERSIONS }), () => conversion(biz.live))
        return { biz, conversions }
      })
    )
    await setup.dispose()

    const transfers = conversions.flatMap((c, n) =>
      Array.from({ length: TRANSFERS_EACH }, (_, j) => ({
        address: c.address,
        amount: AMOUNT.toString(),
        tx_hash: `0x${n.toString(16)}${j.toString(16).padStart(4, "0")}`
      }))
    )
    const random = prng(20_261_121)
    const workers = [0, 1].map(() => {
      const child = spawnChild("transfers-worker.ts", [path])
      return { child, stderr: collectStderr(child) }
    })
    try {
      await Promise.all(workers.map((w) => nextMessage(w.child, "ready", w.stderr)))
      const results = workers.map((w) => nextMessage<Done>(w.child, "done", w.stderr))
      for (const w of workers) {
        const go: Go = {
          type: "go",
          key: biz.key,
          transfers: shuffled(transfers, random),
          idempotency_keys: shuffled(KEYS, random)
        }
        w.child.send(go)
      }
      const [a, b] = (await Promise.all(results)) as [Done, Done]
      expect(await Promise.all(workers.map((w) => exited(w.child)))).toStrictEqual([0, 0])

      // every transfer applied by exactly one of the two processes, and both did some of the work
      expect(a.applied.filter((h) => b.applied.includes(h))).toStrictEqual([])
      expect(new Set([...a.applied, ...b.applied])).toStrictEqual(new Set(transfers.map((t) => t.tx_hash)))
      expect(a.applied.length).toBeGreaterThan(0)
      expect(b.applied.length).toBeGreaterThan(0)

      // one effect per idempotency key, and both processes answered with it: a use that met the other
      // process's use in flight waited for its answer (none was refused as "in progress")
      for (const key of KEYS) {
        const answers = [...a.idempotent, ...b.idempotent].filter((r) => r.key === key)
        const ids = new Set(answers.flatMap((r) => (r.id === null ? [] : [r.id])))
        expect(ids.size, `key ${key}: ${JSON.stringify(answers)}`).toBe(1)
        expect(
          answers.filter((r) => r.id === null),
          key
        ).toStrictEqual([])
      }

      const check = openFile(path)
      const report = await check.runPromise(
        Effect.gen(function* () {
          const store = yield* Store
          const result = yield* audit([biz.id], { oneCreditPerTransfer: true })
          const scope = { business_id: biz.id, mode: "live" as const }
          const idempotency = yield* store.transact((tx) => tx.list("idempotency", scope, { limit: 100, offset: 0 }))
          return { ...result, idempotency: idempotency.docs.map((d) => (d.data as { key: string }).key).sort() }
        })
      )
      await check.dispose()
      expect(report.problems).toStrictEqual([])
      const total = AMOUNT * BigInt(TRANSFERS_EACH)
      const credited = Settlement.credited(500_000n, 7_364n, total)
      const paid = report.conversions.filter((c) => c.applied > 0)
      expect(paid.map((c) => c.id).sort()).toStrictEqual(conversions.map((c) => c.id).sort())
      for (const c of paid) expect(c).toMatchObject({ actually_paid: total, credited, applied: TRANSFERS_EACH })
      // the other conversions are the idempotent creations: exactly one per key
      expect(report.conversions).toHaveLength(CONVERSIONS + KEYS.length)
      expect(report.idempotency).toStrictEqual([...KEYS].sort())
    } finally {
      for (const w of workers) if (w.child.exitCode === null) w.child.kill("SIGKILL")
    }
  }, 60_000)

  it("a process running units back to back leaves the lock to another that waits: no starvation", async () => {
    const path = join(dir, "hogged.sqlite")
    const setup = ManagedRuntime.make(SqliteStore.layer({ path }))
    await setup.runPromise(Effect.void) // the schema, before the hog opens the file
    const child = spawnChild("hog.ts", [path, "3000", "48"])
    const stderr = collectStderr(child)
    try {
      const done = nextMessage<{ type: "done"; units: number }>(child, "done", stderr)
      await nextMessage(child, "busy", stderr)
      // while the other process keeps the lock busy (48 units at a time: full groups, each COMMIT followed at
      // once by the next BEGIN), units of this one get through, each within a fraction of the hog's run (a
      // starved one would wait until the hog ends, 3 s, or fail after busy_timeout_ms)
      const waits: Array<number> = []
      await setup.runPromise(
        Effect.gen(function* () {
          const store = yield* Store
          for (let i = 0; i < 5; i++) {
            const start = performance.now()
            yield* store.transact((tx) =>
              tx.insert({
                kind: "invoice",
                id: `other_${i}`,
                business_id: "other",
                mode: "live",
                created_at: 1,
                version: 1,
                due_at: null,
                keys: [],
                data: null
              })
            )
            waits.push(performance.now() - start)
          }
        })
      )
      const { units } = await done
      expect(units).toBeGreaterThan(100) // the hog did keep the lock busy
      expect(Math.max(...waits), `waits ${waits.map((w) => w.toFixed(1)).join(", ")} ms`).toBeLessThan(1000)
      expect(await exited(child)).toBe(0)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
      await setup.dispose()
    }
  }, 30_000)
})
