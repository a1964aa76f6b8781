/**
 * What the conformance suite does not reach: interruption, a Tx outliving its
 * unit, waiting for another connection's write lock without blocking the event
 * loop, the busy timeout, the waiting file and the fairness pause, the limits of INTEGER amounts, and online backups.
 */

import { spawnSync } from "node:child_process"
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { type Doc, type LedgerEntry, Store, StoreChanges, type Tx } from "@xaalis/engine"
import { Cause, Deferred, Effect, Exit, Fiber, Layer, Result } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SqliteStore } from "../src/index.ts"

const dir = mkdtempSync(join(tmpdir(), "xaalis-sqlite-store-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshPath = () => join(dir, `s-${files++}.sqlite`)

const doc = (id: string, data: unknown = { n: 1n }): Doc => ({
  kind: "invoice",
  id,
  business_id: "biz",
  mode: "live",
  created_at: 1_700_000_000_000,
  version: 1,
  due_at: null,
  keys: [`k:${id}`],
  data
})

const lines = (transaction_id: string, amount: bigint): Array<LedgerEntry> =>
  [amount, -amount].map((a, i) => ({
    id: `${transaction_id}:${i}`,
    transaction_id,
    business_id: "biz",
    mode: "live",
    account: i === 0 ? "conversion_clearing" : "business_balance",
    currency: "USD",
    amount: a,
    created_at: 1,
    cause: `test/${transaction_id}`
  }))

const run = <A, E>(layer: Layer.Layer<Store, unknown>, body: (store: Store["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.provide(Effect.flatMap(Store, body), Layer.orDie(layer)))

const errorOf = <A, E>(exit: Exit.Exit<A, E>): unknown => {
  if (Exit.isSuccess(exit)) return undefined
  const e = Cause.findError(exit.cause)
  return Result.isSuccess(e) ? e.success : Cause.squash(exit.cause)
}

let round = 0
/** Units back to back for `ms`, 16 at a time (the store always has one queued: its streak never breaks). */
const backToBack = (store: Store["Service"], ms: number, inUnit: () => void) =>
  Effect.gen(function* () {
    const end = performance.now() + ms
    const r = round++
    let n = 0
    const lane = Effect.whileLoop({
      while: () => performance.now() < end,
      body: () => store.transact((tx) => Effect.andThen(Effect.sync(inUnit), tx.insert(doc(`inv_${r}_${n++}`)))),
      step: () => {}
    })
    yield* Effect.all(
      Array.from({ length: 16 }, () => lane),
      { concurrency: "unbounded", discard: true }
    )
    return n
  })

/** A waiting record as a store writes it: its token and the time. */
const writeRecord = (file: string, token: string, at: number) =>
  writeFileSync(file, `${token} ${String(at).padStart(15, "0")}\n`)

/** Another connection takes the write lock now and commits after `ms`, as another process would. */
const lockFor = (path: string, ms: number) => {
  const other = new DatabaseSync(path)
  other.exec("BEGIN IMMEDIATE")
  setTimeout(() => {
    other.exec("COMMIT")
    other.close()
  }, ms)
}

describe("SqliteStore beyond the port's contract", () => {
  it("an interrupted unit of work is rolled back and the store stays usable", () =>
    run(SqliteStore.layerMemory(), (store) =>
      Effect.gen(function* () {
        const written = yield* Deferred.make<void>()
        const fiber = yield* Effect.forkChild(
          store.transact((tx) =>
            Effect.gen(function* () {
              yield* tx.insert(doc("inv_1"))
              yield* tx.post(lines("t1", 5n))
              yield* Deferred.succeed(written, undefined)
              return yield* Effect.never
            })
          )
        )
        yield* Deferred.await(written)
        yield* Fiber.interrupt(fiber)
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        expect(yield* store.ledger).toStrictEqual([])
        yield* store.transact((tx) => tx.insert(doc("inv_1")))
        expect((yield* store.transact((tx) => tx.getByKey("invoice", "k:inv_1")))?.id).toBe("inv_1")
      })
    ))

  it("a Tx used after its unit of work ended fails with StoreError and touches nothing", () =>
    run(SqliteStore.layerMemory(), (store) =>
      Effect.gen(function* () {
        const leaked = yield* store.transact((tx) => Effect.succeed(tx))
        const late = yield* Effect.exit((leaked as Tx).insert(doc("inv_late")))
        expect(errorOf(late)).toMatchObject({ _tag: "StoreError" })
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_late"))).toBeUndefined()
      })
    ))

  it("waits for another connection's write lock without blocking the event loop", async () => {
    const path = freshPath()
    await run(SqliteStore.layer({ path }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("inv_0")))
        // another writer (as another process would) holds the lock; a timer of this process releases it
        const other = new DatabaseSync(path)
        other.exec("BEGIN IMMEDIATE")
        other.exec("UPDATE docs SET version = version WHERE id = 'inv_0'")
        let released = false
        setTimeout(() => {
          released = true
          other.exec("COMMIT")
          other.close()
        }, 50)
        // the timer can only fire if the waiting unit leaves the event loop free
        yield* store.transact((tx) =>
          Effect.andThen(
            tx.insert(doc("inv_1")),
            Effect.sync(() => released)
          )
        )
        expect(released).toBe(true)
        expect((yield* store.transact((tx) => tx.get("invoice", "inv_1")))?.id).toBe("inv_1")
      })
    )
  })

  it("gives up after busy_timeout_ms with a StoreError, writing nothing", async () => {
    const path = freshPath()
    const other = new DatabaseSync(path)
    try {
      await run(SqliteStore.layer({ path, busy_timeout_ms: 30 }), (store) =>
        Effect.gen(function* () {
          other.exec("BEGIN IMMEDIATE")
          const exit = yield* Effect.exit(store.transact((tx) => tx.insert(doc("inv_1"))))
          other.exec("ROLLBACK")
          expect(errorOf(exit)).toMatchObject({ _tag: "StoreError" })
          expect((errorOf(exit) as Error).message).toContain("database is locked")
          expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        })
      )
    } finally {
      other.close()
    }
  })

  it("units queued behind a unit that waits for another connection's lock give up with it, not one timeout after another", async () => {
    const path = freshPath()
    const other = new DatabaseSync(path)
    try {
      await run(SqliteStore.layer({ path, busy_timeout_ms: 60 }), (store) =>
        Effect.gen(function* () {
          yield* store.transact((tx) => tx.insert(doc("inv_0")))
          other.exec("BEGIN IMMEDIATE")
          const released = setTimeout(() => other.exec("ROLLBACK"), 400)
          const started = performance.now()
          // five units queue for the connection; the lock stays taken far longer than busy_timeout_ms
          const outcomes = yield* Effect.forEach(
            [1, 2, 3, 4, 5],
            (i) =>
              Effect.map(Effect.exit(store.transact((tx) => tx.insert(doc(`inv_q${i}`)))), (exit) => ({
                tag: errorOf(exit),
                after: performance.now() - started
              })),
            { concurrency: "unbounded" }
          )
          clearTimeout(released)
          other.exec("ROLLBACK")
          expect(outcomes.map((o) => (o.tag as { _tag?: unknown } | undefined)?._tag)).toStrictEqual(
            Array(5).fill("StoreError")
          )
          // each gave up about busy_timeout_ms after the hold was found (one after another it would be 60, 120, … 300)
          expect(Math.max(...outcomes.map((o) => o.after))).toBeLessThan(200)
          // the lock free again, units get through at once
          yield* store.transact((tx) => tx.insert(doc("inv_after")))
          expect((yield* store.transact((tx) => tx.get("invoice", "inv_after")))?.id).toBe("inv_after")
        })
      )
    } finally {
      other.close()
    }
  })

  it("a database file this process may not write is refused at opening, even when it needs no migration", async () => {
    const path = freshPath()
    await run(SqliteStore.layer({ path }), (store) => store.transact((tx) => tx.insert(doc("inv_0"))))
    if (process.getuid?.() === 0) {
      // root may write anything: open it as another user, as a second server under its own account would (the
      // directory open to all, the file as SQLite made it: 0644)
      chmodSync(dir, 0o777)
      const result = spawnSync(
        "runuser",
        [
          "-u",
          "nobody",
          "--",
          process.execPath,
          "--conditions=@xaalis/source",
          "--no-warnings",
          "--input-type=module",
          "-e",
          `import { Effect, Layer } from "effect"
           import { SqliteStore } from ${JSON.stringify(new URL("../src/index.ts", import.meta.url).href)}
           const exit = await Effect.runPromiseExit(Layer.build(SqliteStore.layer({ path: ${JSON.stringify(path)} })).pipe(Effect.scoped))
           console.log(JSON.stringify(exit._tag === "Failure" ? String(exit.cause) : "opened"))`
        ],
        { encoding: "utf8", cwd: fileURLToPath(new URL("..", import.meta.url)) }
      )
      if (result.error !== undefined) return // no runuser here: nothing to check as root
      expect(result.stdout, result.stderr).toMatch(/StoreError.*EACCES|EACCES.*StoreError/s)
    } else {
      chmodSync(path, 0o444)
      const exit = await Effect.runPromiseExit(Layer.build(SqliteStore.layer({ path })).pipe(Effect.scoped))
      expect(String(Exit.isFailure(exit) ? exit.cause : "opened")).toMatch(/StoreError[\s\S]*EACCES/)
    }
  })

  it("a unit that asks while another connection has held the lock for longer than busy_timeout_ms still gets its own wait", async () => {
    const path = freshPath()
    await run(SqliteStore.layer({ path, busy_timeout_ms: 150 }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("inv_0")))
        lockFor(path, 250)
        // the first gives up after 150 ms; one asking at 180 ms waits until the lock is free at 250 ms
        const first = yield* Effect.exit(store.transact((tx) => tx.insert(doc("inv_1"))))
        expect((errorOf(first) as { _tag?: unknown })._tag).toBe("StoreError")
        yield* Effect.sleep("30 millis")
        yield* store.transact((tx) => tx.insert(doc("inv_2")))
        expect((yield* store.transact((tx) => tx.get("invoice", "inv_2")))?.id).toBe("inv_2")
      })
    )
  })

  it("StoreChanges: its version moves when another connection commits, not on this store's own commits", async () => {
    const path = freshPath()
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* Store
        const changes = yield* StoreChanges
        const v0 = yield* changes.version
        yield* store.transact((tx) => tx.insert(doc("inv_own")))
        expect(yield* changes.version).toBe(v0)
        const other = new DatabaseSync(path)
        other.exec("UPDATE docs SET created_at = created_at + 1 WHERE id = 'inv_own'")
        other.close()
        const v1 = yield* changes.version
        expect(v1).not.toBe(v0)
        expect(yield* changes.version).toBe(v1) // stays until the next commit elsewhere
      }).pipe(Effect.provide(Layer.orDie(SqliteStore.layer({ path }))))
    )
  })

  it("a unit waiting for another connection's lock says so through the waiting file, on every poll", async () => {
    const path = freshPath()
    const waiting = SqliteStore.waitingFile(path)
    await run(SqliteStore.layer({ path }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("inv_0")))
        expect(existsSync(waiting)).toBe(false) // nobody has waited yet
        lockFor(path, 60)
        const seen: Array<string> = []
        const look = setInterval(() => {
          if (existsSync(waiting)) seen.push(readFileSync(waiting, "latin1"))
        }, 5)
        const started = Date.now()
        yield* store.transact((tx) => tx.insert(doc("inv_1")))
        clearInterval(look)
        // the file appeared while the unit waited: one store's token, and a time that kept moving with the polls
        expect(seen.length).toBeGreaterThan(2)
        const records = seen.map((text) => text.trim().split(" "))
        expect(new Set(records.map(([token]) => token)).size).toBe(1)
        const times = records.map(([, at]) => Number(at))
        expect(new Set(times).size).toBeGreaterThan(1)
        expect(Math.min(...times)).toBeGreaterThanOrEqual(started - 5)
        // created with the database file's permissions
        expect(statSync(waiting).mode & 0o777).toBe(statSync(path).mode & 0o666)
      })
    )
  })

  it("a process alone on its file never pauses; once another says it waits, it leaves the lock free", async () => {
    const path = freshPath()
    const waiting = SqliteStore.waitingFile(path)
    let pauses = 0
    const signal = (at: number) => writeRecord(waiting, "12345.otherstore", at)
    await run(SqliteStore.layer({ path, synchronous: "NORMAL", hooks: { paused: () => void pauses++ } }), (store) =>
      Effect.gen(function* () {
        // alone: units back to back for five times hold_max_ms, no pause
        expect(yield* backToBack(store, 100, () => {})).toBeGreaterThan(10)
        expect(pauses).toBe(0)
        // a stale record (a waiter that has gone) does not make it pause either, nor an empty file
        signal(Date.now() - 10_000)
        yield* backToBack(store, 100, () => {})
        writeFileSync(waiting, "")
        yield* backToBack(store, 100, () => {})
        // nor a file no store could have written whole (found by an audit: a shorter line written over a longer
        // one left the old tail behind, read as a torn record, and a lone store paused every 20 ms for good)
        writeFileSync(waiting, "garbage\n")
        yield* backToBack(store, 100, () => {})
        expect(pauses).toBe(0)
        // a fresh line of another store followed by a leftover tail is read from its first line
        // (300 ms, not 100: a machine busy with other work gives fewer streaks of hold_max_ms per moment)
        yield* backToBack(store, 300, () =>
          writeFileSync(waiting, `0000012345.other ${String(Date.now()).padStart(15, "0")}\n6\n`)
        )
        expect(pauses).toBeGreaterThanOrEqual(1)
        pauses = 0
        writeFileSync(waiting, "")
        // another store polls (writes in each unit here, so its record is always fresh): it pauses every
        // hold_max_ms, the same workload as above
        yield* backToBack(store, 300, () => signal(Date.now()))
        expect(pauses).toBeGreaterThanOrEqual(2)
      })
    )
  })

  it("a store's own waiting record (it waited a moment ago) does not make it pause", async () => {
    const path = freshPath()
    const waiting = SqliteStore.waitingFile(path)
    let pauses = 0
    await run(SqliteStore.layer({ path, synchronous: "NORMAL", hooks: { paused: () => void pauses++ } }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => tx.insert(doc("inv_0")))
        // it waits for another connection's lock, writing its own record on every poll
        lockFor(path, 20)
        yield* store.transact((tx) => tx.insert(doc("inv_1")))
        expect(existsSync(waiting)).toBe(true)
        // then, with its own record fresh, units back to back for longer than hold_max_ms: no pause (its record
        // is rewritten in each unit with the time, as if it had just waited again)
        const own = readFileSync(waiting, "latin1").trim().split(" ")[0] as string
        expect(yield* backToBack(store, 60, () => writeRecord(waiting, own, Date.now()))).toBeGreaterThan(20)
        expect(pauses).toBe(0)
        // the same with another store's token pauses (so the loop above did run streaks past hold_max_ms)
        yield* backToBack(store, 60, () => writeRecord(waiting, "other.1", Date.now()))
        expect(pauses).toBeGreaterThanOrEqual(1)
      })
    )
  })

  it.skipIf(process.getuid?.() !== 0)(
    "run as root, a waiter creates the waiting file for the database file's owner (who can then write it)",
    async () => {
      const path = freshPath()
      const waiting = SqliteStore.waitingFile(path)
      await run(SqliteStore.layer({ path }), (store) =>
        Effect.gen(function* () {
          yield* store.transact((tx) => tx.insert(doc("inv_0")))
          chownSync(path, 65534, 65534) // the service's user owns the database
          lockFor(path, 20)
          yield* store.transact((tx) => tx.insert(doc("inv_1")))
          expect(statSync(waiting)).toMatchObject({ uid: 65534, gid: 65534 })
        })
      )
    }
  )

  it("ledger amounts are 64-bit integers: the extremes round-trip exactly, beyond them a StoreError commits nothing", () =>
    run(SqliteStore.layerMemory(), (store) =>
      Effect.gen(function* () {
        const max = 2n ** 63n - 1n
        yield* store.transact((tx) => tx.post(lines("big", max)))
        expect((yield* store.ledger).map((e) => e.amount)).toStrictEqual([max, -max])
        const exit = yield* Effect.exit(
          store.transact((tx) => Effect.andThen(tx.insert(doc("inv_1")), tx.post(lines("huge", 2n ** 63n))))
        )
        expect(errorOf(exit)).toMatchObject({ _tag: "StoreError" })
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_1"))).toBeUndefined()
        // document data has no such limit (Codec text)
        yield* store.transact((tx) => tx.insert(doc("inv_2", { n: 2n ** 200n })))
        expect((yield* store.transact((tx) => tx.get("invoice", "inv_2")))?.data).toStrictEqual({ n: 2n ** 200n })
      })
    ))

  it("a row listing one key twice round-trips and holds the key once", () =>
    run(SqliteStore.layerMemory(), (store) =>
      Effect.gen(function* () {
        const twice = { ...doc("inv_1"), keys: ["a", "a"] }
        yield* store.transact((tx) => tx.insert(twice))
        expect(yield* store.transact((tx) => tx.getByKey("invoice", "a"))).toStrictEqual(twice)
        yield* store.transact((tx) => tx.update({ ...twice, version: 2, keys: ["b"] }))
        expect(yield* store.transact((tx) => tx.getByKey("invoice", "a"))).toBeUndefined()
      })
    ))

  it("backup copies the last committed state while the store is open; the copy opens as a store", async () => {
    const path = freshPath()
    const copy = join(dir, "backups", `copy-${files++}.sqlite`)
    await run(SqliteStore.layer({ path }), (store) =>
      Effect.gen(function* () {
        yield* store.transact((tx) => Effect.andThen(tx.insert(doc("inv_1")), tx.post(lines("t1", 7n))))
        yield* SqliteStore.backup(path, copy)
        yield* store.transact((tx) => tx.insert(doc("inv_after")))
        // a second backup to the same place is refused rather than overwriting it
        const again = yield* Effect.exit(SqliteStore.backup(path, copy))
        expect(errorOf(again)).toMatchObject({ _tag: "StoreError" })
      })
    )
    expect(existsSync(copy)).toBe(true)
    await run(SqliteStore.layer({ path: copy }), (store) =>
      Effect.gen(function* () {
        expect((yield* store.transact((tx) => tx.get("invoice", "inv_1")))?.data).toStrictEqual({ n: 1n })
        expect(yield* store.transact((tx) => tx.get("invoice", "inv_after"))).toBeUndefined()
        expect((yield* store.ledger).map((e) => e.amount)).toStrictEqual([7n, -7n])
      })
    )
  })
})
